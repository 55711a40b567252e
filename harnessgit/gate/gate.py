"""`harnessgit gate`: may this candidate move the base branch?

Passes only if all hold (docs/gate.md):

1. the candidate descends from the base tip, so the tree evaluated is the tree merged;
2. on the selection split, with one evaluator fingerprint, split and model, the
   one-sided lower confidence bound of the mean paired difference clears
   ``min_effect`` (`harnessgit.stats.decision.decide`: paired bootstrap over
   instances or clusters, or an exact sign/McNemar test);
3. at the level alpha_k of this attempt: every distinct (base harness, candidate
   harness) comparison gated on one selection set counts as an attempt, so the
   family-wise false-accept rate over any number of attempts stays at most alpha;
4. the selection set has at least ``min_instances`` instances (or --allow-small);
5. the harness checks pass on the change (`harnessgit.checks.check_change`, or the
   verdict its proposal record kept from the same check: `harnessgit.candidates.checked`).

Three steps, each its own function: `compare` reads what the gate needs from the
store (after `evaluate_sides` has run what is missing), `decide_gate` turns it into
an outcome and the record it would write without writing anything (`review` stops
there), and `record_gate` (`harnessgit.gate.attempts`) writes that record, taking
attempt k only if no other gate took it meanwhile. Every attempt `harnessgit gate` makes
is recorded, rejections included: they spend the selection set's error budget too.
A refusal (`preconditions`: merged already, not descending from the base tip, a
regrade, failing checks, too few instances) is not an attempt: it is found before
anything is evaluated and writes nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from harnessgit.candidates.checked import Checker, reuse
from harnessgit.check_findings import CheckReport
from harnessgit.config import Config, require, require_evaluator
from harnessgit.errors import ConcurrentUpdate, ConfigError, GateRefused, HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.execution import EvalRequest, Execution, evaluate
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import ManifestError, load_manifest
from harnessgit.gate.attempts import attempt_on_record, record_gate, synced_before_counting
from harnessgit.gate.models import evaluate_models, other_models, with_models
from harnessgit.gate.outcome import GateInputs, GateOutcome, Sides
from harnessgit.gate.prior import all_gate_records, passes_before, prior_before
from harnessgit.gate.selection_pool import check_sample, extend
from harnessgit.gate.sequential import evaluate_in_batches, evaluate_instances, reading_order
from harnessgit.gate.settings import Settings, committed_settings, warn_ignored
from harnessgit.gate.used import evals_listing
from harnessgit.object_ids import object_id
from harnessgit.records import GateRecord, this_worker
from harnessgit.stats.decision import GateDecision, alpha_for_attempt, alpha_spent, decide
from harnessgit.stats.pairing import pair_scores
from harnessgit.stats.verdict import screened_prior
from harnessgit.store import Store
from harnessgit.targets import base_tip, resolve

SELECTION = "selection"
REGRESSED_KEPT = 25  # regressed instances named in a record; the rest are counted
RACES = 20  # decisions a gate re-makes when other gates record first
NOT_EVALUATED = "not evaluated on the whole selection split: run "


@dataclass(frozen=True)
class GateRequest:
    """What one gate (or merge) is asked: the candidate ``name``, the base branch (None:
    [harness] base), --allow-small, more ``models`` on which the candidate must show no
    significant loss besides ``[gate] models`` (`harnessgit.gate.models`), and
    ``prior_gains``: the (gain, standard error) pairs to learn the prior from, recorded
    with the decision (evolve passes every look it screened, `harnessgit.evolve.gating`);
    None: the gate records' (`prior_before`)."""

    name: str
    base: str | None = None
    allow_small: bool = False
    models: Sequence[str] = ()
    prior_gains: Sequence[tuple[float, float]] | None = None
    # (policy, q) to decide with instead of the base's committed [gate] policy and q:
    # evolve's own default where [gate] policy is not set, and its end-of-run q
    # (`harnessgit.evolve.adopt`). The record holds what decided, as always.
    policy: tuple[Literal["strict", "bayes", "elond"], float] | None = None


def run_gate(
    store: Store,
    config: Config,
    request: GateRequest,
    *,
    execution: Execution,
    check: Checker,
    book: ScoreBook | None = None,
) -> GateOutcome:
    """The gate command: check the preconditions (a refusal evaluates and records
    nothing), evaluate what is missing with ``execution``'s runner, decide, and record
    the attempt. The caller gives the runner and ``check`` (`harnessgit.checks.check_change`,
    run when the proposal record kept no verdict on this base; the CLI's, or
    `harnessgit.evaluation.eval.with_batches` in Python): a gate with every score and the
    verdict on record imports neither (issue 26). ``book``: a score book already loaded
    (None: load it)."""
    config = require_evaluator(config, "`harnessgit gate`")
    sides = gate_sides(store, config, request.name, base=request.base)
    if request.policy is not None:
        sides = _deciding_with(sides, *request.policy)
    pre = preconditions(store, sides, allow_small=request.allow_small, check=check)
    if pre.refused:
        raise GateRefused(f"{sides.label} against {sides.shown}: " + "; ".join(pre.refused))
    book = book if book is not None else ScoreBook.load(store)
    read = _evaluate(store, sides, book, execution)
    remote = sides.settings.config.gate.remote
    others = other_models(sides, request.models)
    evaluate_models(store, sides, others, book, execution)
    deciding = _Decider(store, sides, book, pre, others, request.allow_small, execution, request.prior_gains)
    for _race in range(RACES):
        before = synced_before_counting(store, remote) if remote else None
        outcome = deciding.decide(read)
        try:
            record_gate(store, outcome, remote=remote, before=before)
        except ConcurrentUpdate:
            continue  # another gate took attempt k meanwhile: count again, decide at the next level
        return outcome
    raise ConcurrentUpdate(
        f"gave up after {RACES} gates recorded while this one decided: nothing was written"
    )


def _deciding_with(sides: Sides, policy: Literal["strict", "bayes", "elond"], q: float) -> Sides:
    """``sides`` whose settings decide with ``policy`` and ``q`` (`GateRequest.policy`)."""
    config = sides.settings.config
    rules = replace(config.gate, policy=policy, q=q)
    return replace(sides, settings=replace(sides.settings, config=replace(config, gate=rules)))


@dataclass(frozen=True)
class _Decider:
    """How one gate decides on the instances it read, with ``[gate] sample`` reading the
    pool on when the sample leaves it inconclusive (`harnessgit.gate.selection_pool`)."""

    store: Store
    sides: Sides
    book: ScoreBook
    pre: Preconditions
    others: list[str]
    allow_small: bool
    execution: Execution | None  # None: evaluate nothing (a preview reads what is on record)
    prior_gains: Sequence[tuple[float, float]] | None = None  # evolve's screened looks (`GateRequest`)

    def at(self, read: list[str] | None) -> GateOutcome:
        inputs = with_models(
            self.store.objects,
            compare(self.store, self.sides, self.book, self.pre, read, self.prior_gains),
            self.book,
            self.others,
        )
        return decide_gate(inputs, allow_small=self.allow_small, ts=self.store.clock())

    def decide(self, read: list[str] | None) -> GateOutcome:
        outcome = self.at(read)
        if self.sides.settings.config.gate.sample is None:
            return outcome
        return extend(outcome, decide_at=self.at, read_more=self._read_more)

    def _read_more(self, ids: list[str]) -> None:
        # On a re-decision after a race, what was evaluated comes from the cache.
        if self.execution is not None:
            evaluate_instances(self.store, self.sides, self.book, self.execution, ids)


def _sample(sides: Sides) -> list[str] | None:
    """``[gate] sample``: the first instances of the selection split in reading order."""
    sample = sides.settings.config.gate.sample
    if sample is None:
        return None
    return reading_order(sides.settings.manifest.ids(SELECTION), sides.settings.config.gate.seed)[:sample]


def _evaluate(store: Store, sides: Sides, book: ScoreBook, execution: Execution) -> list[str] | None:
    """Evaluate what the decision needs: the whole selection split, or with ``[gate]
    batch`` and policy elond, batches until the evidence settles (the instances read),
    or with ``[gate] sample``, the sample (the pool is read on after deciding on it)."""
    gate = sides.settings.config.gate
    sample = _sample(sides)
    if sample is not None:
        evaluate_instances(store, sides, book, execution, sample)
        return sample
    if not gate.batch or gate.policy != "elond":
        evaluate_sides(store, sides, book, execution)
        return None
    manifest = sides.settings.manifest
    pair = (sides.base.key.harness, sides.candidate.key.harness)
    attempt, _tip = attempt_on_record(store, manifest.split_hash(SELECTION), pair)
    gates = all_gate_records(store.notes)
    before = passes_before(gates, manifest.split_hash(SELECTION), pair)
    return evaluate_in_batches(store, sides, book, execution, attempt=attempt, passed_before=before)


def preview_gate(
    store: Store,
    config: Config,
    name: str,
    *,
    check: Checker,
    base_commit: str | None = None,
    book: ScoreBook | None = None,
) -> GateOutcome:
    """What the gate would decide about ``name`` now, from the scores on record: read
    and decided, never evaluated and never recorded (no attempt is spent); a refusal
    is one of its reasons. `review` asks this with ``base_commit`` set to its BASE."""
    config = require(config)
    sides = gate_sides(store, config, name, base_commit=base_commit)
    book = book if book is not None else ScoreBook.load(store)
    pre = preconditions(store, sides, allow_small=False, check=check)
    return _Decider(store, sides, book, pre, other_models(sides), False, None).decide(_sample(sides))


def gate_sides(
    store: Store, config: Config, name: str, *, base: str | None = None, base_commit: str | None = None
) -> Sides:
    """The candidate ``name`` and the base it is gated against: the tip of ``base``
    (default [harness] base), or any ``base_commit`` (`review` asks what the gate
    would say about BASE..HEAD; messages then name the commit). What decides is the
    base commit's harnessgit.toml and manifest; `review` of a base from before
    harnessgit.toml was committed reads the working tree's instead."""
    branch = base or config.harness.base
    base_sha = base_commit if base_commit is not None else base_tip(store.refs, branch)
    target = resolve(store.refs, name)
    label = target.candidate or target.sha[:12]
    if target.sha == base_sha:
        where = f"the tip of {branch}" if base_commit is None else "the base commit"
        raise HarnessgitError(f"{label} is {where}: there is nothing to gate")
    shown = branch if base_commit is None else base_commit[:12]
    settings = _settings(store, config, base_sha, shown, committed_only=base_commit is None)
    check_sample(settings.config.gate.sample, len(settings.manifest.ids(SELECTION)))
    return Sides(
        target=target,
        branch=branch,
        base=eval_context(store.objects, settings.config, base_sha),
        candidate=eval_context(store.objects, settings.config, target.sha),
        label=label,
        shown=shown,
        settings=settings,
    )


def _settings(store: Store, config: Config, base_sha: str, shown: str, *, committed_only: bool) -> Settings:
    try:
        settings = committed_settings(store.objects, base_sha, what=shown)
    except (ConfigError, ManifestError):
        if committed_only:
            raise
        return Settings("", config, load_manifest(store.root, config.splits.manifest))
    if committed_only:  # a decision; `review` of an older BASE would warn of every later edit
        warn_ignored(store, settings, f"the gate against {shown}")
    return settings


def evaluate_sides(
    store: Store,
    sides: Sides,
    book: ScoreBook,
    execution: Execution,
) -> None:
    """Run the evaluator on whatever selection scores either side lacks (through the cache)."""
    settings = sides.settings
    for context in (sides.base, sides.candidate):
        evaluate(
            store,
            settings.config,
            context.commit,
            EvalRequest(split=SELECTION),
            execution=execution,
            book=book,
            manifest=settings.manifest,
        )


@dataclass(frozen=True)
class Preconditions:
    """What the gate checks before any statistics, from the commits alone."""

    checks: CheckReport
    failing_checks: list[str]  # one line per failing check finding
    refused: list[str]  # each unmet precondition in a sentence; empty: the gate may compare


def preconditions(store: Store, sides: Sides, *, allow_small: bool, check: Checker) -> Preconditions:
    """The candidate must descend from the base (and not be in it already), keep the
    grader, pass the checks, and the selection set must be large enough. Checked
    before anything is evaluated or recorded: a refusal spends no gate attempt."""
    label, branch, shown = sides.label, sides.branch, sides.shown
    # Judged once when proposed on this base under these settings (`candidates.checked`).
    base, config = sides.base.commit, sides.settings.config
    checks = reuse(store, config, base, sides.candidate.commit) or check(
        store, config, base, sides.candidate.commit
    )
    # Only what the candidate brings blocks: a failure its base already had is
    # "existing" (the ratchet, harnessgit.checks.ratchet) and is shown, not held against it.
    failing = [f"{f.path or 'change'}: {f.rule}: {f.message}" for f in checks.findings if f.blocks]
    refused = []
    if store.history.is_ancestor(sides.candidate.commit, sides.base.commit):
        refused.append(f"{label} is merged into {shown} already: there is nothing to gate")
    elif not store.history.is_ancestor(sides.base.commit, sides.candidate.commit):
        tip = f"{branch}'s tip {sides.base.commit[:12]}" if shown == branch else sides.base.commit[:12]
        refused.append(
            f"{label} does not descend from {tip}, so the tree evaluated is not "
            f"the tree a merge would hold: propose the edit again on {branch} "
            f"(harnessgit propose --parent {branch} ...) and evaluate it"
        )
    if sides.candidate.key.fingerprint != sides.base.key.fingerprint:
        refused.append(
            f"{label} changes files the evaluator depends on (its evaluator fingerprint differs from "
            f"{shown}'s), so its scores are not comparable: a harness edit must not change the grader"
        )
    if failing:
        plural = "s" if len(failing) > 1 else ""
        refused.append(
            f"the harness checks fail on the change ({len(failing)} failure{plural}; "
            f"see `harnessgit check --against {shown}`): " + failing[0]
        )
    size, gate = len(sides.settings.manifest.ids(SELECTION)), sides.settings.config.gate
    if size < gate.min_instances and not allow_small:
        refused.append(
            f"the selection split has {size} instances; the gate needs at least "
            f"{gate.min_instances} (min_instances), or --allow-small"
        )
    return Preconditions(checks, failing, refused)


def compare(
    store: Store,
    sides: Sides,
    book: ScoreBook,
    pre: Preconditions,
    read: list[str] | None = None,
    prior_gains: Sequence[tuple[float, float]] | None = None,
) -> GateInputs:
    """What the gate needs to decide, read from the store and the record; writes nothing.
    ``read``: the instances a sequential evaluation read (None: the whole split);
    ``prior_gains``: the gains to learn the prior from (None: the gate records')."""
    manifest = sides.settings.manifest
    ids = sorted(read) if read is not None else manifest.ids(SELECTION)
    split_hash = manifest.split_hash(SELECTION)
    base_scores = book.summary(sides.base.key, SELECTION, ids, for_decision=True)
    cand_scores = book.summary(sides.candidate.key, SELECTION, ids, for_decision=True)
    not_evaluated = [
        f"harnessgit eval {who} --split selection"
        for who, summary in ((sides.shown, base_scores), (sides.label, cand_scores))
        if summary.missing
    ]
    conditions = list(pre.refused)
    if not_evaluated:
        conditions.append(NOT_EVALUATED + " and ".join(not_evaluated))
    pair = (sides.base.key.harness, sides.candidate.key.harness)
    attempt, tip = attempt_on_record(store, split_hash, pair)
    gates = all_gate_records(store.notes)
    return GateInputs(
        sides=sides,
        split_hash=split_hash,
        base_scores=base_scores,
        candidate_scores=cand_scores,
        checks=pre.checks,
        attempt=attempt,
        gate_notes=tip,
        conditions=conditions,
        not_evaluated=not_evaluated,
        failing_checks=pre.failing_checks,
        prior=prior_before(gates, pair) if prior_gains is None else screened_prior(prior_gains),
        passed_before=passes_before(gates, split_hash, pair),
        read=read,
        prior_gains=list(prior_gains) if prior_gains is not None else None,
    )


def decide_gate(inputs: GateInputs, *, allow_small: bool, ts: datetime) -> GateOutcome:
    """The verdict on what the gate read and the record that states it. Pure: nothing is
    evaluated or written (`record_gate` writes the record)."""
    c = inputs
    paired = pair_scores(c.base_scores.scored(), c.candidate_scores.scored())
    conditions = list(c.conditions)
    decision = None
    if paired is not None:
        # Missing scores leave the verdict inconclusive; a refusal or a loss makes it fail.
        missing = [m for m in conditions if m.startswith("not evaluated")]
        decision = decide(
            paired,
            c.sides.settings.config.gate,
            attempt=c.attempt,
            allow_small=allow_small,
            extra_failures=[m for m in conditions if m not in missing],
            unknowns=missing,
            prior=c.prior,
            passed_before=c.passed_before,
        )
    elif not conditions:
        conditions.append("fewer than two instances have scores on both sides")
    listing = "".join(f"{instance}\n" for instance in paired.instances).encode("utf-8") if paired else None
    evals = evals_listing([*c.base_scores.records, *c.candidate_scores.records, *c.model_records])
    record = gate_record(
        c, decision, conditions, allow_small=allow_small, ts=ts, listing=listing, evals=evals
    )
    return GateOutcome(
        record=record,
        verdict=record.shown_verdict,
        detectable=decision.detectable if decision else None,
        not_evaluated=c.not_evaluated,
        check_findings=c.checks.findings,
        inputs=c,
        decision=decision,
        instances=listing,
        evals=evals,
    )


def gate_record(
    inputs: GateInputs,
    decision: GateDecision | None,
    failures: list[str],
    *,
    allow_small: bool,
    ts: datetime,
    listing: bytes | None,
    evals: bytes,
) -> GateRecord:
    """The gate record of one decision (or of the failures that left nothing to decide).
    ``listing``: the compared instances; ``evals``: the eval records read (`harnessgit.gate.used`)."""
    c, gate = inputs, inputs.sides.settings.config.gate
    sides = c.sides
    return GateRecord(
        ts=ts,
        candidate=sides.target.candidate,
        commit=sides.target.sha,
        tree=sides.candidate.tree,
        base=sides.base.commit,
        base_branch=sides.branch,
        harness=sides.candidate.key.harness,
        base_harness=sides.base.key.harness,
        fingerprint=sides.candidate.key.fingerprint,
        model=sides.candidate.key.model,
        split=SELECTION,
        split_hash=c.split_hash,
        method=gate.method,
        attempt=c.attempt,
        alpha=gate.alpha,
        alpha_k=alpha_for_attempt(gate.alpha, c.attempt),
        alpha_spent=alpha_spent(gate.alpha, c.attempt),
        min_effect=gate.min_effect,
        min_instances=gate.min_instances,
        allow_small=allow_small,
        seed=gate.seed,
        resamples=gate.resamples,
        checks=c.failing_checks,
        settings=sides.settings.commit or None,
        instances=object_id("blob", listing) if listing is not None else None,
        worker=this_worker(),
        models=c.models or None,
        evals=object_id("blob", evals),
        **_measured(c, decision, failures),
    )


def _measured(c: GateInputs, decision: GateDecision | None, failures: list[str]) -> dict[str, Any]:
    if decision is None:
        missing = all(m.startswith("not evaluated") for m in failures)
        return {
            "passed": False,
            "verdict": "inconclusive" if missing else "fail",
            "policy": c.sides.settings.config.gate.policy,
            "reasons": failures,
            "n": 0,
            "base_mean": c.base_scores.mean,
            "candidate_mean": c.candidate_scores.mean,
            "difference": None,
        }
    paired, bound = decision.comparison, decision.bound
    said, prior = decision.numbers, decision.prior
    return {
        "passed": decision.passed,
        "verdict": decision.verdict,
        "policy": decision.policy,
        "q": decision.q,
        "se": paired.difference.se,
        "upper_bound": decision.upper_bound,
        "chance_better": said.chance_better if said else None,
        "expected_loss": said.expected_loss if said else None,
        "corrected": said.corrected if said else None,
        "needed": said.needed if said else None,
        "prior_mean": prior.mean,
        "prior_sd": prior.sd,
        "prior_looks": prior.looks,
        "prior_algorithm": prior.algorithm,
        "prior_gains": [list(pair) for pair in c.prior_gains] if c.prior_gains is not None else None,
        "e_value": decision.e_value,
        "e_fail": decision.e_fail,
        "level": decision.level,
        "passed_before": decision.passed_before,
        "batch": c.sides.settings.config.gate.batch if c.read is not None else None,
        "selection_size": len(c.sides.settings.manifest.ids(SELECTION)) if c.read is not None else None,
        "reasons": decision.reasons,
        "n": paired.n,
        "base_mean": paired.base.mean,
        "candidate_mean": paired.candidate.mean,
        "difference": paired.difference.mean,
        "ci_low": bound.ci_low,
        "ci_high": bound.ci_high,
        "lower_bound": bound.lower_bound,
        "p_value": bound.p_value,
        "mde": decision.mde,
        "wins": paired.wins,
        "losses": paired.losses,
        "ties": paired.ties,
        "regressed": paired.regressed[:REGRESSED_KEPT],
        "regressed_count": len(paired.regressed),
    }
