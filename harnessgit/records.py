"""Records: the immutable JSON lines that harnessgit keeps in git notes.

A note is a sequence of records, one canonical JSON object per line (sorted keys,
no insignificant whitespace). Order carries no meaning, so notes written on two
machines merge with git's ``cat_sort_uniq`` strategy. Records are never edited; a
correction is a new record that names the old one in ``supersedes``.

Readers skip what they cannot understand (a newer schema version, an unknown
kind, a damaged line) with a warning, so that one bad line never hides the rest.
Adding an optional field is a compatible change (same ``v``): older readers drop
fields they do not know. Anything else bumps ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import uuid
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_serializer

SCHEMA_VERSION = 1
log = logging.getLogger("harnessgit")


def new_record_id() -> str:
    return uuid.uuid4().hex


class Record(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    v: int = SCHEMA_VERSION
    id: str = Field(default_factory=new_record_id)
    kind: str
    ts: datetime
    supersedes: str | None = None

    @field_serializer("ts")
    def _ts(self, ts: datetime) -> str:
        return ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class ProposalRecord(Record):
    """Why a candidate exists: written on the candidate commit when it is proposed."""

    kind: Literal["proposal"] = "proposal"
    candidate: str
    parent: str
    components: list[str]
    rationale: str
    source: str  # worktree | file | patch | api | evolve
    proposer: str | None = None


class EvidenceRecord(Record):
    """Evidence attached to a commit: a JSONL blob kept reachable in the evidence store."""

    kind: Literal["evidence"] = "evidence"
    blob: str
    items: int
    bytes: int
    label: str = "evidence"  # what the blob holds: evidence, trajectories, reflective-dataset...
    item_kinds: dict[str, int] = Field(default_factory=dict)


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
    repeats: list[int]
    scores: list[float]
    clusters: list[str | None] | None = None
    failure_classes: list[str | None] | None = None
    evidence: str | None = None  # blob of JSON lines: feedback and trajectories, scrubbed
    cost: dict[str, float] | None = None  # summed over the batch
    wall_time: float
    worker: str
    fresh: bool = False  # run with --no-cache although results were on record


class TestPeekRecord(Record):
    """A look at the held-out test split: made visible, never used to decide."""

    __test__: ClassVar[bool] = False  # not a pytest test class, despite the name
    kind: Literal["test-peek"] = "test-peek"
    commit: str
    harness: str
    fingerprint: str
    model: str
    n: int
    mean: float
    forced: bool = False


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


class GateRecord(Record):
    """One gate decision: a candidate against the base tip on the selection split.

    Written on the candidate commit for every attempt (rejections count against
    the selection set too), and on the merge commit when a merge lands. Holds
    what `verify` needs to recompute the decision from the stored scores.
    """

    kind: Literal["gate"] = "gate"
    candidate: str | None = None
    commit: str  # the candidate commit gated
    tree: str  # its tree: what the merge commit must hold
    base: str  # the base tip it was compared with
    base_branch: str
    harness: str
    base_harness: str
    fingerprint: str
    model: str
    split: str
    split_hash: str
    passed: bool
    reasons: list[str]
    method: str
    attempt: int  # k: distinct comparisons gated on this selection set, this one included
    alpha: float
    alpha_k: float
    alpha_spent: float
    min_effect: float
    min_instances: int
    allow_small: bool
    seed: int
    resamples: int
    n: int
    base_mean: float | None = None
    candidate_mean: float | None = None
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    lower_bound: float | None = None
    p_value: float | None = None
    mde: float | None = None
    wins: int = 0
    losses: int = 0
    ties: int = 0
    regressed: list[str] = Field(default_factory=list)  # the first few, by name
    regressed_count: int = 0
    instances: str | None = None  # blob: the compared instance ids, one per line, sorted
    checks: list[str] = Field(default_factory=list)  # failing check findings, one line each
    merge: str | None = None  # the merge commit, on the copy written there
    # The commit whose harnessgit.toml and split manifest the decision read (the base;
    # None: the working tree's, for a review of a base from before harnessgit).
    settings: str | None = None


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


class IterationRecord(Record):
    """One iteration of `harnessgit evolve`, on the parent commit it started from.

    Rejected proposals stay on the record too (GEPA forgets them, gepa #379): with
    their reason here and the proposer's raw output as evidence.
    """

    kind: Literal["evolve-iteration"] = "evolve-iteration"
    run: str  # id of the evolve invocation
    seed: int
    iteration: int  # counts across resumed runs with the same seed
    parent: str  # commit
    parent_name: str  # candidate id or base branch
    component: str
    minibatch: list[str]
    parent_score: float | None = None  # minibatch mean
    candidate: str | None = None
    commit: str | None = None
    candidate_score: float | None = None
    # skipped-perfect | rejected-proposal | rejected-checks | not-better | not-gated | gate-refused |
    # gate-rejected | gate-passed | merged
    outcome: str
    reason: str = ""
    selection_mean: float | None = None
    proposer: str = ""
    cost_usd: float | None = None
    rollouts: int = 0  # evaluator rollouts this iteration ran (cached ones excluded)
    seconds: float | None = None  # wall time of the iteration
    evaluator_seconds: float | None = None  # of which evaluator processes ran
    proposer_seconds: float | None = None  # of which the proposer took


AnyRecord = Annotated[
    EvalRecord
    | ProposalRecord
    | EvidenceRecord
    | TestPeekRecord
    | LabelRecord
    | GateRecord
    | OverrideRecord
    | RetireRecord
    | IterationRecord,
    Field(discriminator="kind"),
]

_KINDS: dict[str, type[Record]] = {
    "eval": EvalRecord,
    "proposal": ProposalRecord,
    "evidence": EvidenceRecord,
    "test-peek": TestPeekRecord,
    "label": LabelRecord,
    "gate": GateRecord,
    "override": OverrideRecord,
    "retire": RetireRecord,
    "evolve-iteration": IterationRecord,
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


_ADAPTER: TypeAdapter[Record] = TypeAdapter(AnyRecord)


def dump_record(record: Record) -> bytes:
    data = record.model_dump(mode="json", exclude_none=True)
    return json.dumps(
        data, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    ).encode("utf-8")


def parse_note(text: bytes, where: str = "") -> list[Record]:
    """Every record of one note, skipping blank lines and what cannot be read."""
    records = []
    for line in text.splitlines():
        if line.strip():
            record = parse_record(line, where)
            if record is not None:
                records.append(record)
    return records


def parse_record(line: bytes, where: str = "") -> Record | None:
    try:
        return _ADAPTER.validate_json(line)
    except ValidationError:
        pass
    return _parse_tolerant(line, where)


def _parse_tolerant(line: bytes, where: str) -> Record | None:
    at = f" in {where}" if where else ""
    try:
        data: Any = json.loads(line)
    except ValueError:
        log.warning("skipping a note line that is not JSON%s", at)
        return None
    if not isinstance(data, dict):
        log.warning("skipping a note line that is not a JSON object%s", at)
        return None
    version, kind = data.get("v"), data.get("kind")
    if not isinstance(version, int) or version > SCHEMA_VERSION:
        log.warning(
            "skipping a record of schema version %r%s (this harnessgit reads up to %d)",
            version,
            at,
            SCHEMA_VERSION,
        )
        return None
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        log.warning("skipping a record of unknown kind %r%s", kind, at)
        return None
    known = {key: value for key, value in data.items() if key in cls.model_fields}
    try:
        return cls.model_validate(known)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        log.warning("skipping an invalid %s record%s: %s: %s", kind, at, field, first["msg"])
        return None
