"""Shared by the evolve tests: the demo's triage repository, and its iteration records."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.demo import prepare
from harnessgit.records import IterationRecord
from harnessgit.store import Store


@pytest.fixture
def triage(tmp_path: Path) -> Path:
    """The demo's harness repository: a simulated agent and proposer, no LLM."""
    repo = tmp_path / "triage"
    prepare(repo, lambda _line: None)
    return repo


def records(store: Store) -> list[IterationRecord]:
    """Every evolve-iteration record on record, by iteration number."""
    found = [
        r for rs in store.notes(layout.NOTES_EVIDENCE).values() for r in rs if isinstance(r, IterationRecord)
    ]
    return sorted(found, key=lambda r: r.iteration)
