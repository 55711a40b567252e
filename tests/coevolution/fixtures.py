"""A simulated agent whose behaviour depends on the model (issue 19).

Instance ``s-N`` (or ``t-N``) is solved when N < LEVEL (from SKILL.md). A SKILL.md that
says ``STRICT PLAN`` moves the level by +15 for model ``alpha`` and by -15 for model
``beta``: one edit that helps one model and hurts the other. The evaluator reads the
model from HARNESSGIT_MODEL, as every command evaluator does. Failures carry a
trajectory of chat messages whose failing turn the evaluator knows (the assistant turn
that loops: "view" again), with failure class ``planning``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CONFIG

EVALUATOR = """\
import json, os, re, sys
from pathlib import Path
skill = Path("SKILL.md").read_text()
level = int(re.search(r"LEVEL: (\\d+)", skill).group(1))
model = os.environ["HARNESSGIT_MODEL"]
if "STRICT PLAN" in skill:
    level += {"alpha": 15, "beta": -15}.get(model, 0)
for line in sys.stdin:
    instance = line.strip()
    number = int(instance.split("-")[1])
    good = number < level
    messages = [
        {"role": "system", "content": skill},
        {"role": "user", "content": f"Total the payroll of {instance}."},
        {"role": "assistant", "content": "view payroll.csv"},
        {"role": "tool", "content": "346 rows"},
        {"role": "assistant", "content": "answer: 346" if good else "view payroll.csv"},
    ]
    print(json.dumps({"instance": instance, "score": 1.0 if good else 0.0,
                      "feedback": f"{model}: ok" if good else f"{model}: looped without an answer",
                      "failure_class": None if good else "planning",
                      "trajectory": {"messages": messages}}))
"""

SPLITS = {
    "train": [f"t-{i}" for i in range(40)],
    "selection": [f"s-{i}" for i in range(40)],
    "test": [f"x-{i}" for i in range(10)],
}


def skill(level: int, *extra: str) -> str:
    lines = ["---", "name: demo", "description: A demo skill for model tests.", "---", "# Demo", ""]
    return "\n".join([*lines, f"LEVEL: {level}", "", "1. Read the task.", *extra]) + "\n"


MODELS_CONFIG = CONFIG.replace('model = "sim-1"\n', 'models = ["alpha", "beta"]\n') + "batch_size = 40\n"


@pytest.fixture
def models_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(20)},
        config=MODELS_CONFIG,
    )
