"""`harnessgit doctor` and what every command does about a killed run (issue 15)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot, write
from tests.gate.test_checkout import candidate, harnessgit, killed_merge, written
from tests.gating_fixtures import EVALUATOR, SPLITS, skill
from tests.store.kill_fixtures import candidate_repo, kill_at, killed_git, left_lock, state

pytestmark = pytest.mark.usefixtures("own_temp_dir")


def test_doctor_on_a_healthy_repository_exits_0(repo: Path) -> None:
    result = run(repo, "doctor")
    assert (
        result.exit_code == 0
        and result.stdout
        == "no problems found (checked: transactions, locks, checkout, programs, scratch, index)\n"
    )


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
    assert (
        report["checks"] == ["transactions", "locks", "checkout", "programs", "scratch", "index"]
        and report["fixing"] is False
    )
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


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
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


def test_a_stale_lock_stops_writers_but_only_warns_readers_and_not_the_hook(
    marked_repo: tuple[Path, Path],
) -> None:
    # git's own readers ignore ref locks; harnessgit's readers (log, show, review,
    # verify...) warn, and the pre-commit check, which runs inside `git commit`, says
    # nothing: the lock blocks writes to harnessgit's refs, not a commit.
    repo, mark = marked_repo
    left_lock(repo, "refs/heads/main.lock", 300)
    for command in (["log"], ["status"], ["verify"], ["scores", "main"]):
        read = run(repo, *command)
        assert read.exit_code in (0, 1), read.output
        assert "stale lock" in read.stderr and "doctor --fix" in read.stderr, command
    write(repo, "SKILL.md", skill(3))
    git(repo, "add", "SKILL.md")
    hook = run(repo, "check", "--staged")
    assert hook.exit_code == 0 and hook.stderr == "", hook.output
    assert run(repo, "eval", "main").exit_code == 3 and not mark.exists()


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
    assert warning.endswith(
        "of 8 ref updates had landed: finished it; main is checked out and its working tree has not "
        "followed: `harnessgit doctor --fix` brings it along (do not commit what `git status` shows staged)"
    )
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
    assert git(gate_repo, "status", "--porcelain") == "M  SKILL.md\n"  # as the warning says
    assert run(gate_repo, "doctor", "--fix").exit_code == 0
    assert git(gate_repo, "status", "--porcelain") == "" and (gate_repo / "SKILL.md").read_text() == skill(30)


# -- a landing whose working tree did not follow (gate/checkout.py) -------------------


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_doctor_finishes_a_merge_killed_before_its_working_tree_followed(gate_repo: Path) -> None:
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    landed = killed_merge(gate_repo, cand)  # a real SIGKILL right after main moved
    assert git(gate_repo, "status", "--porcelain") == "M  SKILL.md\n"  # the landed edit's reverse, staged
    refs, before = written(gate_repo), snapshot(gate_repo)
    found = run(gate_repo, "doctor")
    assert found.exit_code == 1 and snapshot(gate_repo) == before
    first = git(gate_repo, "rev-parse", f"{landed}^1").strip()
    assert found.stdout.splitlines() == [
        "checkout: main",
        f"  the merge of {cand} landed on main as {landed[:12]}, but a kill stopped its working tree: "
        f"the index still holds {first[:12]}'s SKILL.md; do not commit that",
        f"  fix: bring the index and files to {landed[:12]}, as `harnessgit merge {cand}` would",
        "1 problem; `harnessgit doctor --fix` repairs 1 of them",
    ]
    fixed = run(gate_repo, "doctor", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert (
        f"  fixed: finished the interrupted merge of {cand}: the working tree now holds main's tip "
        f"{landed[:12]} (SKILL.md)"
    ) in fixed.stdout.splitlines()
    assert git(gate_repo, "status", "--porcelain") == "" and (gate_repo / "SKILL.md").read_text() == skill(30)
    assert written(gate_repo) == refs  # nothing recorded: the landing was whole already
    assert run(gate_repo, "doctor").exit_code == 0
    assert run(gate_repo, "merge", cand).exit_code == 1  # merged already: nothing left to finish


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_doctor_leaves_a_file_edited_since_the_kill_alone(gate_repo: Path) -> None:
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    killed_merge(gate_repo, cand)
    write(gate_repo, "SKILL.md", skill(10, "my own line"))  # neither side's content
    before = snapshot(gate_repo)
    for args in (("doctor",), ("doctor", "--fix")):
        result = run(gate_repo, *args)
        assert result.exit_code == 1 and snapshot(gate_repo) == before
        assert "    changed since, by hand: SKILL.md" in result.stdout.splitlines()
        assert "  fix: none without guessing: set your changes to SKILL.md aside, then " in result.stdout
    assert "my own line" in (gate_repo / "SKILL.md").read_text()


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_doctor_finishes_a_killed_revert_no_gate(gate_repo: Path) -> None:
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    accepted = run(gate_repo, "merge", cand)
    assert accepted.exit_code == 0, accepted.output
    main = git(gate_repo, "rev-parse", "main").strip()
    killed = harnessgit(
        gate_repo, "revert", main, "--no-gate", "--reason", "incident 42", kill_at="after-branch-move"
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    assert git(gate_repo, "show", ":SKILL.md") == skill(30)  # committing it would undo the override
    refs = written(gate_repo)
    report = json.loads(run(gate_repo, "doctor", "--fix", "--json").stdout)
    (finding,) = report["findings"]
    assert report["healthy"] and finding["check"] == "checkout" and finding["fixed"]
    assert finding["problem"].startswith("the ungated revert ")
    assert git(gate_repo, "status", "--porcelain") == "" and (gate_repo / "SKILL.md").read_text() == skill(10)
    assert written(gate_repo) == refs


@pytest.mark.slow
def test_doctor_fix_finishes_a_merge_killed_inside_its_ref_transaction(
    gate_repo: Path, tmp_path: Path
) -> None:
    """Killed inside `git update-ref` (all 11 locks taken): rolling the transaction forward
    moves main, and the checkout check, which runs after it, brings the working tree along."""
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    merge = [sys.executable, "-m", "harnessgit", "-q", "merge", cand]
    assert kill_at(gate_repo, "after-prepare", tmp_path, merge) == -signal.SIGKILL
    (journal,) = state(gate_repo).journals
    found = run(gate_repo, "doctor")  # main has not moved yet: the checkout is not behind it
    assert found.exit_code == 1
    assert [line for line in found.stdout.splitlines() if not line.startswith(" ")] == [
        f"transactions: .git/harnessgit/journal/{journal}",
        "1 problem; `harnessgit doctor --fix` repairs 1 of them",
    ]
    fixed = run(gate_repo, "doctor", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert [line.split(":")[0] for line in fixed.stdout.splitlines() if not line.startswith(" ")][:2] == [
        "transactions",
        "checkout",
    ]
    assert fixed.stdout.endswith("2 problems, 2 repaired\n")
    after = state(gate_repo)
    assert (
        after.locks == [] and after.journals == [] and f"refs/heads/harnessgit/cand/{cand}" not in after.refs
    )
    assert git(gate_repo, "status", "--porcelain") == "" and (gate_repo / "SKILL.md").read_text() == skill(30)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_doctor_ends_the_evaluator_and_removes_the_directories_a_killed_eval_left(
    make_repo: Callable[..., Path], tmp_path: Path, own_temp_dir: Path
) -> None:
    # A SIGKILL of harnessgit alone (an OOM kill, `kill -9 PID`) leaves its evaluator
    # running in its own process group and its checked-out tree in the temp directory.
    started = tmp_path / "started"
    sleeper = f"import pathlib, time\npathlib.Path({str(started)!r}).write_text('x')\ntime.sleep(60)\n"
    splits = {"train": ["a-1"], "selection": ["a-2"], "test": []}
    repo = make_repo({"eval.py": sleeper, "splits.json": json.dumps(splits)})
    scratch = own_temp_dir
    env = {**os.environ, "TMPDIR": str(scratch), "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    killed = subprocess.Popen([sys.executable, "-m", "harnessgit", "eval", "main"], cwd=repo, env=env)
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert started.exists(), "the evaluator never started"
    finally:
        killed.kill()
        killed.wait()
    found = run(repo, "doctor", "--json")
    assert found.exit_code == 1, found.output
    checks = [finding["check"] for finding in json.loads(found.stdout)["findings"]]
    assert "programs" in checks and checks.count("scratch") >= 1
    fixed = run(repo, "doctor", "--fix")
    assert fixed.exit_code == 0, fixed.output
    assert list(scratch.iterdir()) == []
    assert run(repo, "doctor").stdout == (
        "no problems found (checked: transactions, locks, checkout, programs, scratch, index)\n"
    )
