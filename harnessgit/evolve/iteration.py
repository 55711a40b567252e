"""One evolve iteration at a time, and the state an evolve run keeps between them
(see `harnessgit.evolve.loop` for the steps)."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from typing import Any

from harnessgit import globs, layout
from harnessgit.candidates.propose import propose, rebase
from harnessgit.candidates.targets import candidate_tips, retire
from harnessgit.checks import FileVersion, check_files, kind_of
from harnessgit.config import Config
from harnessgit.evaluation.context import EvalContext, eval_context
from harnessgit.evaluation.eval import evaluate
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import load_manifest
from harnessgit.evolve.minibatch import minibatch
from harnessgit.evolve.policy import choose_component, worth_gating
from harnessgit.evolve.reflect import reflective_dataset
from harnessgit.evolve.state import Budget, BudgetReached, IterationOutcome, Spend, mean_text
from harnessgit.gate.frontier import FrontierView, frontier_view, proposals_by_commit, update_frontier
from harnessgit.gate.gate import attempt_number, run_gate
from harnessgit.gate.merge import merge
from harnessgit.proposers import Limits, ProposalRequest, Proposer, RejectedProposal
from harnessgit.records import EvidenceRecord, IterationRecord, ProposalRecord
from harnessgit.stats.frontier import sample_parent
from harnessgit.store import Store, Transaction

Progress = Callable[[int, int], None]


class Iterations:
    def __init__(
        self,
        store: Store,
        config: Config,
        seed: int,
        jobs: int | None,
        progress: Progress | None,
        on_stderr: Callable[[str], None] | None,
        budget: Budget,
    ) -> None:
        self.store, self.config, self.seed, self.jobs = store, config, seed, jobs
        self.progress, self.on_stderr, self.budget = progress, on_stderr, budget
        self.run = uuid.uuid4().hex[:12]
        self.spend = Spend()
        manifest = load_manifest(store.root, config.splits.manifest)
        self.train, self.selection = manifest.ids("train"), manifest.ids("selection")
        self.split_hash = manifest.split_hash("selection")
        self.solved_streak = 0  # iterations in a row whose minibatch the parent already solved
        self.evaluator_seconds = 0.0
        self.started = 0.0
        self.proposer_seconds = 0.0
        self.batches_per_epoch = max(1, len(self.train) // min(config.evolve.minibatch, len(self.train)))
        self.book = ScoreBook.load(store)
        self.proposals = proposals_by_commit(store)
        self.contexts: dict[str, EvalContext] = {}  # commit -> cache key, for the frontier
        self.view: FrontierView | None = None
        done = [
            r.iteration
            for records in store.notes(layout.NOTES_EVIDENCE).values()
            for r in records
            if isinstance(r, IterationRecord) and r.seed == seed
        ]
        self.iteration = max(done) + 1 if done else 0

    def base_commit(self) -> str:
        from harnessgit.candidates.targets import base_tip

        return base_tip(self.store, self.config.harness.base)

    def frontier(self) -> FrontierView:
        """The frontier, rebuilt only when the pool may have changed: a candidate
        scored on the selection split, a retirement, or a move of the base branch."""
        tip = self.base_commit()
        if self.view is None or self.view.members[self.view.base].commit != tip:
            self.view = frontier_view(
                self.store, self.config, book=self.book, proposals=self.proposals, contexts=self.contexts
            )
        return self.view

    def context(self, commit: str) -> EvalContext:
        if commit not in self.contexts:
            self.contexts[commit] = eval_context(self.store, self.config, commit)
        return self.contexts[commit]

    def evaluate(self, commit: str, split: str, instances: list[str]) -> float | None:
        """The mean score of ``commit`` on ``instances``, evaluating only what is missing."""
        key = self.context(commit).key
        have = self.book.rows(key)
        needed = sum(1 for instance in instances if (instance, 0) not in have)
        if needed:
            if (
                self.budget.max_rollouts is not None
                and self.spend.rollouts + needed > self.budget.max_rollouts
            ):
                raise BudgetReached(
                    f"max rollouts ({self.budget.max_rollouts}): the next evaluation needs {needed} more"
                )
            known = set(self.book.records)
            result = evaluate(
                self.store,
                self.config,
                commit,
                split=split,
                instances=instances,
                jobs=self.jobs,
                progress=self.progress,
                on_stderr=self.on_stderr,
                book=self.book,
            )
            self.spend.rollouts += result.evaluated
            self.evaluator_seconds += result.evaluator_time
            for record_id in set(self.book.records) - known:  # the records this evaluation wrote
                self.spend.cost += (self.book.records[record_id].cost or {}).get("usd", 0.0)
        means = self.book.complete_means(key, tuple(instances), f"{split}:{'|'.join(instances)}")
        return sum(means) / len(means) if means else None

    def iterate(self, proposer: Proposer, auto_merge: bool) -> IterationOutcome:
        store, config, number = self.store, self.config, self.iteration
        self.iteration += 1
        self.started, self.evaluator_seconds, self.proposer_seconds = time.monotonic(), 0.0, 0.0
        tip = self.base_commit()
        view = self.frontier()
        parent_name = sample_parent(view.frontier, random.Random(f"{self.seed}:{number}").getrandbits(32))
        parent = view.members[parent_name].commit
        parent_tree = store.commit_info(parent).tree
        components = sorted(
            path for path in store.files_at(parent) if globs.matches(path, config.harness.paths)
        )
        batch = minibatch(self.train, self.seed, number, config.evolve.minibatch)
        rollouts_before = self.spend.rollouts
        before = self.evaluate(parent, "train", batch)
        examples = reflective_dataset(
            store,
            self.book,
            self.context(parent).key,
            batch,
            excerpt_chars=config.evolve.trajectory_chars,
            max_examples=config.evolve.max_examples,
        )
        component = choose_component(components, number, config.evolve.component, examples)
        base_record: dict[str, Any] = {
            "run": self.run,
            "seed": self.seed,
            "iteration": number,
            "parent": parent,
            "parent_name": parent_name,
            "component": component,
            "minibatch": batch,
        }
        current = (store.file_at(parent_tree, component) or b"").decode("utf-8")
        if before is not None and before >= 1.0:
            # GEPA's skip_perfect_score: a solved minibatch has no failure to reflect on.
            self.solved_streak += 1
            return self._record(
                base_record,
                "skipped-perfect",
                before,
                proposer.name,
                None,
                rollouts_before,
                parent,
                None,
                reason="the parent solves every instance of this minibatch",
            )
        self.solved_streak = 0
        request = ProposalRequest(
            component=component,
            current_text=current,
            examples=examples,
            limits=self._limits(component),
            form=config.evolve.form,
        )
        self.spend.proposals += 1
        asked = time.monotonic()
        answer = proposer.propose(request)
        self.proposer_seconds = time.monotonic() - asked
        cost = answer.usage.cost_usd
        self.spend.cost += cost or 0.0

        def done(outcome: str, **fields: Any) -> IterationOutcome:
            rejected = answer.raw_output if isinstance(answer, RejectedProposal) else None
            return self._record(
                base_record, outcome, before, proposer.name, cost, rollouts_before, parent, rejected, **fields
            )

        if isinstance(answer, RejectedProposal):
            return done("rejected-proposal", reason=f"{answer.code}: {answer.reason}")
        evidence = [
            {
                "kind": "reflective-dataset",
                "component": component,
                "examples": [example.model_dump(mode="json") for example in request.examples],
            },
            {
                "kind": "proposer-output",
                "proposer": proposer.name,
                "raw_output": answer.raw_output,
                "usage": answer.usage.model_dump(mode="json"),
                "operations": [op.model_dump(mode="json") for op in answer.operations or []],
            },
        ]
        candidate = propose(
            store,
            config,
            {component: answer.new_text},
            parent=parent,
            rationale=answer.rationale or f"Edit {component}",
            evidence=evidence,
            proposer=proposer.name,
            source="evolve",
        )
        self._remember(candidate.commit)
        checks = check_files([FileVersion.from_text(component, current, answer.new_text)], config.checks)
        failures = [f"{f.rule}: {f.message}" for f in checks.findings if f.level == "failure"]
        if failures:
            self._retire(candidate.candidate, candidate.commit, "rejected", "checks: " + failures[0])
            return done(
                "rejected-checks", candidate=candidate.candidate, commit=candidate.commit, reason=failures[0]
            )
        after = self.evaluate(candidate.commit, "train", batch)
        if after is None or before is None or after <= before:
            detail = f"minibatch {mean_text(before)} -> {mean_text(after)}: not better"
            self._retire(candidate.candidate, candidate.commit, "rejected", detail)
            return done(
                "not-better",
                candidate=candidate.candidate,
                commit=candidate.commit,
                candidate_score=after,
                reason=detail,
            )
        selection = self.evaluate(candidate.commit, "selection", self.selection)
        self.view = None  # the pool has a new member
        update_frontier(store, config, self.frontier())
        worth, why = self._worth_gating(tip, candidate.commit)
        if not worth:
            return done(
                "not-gated",
                candidate=candidate.candidate,
                commit=candidate.commit,
                candidate_score=after,
                selection_mean=selection,
                reason=why,
            )
        gated = candidate
        if not store.is_ancestor(tip, candidate.commit):
            gated = rebase(store, config, candidate.candidate, config.harness.base)
            self._remember(gated.commit)
            self.evaluate(gated.commit, "selection", self.selection)
            self.view = None
        if auto_merge:
            merged = merge(
                store,
                config,
                gated.candidate,
                jobs=self.jobs,
                progress=self.progress,
                on_stderr=self.on_stderr,
            )
            outcome = merged.outcome
            assert outcome is not None
            verdict = "merged" if merged.merge else "gate-rejected"
        else:
            outcome = run_gate(
                store,
                config,
                gated.candidate,
                jobs=self.jobs,
                progress=self.progress,
                on_stderr=self.on_stderr,
                book=self.book,
            )
            verdict = "gate-passed" if outcome.passed else "gate-rejected"
        reason = "; ".join(outcome.record.reasons)
        if gated is not candidate:
            reason = f"carried onto {config.harness.base} as {gated.candidate}" + (
                f"; {reason}" if reason else ""
            )
        return done(
            verdict,
            candidate=gated.candidate,
            commit=gated.commit,
            candidate_score=after,
            selection_mean=selection,
            reason=reason,
        )

    def _record(
        self,
        base_record: dict[str, Any],
        outcome: str,
        before: float | None,
        proposer: str,
        cost: float | None,
        rollouts_before: int,
        parent: str,
        rejected_output: str | None,
        **fields: Any,
    ) -> IterationOutcome:
        """Write the iteration record (on the candidate, else the parent), with a
        rejected proposal's raw output as evidence on the parent."""
        store = self.store
        record = IterationRecord(
            ts=store.clock(),
            parent_score=before,
            outcome=outcome,
            proposer=proposer,
            cost_usd=cost,
            rollouts=self.spend.rollouts - rollouts_before,
            seconds=round(time.monotonic() - self.started, 4),
            evaluator_seconds=round(self.evaluator_seconds, 4),
            proposer_seconds=round(self.proposer_seconds, 4),
            **base_record,
            **fields,
        )
        txn = Transaction(f"evolve iteration {record.iteration}")
        txn.append(layout.NOTES_EVIDENCE, record.commit or parent, [record])
        if rejected_output is not None:
            blob = store.write_blob(rejected_output.encode("utf-8"))
            txn.append(
                layout.NOTES_EVIDENCE,
                parent,
                [
                    EvidenceRecord(
                        ts=store.clock(),
                        blob=blob,
                        items=1,
                        bytes=len(rejected_output),
                        label="rejected-proposal",
                    )
                ],
            )
            txn.keep(blob)
        store.commit(txn)
        return IterationOutcome(record, None)

    def _worth_gating(self, tip: str, commit: str) -> tuple[bool, str]:
        self.evaluate(tip, "selection", self.selection)
        base_key, cand_key = self.context(tip).key, self.context(commit).key
        return worth_gating(
            self.config,
            self.book.scored(base_key, self.selection),
            self.book.scored(cand_key, self.selection),
            attempt_number(self.store, self.split_hash, (base_key.harness, cand_key.harness)),
        )

    def _limits(self, component: str) -> Limits:
        kind = self.config.checks.kinds.get(kind_of(component, self.config.checks))
        if kind is None:
            return Limits()
        return Limits(max_chars=kind.max_chars, max_lines=kind.max_lines, max_tokens=kind.max_tokens)

    def _remember(self, commit: str) -> None:
        for record in self.store.notes_on(layout.NOTES_EVIDENCE, commit):
            if isinstance(record, ProposalRecord):
                self.proposals[commit] = record

    def _retire(self, candidate: str, commit: str, reason: str, detail: str) -> None:
        found = candidate_tips(self.store).get(candidate)
        if found is None or found[0] != "live":
            return
        txn = Transaction(f"retire {candidate}")
        retire(self.store, txn, candidate, commit, reason, detail)
        self.store.commit(txn)
