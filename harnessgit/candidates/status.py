"""`harnessgit status`: where things stand, on one screen, from the record alone.

The base branch tip and its selection mean; every live candidate with its parent,
age, selection coverage and mean under the evaluator and model harnessgit.toml
names now, whether it is on the frontier, and its last gate verdict; the archived
candidates counted by why they were retired; the gate attempts and alpha spent on
the current selection set (what `log` reports). Reads only: it writes nothing, not
even an object (tests/test_read_only.py).

Frontier membership is computed here from `harnessgit.stats.frontier`, on the pool
`harnessgit frontier` uses (the base tip, then the live candidates in creation order
that are scored on the whole selection split with the base's evaluator fingerprint
and model): `harnessgit.gate.frontier` sits above this package, and everything else
status shows is about candidates. tests/candidates/test_status.py checks that the two
agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from harnessgit import layout
from harnessgit.candidates.log import SelectionSpend, selection_spend
from harnessgit.config import Config, require
from harnessgit.evaluation.context import Key, eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import ManifestError, load_manifest
from harnessgit.records import GateRecord, ProposalRecord, Record, view_of
from harnessgit.render import short
from harnessgit.stats.frontier import compute_frontier
from harnessgit.stats.frontier_keys import FrontierType, Objectives, frontier_by_type
from harnessgit.stats.frontier_types import PoolCandidate, ScorePool
from harnessgit.store import Store
from harnessgit.store.retired import archived_reasons
from harnessgit.targets import State, base_tip, candidate_tips

SELECTION = "selection"
# The reasons `retire` records (harnessgit.records.RetireRecord), in the order status lists them.
RETIRE_REASONS = ("merged", "rejected", "dominated")


@dataclass(frozen=True, kw_only=True)
class BaseState:
    branch: str
    commit: str
    n: int  # selection instances scored under the current evaluator and model
    mean: float | None
    stderr: float | None


@dataclass(frozen=True, kw_only=True)
class LastGate:
    """The newest gate record on a candidate's commit."""

    passed: bool
    shown_verdict: str  # pass, fail or inconclusive (a record from before: pass or fail)
    difference: float | None
    attempt: int
    base: str  # the base tip it was compared with
    ts: datetime


@dataclass(frozen=True, kw_only=True)
class CandidateState:
    candidate: str  # its id, as every other command's JSON names a candidate
    commit: str
    parent: str | None  # a candidate id, the base branch's name (its tip), or a short commit id
    subject: str
    created: datetime  # when it was proposed (its commit's author date without a proposal record)
    n: int  # selection instances scored under the current evaluator and model
    mean: float | None
    comparable: bool  # same evaluator fingerprint and model as the base tip's
    # None: not in the frontier's pool (not scored on the whole selection split, not
    # comparable, or the base tip is not scored on all of it).
    on_frontier: bool | None
    gate: LastGate | None


@dataclass(frozen=True, kw_only=True)
class StatusResult:
    base: BaseState
    fingerprint: str  # the base tip's evaluator fingerprint
    model: str
    selection_size: int
    candidates: list[CandidateState]  # live candidates, oldest first
    archived: dict[str, int]  # archived candidates by retirement reason (merged, rejected, dominated)
    selection: SelectionSpend | None  # gate attempts and alpha spent on the current selection set
    problem: str | None  # why there are no selection numbers (no evaluator, or no split manifest)
    has_evaluator: bool  # [evaluator] command is set (levels 1-2 of adoption have none)
    as_of: datetime = field(metadata={"json": False})  # the clock's now, for the text's ages


@dataclass(frozen=True)
class _Live:
    """A live candidate's facts before the frontier is known."""

    id: str
    commit: str
    key: Key
    created: datetime
    proposal: ProposalRecord | None


NO_EVALUATOR = "no evaluator is configured ([evaluator] command in harnessgit.toml; docs/evaluator.md)"


def status(store: Store, config: Config, *, base: str | None = None) -> StatusResult:
    config = require(config)
    branch = base or config.harness.base
    tip = base_tip(store.refs, branch)
    ids: list[str] = []
    split_hash = problem = None
    if not config.evaluator.configured:  # adoption levels 1-2: checks and review, no scores yet
        problem = NO_EVALUATOR
    else:
        try:
            manifest = load_manifest(store.root, config.splits.manifest)
            ids, split_hash = manifest.ids(SELECTION), manifest.split_hash(SELECTION)
        except ManifestError as exc:  # still worth a status: the candidates, the archive
            problem = str(exc)
    book = ScoreBook.load(store)
    gates = store.notes.records(layout.NOTES_GATE)
    tips = candidate_tips(store.refs)
    reference = eval_context(store.objects, config, tip).key
    live = _live(store, config, tips)
    kind = config.gate.frontier_type
    members = _frontier(book, reference, ids, split_hash, branch, live, kind) or {}
    names = {sha: cid for cid, (_state, sha) in tips.items()}
    names[tip] = branch  # on the tip: say so, even when a candidate was fast-forwarded there

    def row(cand: _Live) -> CandidateState:
        scored = book.summary(cand.key, SELECTION, ids)
        info = store.objects.commit_info(cand.commit)
        parent = cand.proposal.parent if cand.proposal else (info.parents[0] if info.parents else None)
        return CandidateState(
            candidate=cand.id,
            commit=cand.commit,
            parent=parent and names.get(parent, short(parent)),
            subject=info.subject,
            created=cand.created,
            n=scored.n,
            mean=scored.mean,
            comparable=(cand.key.fingerprint, cand.key.model) == (reference.fingerprint, reference.model),
            on_frontier=members.get(cand.id),
            gate=_last_gate(gates.get(cand.commit, []), cand.commit),
        )

    return StatusResult(
        base=view_of(BaseState, book.summary(reference, SELECTION, ids), branch=branch, commit=tip),
        fingerprint=reference.fingerprint,
        model=reference.model,
        selection_size=len(ids),
        candidates=[row(cand) for cand in live],
        archived=_archived(store, tips),
        selection=_spend(gates, split_hash, config.gate.alpha),
        problem=problem,
        has_evaluator=config.evaluator.configured,
        as_of=store.clock(),
    )


def _live(store: Store, config: Config, tips: dict[str, tuple[State, str]]) -> list[_Live]:
    """The live candidates in creation order (GEPA numbers its programs so, and the
    frontier's ties depend on it), each with the key its harness is scored under."""
    found = []
    for cid, (state, sha) in tips.items():
        if state != "live":
            continue
        evidence = store.notes.records_on(layout.NOTES_EVIDENCE, sha)
        proposal = next((r for r in evidence if isinstance(r, ProposalRecord)), None)
        created = proposal.ts if proposal else store.objects.commit_info(sha).author_time
        found.append(_Live(cid, sha, eval_context(store.objects, config, sha).key, created, proposal))
    return sorted(found, key=lambda cand: cand.created)


def _frontier(
    book: ScoreBook,
    reference: Key,
    ids: list[str],
    split_hash: str | None,
    branch: str,
    live: list[_Live],
    kind: FrontierType = "instance",
) -> dict[str, bool] | None:
    """Pool member -> on the frontier of type ``kind``, for the pool `harnessgit frontier`
    builds; None when the base tip is not scored on the whole selection split (there is
    no pool), or, for the objectives' types, has no objective scores on it."""
    if not ids or split_hash is None:
        return None
    instances = tuple(ids)
    base_scores = book.complete_means(reference, instances, split_hash)
    base_objectives = book.complete_objectives(reference, instances) if kind != "instance" else {}
    if base_scores is None or base_objectives is None:
        return None
    pool = [PoolCandidate(branch, None, list(base_scores))]
    objectives: list[Objectives] = [base_objectives]
    for cand in live:
        if (cand.key.fingerprint, cand.key.model) != (reference.fingerprint, reference.model):
            continue
        scores = book.complete_means(cand.key, instances, split_hash)
        found = book.complete_objectives(cand.key, instances) if kind != "instance" else {}
        if scores is not None and found is not None and sorted(found) == sorted(base_objectives):
            pool.append(PoolCandidate(cand.id, None, list(scores)))
            objectives.append(found)
    if kind == "instance":  # plain Python: status does not import numpy for this
        on = set(compute_frontier(ScorePool(list(ids), pool)).members)
    else:
        import numpy as np

        matrix = np.array([member.scores for member in pool], dtype=np.float64)
        ids_ = [member.id for member in pool]
        on = set(frontier_by_type(kind, ids_, [None] * len(pool), ids, matrix, objectives).members)
    return {member.id: member.id in on for member in pool}


def _last_gate(notes: Sequence[Record], commit: str) -> LastGate | None:
    """The newest verdict of the gate records on the candidate's commit (one per
    attempt; the copy a merge writes on its merge commit is not among them)."""
    records = [r for r in notes if isinstance(r, GateRecord) and r.commit == commit]
    if not records:
        return None
    return view_of(LastGate, max(records, key=lambda r: r.ts))


def _archived(store: Store, tips: dict[str, tuple[State, str]]) -> dict[str, int]:
    """Archived candidates by the reason of their newest retire record ("unknown" without
    one), from the evidence notes' index (20,000 notes are not read for a count)."""
    archived = {cid: sha for cid, (state, sha) in tips.items() if state == "archived"}
    reasons = archived_reasons(store, layout.NOTES_EVIDENCE, archived)
    order = {reason: i for i, reason in enumerate(RETIRE_REASONS)}
    return dict(sorted(reasons.items(), key=lambda item: (order.get(item[0], len(order)), item[0])))


def _spend(gates: dict[str, list[Record]], split_hash: str | None, alpha: float) -> SelectionSpend | None:
    """`log`'s numbers for the current selection set; none spent before its first gate."""
    if split_hash is None:
        return None
    records = [r for records in gates.values() for r in records if isinstance(r, GateRecord)]
    found = next((spend for spend in selection_spend(records) if spend.split_hash == split_hash), None)
    return found or SelectionSpend(split_hash=split_hash, attempts=0, alpha=alpha, alpha_spent=0.0, passed=0)
