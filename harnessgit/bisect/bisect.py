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

Every commit is judged for one model label (``--bad-model``, default the configured
one); when good was measured with another (``--good-model``, or a checkpoint
ancestor's scores on record at good), the weights change is measured apart at good's
harness (`bisect.weights`), so the result says whether the regression came from a
harness edit or from the weights.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harnessgit import layout
from harnessgit.bisect.explain import (
    Kind,
    Landing,
    Measured,
    OwnEffect,
    accepted_on,
    own_effect,
    slipped_through,
)
from harnessgit.bisect.judge import Criterion, Judge, Step
from harnessgit.bisect.search import Known, Point, bound, judge_ends, judge_stored, search
from harnessgit.bisect.weights import ModelChange, model_change
from harnessgit.candidates.log import landing_mismatch
from harnessgit.candidates.show import EMPTY_TREE, FileChange, files_between
from harnessgit.config import CONFIG_FILE, Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.eval import Execution
from harnessgit.evaluation.lineage import check_label
from harnessgit.evaluation.models import for_model
from harnessgit.evaluation.splits import load_manifest
from harnessgit.gate.changes import regrades
from harnessgit.records import EvidenceRecord, GateRecord, OverrideRecord, ProposalRecord
from harnessgit.store import CommitInfo, Objects, Store
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
    model: str  # the model label every commit was judged for
    edits: int  # N: commits on the first-parent chain after good, up to bad
    evaluations: int  # commits whose harness had to be evaluated
    bound: int  # ceil(log2 N) + 2
    outcome: Outcome
    message: str
    steps: list[Step]  # every commit judged, in the order judged
    first_bad: FirstBad | None
    suspects: list[str]  # when skipped commits hide the answer: the commits it is among
    notes: list[str]  # e.g. the regrades on the range, and that one evaluator judged every commit
    model_change: ModelChange | None  # good's harness under the model good was measured with, if another


def bisect(
    store: Store,
    config: Config,
    good: str,
    bad: str,
    criterion: Criterion,
    *,
    model: str | None = None,
    good_model: str | None = None,
    execution: Execution = Execution(),
) -> BisectResult:
    """The first bad edit from good to bad for ``model`` (default: the configured one):
    the ends, then stored scores, then a binary search; and the model step at good's
    harness when good was measured with ``good_model`` (or a checkpoint ancestor's scores)."""
    config = require_evaluator(config, "`harnessgit bisect`")
    config = for_model(config, check_label(model)) if model is not None else config
    good_model = check_label(good_model) if good_model is not None else None
    commits = _chain(store, good, bad)
    manifest = load_manifest(store.root, config.splits.manifest)
    judge = Judge(store, config, criterion, criterion.ids(manifest), execution=execution, grader=commits[-1])
    regraded = _regrade_notes(store, config, commits)
    one_grader = " when good is scored with bad's evaluator too (see the note)" if regraded else ""
    label = config.evaluator.model
    line = [Point(commit, label) for commit in commits]
    known = judge_ends(judge, line, (commits[0][:12], commits[-1][:12]))
    change = model_change(judge, commits[0], label, good_model)
    searched = _Searched(commits, known, regraded, change)
    weights = _weights_clause(change)
    if known[0].state == "bad":
        message = f"good {good} is itself bad for model {label} ({criterion.describe()}){one_grader}" + (
            weights or ": pick an older good"
        )
        return _result(judge, searched, "good is bad", message)
    if known[len(commits) - 1].state == "good":
        message = (
            f"bad {bad} is not bad for model {label}: {criterion.describe()} does not hold there"
            f"{one_grader}{weights}"
        )
        return _result(judge, searched, "bad is good", message)
    judge_stored(judge, line, known)
    last_good, first_bad = search(judge, line, known)
    if first_bad - last_good > 1:
        suspects = commits[last_good + 1 : first_bad + 1]
        message = (
            f"the first bad edit is one of {len(suspects)} commits: the evaluator failed on "
            f"{first_bad - last_good - 1} of them"
        )
        return _result(judge, searched, "ambiguous", message, suspects=suspects)
    first = _first_bad(judge, known[last_good], known[first_bad])
    message = f"the first bad edit is {commits[first_bad][:12]}: {first.subject}"
    if change is not None and change.regressed:
        message += f"; the weights change {change.old} -> {change.new} is bad on its own too"
    return _result(judge, searched, "found", message, first)


def _weights_clause(change: ModelChange | None) -> str:
    """What the message says when the weights change alone is bad at good's harness."""
    if change is None or not change.regressed:
        return ""
    return (
        f"; the regression came from the weights change {change.old} -> {change.new}, "
        f"which is bad on its own at good's harness (see the model change)"
    )


def _chain(store: Store, good: str, bad: str) -> list[str]:
    """good, then the first-parent chain after it up to bad, oldest first."""
    good_sha, bad_sha = resolve(store.refs, good).sha, resolve(store.refs, bad).sha
    if good_sha == bad_sha:
        raise HarnessgitError(f"good {good} and bad {bad} are the same commit: there is nothing to bisect")
    if not store.history.is_ancestor(good_sha, bad_sha):
        raise HarnessgitError(f"good {good} is not an ancestor of bad {bad}: bisect walks from good to bad")
    return [good_sha, *reversed(store.history.first_parent_chain(bad_sha, stop=good_sha))]


@dataclass(frozen=True)
class _Searched:
    """What one bisection walked and learned, whatever its outcome."""

    commits: list[str]  # good, then each edit to bad
    known: Known
    notes: list[str]  # regrades on the way
    change: ModelChange | None  # the model step at good's harness


def _result(
    judge: Judge,
    searched: _Searched,
    outcome: Outcome,
    message: str,
    first: FirstBad | None = None,
    suspects: list[str] | None = None,
) -> BisectResult:
    commits, known, change = searched.commits, searched.known, searched.change
    edits = len(commits) - 1
    # The model step's own evaluation (only with --good-model) is not part of the search.
    extra = 1 if change is not None and change.source == "evaluated" else 0
    return BisectResult(
        good=commits[0],
        bad=commits[-1],
        criterion=judge.criterion,
        description=judge.criterion.describe(),
        model=judge.config.evaluator.model,
        edits=edits,
        evaluations=judge.evaluations - extra,
        bound=bound(edits),
        outcome=outcome,
        message=message,
        steps=list(known.values()),
        first_bad=first,
        suspects=suspects or [],
        notes=searched.notes,
        model_change=change,
    )


def _first_bad(judge: Judge, before: Step, after: Step) -> FirstBad:
    """The first bad edit named: its records, its diff, and how it got through."""
    store, sha = judge.store, after.commit
    info = store.objects.commit_info(sha)
    parent = info.parents[0] if info.parents else EMPTY_TREE
    merged = info.parents[1] if len(info.parents) > 1 else None
    records = store.notes.records_on(layout.NOTES_GATE, sha)
    # A gate record copied onto this commit from another merge is no gate of it (issue 28).
    gate = next(
        (
            r
            for r in reversed(records)
            if isinstance(r, GateRecord) and r.merge == sha and not landing_mismatch(r, info)
        ),
        None,
    )
    override = next((r for r in records if isinstance(r, OverrideRecord) and r.commit == sha), None)
    kind = _kind(store.objects, info, gate, override)
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
        files=files_between(store.history, parent, sha),
        diff=store.history.diff_text(parent, sha),
        gate=gate,
        override=override,
        proposal=origin.proposal,
        evidence=origin.evidence,
        accepted_on=accepted_on(gate) if gate else None,
        why=_why(judge, kind, before, after, own, gate, override),
    )


def _kind(
    objects: Objects, info: CommitInfo, gate: GateRecord | None, override: OverrideRecord | None
) -> Kind:
    """How the edit reached the base branch."""
    if override is not None:
        return "override"
    if gate is not None:
        return "gated merge"
    if not info.parents or objects.file_at(objects.commit_info(info.parents[0]).tree, CONFIG_FILE) is None:
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
    own_graders = {
        eval_context(store.objects, config, sha).key.fingerprint for sha in (before.commit, after.commit)
    }
    manifest = load_manifest(store.root, config.splits.manifest)
    measured = Measured(
        fingerprint=context.key.fingerprint,
        model=context.key.model,
        split_hash=manifest.split_hash(criterion.split),
    )
    baseline = judge.baseline.mean if judge.baseline else None
    cumulative = after.mean - baseline if after.mean is not None and baseline is not None else None
    landing = Landing(
        kind,
        gate=gate,
        override=override,
        gate_instances=_gate_instances(store.objects, gate),
        grader_changed=previous.key.fingerprint != context.key.fingerprint,
        regrade=len(own_graders) > 1,
    )
    return slipped_through(
        landing, criterion, own=own, cumulative=cumulative, measured=measured, failing=after.failing
    )


def _gate_instances(objects: Objects, gate: GateRecord | None) -> list[str] | None:
    """The instances the gate compared, when its record lists them and the list is in this clone."""
    if gate is None or not gate.instances:
        return None
    try:
        return objects.read_blob(gate.instances).decode("utf-8").split()
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
