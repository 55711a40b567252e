"""The evaluation records a gate decision read, named in its record (issue 17).

`sync` unions the eval notes of every clone, so a clone can hold records of the gate's
cache key (harness tree, evaluator fingerprint, model) that the gate never saw; with a
non-deterministic evaluator (a sampled agent, an LLM judge) their scores differ, and
`verify` recomputing from them failed a merge that was gated properly (or could confirm
one it should not). A gate record therefore names every eval record whose scores it
decided with, on every model it compared, in a blob (`GateRecord.evals`: ids, one per
line, sorted; a blob like the instance listing, so that a gate note stays one short line
in `git log` whatever the number of batches). `verify` re-checks from exactly those.
Record ids, not note blob ids: a sync rewrites a note (the union of both sides' lines)
but never a record.

Gate records written before have no such list: `verify` reads the records of their
cache key that are older than the decision, as it always did.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import Key
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import EvalRecord, GateRecord
from harnessgit.render import listing, plural
from harnessgit.stats.pairing import Scored, instance_means
from harnessgit.store import Objects


def evals_listing(record_ids: Iterable[str]) -> bytes:
    """The content of a gate record's ``evals`` blob."""
    return "".join(f"{record_id}\n" for record_id in sorted(set(record_ids))).encode("utf-8")


@dataclass(frozen=True)
class UsedRecords:
    """The eval records a gate record names, as this clone holds them."""

    named: list[str]  # every id the record names
    found: dict[str, EvalRecord]  # those on record here, by id
    problem: str | None  # why the decision cannot be re-checked from them; None: it can

    def of(self, key: Key) -> list[EvalRecord]:
        """The named records of one cache key."""
        return [r for r in self.found.values() if Key.of(r) == key]


def used_records(objects: Objects, book: ScoreBook, gate: GateRecord) -> UsedRecords | None:
    """The eval records ``gate`` says it decided with; None for a record from before
    gates named them. Every one is a record of the candidate's or the base's harness."""
    if gate.evals is None:
        return None
    try:
        named = objects.read_blob(gate.evals).decode("utf-8").split("\n")[:-1]
    except (HarnessgitError, UnicodeDecodeError):
        return UsedRecords(
            [],
            {},
            f"the list of eval records it decided with (blob {gate.evals[:12]}) is not in this "
            "repository: fetch it with the evidence store (harnessgit sync)",
        )
    held = {
        record.id: record
        for harness in {gate.harness, gate.base_harness}
        for key in book.keys_of(harness)
        for record in book.records_for(key)
    }
    found = {record_id: held[record_id] for record_id in named if record_id in held}
    missing = [record_id for record_id in named if record_id not in held]
    problem = None
    if missing:
        shown = listing([record_id[:12] for record_id in missing], 3)
        problem = (
            f"it names {plural(len(missing), 'eval record')} it decided with that this clone does not "
            f"hold ({shown}), so its decision cannot be re-checked: sync the eval notes "
            "(harnessgit sync); a record superseded since counts as missing"
        )
    return UsedRecords(named, found, problem)


def scored(records: Iterable[EvalRecord], key: Key, *, until: datetime | None = None) -> Scored:
    """instance -> (mean over repeats, cluster) from ``records`` of ``key`` (older than
    ``until`` when given: a later --no-cache re-run must not rewrite history), the newest
    result of each (instance, repeat) winning, as the gate's `ScoreBook` reads them."""
    latest: dict[tuple[str, int], tuple[str, float, str | None]] = {}
    for record in sorted(records, key=lambda r: r.ts):
        if Key.of(record) != key or (until and record.ts > until):
            continue
        for i, instance in enumerate(record.instances):
            cluster = record.clusters[i] if record.clusters else None
            latest[(instance, record.repeats[i])] = (instance, record.scores[i], cluster)
    return instance_means(row for _key, row in sorted(latest.items(), key=lambda item: item[0][1]))
