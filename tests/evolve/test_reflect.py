from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

from harnessgit.evaluation.context import Key
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evolve.reflect import reflective_dataset
from harnessgit.records import EvalRecord
from harnessgit.store import Store

KEY = Key("harness", "fingerprint", "model")


def book(scores: dict[str, float], evidence: str | None) -> ScoreBook:
    return ScoreBook(
        [
            EvalRecord(
                ts=datetime(2026, 1, 1, tzinfo=timezone.utc),
                commit="c" * 40,
                harness=KEY.harness,
                fingerprint=KEY.fingerprint,
                model=KEY.model,
                split="train",
                split_hash="h",
                manifest="m",
                instances=list(scores),
                repeats=[0] * len(scores),
                scores=list(scores.values()),
                evidence=evidence,
                wall_time=0.0,
                worker="test",
            )
        ]
    )


def test_the_reflective_dataset_puts_failures_first_with_their_trajectories(repo: Path) -> None:
    items = [
        {"instance": "a", "feedback": "fine", "trajectory": "solved it"},
        {
            "instance": "b",
            "feedback": "routed to other, expected bug",
            "trajectory": {"inputs": {"ticket": "it freezes"}, "outputs": {"queue": "other"}, "steps": ["x"]},
        },
        {"instance": "c", "feedback": "half right", "trajectory": "y" * 500},
    ]
    with Store.discover(repo) as store:
        blob = store.objects.write_blob("".join(json.dumps(item) + "\n" for item in items).encode())
        scores = book({"a": 1.0, "b": 0.0, "c": 0.5}, blob)
        found = reflective_dataset(
            store.objects, scores, KEY, ["a", "b", "c", "unscored"], excerpt_chars=100, max_examples=2
        )
    assert [(e.instance, e.score) for e in found] == [("b", 0.0), ("c", 0.5)]  # failures first, cut at 2
    failed, partial = found
    assert failed.inputs == {"ticket": "it freezes"} and failed.outputs == {"queue": "other"}
    assert failed.feedback == "routed to other, expected bug"
    assert failed.trajectory is not None and json.loads(failed.trajectory)["steps"] == ["x"]
    assert partial.inputs is None and partial.trajectory == "y" * 85 + " ...[truncated]"


def test_an_evaluation_without_evidence_still_gives_scores(repo: Path) -> None:
    with Store.discover(repo) as store:
        found = reflective_dataset(
            store.objects,
            book({"a": 1.0, "b": 0.0}, None),
            KEY,
            ["a", "b"],
            excerpt_chars=100,
            max_examples=8,
        )
    assert [(e.instance, e.score, e.feedback, e.trajectory) for e in found] == [
        ("b", 0.0, "", None),
        ("a", 1.0, "", None),
    ]
