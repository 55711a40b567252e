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
from typing import TYPE_CHECKING, ClassVar, Protocol

from harnessgit import layout
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import EvalContext, Key, eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import Manifest, load_manifest
from harnessgit.gate.pool_cache import Pool
from harnessgit.records import ProposalRecord
from harnessgit.stats.frontier_keys import FrontierType, Objectives, frontier_by_type
from harnessgit.stats.frontier_types import Frontier
from harnessgit.store import Notes, Refs, Store, Transaction
from harnessgit.targets import State, base_tip, candidate_tips, retire

SELECTION = "selection"

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    Matrix = NDArray[np.float64]


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
    retired by ``--update``, the parent drawn by ``--sample``, the frontier type, and every
    member's commit."""

    JSON_EXTRA: ClassVar[tuple[str, ...]] = ("commits",)

    base: str
    frontier: Frontier = field(metadata={"json": "flatten"})
    waiting: list[str]  # live candidates not evaluated on the whole selection split
    incomparable: list[str]  # live candidates whose evaluator files or model differ from the base's
    retired: list[str] = field(default_factory=list)  # set by update: candidates moved to the archive
    sampled: str | None = None  # set by --sample: a parent drawn with GEPA's weights
    frontier_type: str = "instance"  # what a front is kept for (harnessgit.stats.frontier_keys)
    members: dict[str, Member] = field(default_factory=dict, metadata={"json": False})

    @property
    def commits(self) -> dict[str, str]:
        return {cid: member.commit for cid, member in self.members.items()}


@dataclass(frozen=True)
class Known:
    """What a caller that keeps the history in memory, such as evolve (which rebuilds the
    frontier on every new candidate), hands `frontier_view` instead of reading it again:
    the score book, the proposal records (commit -> record), the cache keys (commit ->
    context), and optionally the candidate tips (`candidate_tips`) and the manifest."""

    book: ScoreBook
    proposals: dict[str, ProposalRecord]
    contexts: dict[str, EvalContext]
    tips: dict[str, tuple[State, str]] | None = None
    manifest: Manifest | None = None


def frontier_view(
    store: Store,
    config: Config,
    *,
    base: str | None = None,
    known: Known | None = None,
    frontier_type: FrontierType | None = None,
) -> FrontierView:
    """``frontier_type`` (default ``[gate] frontier_type``): what GEPA keeps a front for
    (`harnessgit.stats.frontier_keys`). Without ``known`` (`Known`), what the frontier
    reads of the history comes from its derived cache (`harnessgit.gate.pool_cache`):
    the same, without reading 20,000 notes and commits each time; the "objective",
    "hybrid" and "cartesian" types read the records, as the cache holds no objective
    scores."""
    config = require_evaluator(config, "`harnessgit frontier`")
    manifest = (known.manifest if known else None) or load_manifest(store.root, config.splits.manifest)
    kind = frontier_type or config.gate.frontier_type
    source: Source
    # The pool cache holds per-instance means only: the objectives' fronts read the records.
    if known is None and kind == "instance":
        source = Pool(store, config)
    elif known is None:
        source = Records(store, config, ScoreBook.load(store), proposals_by_commit(store.notes), {})
    else:
        source = Records(store, config, known.book, known.proposals, known.contexts)
    try:
        return _view(
            store.refs, source, base or config.harness.base, manifest, known.tips if known else None, kind
        )
    finally:
        source.save()


def _view(
    refs: Refs,
    source: Source,
    branch: str,
    manifest: Manifest,
    tips: dict[str, tuple[State, str]] | None,
    kind: FrontierType = "instance",
) -> FrontierView:
    ids = tuple(manifest.ids(SELECTION))
    tip = base_tip(refs, branch)
    reference = source.key(tip)
    all_tips = tips if tips is not None else candidate_tips(refs)
    history = _history(source, all_tips, branch, tip)
    keys = [source.key(sha) for _created, _name, sha, _state in history]
    matrix, complete = source.matrix([reference, *keys], ids, manifest.split_hash(SELECTION))
    if not complete[0]:
        raise HarnessgitError(
            f"{branch} is not evaluated on the whole selection split: run `harnessgit eval {branch}` first"
        )
    objectives = _objectives(source, kind, [reference, *keys], ids, branch)
    # a program without scores on the base's objectives is not in the pool, as one
    # without a score on every instance is not (GEPA would stop: it needs them)
    complete = [
        done and (kind == "instance" or objectives[row] is not None) for row, done in enumerate(complete)
    ]
    names = {sha: cid for cid, (_state, sha) in all_tips.items()}
    members = {branch: Member(branch, tip, None, "base")}
    pool_ids: list[str] = []
    parents: list[str | None] = []
    rows: list[int] = []  # the pool's rows of ``matrix``
    waiting, incomparable = [], []
    seats: dict[str, int] = {}  # harness tree id -> its place in the pool
    for row, ((_created, name, sha, state), key) in enumerate(zip(history, keys, strict=True), start=1):
        if key.fingerprint != reference.fingerprint or key.model != reference.model:
            if state == "live":
                incomparable.append(name)
            continue
        if not complete[row]:
            if state == "live":
                waiting.append(name)
            continue
        if key.harness in seats:  # the same harness text: one program (the base tip's name wins)
            if sha == tip:
                pool_ids[seats[key.harness]], parents[seats[key.harness]] = branch, None
            continue
        seats[key.harness] = len(pool_ids)
        parent = None if sha == tip else _parent_name(source, names, sha, branch, tip)
        if sha != tip:
            members[name] = Member(name, sha, parent, state)
        pool_ids.append(branch if sha == tip else name)
        parents.append(parent)
        rows.append(row)
    chosen = [objectives[row] or {} for row in rows]
    frontier = frontier_by_type(kind, pool_ids, parents, ids, matrix[rows], chosen)
    on_pool = set(pool_ids)
    members = {name: member for name, member in members.items() if name in on_pool}
    return FrontierView(branch, frontier, waiting, incomparable, members=members, frontier_type=kind)


def _objectives(
    source: Source, kind: FrontierType, keys: list[Key], ids: tuple[str, ...], branch: str
) -> list[Objectives | None]:
    """Each key's scores per objective on the selection split, where the frontier type
    reads them (None for a key without scores on the base's objectives)."""
    if kind == "instance":
        return [None] * len(keys)
    if not isinstance(source, Records):
        raise HarnessgitError("the objectives' frontier reads the records, not the pool cache")
    found = [source.book.complete_objectives(key, ids) for key in keys]
    if found[0] is None:
        raise HarnessgitError(
            f"frontier type {kind} needs objective scores on every selection instance, and {branch} "
            "has none on record (an evaluator's objective_scores, or GEPA's through GitRecorder.watch: "
            'docs/gepa.md, "Objectives")'
        )
    names = sorted(found[0])
    return [scores if scores is not None and sorted(scores) == names else None for scores in found]


class Source(Protocol):
    """What the frontier reads of the history: from the records (`Records`) or from the
    derived cache (`harnessgit.gate.pool_cache.Pool`), with the same answers."""

    def key(self, sha: str) -> Key: ...
    def created(self, sha: str) -> datetime: ...
    def parent(self, sha: str) -> str | None: ...
    def proposed_on(self) -> set[str]: ...
    def matrix(self, keys: list[Key], ids: tuple[str, ...], split_hash: str) -> tuple[Matrix, list[bool]]: ...
    def save(self) -> None: ...


class Records:
    """The frontier's reads from the records themselves (evolve keeps these between
    iterations)."""

    def __init__(
        self,
        store: Store,
        config: Config,
        book: ScoreBook,
        proposals: dict[str, ProposalRecord],
        contexts: dict[str, EvalContext],
    ) -> None:
        self.store, self.config, self.book = store, config, book
        self.proposals, self.contexts = proposals, contexts

    def key(self, sha: str) -> Key:
        if sha not in self.contexts:
            self.contexts[sha] = eval_context(self.store.objects, self.config, sha)
        return self.contexts[sha].key

    def created(self, sha: str) -> datetime:
        proposal = self.proposals.get(sha)
        return proposal.ts if proposal else self.store.objects.commit_info(sha).author_time

    def parent(self, sha: str) -> str | None:
        proposal = self.proposals.get(sha)
        parents = self.store.objects.commit_info(sha).parents
        return proposal.parent if proposal else (parents[0] if parents else None)

    def proposed_on(self) -> set[str]:
        return {record.parent for record in self.proposals.values()}

    def matrix(self, keys: list[Key], ids: tuple[str, ...], split_hash: str) -> tuple[Matrix, list[bool]]:
        import numpy as np

        self.book.prefetch(key.harness for key in keys)  # one read
        found = [self.book.complete_means(key, ids, split_hash) for key in keys]
        rows = [means if means is not None else (0.0,) * len(ids) for means in found]
        matrix = np.array(rows, dtype=np.float64).reshape(len(keys), len(ids))
        return matrix, [means is not None for means in found]

    def save(self) -> None:
        return


def _history(
    source: Source,
    tips: dict[str, tuple[State, str]],
    branch: str,
    tip: str,
) -> list[tuple[datetime, str, str, str]]:
    """Every program of the optimisation's history, in creation order (GEPA's program
    index): each candidate, live or archived (archiving is storage: a candidate retired
    as dominated still counts, as in GEPA, whose pool only grows), each commit a
    candidate was proposed on (a base tip of its time, GEPA's seed), and the base tip.
    As (created, name, commit, live | archived | base)."""
    entries: list[tuple[datetime, str, str, str]] = [
        (source.created(sha), cid, sha, state) for cid, (state, sha) in tips.items()
    ]
    candidates = {sha for _cid, (_state, sha) in tips.items()}
    bases = {parent for parent in source.proposed_on() if parent not in candidates} | {tip}
    entries += [(source.created(sha), branch if sha == tip else sha[:12], sha, "base") for sha in bases]
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
        store.refs.commit(txn)
    return replace(view, retired=retired)


def _parent_name(source: Source, names: dict[str, str], sha: str, branch: str, tip: str) -> str | None:
    parent = source.parent(sha)
    if parent is None:
        return None
    if parent in names:
        return names[parent]
    return branch if parent == tip else parent[:12]


def proposals_by_commit(notes: Notes) -> dict[str, ProposalRecord]:
    found: dict[str, ProposalRecord] = {}
    for commit, records in notes.records(layout.NOTES_EVIDENCE).items():
        for record in records:
            if isinstance(record, ProposalRecord):
                found[commit] = record
    return found
