"""`harnessgit bisect`: which accepted edit broke it, and how did it get through?

Walks the base branch's first-parent chain between a good and a bad commit:
gated merges, recorded overrides and commits made before harnessgit was set up
alike, each judged with its own tree (`bisect_judge`). Stored, comparable scores
are used first, for free: they narrow the range to the commits between the last
known good and the first known bad. Only the commits a binary search then needs
are evaluated, through the cache, so N edits cost at most ceil(log2 N) + 2
evaluations (good, bad, and the search), and none when every commit's scores are
on record. The first bad edit is named with its diff, its gate record, its
evidence, and the check it slipped through (`bisect_explain`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from harnessgit import layout
from harnessgit.bisect.explain import Kind, Measured, OwnEffect, accepted_on, own_effect, slipped_through
from harnessgit.bisect.judge import Criterion, Judge, Step
from harnessgit.candidates.show import EMPTY_TREE, FileChange, files_between
from harnessgit.config import CONFIG_FILE, Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.eval import Execution
from harnessgit.evaluation.splits import load_manifest
from harnessgit.gate.changes import regrades
from harnessgit.records import EvidenceRecord, GateRecord, OverrideRecord, ProposalRecord
from harnessgit.store import CommitInfo, Store
from harnessgit.targets import provenance, resolve

Outcome = Literal["found", "ambiguous", "bad is good", "good is bad"]


@dataclass(frozen=True)
class FirstBad:
    commit: str
    position: int
    subject: str
    author: str
    date: str
    kind: Kind
    candidate: str | None
    merged: str | None  # the candidate commit a merge brought in (its second parent)
    before: Step  # the commit just before it on the chain: judged good
    after: Step
    own: OwnEffect
    files: list[FileChange]
    diff: str
    gate: GateRecord | None
    override: OverrideRecord | None
    proposal: ProposalRecord | None
    evidence: list[EvidenceRecord]
    accepted_on: str | None  # the gate's numbers, in one sentence
    why: list[str]  # the checks it slipped through


@dataclass(frozen=True)
class BisectResult:
    good: str
    bad: str
    criterion: Criterion
    description: str  # what "bad" means here, in words
    edits: int  # N: commits on the first-parent chain after good, up to bad
    evaluations: int  # commits whose harness had to be evaluated
    bound: int  # ceil(log2 N) + 2
    outcome: Outcome
    message: str
    steps: list[Step]  # every commit judged, in the order judged
    first_bad: FirstBad | None
    suspects: list[str]  # when skipped commits hide the answer: the commits it is among
    notes: list[str]  # e.g. the regrades on the range, and that one evaluator judged every commit


# Position on the chain (0 = good, N = bad) -> its judgement, in the order judged.
Known = dict[int, Step]


def bisect(
    store: Store,
    config: Config,
    good: str,
    bad: str,
    criterion: Criterion,
    *,
    execution: Execution = Execution(),
) -> BisectResult:
    """The first bad edit from good to bad: the ends, then stored scores, then a binary search."""
    config = require_evaluator(config, "`harnessgit bisect`")
    commits = _chain(store, good, bad)
    manifest = load_manifest(store.root, config.splits.manifest)
    judge = Judge(store, config, criterion, criterion.ids(manifest), execution=execution, grader=commits[-1])
    regraded = _regrade_notes(store, config, commits)
    one_grader = " when good is scored with bad's evaluator too (see the note)" if regraded else ""
    known = _judge_ends(judge, commits)
    if known[0].state == "bad":
        message = f"good {good} is itself bad ({criterion.describe()}){one_grader}: pick an older good"
        return _result(judge, commits, known, "good is bad", message, regraded)
    if known[len(commits) - 1].state == "good":
        message = f"bad {bad} is not bad: {criterion.describe()} does not hold there{one_grader}"
        return _result(judge, commits, known, "bad is good", message, regraded)
    _judge_stored(judge, commits, known)
    last_good, first_bad = _search(judge, commits, known)
    if first_bad - last_good > 1:
        suspects = commits[last_good + 1 : first_bad + 1]
        message = (
            f"the first bad edit is one of {len(suspects)} commits: the evaluator failed on "
            f"{first_bad - last_good - 1} of them"
        )
        return _result(judge, commits, known, "ambiguous", message, regraded, suspects=suspects)
    first = _first_bad(judge, known[last_good], known[first_bad])
    message = f"the first bad edit is {commits[first_bad][:12]}: {first.subject}"
    return _result(judge, commits, known, "found", message, regraded, first)


def _chain(store: Store, good: str, bad: str) -> list[str]:
    """good, then the first-parent chain after it up to bad, oldest first."""
    good_sha, bad_sha = resolve(store, good).sha, resolve(store, bad).sha
    if good_sha == bad_sha:
        raise HarnessgitError(f"good {good} and bad {bad} are the same commit: there is nothing to bisect")
    if not store.is_ancestor(good_sha, bad_sha):
        raise HarnessgitError(f"good {good} is not an ancestor of bad {bad}: bisect walks from good to bad")
    return [good_sha, *reversed(store.first_parent_chain(bad_sha, stop=good_sha))]


def _judge_ends(judge: Judge, commits: list[str]) -> Known:
    """Good and bad, evaluated if need be (neither may be skipped); good's scores
    become the baseline a drop is measured from."""
    known: Known = {}
    for position in (0, len(commits) - 1):
        try:
            summary, source = judge.scores(commits[position])
        except HarnessgitError as exc:
            which = "good" if position == 0 else "bad"
            raise HarnessgitError(f"cannot evaluate {which} {commits[position][:12]}: {exc}") from None
        if position == 0:
            judge.set_baseline(summary)
        known[position] = judge.judge(commits[position], position, summary=summary, source=source)
    return known


def _judge_stored(judge: Judge, commits: list[str], known: Known) -> None:
    """Every commit between the ends whose scores are on record: free to judge (the
    cache key is the harness tree, so a merge shares the scores of the candidate it merged)."""
    for position in range(1, len(commits) - 1):
        stored = judge.stored(commits[position])
        if stored is not None:
            known[position] = judge.judge(commits[position], position, summary=stored)


def _search(judge: Judge, commits: list[str], known: Known) -> tuple[int, int]:
    """Binary search between the last known good and the first known bad, evaluating
    only the probes; returns them once nothing between them is left to judge (more
    than one apart when skipped commits hide the answer)."""
    first_bad = min(p for p, step in known.items() if step.state == "bad")
    last_good = max(p for p, step in known.items() if step.state == "good" and p < first_bad)
    while True:
        open_ = [p for p in range(last_good + 1, first_bad) if p not in known]
        if not open_:
            return last_good, first_bad
        middle = (last_good + first_bad) // 2
        probe = min(open_, key=lambda p: (abs(p - middle), p))  # beside a skipped commit when need be
        known[probe] = judge.judge(commits[probe], probe)
        if known[probe].state == "bad":
            first_bad = probe
        elif known[probe].state == "good":
            last_good = probe


def _result(
    judge: Judge,
    commits: list[str],
    known: Known,
    outcome: Outcome,
    message: str,
    notes: list[str],
    first: FirstBad | None = None,
    suspects: list[str] | None = None,
) -> BisectResult:
    edits = len(commits) - 1
    return BisectResult(
        good=commits[0],
        bad=commits[-1],
        criterion=judge.criterion,
        description=judge.criterion.describe(),
        edits=edits,
        evaluations=judge.evaluations,
        bound=math.ceil(math.log2(edits)) + 2,
        outcome=outcome,
        message=message,
        steps=list(known.values()),
        first_bad=first,
        suspects=suspects or [],
        notes=notes,
    )


def _first_bad(judge: Judge, before: Step, after: Step) -> FirstBad:
    """The first bad edit named: its records, its diff, and how it got through."""
    store, sha = judge.store, after.commit
    info = store.commit_info(sha)
    parent = info.parents[0] if info.parents else EMPTY_TREE
    merged = info.parents[1] if len(info.parents) > 1 else None
    records = store.notes_on(layout.NOTES_GATE, sha)
    gate = next((r for r in reversed(records) if isinstance(r, GateRecord) and r.merge == sha), None)
    override = next((r for r in records if isinstance(r, OverrideRecord) and r.commit == sha), None)
    kind = _kind(store, info, gate, override)
    origin = provenance(store, sha)
    own = _own(judge, before, after)
    return FirstBad(
        commit=sha,
        position=after.position,
        subject=info.subject,
        author=info.author,
        date=info.author_time.isoformat(),
        kind=kind,
        candidate=origin.candidate,
        merged=merged,
        before=before,
        after=after,
        own=own,
        files=files_between(store, parent, sha),
        diff=store.diff_text(parent, sha),
        gate=gate,
        override=override,
        proposal=origin.proposal,
        evidence=origin.evidence,
        accepted_on=accepted_on(gate) if gate else None,
        why=_why(judge, kind, before, after, own, gate, override),
    )


def _kind(store: Store, info: CommitInfo, gate: GateRecord | None, override: OverrideRecord | None) -> Kind:
    """How the edit reached the base branch."""
    if override is not None:
        return "override"
    if gate is not None:
        return "gated merge"
    if not info.parents or store.file_at(store.commit_info(info.parents[0]).tree, CONFIG_FILE) is None:
        return "before harnessgit"
    return "merge without a gate record" if len(info.parents) > 1 else "direct commit"


def _own(judge: Judge, before: Step, after: Step) -> OwnEffect:
    """The edit against the commit before it, on the judged instances."""
    old, new = judge.stored(before.commit), judge.stored(after.commit)
    assert old is not None and new is not None  # both were judged, so both are on record
    return own_effect(old, new)


def _why(
    judge: Judge,
    kind: Kind,
    before: Step,
    after: Step,
    own: OwnEffect,
    gate: GateRecord | None,
    override: OverrideRecord | None,
) -> list[str]:
    """The checks the edit slipped through, from what bisect measured and what its records hold."""
    store, config, criterion = judge.store, judge.config, judge.criterion
    context, previous = judge.context(after.commit), judge.context(before.commit)
    own_graders = {eval_context(store, config, sha).key.fingerprint for sha in (before.commit, after.commit)}
    manifest = load_manifest(store.root, config.splits.manifest)
    measured = Measured(
        fingerprint=context.key.fingerprint,
        model=context.key.model,
        split_hash=manifest.split_hash(criterion.split),
    )
    baseline = judge.baseline.mean if judge.baseline else None
    cumulative = after.mean - baseline if after.mean is not None and baseline is not None else None
    return slipped_through(
        kind,
        criterion,
        own=own,
        cumulative=cumulative,
        measured=measured,
        gate=gate,
        override=override,
        failing=after.failing,
        gate_instances=_gate_instances(store, gate),
        grader_changed=previous.key.fingerprint != context.key.fingerprint,
        regrade=len(own_graders) > 1,
    )


def _gate_instances(store: Store, gate: GateRecord | None) -> list[str] | None:
    """The instances the gate compared, when its record lists them and the list is in this clone."""
    if gate is None or not gate.instances:
        return None
    try:
        return store.read_blob(gate.instances).decode("utf-8").split()
    except HarnessgitError:
        return None  # the instance list is not in this clone: judge without it


def _regrade_notes(store: Store, config: Config, commits: list[str]) -> list[str]:
    """When the evaluator's files changed on the range (a regrade), which commits
    changed them: every commit was then judged with bad's evaluator (`Judge.grader`)."""
    found = regrades(store, config, commits)
    if not found:
        return []
    return [
        f"the evaluator's files changed on this range ({'; '.join(found)}): every commit was judged "
        f"with bad's evaluator ({commits[-1][:12]}), its harness scored in bad's tree, so the scores "
        "compare (`harnessgit eval REV --grader BAD` reproduces one)"
    ]
