"""Evidence per (commit, instance): the feedback and trajectory an evaluation recorded."""

from __future__ import annotations

import json
from typing import Any

from harnessgit.candidates.targets import resolve
from harnessgit.config import Config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.store import Store


def trajectories(
    store: Store, config: Config, rev: str, instance: str, book: ScoreBook | None = None
) -> list[dict[str, Any]]:
    """One entry per recorded repeat of ``instance`` on ``rev``'s harness, repeat order."""
    context = eval_context(store, config, resolve(store, rev).sha)
    book = book if book is not None else ScoreBook.load(store)
    rows = sorted(
        (row for (name, _repeat), row in book.rows(context.key).items() if name == instance),
        key=lambda row: row.repeat,
    )
    if not rows:
        raise HarnessgitError(f"no evaluation of instance {instance!r} on record for {rev}")
    found = []
    blobs: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        entry: dict[str, Any] = {
            "instance": instance,
            "repeat": row.repeat,
            "score": row.score,
            "record": row.record,
            "commit": row.commit,
        }
        if row.evidence:
            if row.evidence not in blobs:
                text = store.read_blob(row.evidence).decode("utf-8")
                blobs[row.evidence] = [json.loads(line) for line in text.splitlines() if line.strip()]
            for item in blobs[row.evidence]:
                if item.get("instance") == instance and item.get("repeat") == row.repeat:
                    entry.update(
                        feedback=item.get("feedback"),
                        trajectory=item.get("trajectory"),
                        failure_class=item.get("failure_class"),
                        cost=item.get("cost"),
                    )
        found.append(entry)
    return found
