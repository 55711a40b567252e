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

from pydantic import BaseModel, ConfigDict

from harnessgit import layout
from harnessgit.errors import HarnessgitError
from harnessgit.records import EvalRecord, TestPeekRecord, live
from harnessgit.store import Store

TEST_SPLIT = "test"


@dataclass(frozen=True)
class Key:
    harness: str
    fingerprint: str
    model: str


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


class InstanceScore(BaseModel):
    model_config = ConfigDict(frozen=True)

    instance: str
    mean: float
    scores: list[float]  # one per repeat, in repeat order
    cluster: str | None = None
    failure_class: str | None = None


class ScoreSummary(BaseModel):
    model_config = ConfigDict(frozen=True)

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
            by_instance: dict[str, list[float]] = {}
            for (instance, _repeat), row in self.rows(key).items():
                by_instance.setdefault(instance, []).append(row.score)
            found = [by_instance.get(instance) for instance in instances]
            self._means[memo] = (
                None if any(v is None for v in found) else tuple(sum(v) / len(v) for v in found if v)
            )
        return self._means[memo]

    def scored(self, key: Key, instances: list[str]) -> dict[str, tuple[float, str | None]]:
        """instance -> (mean over repeats, cluster) for the instances with a score:
        what `harnessgit.gate.gate.pair_scores` pairs."""
        wanted = set(instances)
        found: dict[str, list[float]] = {}
        clusters: dict[str, str | None] = {}
        for (instance, _repeat), row in self.rows(key).items():
            if instance in wanted:
                found.setdefault(instance, []).append(row.score)
                clusters[instance] = row.cluster
        return {i: (sum(v) / len(v), clusters[i]) for i, v in found.items()}

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
        rows = self.rows(key)
        by_instance: dict[str, list[Row]] = {}
        for (instance, _repeat), row in rows.items():
            by_instance.setdefault(instance, []).append(row)
        scored: list[InstanceScore] = []
        missing: list[str] = []
        used: set[str] = set()
        commits: set[str] = set()
        for instance in instances:
            found = sorted(by_instance.get(instance, []), key=lambda row: row.repeat)
            if not found:
                missing.append(instance)
                continue
            values = [row.score for row in found]
            used.update(row.record for row in found)
            commits.update(row.commit for row in found)
            scored.append(
                InstanceScore(
                    instance=instance,
                    mean=sum(values) / len(values),
                    scores=values,
                    cluster=found[0].cluster,
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
