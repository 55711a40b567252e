"""Taking the proposed edit out of an LLM's reply. Pure: no I/O.

The rule (docs/proposers.md):

1. Read the reply's top-level fenced blocks as CommonMark does (`fences`).
2. No block at all: rejected ("no_fence"). The last block unclosed: rejected
   ("unclosed_fence"), even when an earlier block is complete: the reply was cut
   off while writing the block that mattered, and adopting a truncated text is
   exactly the failure of gepa #390.
3. Of the blocks whose language is the one asked for ("text" for a replacement,
   "json" for operations), take the LAST; if none carries it, take the last
   block. Last, not first: models often quote the old text or sketch an answer
   before giving the final one.
4. A replacement is the block's body. Operations are JSON, either
   ``{"operations": [...], "rationale": "..."}`` or a bare list; anything else is
   rejected ("invalid_operations").

The rationale is the prose before the chosen block (or the JSON's "rationale").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from harnessgit.fences import fenced_blocks
from harnessgit.proposers.edits import EditRejected
from harnessgit.proposers.protocol import Operation, capped

_OPERATIONS: TypeAdapter[list[Operation]] = TypeAdapter(list[Operation])


@dataclass(frozen=True)
class ParsedReply:
    text: str | None
    operations: list[Operation] | None
    rationale: str


def parse_reply(reply: str, form: Literal["replace", "delta"]) -> ParsedReply:
    """The edit in ``reply``; raises `EditRejected` when there is none to adopt."""
    blocks = fenced_blocks(reply)
    if not blocks:
        raise EditRejected("no_fence", "the reply has no fenced block to take the edit from")
    if not blocks[-1].closed:
        raise EditRejected(
            "unclosed_fence", f"the reply's block opened on line {blocks[-1].line} is never closed"
        )
    language = "json" if form == "delta" else "text"
    tagged = [block for block in blocks if block.language == language]
    block = (tagged or blocks)[-1]
    rationale = "\n".join(reply.splitlines()[: block.line - 1]).strip()
    if form == "replace":
        return ParsedReply(block.body, None, capped(rationale))
    operations, note = parse_operations(block.body)
    return ParsedReply(None, operations, capped(note or rationale))


def parse_operations(text: str) -> tuple[list[Operation], str]:
    """Operations from JSON text, and the rationale the JSON carried, if any."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise EditRejected("invalid_operations", f"the operations are not valid JSON ({exc})") from None
    rationale = ""
    if isinstance(data, dict):
        note = data.get("rationale", "")
        rationale = note if isinstance(note, str) else ""
        data = data.get("operations")
    return validate_operations(data), rationale


def validate_operations(data: Any) -> list[Operation]:
    """Operations from parsed JSON; raises `EditRejected` naming the first bad one."""
    if not isinstance(data, list):
        raise EditRejected("invalid_operations", 'expected {"operations": [...]} or a list of operations')
    try:
        return _OPERATIONS.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = list(first["loc"])
        where = f"operation {int(loc[0]) + 1}" if loc and isinstance(loc[0], int) else "operations"
        if len(loc) > 2:  # (index, op tag, field)
            where += f" ({loc[1]}): {'.'.join(str(part) for part in loc[2:])}"
        raise EditRejected(
            "invalid_operations", f"{where}: {first['msg']} (ops: append, insert_after, replace, delete)"
        ) from None
