"""The length rule: characters, lines and tokens against a kind's limits.

Exceeding a limit is a failure, default or configured: the Agent Skills
specification's 500 lines / ~5,000 tokens for a SKILL.md body is the point at
which a skill stops being cheap to load, not a suggestion.
"""

from __future__ import annotations

from typing import NamedTuple

from harnessgit.check_findings import Finding
from harnessgit.checkconfig.sections import KindChecks
from harnessgit.checks.text import count_lines, split_frontmatter
from harnessgit.checks.tokens import Tokenizer

# One hint per kind of file; a kind defined in harnessgit.toml gets the generic one.
_HINTS = {
    "skill": "move detail into references/ files loaded on demand (Agent Skills: progressive disclosure)",
    "agents": "keep AGENTS.md/CLAUDE.md to common guidance; move specifics next to what they govern",
    "prompt": "cut it back: GEPA prompts capped near 1,000 characters lost under a point (Decagon)",
    "tool": "shorten the description; it is sent with every request",
}
_GENERIC_HINT = "shorten the file, or raise the limit in [checks.kinds.{kind}] of harnessgit.toml"


class Size(NamedTuple):
    """A text's characters, lines and tokens."""

    chars: int
    lines: int
    tokens: int
    scope: str  # "" for the whole file, "body " for the text after the frontmatter
    first_line: int = 1  # the file's line number of the measured text's first line


def measure(text: str, kind: KindChecks, tokenizer: Tokenizer) -> Size:
    scope, first = "", 1
    if kind.measure == "body":
        parts = split_frontmatter(text)
        if parts.yaml is not None:
            text, scope, first = parts.body, "body ", parts.body_line
    return Size(len(text), count_lines(text), tokenizer.count(text), scope, first)


def check_length(
    path: str, kind_name: str, kind: KindChecks, size: Size, tokenizer: Tokenizer
) -> list[Finding]:
    hint = _HINTS.get(kind_name, _GENERIC_HINT.format(kind=kind_name))
    token_unit = "tokens" if tokenizer.exact else "tokens (estimated)"
    findings = []
    for unit, value, limit in (
        ("characters", size.chars, kind.max_chars),
        ("lines", size.lines, kind.max_lines),
        (token_unit, size.tokens, kind.max_tokens),
    ):
        if limit is not None and value > limit:
            findings.append(
                Finding(
                    path=path,
                    rule="length",
                    level="failure",
                    measure=f"{size.scope}{unit}",
                    value=value,
                    limit=limit,
                    message=f"{size.scope}is {value:,} {unit}, over the {kind_name} limit of {limit:,}",
                    hint=hint,
                    # Lines: where the text passes the limit, so an editor opens there.
                    line=size.first_line + limit if unit == "lines" else None,
                )
            )
    return findings


def too_large(path: str, size: int, limit: int) -> Finding:
    return Finding(
        path=path,
        rule="length",
        level="failure",
        measure="bytes",
        value=size,
        limit=limit,
        message=f"is {size:,} bytes, over [checks] max_file_bytes = {limit:,}; not read",
        hint="a harness file this large is almost surely a mistake: split it or take it out of the harness",
    )
