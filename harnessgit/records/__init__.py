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
import os
import socket
import uuid
from datetime import datetime, timezone
from typing import Annotated, Any, ClassVar, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    model_validator,
)

SCHEMA_VERSION = 1

# What the numbers in a record can be; every float must be finite as well (the models'
# allow_inf_nan=False): a NaN score read from a note once crashed the gate (issue 15).
Score = Annotated[float, Field(ge=0, le=1)]  # a score, or a mean of scores
Difference = Annotated[float, Field(ge=-1, le=1)]  # between two scores or means
Probability = Annotated[float, Field(ge=0, le=1)]
Level = Annotated[float, Field(gt=0, lt=1)]  # alpha, alpha_k and the alpha spent
Count = Annotated[int, Field(ge=0)]
Seconds = Annotated[float, Field(ge=0)]


def new_record_id() -> str:
    return uuid.uuid4().hex


def this_worker() -> str:
    """``machine:pid`` of this process, for the records that say where they were made.
    The machine is ``HARNESSGIT_MACHINE`` when set (the name the sync script gives this
    machine's evidence store), else the host name."""
    return f"{os.environ.get('HARNESSGIT_MACHINE') or socket.gethostname()}:{os.getpid()}"


# defer_build: pydantic builds a model's validator on its first use, not at import. Built
# eagerly, the thirteen models below cost about 60 ms of CPU at every start of harnessgit
# (issue 17), while a read command validates two or three kinds.
_CONFIG = ConfigDict(frozen=True, extra="forbid", allow_inf_nan=False, defer_build=True)


class Record(BaseModel):
    model_config = _CONFIG

    v: int = Field(default=SCHEMA_VERSION, ge=1, le=SCHEMA_VERSION)
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
    other_parent: str | None = None  # a merge proposal: the second candidate merged (commit)


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


class CalibrationRecord(Record):
    """An A/A calibration (`harnessgit calibrate`): one harness scored again with fresh
    repeats on the selection split, the evaluator's noise, and the gate's rule applied
    to pairs of those repeats. On the calibrated commit, on
    ``refs/notes/harnessgit/calibration`` (a ref older versions never read). Holds the
    draws themselves, so every number can be recomputed."""

    kind: Literal["calibration"] = "calibration"
    commit: str
    harness: str
    fingerprint: str
    model: str
    split: str
    split_hash: str
    manifest: str
    instances: list[str]
    scores: list[list[Score]]  # scores[i]: instance i's fresh score in each repeat
    clusters: list[str | None] | None = None
    repeats: Annotated[int, Field(ge=2)]
    flip_rate: Probability
    agreement: Probability
    within_variance: Probability
    false_pass_rate: Probability
    false_passes: Count
    draws: Annotated[int, Field(ge=1)]
    alpha: Level
    alpha_1: Level  # the level of a first attempt, which the A/A pairs are tested at
    min_effect: Difference
    method: str
    resamples: Count
    seed: int
    effect: Annotated[float, Field(gt=0, le=1)]  # the effect `needed_instances` is for
    needed_instances: Count | None = None  # for 80% power with one repeat per side; None: no noise
    policy: str | None = None  # the configured gate policy: the false-pass figures above are its
    policies: dict[str, Probability] | None = None  # every policy's false-pass rate on the same pairs
    wall_time: Seconds
    worker: str


class ModelCheck(BaseModel):
    """One other model's "no significant loss" test inside a gate record."""

    model_config = _CONFIG

    model: str
    n: Count  # instances paired; 0 when either side lacks scores
    base_mean: Score | None = None
    candidate_mean: Score | None = None
    difference: Difference | None = None
    ci_low: Difference | None = None
    ci_high: Difference | None = None
    p_value: Probability | None = None  # of "no loss"
    level: Level | None = None  # Holm's level for this model
    loss: bool = False


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
    # k: distinct comparisons gated on this selection set, this one included
    attempt: Annotated[int, Field(ge=1)]
    alpha: Level
    alpha_k: Level
    alpha_spent: Level
    min_effect: Difference
    min_instances: Count
    allow_small: bool
    seed: int
    resamples: Count
    n: Count
    base_mean: Score | None = None
    candidate_mean: Score | None = None
    difference: Difference | None = None
    ci_low: Difference | None = None
    ci_high: Difference | None = None
    lower_bound: Difference | None = None
    p_value: Probability | None = None
    mde: Annotated[float, Field(ge=0)] | None = None
    wins: Count = 0
    losses: Count = 0
    ties: Count = 0
    regressed: list[str] = Field(default_factory=list)  # the first few, by name
    regressed_count: Count = 0
    instances: str | None = None  # blob: the compared instance ids, one per line, sorted
    checks: list[str] = Field(default_factory=list)  # failing check findings, one line each
    merge: str | None = None  # the merge commit, on the copy written there
    # The commit whose harnessgit.toml and split manifest the decision read (the base;
    # None: the working tree's, for a review of a base from before harnessgit).
    settings: str | None = None
    # machine:pid that decided (`this_worker`): two clones that gate on one selection set
    # without syncing take the same k, and verify names both (None before issue 15).
    worker: str | None = None
    # [gate] models: per other model, its loss test (Holm at alpha_k; issue 19). None:
    # only ``model`` was compared.
    models: list[ModelCheck] | None = None
    # blob: the ids of the eval records whose scores the decision read, every model's,
    # one per line, sorted. Clones that sync hold each other's records of one cache key,
    # with other draws from a non-deterministic evaluator: verify re-checks from these
    # (issue 17). None before: verify reads the key's records older than the decision.
    evals: str | None = None
    # Three verdicts (issue 25; docs/gate.md). None: a record from before, whose
    # verdict is `passed` ("reject" shown as fail: it exited 1, as fail does).
    verdict: Literal["pass", "fail", "inconclusive"] | None = None
    policy: Literal["strict", "bayes", "elond"] = "strict"  # records from before were strict
    q: Probability | None = None  # bayes: the share of false merges tolerated
    se: Annotated[float, Field(ge=0)] | None = None  # standard error of the difference
    upper_bound: Difference | None = None  # strict: the (1 - alpha) upper bound (the fail test)
    chance_better: Probability | None = None  # P(true gain > 0) under the prior
    expected_loss: Annotated[float, Field(ge=0)] | None = None  # E[max(0, -true gain)] if merged
    corrected: Difference | None = None  # the gain corrected for selection (posterior mean)
    needed: Count | None = None  # inconclusive: selection instances that would decide (80% power)
    # The prior of true gains the numbers (and policy bayes) used: learned from the
    # gains of `prior_looks` earlier gate records (0: the default prior).
    prior_mean: Difference | None = None
    prior_sd: Annotated[float, Field(gt=0)] | None = None
    prior_looks: Count | None = None
    # Which algorithm learned that prior (`harnessgit.stats.verdict.learn_prior`; issue 25
    # item 3). None: a record from before, whose prior was algorithm 1's.
    prior_algorithm: Annotated[int, Field(ge=1)] | None = None
    # When the prior was learned from gains the caller gave rather than from the gate
    # records (evolve: every look it screened on the selection split, issue 25): those
    # (gain, standard error) pairs, so that `verify` learns the same prior again.
    prior_gains: list[tuple[Difference, Annotated[float, Field(ge=0)]]] | None = None
    # elond: the two e-values, the level alpha_t and the passes before it on this set
    e_value: Annotated[float, Field(ge=0)] | None = None
    e_fail: Annotated[float, Field(ge=0)] | None = None
    level: Probability | None = None
    passed_before: Count | None = None
    # sequential evaluation (`harnessgit.gate.sequential`): the batch size, and the size
    # of the whole selection split of which the first `n` in reading order were read
    batch: Count | None = None
    selection_size: Count | None = None
    # A selection pool ([gate] sample; `harnessgit.gate.selection_pool`): the sample read first
    # and the verdict there; when that was inconclusive and the pool had more, the batch
    # the pool was read in after it and the e-process where it stopped (`n` instances,
    # the first `n` of the pool's reading order; `selection_size` is the pool's size).
    sample: Count | None = None
    sample_verdict: Literal["pass", "fail", "inconclusive"] | None = None
    pool_batch: Count | None = None
    pool_level: Probability | None = None
    pool_e_value: Annotated[float, Field(ge=0)] | None = None
    pool_e_fail: Annotated[float, Field(ge=0)] | None = None

    @property
    def shown_verdict(self) -> Literal["pass", "fail", "inconclusive"]:
        """The verdict, for records from before three verdicts too."""
        if self.verdict is not None:
            return self.verdict
        return "pass" if self.passed else "fail"


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
    iteration: Count  # counts across resumed runs with the same seed
    parent: str  # commit
    parent_name: str  # candidate id or base branch
    component: str
    minibatch: list[str]
    parent_score: Score | None = None  # minibatch mean
    candidate: str | None = None
    commit: str | None = None
    candidate_score: Score | None = None
    # skipped-perfect | rejected-proposal | rejected-checks | not-better | not-gated | conflict |
    # gate-refused | gate-failed | gate-inconclusive | gate-passed | merged | budget |
    # interrupted (gate-rejected: a record from before three verdicts)
    outcome: str
    reason: str = ""
    files: list[str] = Field(default_factory=list)  # conflict: the harness files that conflicted
    move: str = "reflect"  # reflect (one proposer edit) | merge (two frontier candidates combined)
    other_parent: str | None = None  # merge: the second parent (commit), with its name
    other_parent_name: str | None = None
    ancestor: str | None = None  # merge: their common ancestor (commit)
    selection_mean: Score | None = None
    proposer: str = ""
    cost_usd: float | None = None  # the proposer's, as it reported it
    evaluator_cost_usd: float | None = None  # evaluator "usd" costs this iteration ran
    proposals: Count | None = None  # proposer calls (older records: see `proposer_calls`)
    rollouts: Count = 0  # evaluator rollouts this iteration ran (cached ones excluded)
    seconds: Seconds | None = None  # wall time of the iteration
    evaluator_seconds: Seconds | None = None  # of which evaluator processes ran
    proposer_seconds: Seconds | None = None  # of which the proposer took
    # Who ran the loop: None is `harnessgit evolve`; "gepa" an iteration of a GEPA run
    # recorded by harnessgit.integrations.gepa (its outcomes: accepted, rejected,
    # merge-accepted, merge-rejected, skipped, error).
    optimizer: str | None = None

    @property
    def proposer_calls(self) -> int:
        """Proposer calls this iteration made; records written before ``proposals``
        existed made one unless the minibatch was already solved."""
        if self.proposals is not None:
            return self.proposals
        return 0 if self.outcome == "skipped-perfect" else 1


class RunRecord(Record):
    """One optimisation run as a whole, on the commit it started from: what bounded
    it, why it stopped, and where it ended. Written once, when the run ends (a run
    killed before its end has iteration records and no run record)."""

    kind: Literal["run"] = "run"
    run: str  # the id its iteration records carry
    optimizer: str  # "gepa"
    seed: int
    base: str  # the commit the run started from (GEPA's seed candidate)
    budget: Count | None = None  # max metric calls, when the run had that bound
    metric_calls: Count = 0
    iterations: Count = 0
    candidates: Count = 0  # proposals recorded, accepted and rejected
    stop_reason: str
    best: str | None = None  # commit of the optimiser's best candidate at the end
    fingerprint: str = ""  # the evaluator fingerprint of its eval records
    model: str = ""
    seconds: Seconds | None = None


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
