"""The reflective dataset: what the proposer reads about how the parent did.

For each minibatch instance: the evaluator's feedback and score, and an excerpt
of the trajectory. When a trajectory is a JSON object with ``inputs`` and
``outputs`` keys (docs/evaluator.md), those become the example's inputs and
outputs, so a proposer sees what the model was asked and what it answered.
"""

from __future__ import annotations

import json
from typing import Any

from harnessgit.evaluation.context import Key
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.trajectory import evidence_items
from harnessgit.proposers import ReflectiveExample
from harnessgit.store import Objects


def reflective_dataset(
    objects: Objects,
    book: ScoreBook,
    key: Key,
    instances: list[str],
    *,
    excerpt_chars: int,
    max_examples: int,
) -> list[ReflectiveExample]:
    rows = book.rows(key)
    blobs: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}
    examples = []
    for instance in instances:
        row = rows.get((instance, 0))
        if row is None:
            continue
        entry: dict[str, Any] = {}
        if row.evidence:
            if row.evidence not in blobs:
                blobs[row.evidence] = evidence_items(objects.read_blob(row.evidence), row.evidence[:12])
            entry = blobs[row.evidence].get((instance, 0), {})
        trajectory = entry.get("trajectory")
        inputs = outputs = None
        if isinstance(trajectory, dict):
            inputs, outputs = trajectory.get("inputs"), trajectory.get("outputs")
        examples.append(
            ReflectiveExample(
                instance=instance,
                inputs=inputs,
                outputs=outputs,
                trajectory=_excerpt(trajectory, excerpt_chars),
                feedback=entry.get("feedback") or "",
                score=row.score,
            )
        )
    # Failures first: they are what an edit should address.
    examples.sort(key=lambda example: example.score if example.score is not None else 0.0)
    return examples[:max_examples]


def _excerpt(trajectory: Any, limit: int) -> str | None:
    if trajectory is None:
        return None
    text = trajectory if isinstance(trajectory, str) else json.dumps(trajectory, ensure_ascii=False)
    return text if len(text) <= limit else text[: limit - 15] + " ...[truncated]"
