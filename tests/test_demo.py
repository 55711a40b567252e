"""The README's main job: `harnessgit demo`, offline, end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import git


def test_demo_runs_offline_and_says_what_is_simulated(tmp_path: Path) -> None:
    env = {**os.environ}
    env.pop("OPENAI_BASE_URL", None)
    result = subprocess.run(
        [sys.executable, "-m", "harnessgit", "demo", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("What is simulated") == 2  # at the start and at the end
    for section in (
        "harnessgit evolve",
        "harnessgit log",
        "harnessgit frontier",
        "held-out test",
        "harnessgit verify",
    ):
        assert section in out
    assert "gate: PASS, merged" in out  # the evolved skill reached main through the gate
    repo = tmp_path / "demo"
    log = json.loads(
        subprocess.run(
            [sys.executable, "-m", "harnessgit", "-C", str(repo), "log", "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    merges = [entry for entry in log["entries"] if entry["kind"] == "merge"]
    assert merges and all(entry["gate"]["passed"] for entry in merges)
    assert len(log["test_peeks"]) == 2
    assert "without the gate" in out  # verify caught the hotfix
    assert git(repo, "status", "--porcelain") == ""
