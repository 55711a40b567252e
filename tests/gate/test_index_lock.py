"""Issue 28, defect 2: a killed merge leaves `.git/index.lock`, and nothing repaired it.

`doctor --fix` said "no problems found"; the next `revert --no-gate` moved main and
then failed, leaving the reverse of the edit staged; only `rm .git/index.lock` helped.
Now a landing on a checked-out branch looks at the index lock before it writes
anything, and `doctor` finds a lock no running git holds and `--fix` removes it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot
from tests.gate.test_checkout import candidate
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller

pytestmark = pytest.mark.usefixtures("own_temp_dir")


def killed_gits_lock(repo: Path, age: float = 300) -> Path:
    """The index lock a git killed while writing the index leaves, ``age`` seconds old."""
    lock = repo / ".git" / "index.lock"
    lock.write_bytes((repo / ".git" / "index").read_bytes())
    past = time.time() - age
    os.utime(lock, (past, past))
    return lock


def accepted(repo: Path) -> str:
    cand = candidate(repo, {"SKILL.md": skill(30)})
    with Store.discover(repo) as store:
        landed = merge(
            store, load_config(repo), GateRequest(cand), execution=BATCHES, check=check_change
        ).merge
    assert landed is not None
    return landed


def test_a_stale_index_lock_stops_revert_no_gate_before_main_moves(gate_repo: Path) -> None:
    landed = accepted(gate_repo)
    lock = killed_gits_lock(gate_repo)
    before = snapshot(gate_repo)
    args = ("revert", landed, "--no-gate", "--reason", "incident 42")
    line = one_error_line(run(gate_repo, *args))
    assert "cannot move main under its checkout: .git/index.lock (5 min old) was left by a killed git" in line
    assert "`harnessgit doctor --fix`" in line
    assert snapshot(gate_repo) == before and lock.exists()  # nothing written, main not moved
    fixed = run(gate_repo, "doctor", "--fix")
    assert fixed.exit_code == 0 and "removed .git/index.lock" in fixed.output, fixed.output
    assert not lock.exists()
    rerun = run(gate_repo, *args)
    assert rerun.exit_code == 0, rerun.output
    assert git(gate_repo, "status", "--porcelain") == "" and (gate_repo / "SKILL.md").read_text() == skill(10)


def test_merge_refuses_a_stale_index_lock_before_the_gate_spends_anything(gate_repo: Path) -> None:
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    killed_gits_lock(gate_repo)
    before = snapshot(gate_repo)
    line = one_error_line(run(gate_repo, "merge", cand))
    assert "cannot move main under its checkout: .git/index.lock" in line
    assert snapshot(gate_repo) == before  # no gate record: no attempt spent


def test_doctor_finds_a_stale_index_lock_and_leaves_a_running_gits_alone(gate_repo: Path) -> None:
    lock = killed_gits_lock(gate_repo)
    found = run(gate_repo, "doctor")
    assert found.exit_code == 1 and ".git/index.lock" in found.output and "stale index lock" in found.output
    lock.unlink()
    # A real `git commit -a` holds the index lock while its message editor is open (started
    # through a shell: harnessgit does not count its own child processes, the store's).
    editor = subprocess.Popen(
        ["sh", "-c", "git commit -a --allow-empty; true"],
        cwd=gate_repo,
        env={**os.environ, "GIT_EDITOR": "sleep 60; true"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not lock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        past = time.time() - 300  # as old as the stale one: only the running git tells them apart
        os.utime(lock, (past, past))
        assert run(gate_repo, "doctor", "--fix").exit_code == 0
        assert lock.exists()
        cand = candidate(gate_repo, {"SKILL.md": skill(30)})
        line = one_error_line(run(gate_repo, "merge", cand))
        assert ".git/index.lock (5 min old) is held by a running git (pid " in line
        assert "wait until that git ends" in line
    finally:
        os.killpg(editor.pid, signal.SIGKILL)  # the shell, git and its editor: the group it leads
        editor.wait()


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_doctor_right_after_a_kill_judges_a_new_lock_once_it_is_old_enough(gate_repo: Path) -> None:
    """A lock no git holds, made just now (doctor run at once after a kill): doctor waits
    until it is a second old, sees that still no git runs here, and removes it."""
    lock = killed_gits_lock(gate_repo, age=0)
    fixed = run(gate_repo, "doctor", "--fix")
    assert fixed.exit_code == 0 and "removed .git/index.lock" in fixed.output, fixed.output
    assert not lock.exists()
