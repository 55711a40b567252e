"""Scores on record: the cache of evaluation results, and per-instance summaries.

A `ScoreBook` reads evaluation records by harness tree id as they are asked for
(through the notes index, one pipelined cat-file), indexed by the cache key
(harness tree id, evaluator fingerprint, model). When a key has several results for the same
(instance, repeat) (a --no-cache re-run), the newest record wins.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime

from harnessgit import layout
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import Key, eval_context
from harnessgit.evaluation.splits import load_manifest
from harnessgit.records import EvalRecord, ExportRecord, Record, TestPeekRecord, live
from harnessgit.stats.pairing import Scored, instance_means
from harnessgit.store import Store
from harnessgit.store.index import PEEK, notes_under, read_index
from harnessgit.store.index_file import NotesIndex
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
    objectives: dict[str, float] | None = None  # the evaluator's score per objective


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
    """Evaluation records grouped by cache key; a key's rows are indexed on first use.

    Loaded from the store, a book reads the records of one harness tree id when a
    method first asks about it, through the notes index (`harnessgit.store.index`),
    and every record only when asked for all of them (`records`, `cache_keys`): a
    command about one candidate no longer reads the whole history. The index is
    read once, so every lookup sees the notes as they were when the book was loaded.
    """

    def __init__(
        self,
        records: Iterable[EvalRecord] = (),
        peeks: Iterable[TestPeekRecord] = (),
        exports: Iterable[ExportRecord] = (),
        *,
        source: EvalNotes | None = None,
    ) -> None:
        self._records: dict[Key, list[EvalRecord]] = {}
        self._rows: dict[Key, dict[tuple[str, int], Row]] = {}
        self._means: dict[tuple[Key, str], tuple[float, ...] | None] = {}
        self._by_id: dict[str, EvalRecord] = {}
        self._source = source
        self._loaded: set[str] = set()  # harness tree ids whose records are all in
        self._everything = False
        self._peeks: list[TestPeekRecord] | None = None if source else sorted(peeks, key=lambda p: p.ts)
        self._exports: list[ExportRecord] | None = None if source else sorted(exports, key=lambda e: e.ts)
        for record in records:
            self._insert(record)

    @classmethod
    def load(cls, store: Store) -> ScoreBook:
        """The evaluation records and test peeks on record, read as they are asked for.
        The store's reader drops records that cannot be true (a NaN or out-of-range
        score, columns of different lengths), with a warning naming their notes: none
        reaches a decision."""
        return cls(source=EvalNotes(store))

    @classmethod
    def load_all(cls, store: Store) -> ScoreBook:
        """Every record read at once, without the index (what `load` must equal)."""
        evals: list[EvalRecord] = []
        peeks: list[TestPeekRecord] = []
        exports: list[ExportRecord] = []
        for records in store.notes.records(layout.NOTES_EVALS).values():
            for record in live(records):
                if isinstance(record, EvalRecord):
                    evals.append(record)
                elif isinstance(record, TestPeekRecord):
                    peeks.append(record)
                elif isinstance(record, ExportRecord):
                    exports.append(record)
        return cls(evals, peeks, exports)

    @property
    def records(self) -> dict[str, EvalRecord]:
        """Every evaluation record, by id."""
        self._want_all()
        return self._by_id

    @property
    def peeks(self) -> list[TestPeekRecord]:
        """Every test peek, oldest first."""
        return self._looks()[0]

    @property
    def exports(self) -> list[ExportRecord]:
        """Every forced export of a guarded split as training data, oldest first."""
        return self._looks()[1]

    def _looks(self) -> tuple[list[TestPeekRecord], list[ExportRecord]]:
        """Test peeks and exports: both indexed under `peek`, read in one pass."""
        if self._peeks is None or self._exports is None:
            found = list(self._source.records([PEEK])) if self._source else []
            self._peeks = sorted((r for r in found if isinstance(r, TestPeekRecord)), key=lambda p: p.ts)
            self._exports = sorted((r for r in found if isinstance(r, ExportRecord)), key=lambda e: e.ts)
        return self._peeks, self._exports

    def add(self, record: EvalRecord) -> None:
        self._want(record.harness)
        self._insert(record)

    def _insert(self, record: EvalRecord) -> None:
        if record.id in self._by_id:
            return  # one record on two commits (a note copied by git): one evaluation
        key = Key.of(record)
        self._by_id[record.id] = record
        self._records.setdefault(key, []).append(record)
        self._rows.pop(key, None)
        for cached in [k for k in self._means if k[0] == key]:
            del self._means[cached]

    def _want(self, harness: str) -> None:
        self.prefetch([harness])

    def prefetch(self, harnesses: Iterable[str]) -> None:
        """Read the records of these harness tree ids in one pass (the frontier asks
        about every program of the history; one read each would cost a process each)."""
        wanted = {harness for harness in harnesses if harness not in self._loaded}
        if self._source is None or self._everything or not wanted:
            return
        self._loaded |= wanted
        for record in self._source.records(wanted):
            if isinstance(record, EvalRecord) and record.harness in wanted:
                self._insert(record)

    def _want_all(self) -> None:
        if self._source is None or self._everything:
            return
        self._everything = True
        for record in self._source.records(None):
            if isinstance(record, EvalRecord) and record.harness not in self._loaded:
                self._insert(record)

    def keys_of(self, harness: str) -> list[Key]:
        """The cache keys with records for this harness tree id."""
        self._want(harness)
        return [key for key in self._records if key.harness == harness]

    def rows(self, key: Key) -> dict[tuple[str, int], Row]:
        """(instance, repeat) -> the newest result on record for this key."""
        self._want(key.harness)
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
                        objectives=record.objective_scores[i] if record.objective_scores else None,
                    )
            self._rows[key] = rows
        return rows

    @property
    def index(self) -> NotesIndex | None:
        """The notes index the book reads through (None: a book of given records)."""
        return self._source.index if self._source else None

    def instance_means(self, key: Key) -> dict[str, float]:
        """instance -> its mean over repeats, for every instance this key has a score on."""
        return {
            instance: mean
            for instance, (mean, _cluster) in instance_means(self._in_repeat_order(key)).items()
        }

    def complete_means(
        self, key: Key, instances: tuple[str, ...], split_hash: str
    ) -> tuple[float, ...] | None:
        """Per-instance means over repeats, in ``instances`` order, or None if any is
        missing: the frontier's input, memoised per split (named by its hash) until
        the key gets a new record."""
        memo = (key, split_hash)
        self._want(key.harness)
        if memo not in self._means:
            means = instance_means(self._in_repeat_order(key))
            found = [means.get(instance) for instance in instances]
            self._means[memo] = None if any(v is None for v in found) else tuple(v[0] for v in found if v)
        return self._means[memo]

    def complete_objectives(
        self, key: Key, instances: tuple[str, ...]
    ) -> dict[str, tuple[float, ...]] | None:
        """objective -> its per-instance scores in ``instances`` order (a mean over
        repeats, summed as GEPA sums objective scores), or None unless every instance has
        scores on the same objectives: what the "objective", "hybrid" and "cartesian"
        frontiers read (`harnessgit.stats.frontier_keys`)."""
        by_instance: dict[str, list[dict[str, float]]] = {}
        for row in sorted(self.rows(key).values(), key=lambda row: row.repeat):
            if row.objectives is not None:
                by_instance.setdefault(row.instance, []).append(row.objectives)
        names: list[str] | None = None
        columns: dict[str, list[float]] = {}
        for instance in instances:
            repeats = by_instance.get(instance)
            if not repeats or any(sorted(scores) != sorted(repeats[0]) for scores in repeats):
                return None
            if names is None:
                names = sorted(repeats[0])
                columns = {name: [] for name in names}
            if sorted(repeats[0]) != names:
                return None
            for name in names:
                total = 0.0
                for scores in repeats:
                    total += scores[name]
                columns[name].append(total / len(repeats))
        return {name: tuple(column) for name, column in columns.items()} if names else None

    def scored(self, key: Key, instances: list[str]) -> Scored:
        """instance -> (mean over repeats, cluster) for the instances with a score:
        what `harnessgit.stats.pairing.pair_scores` pairs."""
        wanted = set(instances)
        return instance_means(row for row in self._in_repeat_order(key) if row[0] in wanted)

    def _in_repeat_order(self, key: Key) -> list[tuple[str, float, str | None]]:
        rows = sorted(self.rows(key).values(), key=lambda row: row.repeat)
        return [(row.instance, row.score, row.cluster) for row in rows]

    def records_for(self, key: Key) -> list[EvalRecord]:
        self._want(key.harness)
        return list(self._records.get(key, []))

    def cache_keys(self) -> list[Key]:
        self._want_all()
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
            **key.fields(),
            n=len(scored),
            missing=missing,
            mean=mean,
            stderr=stderr,
            instances=scored,
            records=sorted(used),
            commits=sorted(commits),
        )


class EvalNotes:
    """The evaluation notes through their index, as of the moment it was read."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.index = read_index(store, layout.NOTES_EVALS)

    def records(self, tags: Collection[str] | None) -> Iterator[Record]:
        """The live records of every note indexed under one of ``tags`` (None: every
        note), in the order `Notes.records` gives them, once per annotated object."""
        for _target, records in notes_under(self.store, self.index, tags):
            yield from live(records)


def recorded_scores(store: Store, config: Config, rev: str, split: str) -> tuple[str, ScoreSummary]:
    """`harnessgit scores`: the commit ``rev`` names and its harness's scores on record."""
    ids = load_manifest(store.root, require_evaluator(config, "`harnessgit scores`").splits.manifest).ids(
        split
    )
    context = eval_context(store.objects, config, resolve(store.refs, rev).sha)
    return context.commit, ScoreBook.load(store).summary(context.key, split, ids)
