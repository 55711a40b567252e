"""GEPA's merge proposal, system-aware (arXiv 2507.19457 sec. 3; gepa's
``proposer/merge.py``), through git: two frontier candidates that descend from a
common ancestor, no better than either, and that differ in a harness file one of
them left as the ancestor had it, are combined by a three-way merge of each harness
file against the ancestor. A file both changed is merged by git; a conflict means no
merge proposal for that triplet.

`plan_merge` finds the triplet the way gepa does (a random pair of frontier members,
neither an ancestor of the other, then a common ancestor drawn with weights = mean
score, up to 10 tries each), seeded by (seed, iteration); `subsample` picks the
selection instances gepa checks a merge on before the full evaluation; `merge_draw`
is where a merge iteration starts and `propose_merge` makes the merge a candidate.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator

from harnessgit import globs
from harnessgit.candidates.edits import Edit
from harnessgit.candidates.propose import Proposal, propose
from harnessgit.evolve.record import Draw
from harnessgit.evolve.session import Session
from harnessgit.evolve.state import MergePlan
from harnessgit.objects import TreeEntry
from harnessgit.store import Blob

ATTEMPTS = 10  # gepa's max_attempts, for the pair and for the triplet
SUBSAMPLE = 5  # gepa's num_subsample_ids


def plan_merge(session: Session, number: int) -> MergePlan | None:
    """A merge to propose, or None when no triplet qualifies and merges cleanly."""
    view = session.frontier()
    rng = random.Random(f"harnessgit-merge:{session.seed}:{number}")
    pool = {member.commit: name for name, member in view.members.items()}
    order = list(pool)  # pool order: gepa's program index
    members = [view.members[name].commit for name in view.frontier.members]
    means = {sha: _mean(session, sha) for sha in pool}
    for _ in range(ATTEMPTS):
        triplet = _triplet(session, rng, members, order, means)
        if triplet is None:
            continue
        session.merges_tried.add(triplet)
        first, second, ancestor = triplet
        merged = _three_way(session, first, second, ancestor)
        if merged is None:
            continue
        changes, files = merged
        return MergePlan(first, pool[first], second, pool[second], ancestor, changes, files)
    return None


def _mean(session: Session, commit: str) -> float:
    mean = session.evaluate(commit, "selection", session.selection)  # on record: no rollout
    return 0.0 if mean is None else mean


def _triplet(
    session: Session, rng: random.Random, members: list[str], order: list[str], means: dict[str, float]
) -> tuple[str, str, str] | None:
    for _ in range(ATTEMPTS):
        if len(members) < 2:
            return None
        first, second = sorted(rng.sample(members, 2), key=order.index)
        above_first, above_second = set(_ancestors(session, first)), set(_ancestors(session, second))
        if first in above_second or second in above_first:
            continue  # one descends from the other: nothing to combine
        common = [
            sha
            for sha in order
            if sha in above_first
            and sha in above_second
            and (first, second, sha) not in session.merges_tried
            and means[sha] <= min(means[first], means[second])
            and _desirable(session, first, second, sha)
        ]
        if common:
            weights = [means[sha] for sha in common]
            if sum(weights) <= 0:  # gepa's weighted draw needs a positive total
                weights = [1.0] * len(common)
            return first, second, rng.choices(common, weights=weights)[0]
    return None


def _ancestors(session: Session, commit: str) -> Iterator[str]:
    """Every commit ``commit`` was proposed on, through proposal parents (both of a merge)."""
    seen: set[str] = set()
    todo = [commit]
    while todo:
        record = session.proposals.get(todo.pop())
        if record is None:
            continue
        for parent in (record.parent, record.other_parent):
            if parent and parent not in seen:
                seen.add(parent)
                todo.append(parent)
                yield parent


def _harness(session: Session, commit: str) -> dict[str, TreeEntry]:
    paths = session.config.harness.paths
    return {
        path: entry
        for path, entry in session.store.objects.files_at(commit).items()
        if globs.matches(path, paths)
    }


def _same(a: TreeEntry | None, b: TreeEntry | None) -> bool:
    return (a.sha, a.mode) == (b.sha, b.mode) if a and b else a is b


def _desirable(session: Session, first: str, second: str, ancestor: str) -> bool:
    """gepa's filter: some component one of the two kept as the ancestor had it, and
    the other changed, so the merge takes something from each."""
    a, b, o = (_harness(session, sha) for sha in (first, second, ancestor))
    return any(
        not _same(a.get(path), b.get(path))
        and (_same(o.get(path), a.get(path)) or _same(o.get(path), b.get(path)))
        for path in {*a, *b, *o}
    )


def _takes_one(a: TreeEntry | None, b: TreeEntry | None, o: TreeEntry | None) -> bool:
    return not _same(a, b) and (_same(o, a) or _same(o, b))


def _three_way(
    session: Session, first: str, second: str, ancestor: str
) -> tuple[dict[str, tuple[str, str]], list[str]] | None:
    """Each harness file merged three ways, as changes to ``first``; None on a conflict."""
    store = session.store
    a, b, o = (_harness(session, sha) for sha in (first, second, ancestor))
    changes: dict[str, tuple[str, str]] = {}
    files = sorted(path for path in {*a, *b} if not _same(a.get(path), b.get(path)))
    for path in files:
        ours, theirs, base = a.get(path), b.get(path), o.get(path)
        if _same(base, ours) and theirs is not None:
            changes[path] = (theirs.sha, theirs.mode)  # only the second changed it
        elif _same(base, theirs):
            continue  # only the first changed it: first has it already
        elif ours is None or theirs is None:
            return None  # deleted on one side, changed on the other
        else:
            text = store.worktree.merge_text(
                store.objects.read_blob(base.sha) if base else b"",
                store.objects.read_blob(ours.sha),
                store.objects.read_blob(theirs.sha),
            )
            if text is None:
                return None
            changes[path] = (store.objects.write_blob(text), ours.mode)
    return (changes, files) if changes else None


def subsample(first: list[float], second: list[float], ids: list[str], rng: random.Random) -> list[str]:
    """gepa's check set for a merge: up to 2 selection instances where the first parent
    scores higher, 2 where the second does, 2 where they tie, 5 in all, topped up from
    the rest (``select_eval_subsample_for_merged_program``)."""
    buckets = (
        [i for i, x, y in zip(ids, first, second, strict=True) if x > y],
        [i for i, x, y in zip(ids, first, second, strict=True) if y > x],
        [i for i, x, y in zip(ids, first, second, strict=True) if x == y],
    )
    each = max(1, math.ceil(SUBSAMPLE / 3))
    chosen: list[str] = []
    for bucket in buckets:
        take = min(len(bucket), each, SUBSAMPLE - len(chosen))
        if take > 0:
            chosen += rng.sample(bucket, take)
    rest = [i for i in ids if i not in chosen]
    missing = SUBSAMPLE - len(chosen)
    if missing > 0:
        chosen += rng.sample(rest, min(missing, len(rest)))
    return chosen


def merge_draw(session: Session, number: int, plan: MergePlan) -> Draw:
    """Where a merge starts: its first parent, gepa's selection subsample of instances
    on which the parents differ (seeded), and the better parent's mean there."""
    first, second = (
        session.book.scored(session.context(sha).key, session.selection) for sha in (plan.first, plan.second)
    )
    ids = [i for i in session.selection if i in first and i in second]
    rng = random.Random(f"harnessgit-merge-sample:{session.seed}:{number}")
    batch = subsample([first[i][0] for i in ids], [second[i][0] for i in ids], ids, rng)
    before = max(sum(first[i][0] for i in batch), sum(second[i][0] for i in batch)) / len(batch)
    return Draw(
        number=number,
        tip=session.base_commit(),
        parent=plan.first,
        parent_name=plan.first_name,
        component=", ".join(plan.files),
        batch=batch,
        current="",
        examples=[],
        parent_score=before,
        merge=plan,
    )


def propose_merge(session: Session, plan: MergePlan) -> Proposal:
    """The merge as a candidate on its first parent, with the second as its other parent."""
    ancestor = session.proposals.get(plan.ancestor)
    rationale = (
        f"Merge {plan.first_name} and {plan.second_name}: each keeps what it changed since "
        f"{ancestor.candidate if ancestor else plan.ancestor[:12]} (their common ancestor)"
    )
    candidate = propose(
        session.store,
        session.config,
        Edit({path: Blob(sha, mode) for path, (sha, mode) in plan.changes.items()}, "merge"),
        parent=plan.first,
        other_parent=plan.second,
        rationale=rationale,
        proposer="merge",
        source="evolve",
    )
    session.remember(candidate)
    return candidate
