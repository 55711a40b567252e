"""Staging one GEPA iteration: its candidates, evidence, eval records and iteration
records, added to a transaction (`GitRecorder` writes it). The half of the recorder
that builds records; the other half (recorder.py) listens to GEPA's events."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from harnessgit import layout
from harnessgit.api import Repository, jsonable, split_hash
from harnessgit.errors import HarnessgitError
from harnessgit.integrations.gepa.events import Iteration, Proposed, Task, ValsetScores, mean
from harnessgit.object_ids import object_id
from harnessgit.records import IterationRecord
from harnessgit.store import Transaction


class Staging:
    """What `GitRecorder` knows of the run, and how it turns an iteration into records."""

    repo: Repository
    components: dict[str, str]
    commits: dict[int, str]  # GEPA program index -> commit
    names: dict[str, str]  # commit -> candidate id
    run: str
    mode: str
    fingerprint: str
    model: str
    split: str
    valset: Any
    instance_id: Callable[[Any, Any], str]
    feedback: Callable[[Any], str | None]
    _seed: int
    _ids: dict[Any, str]
    _split_ids: list[str]

    def _stage(self, txn: Transaction, iteration: Iteration) -> dict[int, str]:
        commits: dict[int, str] = {}
        records: list[tuple[str, IterationRecord]] = []
        for proposal in iteration.proposals():
            parent = self.commits[proposal.parents[0]]
            files = self._files(proposal.candidate, proposal.changed)
            if self._holds(parent, files):
                # GEPA's text is its parent's: no edit, so no commit (git has nothing to
                # hold); the program is its parent's commit and the record says so.
                if proposal.accepted is not None:
                    commits[proposal.accepted] = parent
                record = self._iteration_record(iteration, proposal, None, None)
                records.append((parent, record.model_copy(update={"outcome": f"unchanged-{record.outcome}"})))
                continue
            staged = self.repo.stage_proposal(
                txn,
                files,
                parent,
                rationale=self._rationale(iteration.number, proposal),
                evidence=_evidence(proposal),
                proposer=f"gepa {proposal.kind}",
                source="gepa",
                rejected=None if proposal.accepted is not None else f"GEPA: {proposal.reason}",
                other_parent=self._other_parent(proposal),
            )
            self.names[staged.commit] = staged.candidate
            if proposal.accepted is not None:
                commits[proposal.accepted] = staged.commit
            records.append(
                (parent, self._iteration_record(iteration, proposal, staged.candidate, staged.commit))
            )
        for task in iteration.tasks:
            if task.proposal is None:  # skipped, failed, or GEPA proposed nothing
                parent = self.commits[task.parent]
                records.append((parent, self._iteration_record(iteration, None, None, None, task)))
        for valset in iteration.valsets:
            commit = commits.get(valset.candidate_idx) or self.commits.get(valset.candidate_idx)
            if commit is not None:
                self._eval_record(txn, commit, valset)
        for parent, record in records:
            txn.append(layout.NOTES_EVIDENCE, parent, [record])
        return commits

    def _other_parent(self, proposal: Proposed) -> str | None:
        """A merge's second parent: its commit is a merge of both programs' commits
        (none when both programs are one commit, GEPA's program holding its parent's texts)."""
        if len(proposal.parents) < 2:
            return None
        first, second = (self.commits[idx] for idx in proposal.parents[:2])
        return second if second != first else None

    def _iteration_record(
        self,
        iteration: Iteration,
        proposal: Proposed | None,
        candidate: str | None,
        commit: str | None,
        task: Task | None = None,
    ) -> IterationRecord:
        if proposal is not None:
            task = next((t for t in iteration.tasks if t.proposal is proposal), None)
            outcome = ("merge-" if proposal.kind == "merge" else "") + (
                "accepted" if proposal.accepted is not None else "rejected"
            )
            reason = proposal.reason
        else:
            outcome = "error" if iteration.error else "skipped"
            reason = iteration.error or (task.skipped if task and task.skipped else "no proposal")
        parents = proposal.parents if proposal is not None else [task.parent if task else 0]
        parent = self.commits[parents[0]]
        valset = next(
            (v for v in iteration.valsets if proposal and v.candidate_idx == proposal.accepted), None
        )
        return IterationRecord(
            ts=self.repo.store.clock(),
            run=self.run,
            seed=self._seed,
            iteration=iteration.number,
            parent=parent,
            parent_name=self.names.get(parent) or self.repo.config.harness.base,
            component=", ".join(self.components[n] for n in (proposal.changed if proposal else [])),
            minibatch=task.minibatch if task else [],
            parent_score=_score(mean(task.parent_scores) if task else None),
            candidate=candidate,
            commit=commit,
            candidate_score=_score(mean(proposal.scores) if proposal else None),
            outcome=outcome,
            reason=self.repo.scrubber.text(reason),
            selection_mean=_score(valset.average if valset else None),
            proposer=f"gepa {proposal.kind}" if proposal else "gepa",
            cost_usd=proposal.usage.cost_usd if proposal and proposal.usage else None,
            rollouts=max(iteration.calls_after - iteration.calls_before, 0),
            seconds=round(max(iteration.ended - iteration.started, 0.0), 4),
            optimizer="gepa",
            move="merge" if len(parents) > 1 else "reflect",
            other_parent=self.commits.get(parents[1]) if len(parents) > 1 else None,
        )

    def _eval_record(self, txn: Transaction, commit: str, valset: ValsetScores) -> None:
        fingerprint, model = self._fingerprint_of(commit)
        scores = {self._instance(val_id): score for val_id, score in valset.scores.items()}
        outputs = valset.outputs or {}
        said = {val_id: self.feedback(output) for val_id, output in outputs.items()}
        record = self.repo.scores_record(
            commit,
            scores,
            fingerprint=fingerprint,
            model=model,
            split=self.split,
            split_instances=self._split_ids,
            feedback={self._instance(val_id): output for val_id, output in outputs.items()} or None,
            feedback_text={self._instance(val_id): text for val_id, text in said.items() if text} or None,
            objective_scores={self._instance(val_id): found for val_id, found in valset.objectives.items()}
            if valset.objectives
            else None,
        )
        txn.append(layout.NOTES_EVALS, commit, [record])
        if record.evidence:
            txn.keep(record.evidence)

    def _fingerprint_of(self, commit: str) -> tuple[str, str]:
        if self.mode == "repository":
            key = self.repo.evaluator_key(commit)
            return key.fingerprint, key.model
        return self.fingerprint, self.model

    # -- names ---------------------------------------------------------------

    def instance_ids(self) -> list[str]:
        """The valset's instance ids, in GEPA's order: the selection split to put in the
        repository's manifest so that the gate pairs GEPA's scores."""
        return list(self._split_ids)

    def split_hash(self) -> str:
        return split_hash(self.split, self._split_ids)

    def _val_ids(self, size: int) -> list[Any]:
        if self.valset is not None and hasattr(self.valset, "all_ids"):
            return list(self.valset.all_ids())
        return list(range(size))

    def _instance(self, val_id: Any) -> str:
        if val_id not in self._ids:
            if self.valset is None:
                self._ids[val_id] = f"val-{val_id}"
            else:
                example = (
                    self.valset.fetch([val_id])[0] if hasattr(self.valset, "fetch") else self.valset[val_id]
                )
                self._ids[val_id] = self.instance_id(val_id, example)
        return self._ids[val_id]

    def _files(self, candidate: Mapping[str, str], names: Sequence[str] | None = None) -> dict[str, str]:
        unknown = sorted(set(candidate) - set(self.components))
        if unknown:
            raise HarnessgitError(f"GEPA component {unknown[0]!r} has no harness path in components")
        chosen = candidate if names is None else {name: candidate[name] for name in names}
        return {self.components[name]: text for name, text in chosen.items()}

    def _holds(self, commit: str, files: Mapping[str, str]) -> bool:
        """Whether ``commit`` holds exactly these texts (compared by blob id: no read)."""
        listing = self.repo.store.objects.files_at(commit)
        return all(
            path in listing and listing[path].sha == object_id("blob", text.encode("utf-8"))
            for path, text in files.items()
        )

    def _holds_seed(self, commit: str, files: Mapping[str, str]) -> bool:
        """Whether ``commit`` holds the seed's texts, a trailing newline aside: DSPy's
        instructions have none, and files read with ``.strip()`` lose theirs, so a seed
        read from the base's files is the base rather than a candidate of its own."""
        if self._holds(commit, files):
            return True
        listing = self.repo.store.objects.files_at(commit)
        return all(
            path in listing
            and self.repo.store.objects.read_blob(listing[path].sha).rstrip(b"\n")
            == text.encode("utf-8").rstrip(b"\n")
            for path, text in files.items()
        )

    def _rationale(self, number: int, proposal: Proposed) -> str:
        names = ", ".join(proposal.changed) or "nothing"
        if proposal.kind == "merge":
            first, second = proposal.parents[:2]
            return f"GEPA iteration {number}: merge of programs {first} and {second} ({names})"
        size = sum(len(rows) for rows in (proposal.dataset or {}).values())
        return f"GEPA iteration {number}: new {names} from reflection on {size} examples"


def _evidence(proposal: Proposed) -> list[Any]:
    items: list[Any] = [{"kind": "gepa-proposal", "type": proposal.kind, "parents": proposal.parents}]
    for name, rows in (proposal.dataset or {}).items():
        items.append({"kind": "reflective-dataset", "component": name, "records": jsonable(rows)})
    for name, prompt in proposal.prompts.items():
        items.append({"kind": "reflection-prompt", "component": name, "prompt": jsonable(prompt)})
    for name, raw in proposal.raw_outputs.items():
        items.append({"kind": "reflection-output", "component": name, "text": raw})
    if proposal.scores is not None:
        items.append({"kind": "minibatch", "scores": proposal.scores})
    if proposal.usage is not None:
        items += [proposal.usage.item(), *proposal.usage.exchanges]
    return items


def _score(value: float | None) -> float | None:
    """A mean for a record: harnessgit keeps scores in [0, 1] (records.base.Score)."""
    if value is None:
        return None
    if not 0 <= value <= 1:
        raise HarnessgitError(f"GEPA reported a score of {value}: harnessgit records scores in [0, 1]")
    return value
