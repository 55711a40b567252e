"""`harnessgit gate`: may this candidate move the base branch?

Passes only if all hold (docs/gate.md):

1. the candidate descends from the base tip, so the tree evaluated is the tree merged;
2. on the selection split, with one evaluator fingerprint, split and model, the
   one-sided lower confidence bound of the mean paired difference clears
   ``min_effect`` (`harnessgit.stats.decision.decide`: paired bootstrap over instances or
   clusters, or an exact sign/McNemar test);
3. at the level alpha_k of this attempt: every distinct (base harness, candidate
   harness) comparison gated on one selection set counts as an attempt, so the
   family-wise false-accept rate over any number of attempts stays at most alpha;
4. the selection set has at least ``min_instances`` instances (or --allow-small);
5. the harness checks pass on the change (`harnessgit.checks.check_change`).

Every attempt is recorded (a `gate` record on the candidate commit), rejections
included: they spend the selection set's error budget too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from harnessgit import layout
from harnessgit.candidates.targets import Target, base_tip, resolve
from harnessgit.checks import CheckReport, check_change
from harnessgit.config import Config, require
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import EvalContext, eval_context, evaluate
from harnessgit.evaluation.scores import ScoreBook, ScoreSummary
from harnessgit.evaluation.splits import load_manifest
from harnessgit.records import GateRecord
from harnessgit.stats.decision import GateDecision, PairedScores, alpha_for_attempt, alpha_spent, decide
from harnessgit.store import Store, Transaction

SELECTION = "selection"
REGRESSED_KEPT = 25  # regressed instances named in a record; the rest are counted


@dataclass(frozen=True)
class GateOutcome:
    record: GateRecord
    target: Target
    base: EvalContext
    candidate: EvalContext
    decision: GateDecision | None  # None when fewer than two instances have scores on both sides
    checks: CheckReport
    not_evaluated: list[str]  # commands that would supply the missing scores

    @property
    def passed(self) -> bool:
        return self.record.passed


def attempt_number(store: Store, split_hash: str, pair: tuple[str, str]) -> int:
    """k for a (base harness, candidate harness) comparison on one selection set.

    Re-gating the same comparison (``gate`` then ``merge``) is the same look at
    the same data and keeps its k; a new comparison is the next attempt.
    """
    seen: dict[tuple[str, str], None] = {}
    records = [
        record
        for records in store.notes(layout.NOTES_GATE).values()
        for record in records
        if isinstance(record, GateRecord) and record.split_hash == split_hash
    ]
    for record in sorted(records, key=lambda r: r.ts):
        seen.setdefault((record.base_harness, record.harness), None)
    order = list(seen)
    return order.index(pair) + 1 if pair in seen else len(order) + 1


def run_gate(
    store: Store,
    config: Config,
    name: str,
    *,
    base: str | None = None,
    base_commit: str | None = None,
    allow_small: bool = False,
    evaluate_missing: bool = True,
    record: bool = True,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_stderr: Callable[[str], None] | None = None,
    book: ScoreBook | None = None,
) -> GateOutcome:
    config = require(config)
    branch = base or config.harness.base
    # ``base_commit`` compares with any commit instead of the branch tip (`review`
    # asks what the gate would say about BASE..HEAD); messages then name the commit.
    base_sha = base_commit if base_commit is not None else base_tip(store, branch)
    shown = branch if base_commit is None else base_commit[:12]
    tip = f"{branch}'s tip {base_sha[:12]}" if base_commit is None else base_sha[:12]
    target = resolve(store, name)
    label = target.candidate or target.sha[:12]
    if target.sha == base_sha:
        where = f"the tip of {branch}" if base_commit is None else "the base commit"
        raise HarnessgitError(f"{label} is {where}: there is nothing to gate")
    manifest = load_manifest(store.root, config.splits.manifest)
    ids = manifest.ids(SELECTION)
    split_hash = manifest.split_hash(SELECTION)
    base_ctx = eval_context(store, config, base_sha)
    cand_ctx = eval_context(store, config, target.sha)
    failures: list[str] = []
    if not store.is_ancestor(base_sha, target.sha):
        failures.append(
            f"{label} does not descend from {tip}, so the tree evaluated is not "
            f"the tree a merge would hold: propose the edit again on {branch} "
            f"(harnessgit propose --parent {branch} ...) and evaluate it"
        )
    comparable = cand_ctx.key.fingerprint == base_ctx.key.fingerprint
    if not comparable:
        failures.append(
            f"{label} changes files the evaluator depends on (its evaluator fingerprint differs from "
            f"{shown}'s), so its scores are not comparable: a harness edit must not change the grader"
        )
    book = book if book is not None else ScoreBook.load(store)
    if evaluate_missing:
        for context in (base_ctx, cand_ctx):
            evaluate(
                store,
                config,
                context.commit,
                split=SELECTION,
                jobs=jobs,
                progress=progress,
                on_stderr=on_stderr,
                book=book,
            )
    base_scores = book.summary(base_ctx.key, SELECTION, ids, for_decision=True)
    cand_scores = book.summary(cand_ctx.key, SELECTION, ids, for_decision=True)
    not_evaluated = [
        f"harnessgit eval {who} --split selection"
        for who, summary in ((shown, base_scores), (label, cand_scores))
        if summary.missing
    ]
    if not_evaluated:
        failures.append("not evaluated on the whole selection split: run " + " and ".join(not_evaluated))

    report = check_change(store, config, base_sha, target.sha)
    failing_checks = [
        f"{f.path or 'change'}: {f.rule}: {f.message}" for f in report.findings if f.level == "failure"
    ]
    if failing_checks:
        failures.append(
            f"the harness checks fail on the change ({len(failing_checks)} failure"
            f"{'s' if len(failing_checks) > 1 else ''}; see `harnessgit check --against {shown}`): "
            + failing_checks[0]
        )

    attempt = attempt_number(store, split_hash, (base_ctx.key.harness, cand_ctx.key.harness))
    paired = pair_scores(
        {item.instance: (item.mean, item.cluster) for item in base_scores.instances},
        {item.instance: (item.mean, item.cluster) for item in cand_scores.instances},
    )
    decision = None
    if paired is not None:
        decision = decide(
            paired,
            config.gate,
            attempt=attempt,
            allow_small=allow_small,
            extra_failures=failures,
        )
    elif not failures:
        failures.append("fewer than two instances have scores on both sides")
    instances_blob = None
    if paired is not None:
        listing = "".join(f"{instance}\n" for instance in paired.instances)
        instances_blob = store.write_blob(listing.encode("utf-8"))
    gate_record = _record(
        store,
        config,
        target,
        branch,
        base_ctx,
        cand_ctx,
        split_hash,
        attempt,
        allow_small,
        decision,
        failures,
        failing_checks,
        base_scores,
        cand_scores,
        instances_blob,
    )
    if record:
        txn = Transaction(f"gate {label}")
        txn.append(layout.NOTES_GATE, target.sha, [gate_record])
        if instances_blob:
            txn.keep(instances_blob)
        store.commit(txn)
    return GateOutcome(gate_record, target, base_ctx, cand_ctx, decision, report, not_evaluated)


Scored = dict[str, tuple[float, str | None]]  # instance -> (mean over repeats, cluster)


def pair_scores(base: Scored, candidate: Scored, instances: list[str] | None = None) -> PairedScores | None:
    """The paired scores the gate decides on; `verify` rebuilds them the same way.

    Instances in sorted order (the bootstrap's resamples depend on the order);
    clusters from the candidate's evaluation, else the base's; an instance
    without a cluster is its own. None when fewer than two units have both scores.
    """
    common = instances if instances is not None else sorted(i for i in base if i in candidate)
    if len(common) < 2:
        return None
    named = [candidate[i][1] or base[i][1] for i in common]
    clusters = [c or f"instance:{i}" for c, i in zip(named, common, strict=True)]
    clustered = any(named) and len(set(clusters)) >= 2
    return PairedScores(
        instances=common,
        base=[base[i][0] for i in common],
        candidate=[candidate[i][0] for i in common],
        clusters=clusters if clustered else None,
    )


def _record(
    store: Store,
    config: Config,
    target: Target,
    branch: str,
    base_ctx: EvalContext,
    cand_ctx: EvalContext,
    split_hash: str,
    attempt: int,
    allow_small: bool,
    decision: GateDecision | None,
    failures: list[str],
    failing_checks: list[str],
    base_scores: ScoreSummary,
    cand_scores: ScoreSummary,
    instances_blob: str | None,
) -> GateRecord:
    gate = config.gate
    measured: dict[str, Any] = {
        "passed": False,
        "reasons": failures,
        "n": 0,
        "base_mean": base_scores.mean,
        "candidate_mean": cand_scores.mean,
        "difference": None,
    }
    if decision is not None:
        c, bound = decision.comparison, decision.bound
        measured = {
            "passed": decision.passed,
            "reasons": decision.reasons,
            "n": c.n,
            "base_mean": c.base.mean,
            "candidate_mean": c.candidate.mean,
            "difference": c.difference.mean,
            "ci_low": bound.ci_low,
            "ci_high": bound.ci_high,
            "lower_bound": bound.lower_bound,
            "p_value": bound.p_value,
            "mde": decision.mde,
            "wins": c.wins,
            "losses": c.losses,
            "ties": c.ties,
            "regressed": c.regressed[:REGRESSED_KEPT],
            "regressed_count": len(c.regressed),
        }
    return GateRecord(
        ts=store.clock(),
        candidate=target.candidate,
        commit=target.sha,
        tree=store.commit_info(target.sha).tree,
        base=base_ctx.commit,
        base_branch=branch,
        harness=cand_ctx.key.harness,
        base_harness=base_ctx.key.harness,
        fingerprint=cand_ctx.key.fingerprint,
        model=cand_ctx.key.model,
        split=SELECTION,
        split_hash=split_hash,
        method=gate.method,
        attempt=attempt,
        alpha=gate.alpha,
        alpha_k=alpha_for_attempt(gate.alpha, attempt),
        alpha_spent=alpha_spent(gate.alpha, attempt),
        min_effect=gate.min_effect,
        min_instances=gate.min_instances,
        allow_small=allow_small,
        seed=gate.seed,
        resamples=gate.resamples,
        checks=failing_checks,
        instances=instances_blob,
        **measured,
    )
