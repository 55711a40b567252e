"""The candidate tree: every proposal as a node, with its outcome and its parent edges.

GEPA draws its programs as a tree (`candidate_tree.html`); harnessgit also knows what
became of each proposal: kept by the minibatch or not, gated, rejected, merged,
archived. A node is a candidate (live or archived), a base-branch commit candidates
were proposed on, or a proposal the proposer's answer never became a candidate
(`rejected-proposal`: no commit, so no diff). Outcomes are read from the records on
each candidate's commit: gate records, evolve's iteration record, retire records, and
the merges of the base branch that landed it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from harnessgit import layout
from harnessgit.candidates.log import LogEntry
from harnessgit.config import Config
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import GateRecord, IterationRecord, ProposalRecord, Record, RetireRecord, live
from harnessgit.render import short
from harnessgit.store import History, Objects, Store
from harnessgit.targets import State, candidate_tips

SELECTION = "selection"
DIFF_KEPT = 8000  # characters of a node's diff kept in the page: a report stays small
# outcome -> what the legend says, in legend order
OUTCOMES = {
    "merged": "merged into the base branch",
    "gate-passed": "gate passed, not merged",
    "gate-failed": "gated: fail",
    "gate-inconclusive": "gated: inconclusive",
    "accepted": "kept by the minibatch, live, not gated",
    "archived": "kept by the minibatch, later archived (dominated)",
    "not-gated": "not gated (conflicts with the base)",
    "rejected-minibatch": "rejected by the minibatch",
    "rejected-checks": "rejected by the checks",
    "rejected-proposal": "proposal rejected: no candidate",
    "base": "a base-branch commit",
}
# IterationRecord.outcome (evolve's and a recorded GEPA run's) -> the node's outcome
_ITERATION = {
    "not-better": "rejected-minibatch",
    "rejected": "rejected-minibatch",
    "merge-rejected": "rejected-minibatch",
    "rejected-checks": "rejected-checks",
    "conflict": "not-gated",
    "not-carried": "not-gated",
    "gate-refused": "not-gated",
    "gate-rejected": "gate-failed",  # written before three verdicts
}


@dataclass(frozen=True, kw_only=True)
class NodeGate:
    passed: bool
    shown_verdict: str  # pass, fail or inconclusive
    corrected: float | None  # the gain corrected for selection (None before issue 25)
    attempt: int
    difference: float | None
    ci_low: float | None
    ci_high: float | None
    p_value: float | None
    reasons: list[str]


@dataclass(frozen=True, kw_only=True)
class TreeNode:
    id: str  # a candidate id; a base commit's short id; "proposal-<record id>"
    commit: str | None
    parents: list[str]  # node ids: the program it edits, then a merge's second parent
    outcome: str  # a key of OUTCOMES
    state: str  # live | archived | base | none
    subject: str
    created: str
    proposer: str = ""
    rationale: str = ""
    reason: str = ""  # why the iteration, the gate or the archive said what it said
    parent_score: float | None = None  # the minibatch's, before and after
    candidate_score: float | None = None
    selection_mean: float | None = None
    selection_n: int = 0
    gates: list[NodeGate] = field(default_factory=list)
    diff: str = ""  # against the program it edits, cut at DIFF_KEPT characters


@dataclass(frozen=True)
class _Notes:
    """The records on one candidate commit."""

    proposal: ProposalRecord | None
    iteration: IterationRecord | None
    retired: RetireRecord | None
    gates: list[GateRecord]


def candidate_tree(
    store: Store, config: Config, book: ScoreBook, selection: list[str], merges: list[LogEntry]
) -> list[TreeNode]:
    """Every node, in creation order (parents before their children)."""
    evidence = store.notes.records(layout.NOTES_EVIDENCE)
    gate_notes = store.notes.records(layout.NOTES_GATE)
    tips = candidate_tips(store.refs)
    names = {sha: cid for cid, (_state, sha) in tips.items()}
    merged = {p.candidate: entry for entry in merges for p in entry.proposals if p.candidate}
    nodes: list[TreeNode] = []
    bases: dict[str, TreeNode] = {}

    def node_of(commit: str) -> str:
        """A parent's node id, adding a base node for a commit that is no candidate."""
        if commit in names:
            return names[commit]
        if commit not in bases:
            info = store.objects.commit_info(commit)
            bases[commit] = TreeNode(
                id=short(commit),
                commit=commit,
                parents=[],
                outcome="base",
                state="base",
                subject=info.subject,
                created=info.author_time.isoformat(),
            )
        return bases[commit].id

    for cid, (state, sha) in tips.items():
        notes = _notes_of(evidence.get(sha, []), gate_notes.get(sha, []), cid, sha)
        info = store.objects.commit_info(sha)
        first = notes.proposal.parent if notes.proposal else (info.parents[0] if info.parents else None)
        second = notes.proposal.other_parent if notes.proposal else None
        parents = [node_of(commit) for commit in (first, second) if commit]
        nodes.append(
            TreeNode(
                id=cid,
                commit=sha,
                parents=parents,
                outcome=_outcome(state, cid in merged, notes),
                state=state,
                subject=info.subject,
                created=(notes.proposal.ts if notes.proposal else info.author_time).isoformat(),
                proposer=notes.proposal.proposer or notes.proposal.source if notes.proposal else "",
                rationale=notes.proposal.rationale if notes.proposal else "",
                reason=_landed(merged[cid]) if cid in merged else _reason(notes),
                parent_score=notes.iteration.parent_score if notes.iteration else None,
                candidate_score=notes.iteration.candidate_score if notes.iteration else None,
                gates=[_gate(record) for record in notes.gates],
                diff=_diff(store.history, first, sha),
            )
        )
    nodes += _rejected_proposals(evidence, node_of)
    scored = [_scored(store.objects, config, book, selection, node) for node in [*bases.values(), *nodes]]
    return sorted(scored, key=lambda node: node.created)


def _notes_of(evidence: list[Record], gates: list[Record], cid: str, sha: str) -> _Notes:
    records = live(evidence)
    proposal = next((r for r in records if isinstance(r, ProposalRecord)), None)
    iterations = [r for r in records if isinstance(r, IterationRecord) and r.candidate == cid]
    retired = [r for r in records if isinstance(r, RetireRecord) and r.candidate == cid]
    return _Notes(
        proposal=proposal,
        iteration=max(iterations, key=lambda r: r.ts) if iterations else None,
        retired=max(retired, key=lambda r: r.ts) if retired else None,
        gates=sorted((r for r in gates if isinstance(r, GateRecord) and r.commit == sha), key=lambda r: r.ts),
    )


def _outcome(state: State, merged: bool, notes: _Notes) -> str:
    if merged:
        return "merged"
    if notes.gates:
        return "gate-" + {"pass": "passed", "fail": "failed"}.get(v := notes.gates[-1].shown_verdict, v)
    if notes.iteration and notes.iteration.outcome in _ITERATION:
        return _ITERATION[notes.iteration.outcome]
    return "accepted" if state == "live" else "archived"


def _landed(merge: LogEntry) -> str:
    return f"landed by {short(merge.commit)} ({merge.subject})"


def _reason(notes: _Notes) -> str:
    if notes.gates:
        return "; ".join(notes.gates[-1].reasons)
    if notes.iteration and notes.iteration.reason:
        return notes.iteration.reason
    if notes.retired:
        return " ".join(filter(None, [f"archived: {notes.retired.reason}", notes.retired.detail]))
    return ""


def _gate(record: GateRecord) -> NodeGate:
    return NodeGate(
        passed=record.passed,
        shown_verdict=record.shown_verdict,
        corrected=record.corrected,
        attempt=record.attempt,
        difference=record.difference,
        ci_low=record.ci_low,
        ci_high=record.ci_high,
        p_value=record.p_value,
        reasons=record.reasons,
    )


def _scored(
    objects: Objects, config: Config, book: ScoreBook, selection: list[str], node: TreeNode
) -> TreeNode:
    """The node with its selection mean under today's evaluator and model."""
    if not selection or node.commit is None:
        return node
    summary = book.summary(eval_context(objects, config, node.commit).key, SELECTION, selection)
    return replace(node, selection_mean=summary.mean, selection_n=summary.n)


def _diff(history: History, parent: str | None, commit: str) -> str:
    if parent is None:
        return ""
    text = history.diff_text(parent, commit)
    return (
        text
        if len(text) <= DIFF_KEPT
        else text[:DIFF_KEPT] + f"\n… ({len(text) - DIFF_KEPT:,} more characters)"
    )


def _rejected_proposals(evidence: dict[str, list[Record]], node_of: Callable[[str], str]) -> list[TreeNode]:
    """Iterations whose proposal never became a candidate: a leaf on the program it edited."""
    found = []
    for records in evidence.values():
        for record in live(records):
            if isinstance(record, IterationRecord) and record.outcome == "rejected-proposal":
                found.append(
                    TreeNode(
                        id=f"proposal-{record.id[:12]}",
                        commit=None,
                        parents=[node_of(record.parent)],
                        outcome="rejected-proposal",
                        state="none",
                        subject=f"iteration {record.iteration}: {record.component}",
                        created=record.ts.isoformat(),
                        proposer=record.proposer,
                        reason=record.reason,
                        parent_score=record.parent_score,
                    )
                )
    return found
