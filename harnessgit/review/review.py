"""`harnessgit review`: the diff, the evidence and the numbers of a change, in one place.

BASE..HEAD is reviewed like a pull request: the gate's verdict as it would be now
(computed from stored scores, never recorded, never running the evaluator), the
files changed with their sizes and the harness checks, a score table per split and
model, the instances that flipped with their feedback and trajectories, how the
failure classes shifted, and the rationale, evidence and own effect of each edit (a
merge counts as the proposals it landed). With no evaluator configured, or no split
manifest, there is nothing to score: the verdict is "not evaluated" with the reason
(never REJECT) and the rest is shown (adoption level 2, issue 20). The result is a
frozen `ReviewResult`:
`review.comment` renders it for a PR comment, `review.render` as text, and its JSON
is `harnessgit.render.to_json` of it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Literal

from harnessgit import layout
from harnessgit.candidates.chain import Measure
from harnessgit.candidates.log import landing, landing_mismatch
from harnessgit.checks import CheckReport, check_change
from harnessgit.checks.tokens import load_tokenizer
from harnessgit.checks.trailers import with_trailers
from harnessgit.config import Config, require
from harnessgit.errors import ConfigError, HarnessgitError
from harnessgit.evaluation.context import EvalContext, Key
from harnessgit.evaluation.lineage import checkpoint_notes
from harnessgit.evaluation.scores import TEST_SPLIT, ScoreBook, ScoreSummary
from harnessgit.evaluation.splits import SPLITS, Manifest, ManifestError, load_manifest
from harnessgit.evaluation.trajectory import Repeat, trajectories
from harnessgit.gate.changes import regrades
from harnessgit.gate.gate import SELECTION, preview_gate
from harnessgit.gate.outcome import GateOutcome
from harnessgit.gate.render import decide_sentence
from harnessgit.gate.settings import committed_settings
from harnessgit.records import GateRecord, view_of
from harnessgit.review.diff import ChangeTotals, FileDiff, change_totals
from harnessgit.review.edits import Edit, cut_text, described, edits_between
from harnessgit.review.files import changed_files
from harnessgit.review.scores import (
    FailureShift,
    Flip,
    Flips,
    ScoreRow,
    excerpt,
    failure_shift,
    flipped,
    score_row,
)
from harnessgit.store import Objects, Store
from harnessgit.targets import base_tip, resolve

HISTORY_KEPT = 30  # gated merges in the score history's sparkline
FLIPS_KEPT = 10  # flipped instances shown per direction; the rest are counted
EDITS_KEPT = 20  # edits between BASE and HEAD whose rationale is shown
# Why a review has no scores and no verdict at adoption level 2 (issue 20): checks and
# review need no evaluator, so `review` says what would add the rest.
NO_EVALUATOR = (
    "no evaluator is configured: set [evaluator] command in harnessgit.toml to get scores "
    "and a gate verdict (docs/evaluator.md)"
)

State = Literal["pass", "fail", "inconclusive", "not evaluated"]


@dataclass(frozen=True, kw_only=True)
class Verdict:
    """What `harnessgit gate HEAD` would say against BASE now; nothing is recorded."""

    state: State
    reasons: list[str]  # why not passed
    commands: list[str]  # what to run when scores are missing
    n: int = 0
    base_mean: float | None = None
    head_mean: float | None = None
    difference: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    lower_bound: float | None = None
    p_value: float | None = None
    mde: float | None = None
    detectable: str | None = None
    attempt: int = 1
    alpha_k: float = 0.0
    wins: int = 0
    losses: int = 0
    ties: int = 0
    # What the verdict states in plain words (docs/gate.md, "Three verdicts").
    chance_better: float | None = None
    expected_loss: float | None = None
    corrected: float | None = None  # the gain corrected for selection
    decides: str | None = None  # inconclusive: what would decide
    # False: nothing can be evaluated yet (no evaluator configured, or no split
    # manifest), so no scores and no verdict; ``reasons`` says why. A "not evaluated"
    # that is evaluable only lacks scores, and ``commands`` would add them.
    evaluable: bool = True


@dataclass(frozen=True, kw_only=True)
class ReviewResult:
    base: str
    head: str
    base_label: str
    head_label: str
    verdict: Verdict
    files: list[FileDiff]
    # The change as a whole: files, lines, the harness text's characters and tokens
    # (None only in a hand-built result).
    totals: ChangeTotals | None = None
    checks: CheckReport  # its JSON adds `failed` (CheckReport.JSON_EXTRA)
    scores: list[ScoreRow]
    flips: list[Flips]
    failure_shift: list[FailureShift]
    edits: list[Edit]
    edits_count: int  # edits in BASE..HEAD; only the newest EDITS_KEPT are in `edits`
    notes: list[str]
    # The selection mean at each gated merge on BASE's first-parent chain (the newest
    # HISTORY_KEPT), oldest first, as each gate measured it; the first one's base first.
    score_history: list[float] = dataclasses.field(default_factory=list)


def review(store: Store, config: Config, base: str | None = None, head: str | None = None) -> ReviewResult:
    """Review BASE..HEAD. ``head`` defaults to HEAD, ``base`` to HEAD's merge-base with
    the base branch: what ``harnessgit review CAND`` reviews is CAND's own change."""
    config = require(config)
    head_name = head or "HEAD"
    head_target = resolve(store.refs, head_name)
    base_sha, base_label = _base(store, config, base, head_name, head_target.sha)
    head_label = head_target.candidate or head_name
    deciding = _gate_config(store.objects, config, base_sha)
    edits = edits_between(store, head_target.sha, base_sha)
    tokenizer, _ = load_tokenizer(config.checks)
    unevaluated = _unevaluable(store, config, deciding)
    if unevaluated is not None:
        files = changed_files(store, config, deciding, base_sha, head_target.sha, tokenizer)
        return ReviewResult(
            base=base_sha,
            head=head_target.sha,
            base_label=base_label,
            head_label=head_label,
            verdict=Verdict(state="not evaluated", reasons=[unevaluated], commands=[], evaluable=False),
            files=files,
            checks=with_trailers(
                store, check_change(store, deciding, base_sha, head_target.sha), base_sha, head_target.sha
            ),
            scores=[],
            flips=[],
            failure_shift=[],
            edits=described(store, edits[:EDITS_KEPT], None),
            edits_count=len(edits),
            notes=[],
            totals=change_totals(files, tokenizer.name),
        )
    manifest = load_manifest(store.root, config.splits.manifest)
    book = ScoreBook.load(store)
    outcome = preview_gate(store, config, head_name, check=check_change, base_commit=base_sha, book=book)
    notes = []
    if outcome.base.key.fingerprint != outcome.candidate.key.fingerprint:
        chain = [base_sha, *reversed(store.history.first_parent_chain(head_target.sha, stop=base_sha))]
        where = "; ".join(regrades(store, config, chain)) or "HEAD"
        notes.append(
            f"the evaluator's files changed between BASE and HEAD (a regrade: {where}): each score row "
            "compares the two sides under one evaluator, and BASE's harness under HEAD's evaluator "
            f"is `harnessgit eval {base_sha[:12]} --grader {head_target.sha[:12]} --split selection`"
        )
    scores, flips, shifts = _scores(store, config, manifest, book, outcome)
    notes += checkpoint_notes(store.notes, [row.model for row in scores])
    files = changed_files(
        store, config, outcome.inputs.sides.settings.config, base_sha, head_target.sha, tokenizer
    )
    return ReviewResult(
        base=base_sha,
        head=head_target.sha,
        base_label=base_label,
        head_label=head_label,
        verdict=_verdict(outcome),
        files=files,
        checks=outcome.checks,
        scores=scores,
        flips=flips,
        failure_shift=shifts,
        edits=described(store, edits[:EDITS_KEPT], _measure(store, manifest, book, outcome)),
        edits_count=len(edits),
        notes=notes,
        score_history=score_history(store, base_sha),
        totals=change_totals(files, tokenizer.name),
    )


def score_history(store: Store, base: str) -> list[float]:
    """The selection means at BASE's gated merges, from their gate records (no scores read)."""
    gates = store.notes.records(layout.NOTES_GATE)
    landed: list[GateRecord] = []
    for sha in store.history.first_parent_chain(base):
        records = landing(gates.get(sha, []), sha).gates
        if records and landing_mismatch(records[-1], store.objects.commit_info(sha)):
            continue  # copied from another merge: not this one's numbers (issue 28)
        if records and records[-1].candidate_mean is not None:
            landed.append(records[-1])
            if len(landed) == HISTORY_KEPT:
                break
    landed.reverse()
    start = [landed[0].base_mean] if landed and landed[0].base_mean is not None else []
    return [*start, *[record.candidate_mean for record in landed if record.candidate_mean is not None]]


def _base(store: Store, config: Config, base: str | None, head_name: str, head: str) -> tuple[str, str]:
    """BASE's commit and how to name it: as given, else HEAD's merge-base with the base branch."""
    if base is None:
        branch = config.harness.base
        found = store.history.merge_base(base_tip(store.refs, branch), head)
        if found is None:
            raise HarnessgitError(f"{head_name} shares no history with {branch}: name BASE explicitly")
        sha, label = found, f"merge-base with {branch}"
    else:
        sha, label = resolve(store.refs, base).sha, base
    if sha == head and base is None:
        raise HarnessgitError(
            f"{head_name} is already on {config.harness.base} ({sha[:12]}): nothing to review "
            f"(name BASE too: review BASE {head_name})"
        )
    if sha == head:
        raise HarnessgitError(f"BASE and HEAD are the same commit {sha[:12]}: nothing to review")
    return sha, label


def _gate_config(objects: Objects, config: Config, base: str) -> Config:
    """The harnessgit.toml the gate would read for BASE (`gate.gate_sides`): BASE's as
    committed, else, for a BASE from before harnessgit was set up, the working tree's."""
    try:
        return committed_settings(objects, base).config
    except (ConfigError, ManifestError):
        return config


def _unevaluable(store: Store, config: Config, deciding: Config) -> str | None:
    """Why nothing can be evaluated (adoption level 2: checks and review only), or None."""
    if not deciding.evaluator.configured:
        return NO_EVALUATOR
    try:
        # What the score table and the gate (`gate.gate_sides`) read when BASE has no
        # committed manifest; a missing one is a setup step still to do, not an error.
        load_manifest(store.root, config.splits.manifest)
    except ManifestError as exc:
        return f"{exc}: the gate compares scores on its selection split (docs/evaluator.md)"
    return None


def _verdict(outcome: GateOutcome) -> Verdict:
    r = outcome.record
    if outcome.not_evaluated:
        return Verdict(
            state="not evaluated",
            reasons=r.reasons,
            commands=outcome.not_evaluated,
            attempt=r.attempt,
            alpha_k=r.alpha_k,
        )
    return view_of(
        Verdict,
        r,
        state=r.shown_verdict,
        commands=[],
        evaluable=True,
        decides=decide_sentence(r)
        if r.shown_verdict == "inconclusive" and r.difference is not None
        else None,
        head_mean=r.candidate_mean,
        detectable=outcome.decision.detectable if outcome.decision else None,
    )


def _scores(
    store: Store, config: Config, manifest: Manifest, book: ScoreBook, outcome: GateOutcome
) -> tuple[list[ScoreRow], list[Flips], list[FailureShift]]:
    base_ctx, head_ctx = outcome.base, outcome.candidate
    current = (base_ctx.key.fingerprint, base_ctx.key.model)
    # The selection split decides, so it leads; then the others in the manifest's order.
    splits = sorted(manifest.splits, key=lambda s: (s != SELECTION, SPLITS.index(s) if s in SPLITS else 9, s))
    keys = _evaluated_on_both(book, base_ctx, head_ctx)
    rows, flips, shifts = [], [], []
    for split in splits:
        ids = manifest.ids(split)
        for fingerprint, model in keys:
            base = book.summary(Key(base_ctx.key.harness, fingerprint, model), split, ids)
            head = book.summary(Key(head_ctx.key.harness, fingerprint, model), split, ids)
            is_current = (fingerprint, model) == current and head_ctx.key.fingerprint == fingerprint
            if not base.n and not head.n:
                continue
            decides = is_current and split == SELECTION
            rows.append(
                score_row(
                    split,
                    base,
                    head,
                    config.gate,
                    split_size=len(ids),
                    current=is_current,
                    held_out=split == TEST_SPLIT,
                    decision=outcome.decision if decides else None,
                )
            )
            if not base.n or not head.n:
                continue
            # Failure classes shift per model (issue 19: planning failures 1.1% -> 14.6%
            # for one student, arXiv 2609.09134), so every model the current evaluator
            # scored gets its shift; the flips, with their evidence, stay the gate's model's.
            graded_now = fingerprint == base_ctx.key.fingerprint == head_ctx.key.fingerprint
            shift = failure_shift(split, base, head) if graded_now else None
            if shift is not None:
                shifts.append(shift)
            if is_current:
                flips.append(_flips(store, config, book, split, base, head, base_ctx, head_ctx))
    return rows, [f for f in flips if f.fixed_count or f.regressed_count], shifts


def _evaluated_on_both(book: ScoreBook, base: EvalContext, head: EvalContext) -> list[tuple[str, str]]:
    """Every (evaluator fingerprint, model) under which both harnesses have scores: the
    current one (BASE's) first, whether scored or not, then older evaluators and
    other models, in a stable order."""
    current = (base.key.fingerprint, base.key.model)
    evaluated = {(k.fingerprint, k.model) for k in book.keys_of(base.key.harness)}
    evaluated &= {(k.fingerprint, k.model) for k in book.keys_of(head.key.harness)}
    return sorted(evaluated | {current}, key=lambda fm: (fm != current, fm[1], fm[0]))


def _flips(
    store: Store,
    config: Config,
    book: ScoreBook,
    split: str,
    base: ScoreSummary,
    head: ScoreSummary,
    base_ctx: EvalContext,
    head_ctx: EvalContext,
) -> Flips:
    fixed, regressed = flipped(base, head)
    before = {item.instance: item for item in base.instances}
    after = {item.instance: item for item in head.instances}

    def flip(instance: str, failing: str) -> Flip:
        old = _evidence_of(store, config, book, base_ctx.commit, instance)
        new = _evidence_of(store, config, book, head_ctx.commit, instance)
        side = new if failing == "head" else old
        return Flip(
            instance=instance,
            base_score=before[instance].mean,
            head_score=after[instance].mean,
            base_feedback=cut_text(old.feedback),
            head_feedback=cut_text(new.feedback),
            base_class=before[instance].failure_class,
            head_class=after[instance].failure_class,
            trajectory=excerpt(side.trajectory),
            trajectory_side=failing if side.trajectory is not None else None,
        )

    return Flips(
        split=split,
        model=base.model,
        fixed=[flip(i, "base") for i in fixed[:FLIPS_KEPT]],
        regressed=[flip(i, "head") for i in regressed[:FLIPS_KEPT]],
        fixed_count=len(fixed),
        regressed_count=len(regressed),
    )


def _evidence_of(store: Store, config: Config, book: ScoreBook, commit: str, instance: str) -> Repeat:
    """The first recorded repeat of an instance that carries feedback or a trajectory."""
    repeats = trajectories(store, config, commit, instance, book).repeats
    return next((r for r in repeats if r.feedback or r.trajectory is not None), repeats[0])


def _measure(store: Store, manifest: Manifest, book: ScoreBook, outcome: GateOutcome) -> Measure:
    """Where the edits' own effects are read: the gate's evaluator and model."""
    key = outcome.base.key
    config = outcome.inputs.sides.settings.config
    return Measure(store, config, book, key.fingerprint, key.model, manifest.ids(SELECTION))
