"""Scores on record: the cache of evaluation results, and per-instance summaries.

Every evaluation record is read at once (one `git notes list`, one pipelined
cat-file) into a `ScoreBook`, indexed by the cache key (harness tree id,
evaluator fingerprint, model). When a key has several results for the same
(instance, repeat) (a --no-cache re-run), the newest record wins.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from harnessgit import layout
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import Key, eval_context
from harnessgit.evaluation.splits import load_manifest
from harnessgit.records import EvalRecord, TestPeekRecord, live
from harnessgit.stats.pairing import Scored, instance_means
from harnessgit.store import Store
from harnessgit.targets import resolve

TEST_SPLIT = "test"


@dataclass(frozen=True)
class Row:
    instance: str
    repeat: int
    score: float
    cluster: str | None
    failure_class: str | None
    record: str  # id of the evaluation record it came from
    commit: str  # the commit that record is on
    evidence: str | None  # blob with this row's feedback and trajectory
    ts: datetime


@dataclass(frozen=True)
class InstanceScore:
    instance: str
    mean: float
    scores: list[float]  # one per repeat, in repeat order
    cluster: str | None = None
    failure_class: str | None = None


@dataclass(frozen=True)
class ScoreSummary:
    split: str
    harness: str
    fingerprint: str
    model: str
    n: int  # instances with a score
    missing: list[str]  # instances of the split without a score
    mean: float | None
    stderr: float | None
    instances: list[InstanceScore]
    records: list[str]  # evaluation record ids the scores came from
    commits: list[str]  # commits those records are on

    def scored(self) -> Scored:
        """instance -> (mean over repeats, cluster): what `pair_scores` pairs."""
        return {item.instance: (item.mean, item.cluster) for item in self.instances}


class ScoreBook:
    """Every evaluation record, grouped by cache key; a key's rows are indexed on first use.

    Loading parses each record once; building per-row objects only for the keys
    a command asks about keeps `load` close to the cost of reading the notes.
    """

    def __init__(self, records: Iterable[EvalRecord], peeks: Iterable[TestPeekRecord] = ()) -> None:
        self._records: dict[Key, list[EvalRecord]] = {}
        self._rows: dict[Key, dict[tuple[str, int], Row]] = {}
        self._means: dict[tuple[Key, str], tuple[float, ...] | None] = {}
        self.records: dict[str, EvalRecord] = {}
        self.peeks = sorted(peeks, key=lambda peek: peek.ts)
        for record in records:
            self.add(record)

    @classmethod
    def load(cls, store: Store) -> ScoreBook:
        """Every evaluation record and test peek on record. The store's reader has
        dropped records that cannot be true (a NaN or out-of-range score, columns of
        different lengths), with a warning naming their notes: none reaches a decision."""
        notes = store.notes(layout.NOTES_EVALS)
        evals: list[EvalRecord] = []
        peeks: list[TestPeekRecord] = []
        for records in notes.values():
            for record in live(records):
                if isinstance(record, EvalRecord):
                    evals.append(record)
                elif isinstance(record, TestPeekRecord):
                    peeks.append(record)
        return cls(evals, peeks)

    def add(self, record: EvalRecord) -> None:
        if record.id in self.records:
            return  # one record on two commits (a note copied by git): one evaluation
        key = Key(record.harness, record.fingerprint, record.model)
        self.records[record.id] = record
        self._records.setdefault(key, []).append(record)
        self._rows.pop(key, None)
        for cached in [k for k in self._means if k[0] == key]:
            del self._means[cached]

    def rows(self, key: Key) -> dict[tuple[str, int], Row]:
        """(instance, repeat) -> the newest result on record for this key."""
        rows = self._rows.get(key)
        if rows is None:
            rows = {}
            for record in sorted(self._records.get(key, []), key=lambda r: r.ts):
                for i, instance in enumerate(record.instances):
                    rows[(instance, record.repeats[i])] = Row(
                        instance=instance,
                        repeat=record.repeats[i],
                        score=record.scores[i],
                        cluster=record.clusters[i] if record.clusters else None,
                        failure_class=record.failure_classes[i] if record.failure_classes else None,
                        record=record.id,
                        commit=record.commit,
                        evidence=record.evidence,
                        ts=record.ts,
                    )
            self._rows[key] = rows
        return rows

    def complete_means(
        self, key: Key, instances: tuple[str, ...], split_hash: str
    ) -> tuple[float, ...] | None:
        """Per-instance means over repeats, in ``instances`` order, or None if any is
        missing: the frontier's input, memoised per split (named by its hash) until
        the key gets a new record."""
        memo = (key, split_hash)
        if memo not in self._means:
            means = instance_means(self._in_repeat_order(key))
            found = [means.get(instance) for instance in instances]
            self._means[memo] = None if any(v is None for v in found) else tuple(v[0] for v in found if v)
        return self._means[memo]

    def scored(self, key: Key, instances: list[str]) -> Scored:
        """instance -> (mean over repeats, cluster) for the instances with a score:
        what `harnessgit.stats.pairing.pair_scores` pairs."""
        wanted = set(instances)
        return instance_means(row for row in self._in_repeat_order(key) if row[0] in wanted)

    def _in_repeat_order(self, key: Key) -> list[tuple[str, float, str | None]]:
        rows = sorted(self.rows(key).values(), key=lambda row: row.repeat)
        return [(row.instance, row.score, row.cluster) for row in rows]

    def records_for(self, key: Key) -> list[EvalRecord]:
        return list(self._records.get(key, []))

    def cache_keys(self) -> list[Key]:
        return list(self._records)

    def summary(
        self, key: Key, split: str, instances: list[str], *, for_decision: bool = False
    ) -> ScoreSummary:
        """Per-instance means over repeats, their mean and its standard error.

        ``for_decision`` marks callers that decide (gate, frontier, evolve): they
        may never read the held-out test split.
        """
        if for_decision and split == TEST_SPLIT:
            raise HarnessgitError("the test split never feeds an automatic decision")
        by_instance: dict[str, list[Row]] = {}
        for row in sorted(self.rows(key).values(), key=lambda row: row.repeat):
            by_instance.setdefault(row.instance, []).append(row)
        per_instance = instance_means(
            (row.instance, row.score, row.cluster) for rows in by_instance.values() for row in rows
        )
        scored: list[InstanceScore] = []
        missing: list[str] = []
        used: set[str] = set()
        commits: set[str] = set()
        for instance in instances:
            found = by_instance.get(instance)
            if not found:
                missing.append(instance)
                continue
            used.update(row.record for row in found)
            commits.update(row.commit for row in found)
            average, cluster = per_instance[instance]
            scored.append(
                InstanceScore(
                    instance=instance,
                    mean=average,
                    scores=[row.score for row in found],
                    cluster=cluster,
                    failure_class=found[-1].failure_class,
                )
            )
        means = [item.mean for item in scored]
        mean = sum(means) / len(means) if means else None
        stderr = None
        if mean is not None and len(means) > 1:
            variance = sum((value - mean) ** 2 for value in means) / (len(means) - 1)
            stderr = math.sqrt(variance / len(means))
        return ScoreSummary(
            split=split,
            harness=key.harness,
            fingerprint=key.fingerprint,
            model=key.model,
            n=len(scored),
            missing=missing,
            mean=mean,
            stderr=stderr,
            instances=scored,
            records=sorted(used),
            commits=sorted(commits),
        )


def recorded_scores(store: Store, config: Config, rev: str, split: str) -> tuple[str, ScoreSummary]:
    """`harnessgit scores`: the commit ``rev`` names and its harness's scores on record."""
    ids = load_manifest(store.root, require_evaluator(config, "`harnessgit scores`").splits.manifest).ids(
        split
    )
    context = eval_context(store, config, resolve(store, rev).sha)
    return context.commit, ScoreBook.load(store).summary(context.key, split, ids)
