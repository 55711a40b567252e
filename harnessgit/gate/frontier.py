"""`harnessgit frontier`: the Pareto frontier of the live candidates, from the record.

The pool is the base branch tip plus every live candidate evaluated on the whole
selection split with the base's evaluator fingerprint and model (same split, so
the scores are comparable). `harnessgit.stats.frontier` computes GEPA's frontier on it;
``update`` makes the live candidate branches exactly the frontier plus the
candidates not yet evaluated, retiring the rest to the archive in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import ClassVar

from harnessgit import layout
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import EvalContext, Key, eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import Manifest, load_manifest
from harnessgit.records import ProposalRecord
from harnessgit.stats.frontier import Frontier, PoolCandidate, ScorePool, compute_frontier
from harnessgit.store import Store, Transaction
from harnessgit.targets import State, base_tip, candidate_tips, retire

SELECTION = "selection"


@dataclass(frozen=True)
class Member:
    id: str  # candidate id, the base branch name, or a short commit id (an earlier base)
    commit: str
    parent: str | None  # candidate id, base branch name, or a short commit id
    state: str = "live"  # live | archived | base


@dataclass(frozen=True)
class FrontierView:
    """`harnessgit frontier`: its ``--json`` form is the base branch, the frontier's rows,
    dominated and never-best candidates, the live candidates outside the pool, the ones
    retired by ``--update``, the parent drawn by ``--sample``, and every member's commit."""

    JSON_EXTRA: ClassVar[tuple[str, ...]] = ("commits",)

    base: str
    frontier: Frontier = field(metadata={"json": "flatten"})
    waiting: list[str]  # live candidates not evaluated on the whole selection split
    incomparable: list[str]  # live candidates whose evaluator files or model differ from the base's
    retired: list[str] = field(default_factory=list)  # set by update: candidates moved to the archive
    sampled: str | None = None  # set by --sample: a parent drawn with GEPA's weights
    members: dict[str, Member] = field(default_factory=dict, metadata={"json": False})

    @property
    def commits(self) -> dict[str, str]:
        return {cid: member.commit for cid, member in self.members.items()}


def frontier_view(
    store: Store,
    config: Config,
    *,
    base: str | None = None,
    book: ScoreBook | None = None,
    proposals: dict[str, ProposalRecord] | None = None,
    contexts: dict[str, EvalContext] | None = None,
    tips: dict[str, tuple[State, str]] | None = None,
    manifest: Manifest | None = None,
) -> FrontierView:
    """``book``, ``proposals`` (commit -> its proposal record), ``contexts`` (commit
    -> its cache key), ``tips`` (`candidate_tips`) and ``manifest`` may be passed in by
    a caller that keeps them, such as evolve, which rebuilds the frontier on every new
    candidate."""
    config = require_evaluator(config, "`harnessgit frontier`")
    branch = base or config.harness.base
    manifest = manifest or load_manifest(store.root, config.splits.manifest)
    ids = tuple(manifest.ids(SELECTION))
    split_hash = manifest.split_hash(SELECTION)
    book = book if book is not None else ScoreBook.load(store)
    contexts = contexts if contexts is not None else {}

    def key_of(commit: str) -> Key:
        if commit not in contexts:
            contexts[commit] = eval_context(store, config, commit)
        return contexts[commit].key

    tip = base_tip(store, branch)
    reference = key_of(tip)
    base_scores = book.complete_means(reference, ids, split_hash)
    if base_scores is None:
        raise HarnessgitError(
            f"{branch} is not evaluated on the whole selection split: run `harnessgit eval {branch}` first"
        )
    proposals = proposals if proposals is not None else proposals_by_commit(store)
    all_tips = tips if tips is not None else candidate_tips(store)
    names = {sha: cid for cid, (_state, sha) in all_tips.items()}
    members = {branch: Member(branch, tip, None, "base")}
    # model_construct: scores on record were validated when read, and only complete
    # rows of the comparable key get here (the pool rules of harnessgit.stats.frontier).
    pool: list[PoolCandidate] = []
    waiting, incomparable = [], []
    seats: dict[str, int] = {}  # harness tree id -> its place in the pool
    history = _history(store, proposals, all_tips, branch, tip)
    book.prefetch(key_of(sha).harness for _created, _name, sha, _state in history)  # one read
    for _created, name, sha, state in history:
        key = key_of(sha)
        if key.fingerprint != reference.fingerprint or key.model != reference.model:
            if state == "live":
                incomparable.append(name)
            continue
        scores = book.complete_means(key, ids, split_hash)
        if scores is None:
            if state == "live":
                waiting.append(name)
            continue
        if key.harness in seats:  # the same harness text: one program (the base tip's name wins)
            if sha == tip:
                pool[seats[key.harness]] = PoolCandidate(id=branch, parent=None, scores=list(scores))
            continue
        seats[key.harness] = len(pool)
        if sha == tip:
            pool.append(PoolCandidate(id=branch, parent=None, scores=list(scores)))
            continue
        parent = _parent_name(store, proposals, names, sha, branch, tip)
        members[name] = Member(name, sha, parent, state)
        pool.append(PoolCandidate(id=name, parent=parent, scores=list(scores)))
    frontier = compute_frontier(ScorePool(instances=list(ids), candidates=pool))
    on_pool = {candidate.id for candidate in pool}
    members = {name: member for name, member in members.items() if name in on_pool}
    return FrontierView(branch, frontier, waiting, incomparable, members=members)


def _history(
    store: Store,
    proposals: dict[str, ProposalRecord],
    tips: dict[str, tuple[State, str]],
    branch: str,
    tip: str,
) -> list[tuple[datetime, str, str, str]]:
    """Every program of the optimisation's history, in creation order (GEPA's program
    index): each candidate, live or archived (archiving is storage: a candidate retired
    as dominated still counts, as in GEPA, whose pool only grows), each commit a
    candidate was proposed on (a base tip of its time, GEPA's seed), and the base tip.
    As (created, name, commit, live | archived | base)."""

    def created(sha: str) -> datetime:
        proposal = proposals.get(sha)
        return proposal.ts if proposal else store.commit_info(sha).author_time

    entries: list[tuple[datetime, str, str, str]] = [
        (created(sha), cid, sha, state) for cid, (state, sha) in tips.items()
    ]
    candidates = {sha for _cid, (_state, sha) in tips.items()}
    bases = {record.parent for record in proposals.values() if record.parent not in candidates} | {tip}
    entries += [(created(sha), branch if sha == tip else sha[:12], sha, "base") for sha in bases]
    return sorted(entries, key=lambda entry: entry[0])


def update_frontier(store: Store, config: Config, view: FrontierView) -> FrontierView:
    """Retire every evaluated live candidate that is not on the frontier, atomically."""
    on_frontier = set(view.frontier.members)
    retired = [
        cid for cid, member in view.members.items() if member.state == "live" and cid not in on_frontier
    ]
    if retired:
        txn = Transaction("frontier update")
        for cid in retired:
            reason = "dominated" if cid in view.frontier.dominated else "dominated (best on no instance)"
            retire(store, txn, cid, view.members[cid].commit, "dominated", reason)
        store.commit(txn)
    return replace(view, retired=retired)


def _parent_name(
    store: Store, proposals: dict[str, ProposalRecord], names: dict[str, str], sha: str, branch: str, tip: str
) -> str | None:
    proposal = proposals.get(sha)
    parents = store.commit_info(sha).parents
    parent = proposal.parent if proposal else (parents[0] if parents else None)
    if parent is None:
        return None
    if parent in names:
        return names[parent]
    return branch if parent == tip else parent[:12]


def proposals_by_commit(store: Store) -> dict[str, ProposalRecord]:
    found: dict[str, ProposalRecord] = {}
    for commit, records in store.notes(layout.NOTES_EVIDENCE).items():
        for record in records:
            if isinstance(record, ProposalRecord):
                found[commit] = record
    return found
