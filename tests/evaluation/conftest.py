"""Shared by the evaluation tests: a real evaluator, its splits and a repository."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import CONFIG

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.


EVALUATOR = """\
import json, os, sys
from pathlib import Path
calls = os.environ.get("CALLS_FILE")
if calls:
    with open(calls, "a") as handle:
        handle.write(os.environ["HARNESSGIT_SPLIT"] + "\\n")
skill = Path("SKILL.md").read_text()
ids = [line.strip() for line in sys.stdin if line.strip()]
assert ids == Path(os.environ["HARNESSGIT_INSTANCES_FILE"]).read_text().split()
assert Path(os.environ["HARNESSGIT_HARNESS_DIR"]).resolve() == Path.cwd().resolve()
for instance in ids:
    word = instance.split("-")[0]
    print(json.dumps({"instance": instance, "score": 1.0 if word in skill else 0.0,
                      "feedback": f"needs {word}" , "cluster": word,
                      "trajectory": {"steps": ["read SKILL.md", f"look for {word}"],
                                     "env": "OPENAI_API_KEY=sk-" + "x" * 30},
                      "failure_class": None if word in skill else "missing-rule"}))
"""


SPLITS = {
    "train": [f"alpha-{i}" for i in range(4)],
    "selection": [f"{w}-{i}" for w in ("alpha", "beta", "gamma") for i in range(10, 14)],
    "test": [f"{w}-{i}" for w in ("alpha", "beta") for i in range(20, 23)],
}


@pytest.fixture
def eval_repo(make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "batch_size = 3\n"
    )
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    return repo


def calls(tmp_path: Path) -> int:
    path = tmp_path / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0
