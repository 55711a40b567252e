"""Fixtures of the GEPA integration tests: a harness repository holding the task of
tests/gepa_fixtures.py, and forgetting that task's modules after each test."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.gepa_fixtures import ADAPTER_CONFIG, SPLITS, TASK


@pytest.fixture(autouse=True)
def forget_task() -> Iterator[None]:
    """The task package is imported from a test repository: drop it (and the path
    entry) so the next test imports its own."""
    path = list(sys.path)
    yield
    for name in [name for name in sys.modules if name.split(".")[0] == "task"]:
        del sys.modules[name]
    sys.path[:] = path


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    """A harness whose prompts are GEPA's seed, with the task as its [evaluator] adapter."""
    return make_repo(
        {
            "task/__init__.py": "",
            "task/gepa_task.py": TASK,
            "splits.json": json.dumps(SPLITS),
            "prompts/system.md": "Answer briefly.\n",
            "prompts/style.md": "Be kind.\n",
        },
        config=ADAPTER_CONFIG + "\n[gate]\nmin_instances = 6\n",
    )
