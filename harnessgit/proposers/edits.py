"""Applying a proposer's edit and deciding whether it may be adopted. Pure: no I/O.

Two forms of edit: a full replacement, or SkillOpt-style delta operations
(append, insert_after, replace, delete; arXiv 2605.23904). Deltas make small,
reviewable diffs and cannot silently drop the rest of the text, which is how ACE
saw an 18,282-token context collapse to 122 tokens in one rewrite (arXiv
2510.04618). Every anchor must match exactly once, so an operation never lands
somewhere the proposer did not mean.

`settle` is the one door every proposer goes through: whatever came back is
applied, checked by `sanity_check`, and returned as a `ProposedEdit` or a
`RejectedProposal` naming the reason.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from harnessgit.fences import has_unclosed_fence
from harnessgit.proposers.protocol import (
    Append,
    Delete,
    InsertAfter,
    Limits,
    Operation,
    ProposalRequest,
    ProposedEdit,
    RejectedProposal,
    RejectionCode,
    Replace,
    Usage,
)

_EXCERPT = 60


class EditRejected(Exception):
    """Why an edit cannot be adopted. Caught by `settle`; never leaves the package."""

    def __init__(self, code: RejectionCode, reason: str) -> None:
        super().__init__(reason)
        self.code: RejectionCode = code
        self.reason = reason


def estimate_tokens(text: str) -> int:
    # ~4 characters per token for English text (OpenAI's rule of thumb); no
    # tokenizer dependency, and the limit is a guard against bloat, not a budget.
    return math.ceil(len(text) / 4)


def apply_operations(text: str, operations: Sequence[Operation]) -> str:
    """Apply ``operations`` in order, each to the result of the ones before it."""
    if not operations:
        raise EditRejected("invalid_operations", "no operations")
    for number, operation in enumerate(operations, 1):
        label = f"operation {number} ({operation.op})"
        if isinstance(operation, Append):
            text = _append(text, operation.text, label)
        elif isinstance(operation, InsertAfter):
            text = _insert_after(text, operation.anchor, operation.text, label)
        elif isinstance(operation, Replace):
            start = _locate(text, operation.old, label, "old text")
            text = text[:start] + operation.new + text[start + len(operation.old) :]
        elif isinstance(operation, Delete):
            text = _delete(text, operation.old, label)
    return text


def sanity_check(current: str, new: str, limits: Limits | None = None, *, truncated: bool = False) -> None:
    """Raise `EditRejected` unless ``new`` may replace ``current``.

    ``truncated`` is the model's own signal (finish_reason "length"): a reply cut
    at the token limit is never adopted, however complete it looks.
    """
    if truncated:
        raise EditRejected("truncated", "the proposer stopped at its output token limit")
    if not new.strip():
        raise EditRejected("empty", "the new text is empty")
    if _normalise(new) == _normalise(current):
        raise EditRejected("unchanged", "the new text is the current text (up to trailing whitespace)")
    # A text that already had an unclosed fence must stay editable.
    if has_unclosed_fence(new) and not has_unclosed_fence(current):
        raise EditRejected("unclosed_fence", "the new text opens a ``` block that never closes")
    if limits is not None:
        _check_limits(current, new, limits)


def settle(
    request: ProposalRequest,
    *,
    proposer: str,
    text: str | None = None,
    operations: Sequence[Operation] | None = None,
    rationale: str = "",
    raw_output: str = "",
    usage: Usage | None = None,
    truncated: bool = False,
) -> ProposedEdit | RejectedProposal:
    """Turn what a proposer produced (new ``text`` or ``operations``) into an outcome."""
    usage = usage or Usage()
    try:
        if operations is not None:
            new_text = apply_operations(request.current_text, operations)
        elif text is not None:
            new_text = match_final_newline(request.current_text, text)
        else:
            raise EditRejected("empty", "the proposer returned neither text nor operations")
        sanity_check(request.current_text, new_text, request.limits, truncated=truncated)
    except EditRejected as problem:
        return rejected(
            request, problem, proposer=proposer, rationale=rationale, raw_output=raw_output, usage=usage
        )
    return ProposedEdit(
        component=request.component,
        new_text=new_text,
        operations=list(operations) if operations is not None else None,
        rationale=rationale,
        raw_output=raw_output,
        usage=usage,
        proposer=proposer,
    )


def rejected(
    request: ProposalRequest,
    problem: EditRejected,
    *,
    proposer: str,
    rationale: str = "",
    raw_output: str = "",
    usage: Usage | None = None,
) -> RejectedProposal:
    return RejectedProposal(
        component=request.component,
        code=problem.code,
        reason=_one_line(problem.reason),
        rationale=rationale,
        raw_output=raw_output,
        usage=usage or Usage(),
        proposer=proposer,
    )


def match_final_newline(current: str, new: str) -> str:
    """Give a replacement the final newline convention of the text it replaces.

    A fenced block never carries its last newline, and a missing one would show
    as a spurious change in every diff.
    """
    if current.endswith("\n") and not new.endswith("\n"):
        return new + "\n"
    return new


def _append(text: str, addition: str, label: str) -> str:
    if not addition.strip():
        raise EditRejected("invalid_operations", f"{label}: nothing to append")
    ends_line = text.endswith("\n") or not text
    joined = (text if ends_line else text + "\n") + addition
    return joined + "\n" if ends_line and not joined.endswith("\n") else joined


def _insert_after(text: str, anchor: str, addition: str, label: str) -> str:
    """Insert after ``anchor``; an anchor that ends a line gets the addition on the
    lines below it, which is what "insert after this line" means to a proposer."""
    if not addition:
        raise EditRejected("invalid_operations", f"{label}: nothing to insert")
    end = _locate(text, anchor, label, "anchor") + len(anchor)
    if anchor.endswith("\n") or end == len(text) or text[end] == "\n":
        if end < len(text) and not anchor.endswith("\n"):
            end += 1  # step over the anchor line's newline
        if end == len(text) and not text.endswith("\n"):
            return text + "\n" + addition
        block = addition if addition.endswith("\n") else addition + "\n"
        return text[:end] + block + text[end:]
    return text[:end] + addition + text[end:]


def _delete(text: str, old: str, label: str) -> str:
    start = _locate(text, old, label, "old text")
    end = start + len(old)
    whole_lines = (start == 0 or text[start - 1] == "\n") and not old.endswith("\n")
    if whole_lines and end < len(text) and text[end] == "\n":
        end += 1  # deleting whole lines must not leave an empty line behind
    return text[:start] + text[end:]


def _locate(text: str, needle: str, label: str, what: str) -> int:
    if not needle:
        raise EditRejected("invalid_operations", f"{label}: the {what} is empty")
    first = text.find(needle)
    if first < 0:
        raise EditRejected("anchor_not_found", f"{label}: the {what} {_excerpt(needle)} is not in the text")
    # Overlapping matches count too: "aa" occurs twice in "aaa".
    if text.find(needle, first + 1) >= 0:
        count = sum(1 for i in range(len(text)) if text.startswith(needle, i))
        raise EditRejected(
            "anchor_ambiguous",
            f"{label}: the {what} {_excerpt(needle)} occurs {count} times; it must occur exactly once",
        )
    return first


def _check_limits(current: str, new: str, limits: Limits) -> None:
    # A component already over a limit may still be edited, but not grown:
    # rejecting every edit of it would leave no way to shrink it.
    measures = [
        ("characters", limits.max_chars, len),
        ("lines", limits.max_lines, lambda text: len(text.splitlines())),
        ("tokens (estimated)", limits.max_tokens, estimate_tokens),
    ]
    for unit, limit, measure in measures:
        if limit is not None and measure(new) > max(limit, measure(current)):
            raise EditRejected(
                "over_limit", f"the new text has {measure(new)} {unit}, more than the limit of {limit}"
            )


def _normalise(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def _excerpt(text: str) -> str:
    return repr(text if len(text) <= _EXCERPT else text[: _EXCERPT - 3] + "...")


def _one_line(text: str) -> str:
    return " ".join(text.split())
