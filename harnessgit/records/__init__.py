"""Records: the immutable JSON lines that harnessgit keeps in git notes.

A note is a sequence of records, one canonical JSON object per line (sorted keys,
no insignificant whitespace). Order carries no meaning, so notes written on two
machines merge with git's ``cat_sort_uniq`` strategy. Records are never edited; a
correction is a new record that names the old one in ``supersedes``.

Readers skip what they cannot understand (a newer schema version, an unknown
kind, a damaged line) and what cannot be true (a score that is NaN or outside
[0, 1], a negative count, columns of an evaluation record that disagree in length),
so that no decision ever reads it and one bad line never hides the rest; `Skipped`
collects them so that a read warns once per kind of problem, naming the notes.
Adding an optional field is a compatible change (same ``v``): older readers drop
fields they do not know. Anything else bumps ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, Field, model_validator

from harnessgit.records.base import (
    RECORD_CONFIG,
    SCHEMA_VERSION,
    Count,
    Record,
    Score,
    Seconds,
    new_record_id,
    this_worker,
)
from harnessgit.records.gate import CalibrationRecord, GateRecord, ModelCheck
from harnessgit.records.runs import IterationRecord, RunRecord

__all__ = [
    "SCHEMA_VERSION",
    "AnyRecord",
    "CalibrationRecord",
    "EvalRecord",
    "EvidenceRecord",
    "ExportRecord",
    "GateRecord",
    "IterationRecord",
    "LabelRecord",
    "ModelCheck",
    "ModelRecord",
    "OverrideRecord",
    "ProposalRecord",
    "Record",
    "RetireRecord",
    "RunRecord",
    "TestPeekRecord",
    "live",
    "new_record_id",
    "this_worker",
    "view_of",
]


class RecordedChecks(BaseModel):
    """The harness checks' verdict on a proposal's change, kept so that the gate need not
    judge the same change again (`harnessgit.candidates.checked`): the report against
    ``base`` (the parent, the base branch's tip when proposed), valid while ``settings``
    (a digest of everything else the verdict depends on) is unchanged. ``report``: the
    `CheckReport`'s fields, as `harnessgit check --json` states them."""

    model_config = RECORD_CONFIG

    base: str
    settings: str
    report: dict[str, Any]


class ProposalRecord(Record):
    """Why a candidate exists: written on the candidate commit when it is proposed."""

    kind: Literal["proposal"] = "proposal"
    candidate: str
    parent: str
    components: list[str]
    rationale: str
    source: str  # worktree | file | patch | api | evolve
    proposer: str | None = None
    other_parent: str | None = None  # a merge proposal: the second candidate merged (commit)
    checks: RecordedChecks | None = None  # the checks' verdict on the change (None: not judged)


class EvidenceRecord(Record):
    """Evidence attached to a commit: a JSONL blob kept reachable in the evidence store."""

    kind: Literal["evidence"] = "evidence"
    blob: str
    items: Count
    bytes: Count
    label: str = "evidence"  # what the blob holds: evidence, trajectories, reflective-dataset...
    item_kinds: dict[str, Count] = Field(default_factory=dict)


class EvalRecord(Record):
    """One completed batch of an evaluation: per-instance, per-repeat scores.

    Columnar (``instances[i]``, ``repeats[i]``, ``scores[i]`` form row i) because
    thousands of these are read at once, and lists of numbers parse fastest.
    Written on the evaluated commit; found for any commit with the same harness
    tree id, evaluator fingerprint and model, which is the cache key.
    """

    kind: Literal["eval"] = "eval"
    commit: str
    grader: str | None = None  # scored with this commit's evaluator, not its own (after a regrade)
    harness: str  # git tree id of the harness files alone
    fingerprint: str  # evaluator command + evaluator files
    model: str
    split: str
    split_hash: str  # the split's instance set: what makes scores comparable
    manifest: str  # hash of the whole manifest at the time
    instances: list[str]
    repeats: list[Count]
    scores: list[Score]
    clusters: list[str | None] | None = None
    failure_classes: list[str | None] | None = None
    # Per row, the evaluator's score on each of several objectives (GEPA's
    # ``objective_scores``): what the "objective", "hybrid" and "cartesian" frontiers read.
    objective_scores: list[dict[str, float] | None] | None = None
    evidence: str | None = None  # blob of JSON lines: feedback and trajectories, scrubbed
    cost: dict[str, float] | None = None  # summed over the batch
    wall_time: Seconds
    worker: str
    fresh: bool = False  # run with --no-cache although results were on record

    @model_validator(mode="after")
    def _rows_agree(self) -> EvalRecord:
        """Row i is column i of every list: a column of another length would pair a
        score with the wrong instance, or fail the reader mid-way (IndexError)."""
        rows = len(self.instances)
        columns: dict[str, list[Any] | None] = {
            "repeats": self.repeats,
            "scores": self.scores,
            "clusters": self.clusters,
            "failure_classes": self.failure_classes,
            "objective_scores": self.objective_scores,
        }
        uneven = [name for name, column in columns.items() if column is not None and len(column) != rows]
        if uneven:
            raise ValueError(f"{' and '.join(uneven)} must have one entry per instance")
        return self


class TestPeekRecord(Record):
    """A look at the held-out test split: made visible, never used to decide."""

    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name
    kind: Literal["test-peek"] = "test-peek"
    commit: str
    harness: str
    fingerprint: str
    model: str
    n: Count
    mean: Score
    forced: bool = False


class ExportRecord(Record):
    """An export of recorded trajectories as training data (`harnessgit export
    failures`) from a split that decides or is held out, made with --force: like a
    test peek, it is made visible, since training on the selection or test split
    makes it no longer a fair judge (issue 19)."""

    kind: Literal["export"] = "export"
    commit: str  # the base tip when the export was made (the note's commit)
    split: str
    model: str | None = None  # the --model filter; None: every model
    conversations: Count
    pairs: bool = False
    commits: list[str]  # the harness commits whose trajectories were exported
    digest: str  # sha256 of the exported text, to match a file to its record
    forced: bool = True
    author: str = ""  # who exported (git's user.name <user.email>); "" in older records


class ModelRecord(Record):
    """A model label registered as a checkpoint: its parent and what changed in the
    weights (`harnessgit model add`), so a score change can be told apart as a harness
    edit or a weights change (issue 19). On the base tip at the time, on
    ``refs/notes/harnessgit/models``."""

    kind: Literal["model"] = "model"
    name: str
    parent: str | None = None
    note: str = ""
    author: str = ""
    commit: str  # the base tip when it was registered (the note's commit)


class LabelRecord(Record):
    """A move of a label such as ``production``: who moved it where, and on what grounds."""

    kind: Literal["label"] = "label"
    name: str
    commit: str
    previous: str | None = None
    author: str = ""
    reason: str = ""
    gate: str | None = None  # id of the gate record that let this commit onto the base branch
    forced: bool = False


class OverrideRecord(Record):
    """A base-branch move made without passing the gate, on purpose and on the record."""

    kind: Literal["override"] = "override"
    commit: str  # the commit that moved the base branch
    candidate: str | None = None
    action: str  # e.g. "revert"
    reason: str
    author: str


class RetireRecord(Record):
    """A candidate branch moved to the archive: dominated, rejected, or merged."""

    kind: Literal["retire"] = "retire"
    candidate: str
    commit: str
    reason: str  # dominated | rejected | merged
    detail: str = ""


AnyRecord = Annotated[
    EvalRecord
    | ProposalRecord
    | EvidenceRecord
    | TestPeekRecord
    | ExportRecord
    | ModelRecord
    | LabelRecord
    | GateRecord
    | OverrideRecord
    | RetireRecord
    | IterationRecord
    | RunRecord
    | CalibrationRecord,
    Field(discriminator="kind"),
]

_KINDS: dict[str, type[Record]] = {
    "eval": EvalRecord,
    "proposal": ProposalRecord,
    "evidence": EvidenceRecord,
    "test-peek": TestPeekRecord,
    "export": ExportRecord,
    "model": ModelRecord,
    "label": LabelRecord,
    "gate": GateRecord,
    "override": OverrideRecord,
    "retire": RetireRecord,
    "evolve-iteration": IterationRecord,
    "run": RunRecord,
    "calibration": CalibrationRecord,
}


_View = TypeVar("_View")


def view_of(cls: type[_View], source: object, **given: Any) -> _View:
    """The dataclass ``cls`` filled from ``source`` (a record, or a row of one): each
    field is the source's same-named attribute, unless ``given``. What a result shows
    of a record, without copying its fields one by one."""
    names = [spec.name for spec in dataclasses.fields(cls) if spec.init and spec.name not in given]  # type: ignore[arg-type]
    return cls(**{name: getattr(source, name) for name in names}, **given)


def live(records: list[Record]) -> list[Record]:
    """Records not superseded by another record in the list."""
    superseded = {record.supersedes for record in records if record.supersedes}
    return [record for record in records if record.id not in superseded]
