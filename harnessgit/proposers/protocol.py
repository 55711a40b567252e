"""What goes into a proposer and what comes out of it.

A proposer is asked to rewrite ONE harness component (a file) given a reflective
dataset: the instances it failed on, what it produced and the evaluator's feedback
(GEPA's reflection step, arXiv 2507.19457). It answers with a `ProposedEdit` that
has already been applied to the current text and sanity-checked, or with a
`RejectedProposal` saying why its output must not be adopted. Infrastructure
failures (unreachable endpoint, bad key, a command that crashes) are not
proposals at all: they raise `harnessgit.errors.ProposerFailed`.

These models are the command proposer's wire format too (docs/proposers.md), so
field names are part of a public protocol: add optional fields, never rename.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from harnessgit.render import size
from harnessgit.scrub import Scrubber

REQUEST_VERSION = 1
MAX_RATIONALE_CHARS = 4000
# What evidence keeps of a proposer's raw output. A reply that edits one component
# is a few KiB; issue 15 measured a rejected 100 MiB reply stored whole (57 MB blob,
# pinned and pushed with the evidence).
MAX_KEPT_OUTPUT_BYTES = 64 * 1024

# Why a proposal was not adopted. Stable strings: they end up in evidence records.
RejectionCode = Literal[
    "empty",  # no text, or an edit that leaves the component empty
    "unchanged",  # identical to the current text
    "truncated",  # the model stopped at its token limit (finish_reason "length")
    "unclosed_fence",  # a ``` block was opened and never closed: output cut short (gepa #390)
    "no_fence",  # the reply holds no fenced block to take the text from
    "invalid_operations",  # delta operations that do not parse
    "anchor_not_found",  # an anchor / old text that does not occur in the current text
    "anchor_ambiguous",  # ... or occurs more than once
    "over_limit",  # longer than the request's limits
]


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Limits(_Model):
    """Length limits for the new text; None means no limit.

    Bloat is the best documented failure of text optimisers: Decagon saw GEPA
    prompts pass 5,000 characters while generalisation fell, and compressing them
    to ~1,000 characters lost almost nothing. The limits are stated in the prompt
    and enforced on the result.
    """

    max_chars: int | None = Field(default=None, ge=1)
    max_lines: int | None = Field(default=None, ge=1)
    # Estimated as characters / 4 (see `edits.estimate_tokens`): no tokenizer needed.
    max_tokens: int | None = Field(default=None, ge=1)


class ReflectiveExample(_Model):
    """One evaluated instance the proposer should learn from."""

    instance: str
    inputs: JsonValue = None
    outputs: JsonValue = None  # what the harnessed model answered
    trajectory: str | None = None  # an excerpt, not a whole trajectory: prompts have a budget
    feedback: str = ""
    score: float | None = Field(default=None, ge=0, le=1)


class ProposalRequest(_Model):
    v: int = REQUEST_VERSION
    component: str  # repository-relative path of the file to edit
    current_text: str
    examples: list[ReflectiveExample] = Field(default_factory=list)
    limits: Limits = Field(default_factory=Limits)
    # "delta" asks for edit operations: small reviewable diffs, the form SkillOpt's
    # accepted edits took (1-4 per benchmark, arXiv 2605.23904).
    form: Literal["replace", "delta"] = "delta"
    instructions: str | None = None  # appended to the prompt, e.g. a house style


# Delta operations (SkillOpt's edit vocabulary). Each anchor / old text must occur
# exactly once in the text the operation applies to; see `edits.apply_operations`.
class Append(_Model):
    op: Literal["append"] = "append"
    text: str


class InsertAfter(_Model):
    op: Literal["insert_after"] = "insert_after"
    anchor: str
    text: str


class Replace(_Model):
    op: Literal["replace"] = "replace"
    old: str
    new: str


class Delete(_Model):
    op: Literal["delete"] = "delete"
    old: str


Operation = Annotated[Append | InsertAfter | Replace | Delete, Field(discriminator="op")]


class Usage(_Model):
    """What one proposal cost. Unknown values stay None rather than 0."""

    model: str | None = None
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    cost_usd: float | None = Field(default=None, ge=0)
    latency_seconds: float = Field(default=0.0, ge=0)
    retries: int = Field(default=0, ge=0)  # attempts beyond the first


class ProposedEdit(_Model):
    """A proposal that applied cleanly and passed `edits.sanity_check`.

    ``new_text`` is always the complete new content of ``component``; when the
    proposer answered with delta operations they are kept in ``operations`` too,
    for review and evidence.
    """

    kind: Literal["edit"] = "edit"
    component: str
    new_text: str
    operations: list[Operation] | None = None
    rationale: str = ""
    raw_output: str = ""
    usage: Usage = Field(default_factory=Usage)
    proposer: str = ""  # e.g. "openai:gpt-4.1-mini", for ProposalRecord.proposer


class RejectedProposal(_Model):
    """A proposal that must not be adopted, and why. A result, not an exception:
    the loop records it as evidence and carries on (GEPA forgets these, gepa #379)."""

    kind: Literal["rejected"] = "rejected"
    component: str
    code: RejectionCode
    reason: str  # one line a user can read
    rationale: str = ""
    raw_output: str = ""
    usage: Usage = Field(default_factory=Usage)
    proposer: str = ""

    @model_validator(mode="after")
    def _one_line(self) -> RejectedProposal:
        if "\n" in self.reason:
            raise ValueError("reason must be one line")
        return self


def capped(text: str, limit: int = MAX_RATIONALE_CHARS) -> str:
    """``text`` cut to ``limit`` characters: a rationale is a paragraph, not a transcript."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def kept_output(raw: str, scrubber: Scrubber, limit: int = MAX_KEPT_OUTPUT_BYTES) -> dict[str, JsonValue]:
    """What evidence keeps of a proposer's raw output: all of it, scrubbed, when it fits
    in ``limit`` bytes, else its first three quarters and its last quarter (where a
    cut-off reply shows it); always its size and the sha256 of the scrubbed text.

    Scrubbed before it is cut, so that no cut leaves part of a secret unrecognised;
    the hash is of the scrubbed text, so that it cannot confirm a guess at a secret.
    """
    clean = scrubber.text(raw)
    data = clean.encode("utf-8")
    excerpt = clean
    if len(data) > limit:
        head = data[: limit * 3 // 4].decode("utf-8", "ignore")
        tail = data[len(data) - limit // 4 :].decode("utf-8", "ignore")
        left_out = len(data) - len(head.encode("utf-8")) - len(tail.encode("utf-8"))
        excerpt = f"{head}\n[{size(left_out)} of {size(len(data))} left out]\n{tail}"
    return {
        "raw_output": excerpt,
        "raw_output_bytes": len(raw.encode("utf-8")),
        "raw_output_sha256": hashlib.sha256(data).hexdigest(),
        "raw_output_truncated": len(data) > limit,
    }
