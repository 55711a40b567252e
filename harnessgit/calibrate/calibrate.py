"""`harnessgit calibrate`: an A/A test of the evaluator and the gate on one harness.

The harness (the base tip by default) is scored again on every instance of the
selection split, ``repeats`` times, with fresh evaluator runs: never the cache's
stored draws, and never written to the cache (a calibration must not change what a
later gate reads). From those draws: the evaluator's noise (`noise.noise`), the
gate's rule applied to pairs of repeats of the same harness, where every pass is a
false pass (`noise.false_passes`), and the selection size a chosen effect needs
(`noise.needed`). The settings, the manifest and the evaluator are the commit's as
committed, as for the gate. The result is one `CalibrationRecord`, draws included.
"""

from __future__ import annotations

import contextlib
import time
from dataclasses import dataclass, field, replace
from typing import Literal

from harnessgit import layout
from harnessgit.calibrate.noise import (
    Draws,
    FalsePasses,
    Needed,
    Noise,
    aa_pairs,
    false_passes,
    needed,
    noise,
)
from harnessgit.calibrate.recorded import latest
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.batch import Plan
from harnessgit.evaluation.batches import Batches, Scoring
from harnessgit.evaluation.context import EvalContext, eval_context
from harnessgit.evaluation.eval import Execution
from harnessgit.evaluation.evaluators import Evaluators
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import Manifest
from harnessgit.gate.prior import all_gate_records, prior_before
from harnessgit.gate.settings import committed_settings, warn_ignored
from harnessgit.records import CalibrationRecord, EvalRecord, this_worker
from harnessgit.stats.decision import alpha_for_attempt, decide
from harnessgit.stats.pairing import PairedScores
from harnessgit.stats.verdict import Prior
from harnessgit.store import Store, Transaction
from harnessgit.targets import base_tip, resolve

SPLIT = "selection"
MAX_REPEATS = 50
Policy = Literal["strict", "bayes", "elond"]
POLICIES: tuple[Policy, ...] = ("strict", "bayes", "elond")  # [gate] policy: each on the same A/A pairs


@dataclass(frozen=True)
class Request:
    rev: str | None = None  # None: the base branch's tip
    repeats: int = 4
    effect: float = 0.05  # the true gain (a score difference) to size the selection split for
    draws: int = 200  # A/A comparisons the gate's rule is applied to


@dataclass(frozen=True)
class PolicyCheck:
    """One policy's rule on the A/A pairs, against the rate its promise allows there:
    alpha for strict; q for bayes and elond (with every candidate null, any pass is a
    false one, so the share of false passes among passes is the chance of a pass)."""

    policy: str
    limit: float
    false_passes: FalsePasses
    holds: bool  # the rate is not above ``limit`` with 95% confidence


@dataclass(frozen=True)
class Calibration:
    commit: str
    instances: int
    repeats: int
    noise: Noise
    policy: str  # the configured [gate] policy: `false_passes` and `holds` are its
    false_passes: FalsePasses
    holds: bool  # the false-pass rate is not above its limit with 95% confidence
    policies: list[PolicyCheck]  # every policy on the same pairs, the configured one included
    effect: float
    needed: list[Needed]
    record: CalibrationRecord = field(metadata={"json": False})
    wall_time: float


def check_request(request: Request) -> None:
    """Bad input, refused before anything runs: one line naming the setting."""
    if not 2 <= request.repeats <= MAX_REPEATS:
        raise HarnessgitError(f"--repeats must be between 2 and {MAX_REPEATS}, not {request.repeats}")
    if not 0 < request.effect <= 1:
        raise HarnessgitError(
            f"--effect must be above 0 and at most 100 points, not {request.effect * 100:g}"
        )
    if not 20 <= request.draws <= 100_000:
        raise HarnessgitError(f"--draws must be between 20 and 100000, not {request.draws}")


def calibrate(
    store: Store, config: Config, request: Request, execution: Execution = Execution()
) -> Calibration:
    check_request(request)
    commit = (
        resolve(store.refs, request.rev).sha if request.rev else base_tip(store.refs, config.harness.base)
    )
    settings = committed_settings(store.objects, commit, what="the calibrated commit")
    deciding = require_evaluator(settings.config, "`harnessgit calibrate`")
    warn_ignored(store, settings, "calibrate")
    ids = settings.manifest.ids(SPLIT)
    if len(ids) < 2:
        raise HarnessgitError(f"the {SPLIT} split needs at least two instances to calibrate on")
    context = eval_context(store.objects, deciding, commit)
    started = time.monotonic()
    draws = Draws(*_fresh_draws(store, deciding, context, settings.manifest, ids, request.repeats, execution))
    gate = deciding.gate
    alpha_1 = alpha_for_attempt(gate.alpha, 1)
    pairs = aa_pairs(draws, request.draws, gate.seed)
    found = noise(draws)
    prior = prior_before(all_gate_records(store.notes), (context.key.harness, context.key.harness))
    checks = [_check(pairs, deciding, policy, prior) for policy in POLICIES]
    configured = next(check for check in checks if check.policy == gate.policy)
    passes = configured.false_passes
    rows = needed(
        found.within_variance, request.effect, min_effect=gate.min_effect, alpha=alpha_1, n=len(ids)
    )
    wall = round(time.monotonic() - started, 4)
    record = CalibrationRecord(
        ts=store.clock(),
        commit=commit,
        **context.key.fields(),
        **settings.manifest.fields(SPLIT),
        instances=draws.instances,
        scores=draws.scores,
        clusters=list(draws.clusters) if draws.clusters else None,
        repeats=request.repeats,
        flip_rate=found.flip_rate,
        agreement=found.agreement,
        within_variance=found.within_variance,
        false_pass_rate=passes.rate,
        false_passes=passes.passes,
        draws=passes.draws,
        alpha=gate.alpha,
        alpha_1=alpha_1,
        min_effect=gate.min_effect,
        method=gate.method,
        resamples=gate.resamples,
        seed=gate.seed,
        effect=request.effect,
        needed_instances=rows[0].instances,
        policy=gate.policy,
        policies={check.policy: check.false_passes.rate for check in checks},
        wall_time=wall,
        worker=this_worker(),
    )
    txn = Transaction(f"calibrate {commit[:12]}")
    txn.append(layout.NOTES_CALIBRATION, commit, [record])
    store.refs.commit(txn)
    return Calibration(
        commit=commit,
        instances=len(ids),
        repeats=request.repeats,
        noise=found,
        policy=gate.policy,
        false_passes=passes,
        holds=configured.holds,
        policies=checks,
        effect=request.effect,
        needed=rows,
        record=record,
        wall_time=wall,
    )


def _check(pairs: list[PairedScores], config: Config, policy: Policy, prior: Prior) -> PolicyCheck:
    """``policy``'s rule on the A/A pairs, at a first attempt's level (no pass before it),
    under the prior the repository's gate records give; its settings otherwise the
    committed ones."""
    rules = replace(config.gate, policy=policy)

    def passes(pair: PairedScores) -> bool:
        return decide(pair, rules, attempt=1, allow_small=True, prior=prior).passed

    limit = rules.alpha if policy == "strict" else rules.q
    found = false_passes(pairs, passes, limit)
    return PolicyCheck(policy, limit, found, found.lower <= limit)


def _fresh_draws(
    store: Store,
    config: Config,
    context: EvalContext,
    manifest: Manifest,
    ids: list[str],
    repeats: int,
    execution: Execution,
) -> tuple[list[str], list[list[float]], list[str] | None]:
    """Every instance scored ``repeats`` times by fresh evaluator runs, kept in memory:
    (instances, scores per instance and repeat, clusters or None)."""
    size = config.evaluator.batch_size
    batches = [
        [(i, r) for i in ids[start : start + size]]
        for r in range(repeats)
        for start in range(0, len(ids), size)
    ]
    kept: list[EvalRecord] = []
    with contextlib.ExitStack() as stack:
        evaluators = execution.evaluators or stack.enter_context(Evaluators())
        runner = Batches(
            store,
            config,
            Scoring(context, manifest, SPLIT, fresh=True, keep=kept),
            evaluators,
            executor=execution.executor or config.evaluator.executor,
            on_stderr=execution.on_stderr,
        )
        with runner.scrubber.errors():
            runner.run(
                Plan(
                    batches,
                    execution.jobs or config.evaluator.jobs,
                    ScoreBook(),
                    execution.progress,
                    len(ids) * repeats,
                )
            )
    found: dict[tuple[str, int], float] = {}
    cluster: dict[str, str] = {}
    for record in kept:
        for i, instance in enumerate(record.instances):
            found[(instance, record.repeats[i])] = record.scores[i]
            if record.clusters and record.clusters[i]:
                cluster.setdefault(instance, record.clusters[i] or "")
    missing = [f"{i} (repeat {r})" for r in range(repeats) for i in ids if (i, r) not in found]
    if missing:
        raise HarnessgitError(f"the evaluator returned no score for {missing[0]} and {len(missing) - 1} more")
    scores = [[found[(i, r)] for r in range(repeats)] for i in ids]
    clusters = [cluster.get(i) or f"instance:{i}" for i in ids] if cluster else None
    return ids, scores, clusters


def for_commit(store: Store, commit: str) -> CalibrationRecord | bool | None:
    """The newest calibration of the evaluator and selection set ``commit`` holds as
    committed; None when there is none, False when ``commit`` holds no settings or no
    evaluator (nothing to calibrate, nothing to say)."""
    try:
        settings = committed_settings(store.objects, commit)
    except HarnessgitError:
        return False
    if not settings.config.evaluator.configured:
        return False
    key = eval_context(store.objects, settings.config, commit).key
    return latest(
        store, fingerprint=key.fingerprint, model=key.model, split_hash=settings.manifest.split_hash(SPLIT)
    )
