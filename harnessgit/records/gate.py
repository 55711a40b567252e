"""The gate's records: one decision (`GateRecord`, with a `ModelCheck` per other model)
and the A/A calibration of the evaluator and the gate's rule (`CalibrationRecord`)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field

from harnessgit.records.base import (
    RECORD_CONFIG,
    Count,
    Difference,
    Level,
    Probability,
    Record,
    Score,
    Seconds,
)


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

    model_config = RECORD_CONFIG

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
