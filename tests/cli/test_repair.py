"""`harnessgit doctor` and what every command does about a killed run (issue 15)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git
from tests.gating_fixtures import EVALUATOR, SPLITS, skill
from tests.store.kill_fixtures import candidate_repo, kill_at, killed_git, left_lock, state


def test_doctor_on_a_healthy_repository_exits_0(repo: Path) -> None:
    result = run(repo, "doctor")
    assert result.exit_code == 0 and result.stdout == "no problems found (checked: transactions, locks)\n"


def test_doctor_finds_a_stale_lock_and_fix_removes_it(repo: Path) -> None:
    left = left_lock(repo, "packed-refs.lock", 90)
    found = run(repo, "doctor")
    assert found.exit_code == 1 and left.exists()
    assert found.stdout.splitlines() == [
        "locks: .git/packed-refs.lock",
        "  stale lock, 2 min old: no live git holds a ref lock that long, "
        "and it blocks every write to its ref",
        "  fix: remove it",
        "1 problem; `harnessgit doctor --fix` repairs 1 of them",
    ]
    fixed = run(repo, "doctor", "--fix")
    assert fixed.exit_code == 0 and "  fixed: removed .git/packed-refs.lock" in fixed.stdout
    assert not left.exists() and run(repo, "doctor").exit_code == 0


def test_doctor_explains_the_locks_of_a_killed_git_and_fix_removes_them(repo: Path) -> None:
    left = killed_git(repo, "refs/heads/main", 90)  # main is HEAD's branch: HEAD.lock too
    assert left == ["HEAD.lock", "refs/heads/main.lock"]
    found = run(repo, "doctor")
    assert found.exit_code == 1 and state(repo).locks == left
    assert [line for line in found.stdout.splitlines() if not line.startswith(" ")] == [
        "locks: .git/HEAD.lock",
        "locks: .git/refs/heads/main.lock",
        "2 problems; `harnessgit doctor --fix` repairs 2 of them",
    ]
    assert found.stdout.count("  stale lock, 2 min old: ") == 2
    fixed = run(repo, "doctor", "--fix")
    assert fixed.exit_code == 0 and fixed.stdout.endswith("2 problems, 2 repaired\n")
    assert state(repo).locks == [] and run(repo, "log").exit_code == 0


def test_doctor_outside_a_repository_and_in_a_bare_one_says_so_in_one_line(tmp_path: Path) -> None:
    line = one_error_line(run(tmp_path, "doctor"))
    assert line == f"harnessgit: error: not a git repository: {tmp_path}"
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    line = one_error_line(run(tmp_path / "bare.git", "doctor", "--fix"))
    assert line.endswith("bare.git is a bare repository: harnessgit needs a working tree (clone it)")


def test_doctor_json(repo: Path) -> None:
    left_lock(repo, "packed-refs.lock", 90)
    report = json.loads(run(repo, "doctor", "--json").stdout)
    assert report["checks"] == ["transactions", "locks"] and report["fixing"] is False
    assert report["healthy"] is False
    (finding,) = report["findings"]
    assert finding["subject"] == ".git/packed-refs.lock" and finding["fixable"] and not finding["fixed"]
    report = json.loads(run(repo, "doctor", "--fix", "--json").stdout)
    assert report["healthy"] is True and report["findings"][0]["fixed"] is True


def test_doctor_leaves_an_interrupted_transaction_alone_without_fix(repo: Path, tmp_path: Path) -> None:
    candidate_repo(repo)
    assert kill_at(repo, "before-update", tmp_path) == -signal.SIGKILL
    killed = state(repo)
    found = run(repo, "doctor")
    assert found.exit_code == 1 and state(repo) == killed
    assert "interrupted transaction 'merge c1 into main'" in found.stdout
    assert "  fix: roll it forward: apply the 8 pending updates" in found.stdout
    assert run(repo, "doctor", "--fix").exit_code == 0 and state(repo).merged


@pytest.fixture
def marked_repo(make_repo: Callable[..., Path], tmp_path: Path) -> tuple[Path, Path]:
    """A gated harness whose evaluator leaves a mark when it runs."""
    mark = tmp_path / "evaluator-ran"
    evaluator = f"open({str(mark)!r}, 'w').close()\n" + EVALUATOR
    repo = make_repo({"eval.py": evaluator, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(10)})
    return repo, mark


def test_eval_under_a_stale_lock_fails_before_running_the_evaluator(marked_repo: tuple[Path, Path]) -> None:
    repo, mark = marked_repo
    left_lock(repo, "refs/heads/main.lock", 300)  # minutes: the age shown does not tick during the test
    line = one_error_line(run(repo, "eval", "main"))
    assert line == (
        "harnessgit: error: a stale lock left by a killed git blocks every write to its ref: "
        ".git/refs/heads/main.lock (5 min old); remove it with `harnessgit doctor --fix`"
    )
    assert not mark.exists()
    assert run(repo, "doctor", "--fix").exit_code == 0
    assert run(repo, "eval", "main").exit_code == 0 and mark.exists()


@pytest.mark.slow
def test_a_killed_merge_is_finished_by_the_next_command(gate_repo: Path, tmp_path: Path) -> None:
    with Store.discover(gate_repo) as store:
        cand = propose(store, load_config(gate_repo), {"SKILL.md": skill(30)}).candidate
    main = git(gate_repo, "rev-parse", "main").strip()
    merge = [sys.executable, "-m", "harnessgit", "-q", "merge", cand]
    assert kill_at(gate_repo, "after-prepare", tmp_path, merge) == -signal.SIGKILL
    killed = state(gate_repo)
    assert killed.refs["refs/heads/main"] == main and len(killed.locks) >= 8
    # The next command, whatever it is, in a process of its own as a user would run it.
    log = subprocess.run([*merge[:3], "log"], cwd=gate_repo, capture_output=True, text=True, check=False)
    assert log.returncode == 0, log.stderr
    (warning,) = log.stderr.splitlines()
    assert warning.startswith("harnessgit: warning: interrupted transaction 'merge ")
    assert warning.endswith("of 8 ref updates had landed: finished it")
    after = state(gate_repo)
    assert after.refs["refs/heads/main"] != main and after.locks == [] and after.journals == []
    assert f"refs/heads/harnessgit/cand/{cand}" not in after.refs
    assert f"refs/harnessgit/archive/{cand}" in after.refs
    merged = after.refs["refs/heads/main"]
    assert git(gate_repo, "rev-parse", f"{merged}^2") == git(
        gate_repo, "rev-parse", f"refs/harnessgit/archive/{cand}"
    )
    gate_note = git(gate_repo, "notes", "--ref=refs/notes/harnessgit/gate", "show", merged)
    assert '"merge":"' + merged in gate_note
