"""A harness whose scores follow its text exactly, for gate, merge, frontier and verify tests.

The evaluator scores instance ``s-N`` 1.0 when N < LEVEL (a number written in
SKILL.md) or when SKILL.md says ``fix s-N``; otherwise 0.0. So an edit's true
effect on the selection split is known in advance.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CONFIG

EVALUATOR = """\
import json, re, sys
from pathlib import Path
skill = Path("SKILL.md").read_text()
level = int(re.search(r"LEVEL: (\\d+)", skill).group(1)) if "LEVEL:" in skill else 0
fixed = set(re.findall(r"fix (\\S+)", skill))
broken = set(re.findall(r"break (\\S+)", skill))
for line in sys.stdin:
    instance = line.strip()
    number = int(instance.split("-")[1])
    good = (number < level or instance in fixed) and instance not in broken
    print(json.dumps({"instance": instance, "score": 1.0 if good else 0.0,
                      "feedback": "ok" if good else f"{instance} failed",
                      "failure_class": None if good else "missing-rule"}))
"""

SPLITS = {
    "train": [f"t-{i}" for i in range(10)],
    "selection": [f"s-{i}" for i in range(40)],
    "test": [f"x-{i}" for i in range(10)],
}


def skill(level: int, *extra: str) -> str:
    lines = [
        "---",
        "name: demo",
        "description: A demo skill for gate tests.",
        "---",
        "# Demo",
        "",
        f"LEVEL: {level}",
        "",
        "1. Read the task.",
        "2. Answer it.",
    ]
    return "\n".join([*lines, *extra]) + "\n"


@pytest.fixture
def gate_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(10)},
        config=CONFIG + "batch_size = 20\njobs = 2\n",
    )
