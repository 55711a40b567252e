"""What one GEPA iteration said, assembled from its callback events.

GEPA 0.1.4 reports an iteration in pieces (gepa/core/callbacks.py, fired from
gepa/core/engine.py and gepa/proposer/reflective_mutation/reflective_mutation.py):
for each sampled task `on_candidate_selected` then `on_minibatch_sampled`; the parents'
minibatch scores (`on_evaluation_end` with a candidate index, in task order); per task
that goes on, `on_reflective_dataset_built` and `on_proposal_end` (the new texts, the
reflection prompts and raw outputs); the children's minibatch scores
(`on_evaluation_end` without an index, in the same order); `on_candidate_rejected` for
each proposal not kept (in proposal order, carrying no candidate), `on_valset_evaluated`
and `on_candidate_accepted` for each kept one. A merge iteration has
`on_merge_attempted` and then accepted or rejected instead. Which proposals were kept
is read from GEPA's state at `on_iteration_end` (the programs it added), never guessed
from the order of events. Pure: no git, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from harnessgit.integrations.gepa.usage import Usage


@dataclass
class Task:
    """One (parent, minibatch) GEPA sampled, and what came of it."""

    parent: int  # GEPA's program index
    parent_candidate: dict[str, str]
    minibatch: list[str] = field(default_factory=list)
    parent_scores: list[float] | None = None
    dataset: dict[str, list[dict[str, Any]]] | None = None
    skipped: str | None = None  # GEPA's reason for not reflecting (e.g. all_scores_perfect)
    proposal: Proposed | None = None


@dataclass
class Proposed:
    """A candidate GEPA built: a reflective mutation or a merge."""

    candidate: dict[str, str]
    parents: list[int]
    kind: str  # "reflection" | "merge"
    changed: list[str]  # GEPA component names whose text changed
    prompts: dict[str, Any] = field(default_factory=dict)
    raw_outputs: dict[str, str] = field(default_factory=dict)
    dataset: dict[str, list[dict[str, Any]]] | None = None
    scores: list[float] | None = None  # on the minibatch
    accepted: int | None = None  # GEPA's program index, once kept
    reason: str = ""  # why GEPA rejected it
    usage: Usage | None = None  # what the reflection LM spent on it (usage.py)


@dataclass
class ValsetScores:
    candidate_idx: int
    candidate: dict[str, str]
    scores: dict[Any, float]  # GEPA's val id -> score
    outputs: dict[Any, Any] | None
    average: float
    objectives: dict[Any, dict[str, float]] | None = None  # GEPA's val id -> objective scores


@dataclass
class Iteration:
    number: int
    started: float  # time.monotonic()
    calls_before: int
    # Taken at GEPA's on_iteration_end: the writer stages the iteration later.
    ended: float = 0.0
    calls_after: int = 0
    tasks: list[Task] = field(default_factory=list)
    merge: Proposed | None = None
    merge_rejected: str | None = None
    rejections: list[str] = field(default_factory=list)
    valsets: list[ValsetScores] = field(default_factory=list)
    error: str | None = None

    def proposals(self) -> list[Proposed]:
        found = [task.proposal for task in self.tasks if task.proposal is not None]
        return [self.merge, *found] if self.merge is not None else found

    def on_parent_scores(self, parent: int, scores: list[float]) -> None:
        for task in self.tasks:
            if task.parent == parent and task.parent_scores is None:
                task.parent_scores = list(scores)
                return

    def on_child_scores(self, scores: list[float]) -> None:
        for task in self.tasks:
            if task.proposal is not None and task.proposal.scores is None:
                task.proposal.scores = list(scores)
                return

    def on_dataset(self, parent: int, dataset: dict[str, list[dict[str, Any]]]) -> None:
        for task in self.tasks:
            if task.parent == parent and task.dataset is None and task.skipped is None:
                task.dataset = dataset
                return

    def on_skipped(self, parent: int, reason: str) -> None:
        for task in self.tasks:
            if task.parent == parent and task.skipped is None and task.dataset is None:
                task.skipped = reason
                return

    def on_proposal(
        self, new_texts: dict[str, str], prompts: dict[str, Any], raw: dict[str, str], usage: Usage | None
    ) -> None:
        """The texts of the next task that reflected (tasks reflect in order; one whose
        reflection failed fires nothing, gepa's `_propose_texts_batch_safe`)."""
        for task in self.tasks:
            if task.dataset is not None and task.proposal is None:
                candidate = {**task.parent_candidate, **new_texts}
                changed = sorted(
                    name for name in new_texts if new_texts[name] != task.parent_candidate.get(name)
                )
                task.proposal = Proposed(
                    candidate, [task.parent], "reflection", changed, prompts, raw, task.dataset, usage=usage
                )
                return

    def settle(self, added: dict[int, dict[str, str]]) -> None:
        """Mark the proposals GEPA kept (``added``: the programs it added this
        iteration, index -> candidate) and give the others GEPA's rejection reasons,
        which it reports in proposal order."""
        free = dict(added)
        for proposal in self.proposals():
            match = next((idx for idx, cand in free.items() if cand == proposal.candidate), None)
            if match is not None:
                proposal.accepted = match
                del free[match]
        reasons = iter(self.rejections)
        for proposal in self.proposals():
            if proposal.accepted is None:
                if proposal.kind == "merge":
                    proposal.reason = self.merge_rejected or self.error or "not kept"
                else:
                    proposal.reason = next(reasons, None) or self.error or "not kept"


def mean(scores: list[float] | None) -> float | None:
    return sum(scores) / len(scores) if scores else None
