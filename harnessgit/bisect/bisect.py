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
from collections.abc import Callable
from typing import Literal

from pydantic import BaseModel, ConfigDict

from harnessgit import layout
from harnessgit.bisect.explain import Kind, Measured, OwnEffect, accepted_on, own_effect, slipped_through
from harnessgit.bisect.judge import Criterion, Judge, Step
from harnessgit.candidates.show import EMPTY_TREE, FileChange, files_between
from harnessgit.candidates.targets import candidate_of, resolve
from harnessgit.config import CONFIG_FILE, Config, require
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.splits import load_manifest
from harnessgit.records import EvidenceRecord, GateRecord, OverrideRecord, ProposalRecord
from harnessgit.store import Store

Outcome = Literal["found", "ambiguous", "bad is good", "good is bad"]


class _Out(BaseModel):
    model_config = ConfigDict(frozen=True)


class FirstBad(_Out):
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


class BisectResult(_Out):
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
    notes: list[str]  # e.g. the evaluator changed between good and the first bad edit


def bisect(
    store: Store,
    config: Config,
    good: str,
    bad: str,
    criterion: Criterion,
    *,
    jobs: int | None = None,
    progress: Callable[[int, int], None] | None = None,
    on_stderr: Callable[[str], None] | None = None,
) -> BisectResult:
    config = require(config)
    good_sha, bad_sha = resolve(store, good).sha, resolve(store, bad).sha
    if good_sha == bad_sha:
        raise HarnessgitError(f"good {good} and bad {bad} are the same commit: there is nothing to bisect")
    if not store.is_ancestor(good_sha, bad_sha):
        raise HarnessgitError(f"good {good} is not an ancestor of bad {bad}: bisect walks from good to bad")
    manifest = load_manifest(store.root, config.splits.manifest)
    ids = criterion.ids(manifest)
    commits = [good_sha, *reversed(store.first_parent_chain(bad_sha, stop=good_sha))]
    n = len(commits) - 1
    judge = Judge(store, config, criterion, ids, jobs=jobs, progress=progress, on_stderr=on_stderr)
    steps: list[Step] = []

    def done(
        outcome: Outcome, message: str, first: FirstBad | None = None, suspects: list[str] | None = None
    ) -> BisectResult:
        return BisectResult(
            good=good_sha,
            bad=bad_sha,
            criterion=criterion,
            description=criterion.describe(),
            edits=n,
            evaluations=judge.evaluations,
            bound=math.ceil(math.log2(n)) + 2,
            outcome=outcome,
            message=message,
            steps=steps,
            first_bad=first,
            suspects=suspects or [],
            notes=_grader_notes(store, config, good_sha, first) if first else [],
        )

    known: dict[int, Step] = {}
    for position in (0, n):
        try:
            summary, source = judge.scores(commits[position])
        except HarnessgitError as exc:
            which = "good" if position == 0 else "bad"
            raise HarnessgitError(f"cannot evaluate {which} {commits[position][:12]}: {exc}") from None
        if position == 0:
            judge.set_baseline(summary)
        known[position] = judge.judge(commits[position], position, summary=summary, source=source)
        steps.append(known[position])
    if known[0].state == "bad":
        return done("good is bad", f"good {good} is itself bad ({criterion.describe()}): pick an older good")
    if known[n].state == "good":
        return done("bad is good", f"bad {bad} is not bad: {criterion.describe()} does not hold there")

    # Stored scores first, for free (the cache key is the harness tree, so a merge
    # shares the scores of the candidate it merged).
    for position in range(1, n):
        stored = judge.stored(commits[position])
        if stored is not None:
            known[position] = judge.judge(commits[position], position, summary=stored)
            steps.append(known[position])
    first_bad = min(p for p, s in known.items() if s.state == "bad")
    last_good = max(p for p, s in known.items() if s.state == "good" and p < first_bad)
    while True:
        open_ = [p for p in range(last_good + 1, first_bad) if p not in known]
        if not open_:
            break
        middle = (last_good + first_bad) // 2
        probe = min(open_, key=lambda p: (abs(p - middle), p))  # beside a skipped commit when need be
        known[probe] = judge.judge(commits[probe], probe)
        steps.append(known[probe])
        if known[probe].state == "bad":
            first_bad = probe
        elif known[probe].state == "good":
            last_good = probe
    if first_bad - last_good > 1:
        suspects = commits[last_good + 1 : first_bad + 1]
        return done(
            "ambiguous",
            f"the first bad edit is one of {len(suspects)} commits: the evaluator failed on "
            f"{first_bad - last_good - 1} of them",
            suspects=suspects,
        )
    first = _first_bad(store, config, judge, commits, known[last_good], known[first_bad])
    return done("found", f"the first bad edit is {commits[first_bad][:12]}: {first.subject}", first)


def _first_bad(
    store: Store, config: Config, judge: Judge, commits: list[str], before: Step, after: Step
) -> FirstBad:
    sha = after.commit
    info = store.commit_info(sha)
    parent = info.parents[0] if info.parents else EMPTY_TREE
    merged = info.parents[1] if len(info.parents) > 1 else None
    records = store.notes_on(layout.NOTES_GATE, sha)
    gate = next((r for r in reversed(records) if isinstance(r, GateRecord) and r.merge == sha), None)
    override = next((r for r in records if isinstance(r, OverrideRecord) and r.commit == sha), None)
    configured = bool(info.parents) and store.file_at(store.commit_info(parent).tree, CONFIG_FILE) is not None
    kind: Kind
    if override is not None:
        kind = "override"
    elif gate is not None:
        kind = "gated merge"
    elif not configured:
        kind = "before harnessgit"
    else:
        kind = "merge without a gate record" if merged else "direct commit"
    proposed = merged or sha
    evidence_records = store.notes_on(layout.NOTES_EVIDENCE, proposed)
    proposal = next((r for r in evidence_records if isinstance(r, ProposalRecord)), None)
    old, new = judge.stored(before.commit), judge.stored(sha)
    assert old is not None and new is not None  # both were judged, so both are on record
    own = own_effect(old, new)
    context = eval_context(store, config, sha)
    previous = eval_context(store, config, before.commit)
    manifest = load_manifest(store.root, config.splits.manifest)
    measured = Measured(
        fingerprint=context.key.fingerprint,
        model=context.key.model,
        split_hash=manifest.split_hash(judge.criterion.split),
    )
    compared = None
    if gate is not None and gate.instances:
        try:
            compared = store.read_blob(gate.instances).decode("utf-8").split()
        except HarnessgitError:
            compared = None  # the instance list is not in this clone: judge without it
    baseline = judge.baseline.mean if judge.baseline else None
    cumulative = new.mean - baseline if new.mean is not None and baseline is not None else None
    return FirstBad(
        commit=sha,
        position=after.position,
        subject=info.subject,
        author=info.author,
        date=info.author_time.isoformat(),
        kind=kind,
        candidate=(proposal.candidate if proposal else None) or candidate_of(store, proposed),
        merged=merged,
        before=before,
        after=after,
        own=own,
        files=files_between(store, parent, sha),
        diff=store.diff_text(parent, sha),
        gate=gate,
        override=override,
        proposal=proposal,
        evidence=[r for r in evidence_records if isinstance(r, EvidenceRecord)],
        accepted_on=accepted_on(gate) if gate else None,
        why=slipped_through(
            kind,
            judge.criterion,
            own=own,
            cumulative=cumulative,
            measured=measured,
            gate=gate,
            override=override,
            failing=after.failing,
            gate_instances=compared,
            grader_changed=previous.key.fingerprint != context.key.fingerprint,
        ),
    )


def _grader_notes(store: Store, config: Config, good: str, first: FirstBad) -> list[str]:
    """A drop measured across a change of the evaluator's own files may be the grader's."""
    before = eval_context(store, config, first.before.commit).key.fingerprint
    if eval_context(store, config, good).key.fingerprint == before:
        return []
    return [
        "the evaluator's files changed between good and the commit before the first bad edit "
        "(their evaluator fingerprints differ): scores on either side of that change come from "
        "different graders"
    ]


def judged_commit(store: Store) -> str:
    """The commit `git bisect` asks about: BISECT_HEAD with --no-checkout, else HEAD."""
    from harnessgit.errors import UnknownRevision

    try:
        return store.resolve_commit("BISECT_HEAD")
    except UnknownRevision:
        return store.resolve_commit("HEAD")


def judge_one(
    store: Store,
    config: Config,
    good: str,
    commit: str,
    criterion: Criterion,
    *,
    jobs: int | None = None,
    on_stderr: Callable[[str], None] | None = None,
) -> Step:
    """`bisect-judge`: one commit against good's baseline (good evaluated once, then cached)."""
    config = require(config)
    manifest = load_manifest(store.root, config.splits.manifest)
    judge = Judge(store, config, criterion, criterion.ids(manifest), jobs=jobs, on_stderr=on_stderr)
    if criterion.drop is not None:
        baseline, _source = judge.scores(good)
        judge.set_baseline(baseline)
    return judge.judge(commit, -1)
