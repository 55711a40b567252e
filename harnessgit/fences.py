"""Fenced code blocks, read the way CommonMark reads them.

Two jobs depend on this: taking a proposer's new text out of its reply, and
telling a complete reply from one cut off mid-block. GEPA once adopted a
truncated reflection output as a new prompt (gepa issue #390); an unclosed fence
is the cheapest reliable sign of that, so it is detected here, never repaired.
A reply's top-level fences are all this needs; the checks read whole harness files,
with fences in list items and blockquotes, through a CommonMark parser
(`harnessgit.checks.markdown`).

The rules (CommonMark 0.31, "Fenced code blocks"): a fence is a line indented by
at most three spaces, then at least three backticks or tildes; the rest of the
line is the info string (a backtick fence's info string holds no backtick). The
block ends at a line of the same character, at least as long as the opening
run, followed only by blanks. Shorter or different fences inside are content,
which is how a block can quote text that itself holds ``` blocks.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_OPEN = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_LINE_START_RUN = re.compile(r"^ {0,3}(`+|~+)", re.MULTILINE)


@dataclass(frozen=True)
class FencedBlock:
    info: str  # the info string, stripped: "json", "markdown title=x", or ""
    body: str  # the lines between the fences, without the final newline
    closed: bool
    line: int  # 1-based line number of the opening fence
    end: int  # 1-based line number of the closing fence, or of the last line when unclosed

    @property
    def language(self) -> str:
        return self.info.split(maxsplit=1)[0].lower() if self.info else ""


def fenced_blocks(text: str) -> list[FencedBlock]:
    """The top-level fenced blocks of ``text``, in order. Only the last can be unclosed."""
    return fenced_blocks_in(text.splitlines())


def fenced_blocks_in(lines: list[str]) -> list[FencedBlock]:
    """`fenced_blocks` for text already split into lines."""
    blocks: list[FencedBlock] = []
    index = 0
    while index < len(lines):
        opening = _OPEN.match(lines[index])
        if opening is None or (opening["fence"][0] == "`" and "`" in opening["info"]):
            index += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        body: list[str] = []
        start = index
        index += 1
        closed = False
        while index < len(lines):
            if closing.match(lines[index]):
                closed = True
                index += 1
                break
            body.append(_dedent(lines[index], indent))
            index += 1
        blocks.append(FencedBlock(opening["info"].strip(), "\n".join(body), closed, start + 1, index))
    return blocks


def has_unclosed_fence(text: str) -> bool:
    blocks = fenced_blocks(text)
    return bool(blocks) and not blocks[-1].closed


def fence_for(text: str) -> str:
    """A backtick fence that no line of ``text`` can close: longer than any run inside."""
    longest = max((len(run) for run in _LINE_START_RUN.findall(text) if run[0] == "`"), default=0)
    return "`" * max(3, longest + 1)


def _dedent(line: str, indent: int) -> str:
    # CommonMark removes up to the opening fence's indentation from each content line.
    stripped = len(line) - len(line.lstrip(" "))
    return line[min(indent, stripped) :]
