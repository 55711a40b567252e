"""`harnessgit model`: model labels as checkpoints with parents.

Scores are keyed by model label, so a fine-tuned checkpoint evaluated under a new label
is a new column of `transfer`; what the label alone cannot say is where the weights came
from. A `model` record names the parent checkpoint and what changed (the co-evolution
round: harness evolved for a student, then the student tuned on its corrected failures,
arXiv 2609.09134), so a reader can tell a weights change from a harness edit. Records are
never edited: a label is registered once, after its parent, so the lineage has no cycle.
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessgit import layout
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import ModelRecord, live
from harnessgit.store import Notes, Store, Transaction
from harnessgit.targets import base_tip, resolve

NAME_MAX = 200


@dataclass(frozen=True)
class Checkpoint:
    name: str
    parent: str | None
    lineage: list[str]  # the parent, its parent, ... to the root
    note: str
    author: str
    registered: str  # the base tip when it was registered
    ts: str
    harnesses: int  # harnesses with scores on record for this label


@dataclass(frozen=True)
class Models:
    checkpoints: list[Checkpoint]  # in registration order


def registered(notes: Notes) -> dict[str, ModelRecord]:
    """Every registered model label, by name (the first record of a name wins)."""
    records = [
        r
        for rs in notes.records(layout.NOTES_MODELS).values()
        for r in live(rs)
        if isinstance(r, ModelRecord)
    ]
    found: dict[str, ModelRecord] = {}
    for record in sorted(records, key=lambda r: r.ts):
        found.setdefault(record.name, record)
    return found


def add_model(
    store: Store, name: str, *, parent: str | None = None, note: str = "", base: str = "main"
) -> ModelRecord:
    """Register ``name`` as a checkpoint of ``parent`` (itself registered first)."""
    check_label(name)
    known = registered(store.notes)
    if name in known:
        raise HarnessgitError(f"model {name!r} is registered already (records are never edited)")
    if parent is not None:
        if parent == name:
            raise HarnessgitError(f"model {name!r} cannot be its own parent")
        if parent not in known:
            raise HarnessgitError(
                f"model {parent!r} is not registered: `harnessgit model add {parent}` first, so the "
                "lineage has a root"
            )
    tip = note_commit(store, base)
    record = ModelRecord(
        ts=store.clock(), name=name, parent=parent, note=note, author=store.identity(), commit=tip
    )
    txn = Transaction(f"model add {name}")
    txn.append(layout.NOTES_MODELS, tip, [record])
    store.refs.commit(txn)
    return record


def note_commit(store: Store, base: str) -> str:
    """Where a record about the repository as a whole goes: the base tip, or HEAD
    before the base branch exists."""
    try:
        return base_tip(store.refs, base)
    except HarnessgitError:
        return resolve(store.refs, "HEAD").sha


def check_label(name: str) -> str:
    if not name.strip() or len(name) > NAME_MAX or any(ch.isspace() or ord(ch) < 32 for ch in name):
        raise HarnessgitError(
            f"model label {name!r} must be 1-{NAME_MAX} characters without whitespace or control characters"
        )
    return name


def list_models(store: Store) -> Models:
    known = registered(store.notes)
    book = ScoreBook.load(store)
    scored: dict[str, set[str]] = {}
    for key in book.cache_keys():
        scored.setdefault(key.model, set()).add(key.harness)
    checkpoints = []
    for record in known.values():
        checkpoints.append(
            Checkpoint(
                name=record.name,
                parent=record.parent,
                lineage=lineage(known, record.name),
                note=record.note,
                author=record.author,
                registered=record.commit,
                ts=record.ts.isoformat(),
                harnesses=len(scored.get(record.name, ())),
            )
        )
    return Models(checkpoints)


def lineage(known: dict[str, ModelRecord], name: str) -> list[str]:
    """``name``'s ancestors, nearest first (a parent registered under another name only)."""
    chain: list[str] = []
    current = known.get(name)
    while current is not None and current.parent is not None and current.parent not in chain:
        chain.append(current.parent)
        current = known.get(current.parent)
    return chain


def checkpoint_notes(notes: Notes, models: list[str]) -> list[str]:
    """One sentence per registered checkpoint among ``models`` that has a parent: a
    reader of score rows for two models then knows one is the other's weights, tuned."""
    known = registered(notes)
    sentences = []
    for name in dict.fromkeys(models):
        record = known.get(name)
        if record is None or record.parent is None:
            continue
        chain = " <- ".join([name, *lineage(known, name)])
        why = f" ({record.note})" if record.note else ""
        sentences.append(f"model {name} is a checkpoint of {record.parent}{why}; lineage {chain}")
    return sentences


def models_text(models: Models) -> str:
    if not models.checkpoints:
        return "no model registered: harnessgit model add NAME [--parent OLD] [--note TEXT]"
    lines = []
    for c in models.checkpoints:
        origin = f" <- {' <- '.join(c.lineage)}" if c.lineage else " (root)"
        lines.append(f"{c.name}{origin}: {c.harnesses} harnesses scored, registered at {c.registered[:12]}")
        if c.note:
            lines.append(f"  {c.note}")
    return "\n".join(lines)
