"""Suppression: what a file or the configuration allows, never silently.

Two ways to allow a rule for one file: a Markdown comment in the file,
``<!-- harnessgit: allow length, duplication -->`` (anywhere outside code; it
covers the whole file), and ``[[checks.overrides]]`` tables in harnessgit.toml
(``allow``, or a rule's ``severity`` set to "off"). A finding so allowed is kept,
with state "suppressed" and a detail saying what allowed it: `harnessgit check --all`
shows every one, so nothing hides. A comment naming no rule or an unknown one is a
format failure at its line, which no comment can allow.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple, cast

from harnessgit import globs
from harnessgit.check_findings import RULES, Finding, Rule
from harnessgit.checkconfig.sections import CheckOverride, KindChecks
from harnessgit.checks import markdown

_COMMENT = re.compile(r"<!--\s*harnessgit\s*:(?P<body>.*?)-->", re.DOTALL)
_ALLOW = re.compile(r"\s*allow\b(?P<names>.*)", re.DOTALL)
_HINT = f"write <!-- harnessgit: allow RULE, ... --> with rules among: {', '.join(RULES)}"


class Allowed(NamedTuple):
    """The rules one file may break, each with why (shown on the suppressed finding)."""

    by: dict[Rule, str]
    errors: list[Finding]  # malformed comments


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _code_lines(text: str) -> set[int]:
    """The lines of fenced and indented code blocks, as CommonMark reads them (a fence
    in a list item or blockquote too). An HTML block is not code: the comment itself is one."""
    return {
        line
        for block in markdown.parse(text).blocks
        if block.kind in ("fence", "code")
        for line in range(block.line, block.end_line + 1)
    }


def comments(path: str, text: str) -> Allowed:
    """The ``<!-- harnessgit: allow ... -->`` comments of ``text`` outside code blocks."""
    if "harnessgit" not in text:
        return Allowed({}, [])
    code = _code_lines(text)
    allowed = Allowed({}, [])
    for match in _COMMENT.finditer(text):
        line = _line_of(text, match.start())
        if line in code:
            continue  # an example in a code block, not a directive
        directive = _ALLOW.fullmatch(match["body"])
        names = [name for name in re.split(r"[\s,]+", directive["names"]) if name] if directive else []
        unknown = [name for name in names if name not in RULES]
        if directive is None or not names or unknown:
            what = ", ".join(repr(name) for name in unknown) if unknown else repr(match["body"].strip())
            allowed.errors.append(
                Finding(
                    path=path,
                    rule="format",
                    level="failure",
                    measure="harnessgit comment",
                    value=what,
                    limit="allow RULE, ...",
                    message=f"harnessgit comment at line {line} allows no known rule: {what}",
                    hint=_HINT,
                    line=line,
                )
            )
            continue
        for name in names:  # each one of RULES, checked above
            allowed.by.setdefault(
                cast("Rule", name), f"allowed by <!-- harnessgit: allow {name} --> at line {line}"
            )
    return allowed


def matching(path: str, overrides: Sequence[CheckOverride]) -> list[tuple[int, CheckOverride]]:
    """The ``[[checks.overrides]]`` tables (numbered from 1) whose paths match ``path``."""
    return [(number, o) for number, o in enumerate(overrides, 1) if globs.matches(path, o.paths)]


def with_limits(kind: KindChecks, overrides: Sequence[tuple[int, CheckOverride]]) -> KindChecks:
    """The file's kind with the limits its overrides set (later tables win)."""
    limits = {name: value for _n, override in overrides for name, value in override.limits.items()}
    return replace(kind, **limits) if limits else kind


def configured(overrides: Sequence[tuple[int, CheckOverride]]) -> dict[Rule, str]:
    """The rules the matching overrides allow (``allow``, or severity "off")."""
    by: dict[Rule, str] = {}
    for number, override in overrides:
        off = [rule for rule in RULES if override.severity.of(rule) == "off"]
        # override.allow holds rule names: the configuration reader checks them.
        for rule in [*cast("list[Rule]", override.allow), *off]:
            by.setdefault(rule, f"allowed by [[checks.overrides]] number {number} in harnessgit.toml")
    return by


def levels(overrides: Sequence[tuple[int, CheckOverride]]) -> dict[Rule, str]:
    """The levels ("failure" or "warning") the matching overrides give rules."""
    out: dict[Rule, str] = {}
    for _number, override in overrides:
        for rule in RULES:
            level = override.severity.of(rule)
            if level in ("failure", "warning"):
                out[rule] = level
    return out


def suppress(findings: Sequence[Finding], by: dict[Rule, str]) -> list[Finding]:
    """Each finding of an allowed rule, marked "suppressed" with what allowed it."""
    return [
        replace(finding, state="suppressed", details=[*finding.details, by[finding.rule]])
        if finding.rule in by
        else finding
        for finding in findings
    ]
