"""`harnessgit trajectory`: the feedback and trajectory an evaluation recorded, per repeat."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harnessgit.canonical import loads_strict
from harnessgit.config import Config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import view_of
from harnessgit.records.lines import Skipped, warn_skipped
from harnessgit.store import Store
from harnessgit.targets import resolve


@dataclass(frozen=True)
class Repeat:
    """One recorded repeat of an instance: its score, and what the evaluator said about it."""

    instance: str
    repeat: int
    score: float
    record: str  # the evaluation record it came from
    commit: str  # the commit that record is on
    feedback: str | None = None
    trajectory: Any = None
    failure_class: str | None = None
    cost: dict[str, float] | None = None


@dataclass(frozen=True)
class Trajectories:
    instance: str
    repeats: list[Repeat]  # in repeat order


def trajectories(
    store: Store, config: Config, rev: str, instance: str, book: ScoreBook | None = None
) -> Trajectories:
    """Every recorded repeat of ``instance`` on ``rev``'s harness."""
    context = eval_context(store.objects, config, resolve(store.refs, rev).sha)
    book = book if book is not None else ScoreBook.load(store)
    rows = sorted(
        (row for (name, _repeat), row in book.rows(context.key).items() if name == instance),
        key=lambda row: row.repeat,
    )
    if not rows:
        raise HarnessgitError(f"no evaluation of instance {instance!r} on record for {rev}")
    blobs: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    repeats = []
    for row in rows:
        said: dict[str, Any] = {}
        if row.evidence:
            if row.evidence not in blobs:
                blobs[row.evidence] = evidence_items(store.objects.read_blob(row.evidence), row.evidence[:12])
            said = blobs[row.evidence].get((instance, row.repeat), {})
        told = {name: said.get(name) for name in ("feedback", "trajectory", "failure_class", "cost")}
        repeats.append(view_of(Repeat, row, **told))
    return Trajectories(instance, repeats)


def evidence_items(blob: bytes, where: str = "") -> dict[tuple[str, int], dict[str, Any]]:
    """An evaluation's evidence blob (JSON lines, one per instance and repeat), by
    (instance, repeat).

    harnessgit writes these blobs from validated evaluator output, but a blob is only
    an object id on a record: anyone who can write notes can point a record at any
    blob. Lines that are not strict JSON objects naming their instance (a NaN, an
    infinity, a list, a truncated line) are left out with one warning, so that a
    bad blob costs its own lines, not the command (a NaN once crashed `--json`).
    """
    skipped = Skipped("evidence")
    items: dict[tuple[str, int], dict[str, Any]] = {}
    for line in blob.splitlines():
        if not line.strip():
            continue
        try:
            item = loads_strict(line)
        except ValueError:  # UnicodeDecodeError and JSONDecodeError are ValueErrors
            skipped.add(("of invalid JSON", "NaN, Infinity or malformed"), where)
            continue
        instance, repeat = (
            (item.get("instance"), item.get("repeat", 0)) if isinstance(item, dict) else (None, None)
        )
        if not isinstance(instance, str) or not isinstance(repeat, int) or isinstance(repeat, bool):
            skipped.add(("without an instance id and repeat", ""), where)
            continue
        items[(instance, repeat)] = item
    warn_skipped(skipped)
    return items
