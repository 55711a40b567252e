"""Issue 15, defect 3: a kill between the base branch's move and its working tree's.

`merge` and `revert --no-gate` move the branch in one ref transaction, then bring a
checked-out branch's index and files along. A SIGKILL between the two (reproduced here
with the test-only HARNESSGIT_TEST_KILL_AT=after-branch-move, which makes the real
process SIGKILL itself at that step) left main at the merge commit with the reverse of
the landed edit staged; rerunning `merge` was refused ("merged into main already"), and
`git commit` would have undone the merge. Rerunning the same command now finishes the
checkout, recording nothing and spending no gate attempt.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate, with_batches
from harnessgit.gate.checkout import finish_checkout, unfinished_checkout
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot, write
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller


def harnessgit(repo: Path, *args: str, kill_at: str) -> subprocess.CompletedProcess[str]:
    """A real `harnessgit` process that kills itself at step ``kill_at``."""
    return subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "HARNESSGIT_TEST_KILL_AT": kill_at},
    )


def written(repo: Path) -> str:
    """Every ref, harnessgit's notes (gate attempts included) among them."""
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


def candidate(repo: Path, edit: dict[str, str] | None = None) -> str:
    """A candidate (``edit``, or the working tree's edit), both sides evaluated already, so
    that the gate in the killed process is quick."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, edit).candidate
        for rev in ("main", cand):
            evaluate(store, config, rev)
    return cand


def killed_merge(repo: Path, cand: str, kill_at: str = "after-branch-move") -> str:
    """Merge ``cand`` in a process SIGKILLed at ``kill_at``; the merge commit that landed."""
    killed = harnessgit(repo, "merge", cand, kill_at=kill_at)
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    return git(repo, "rev-parse", "main").strip()


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_rerunning_merge_finishes_a_checkout_a_kill_interrupted(gate_repo: Path) -> None:
    before = git(gate_repo, "rev-parse", "main").strip()
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    landed = killed_merge(gate_repo, cand)
    # What the kill left: main moved, the reverse of the landed edit staged.
    assert landed != before and git(gate_repo, "rev-parse", "HEAD").strip() == landed
    assert git(gate_repo, "status", "--porcelain") == "M  SKILL.md\n"
    assert (gate_repo / "SKILL.md").read_text() == skill(10)
    refs = written(gate_repo)

    rerun = run(gate_repo, "merge", cand)
    assert rerun.exit_code == 0, rerun.output
    assert rerun.stdout == (
        f"finished the interrupted merge of {cand}: the working tree now holds main's tip "
        f"{landed[:12]} (SKILL.md)\n"
    )
    assert git(gate_repo, "status", "--porcelain") == ""
    assert (gate_repo / "SKILL.md").read_text() == skill(30)
    assert written(gate_repo) == refs  # nothing recorded, no gate attempt spent
    assert run(gate_repo, "merge", cand).exit_code == 1  # and then: merged already, refused


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_kill_in_the_readme_flow_is_finished_too(gate_repo: Path) -> None:
    # The working tree holds the edit (propose took it from there); the candidate also
    # changes a file the working tree does not. Killed after staging the first.
    write(gate_repo, "SKILL.md", skill(30))
    cand = candidate(gate_repo, None)
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(
            store, config, {"prompts/system.md": "You are brief.\n"}, parent=cand, rationale="Be brief"
        ).candidate
        evaluate(store, config, cand)
    landed = killed_merge(gate_repo, cand, kill_at="after-stage")
    assert git(gate_repo, "status", "--porcelain") == "M  prompts/system.md\n"  # SKILL.md was staged
    with Store.discover(gate_repo) as store:
        pending = unfinished_checkout(store)
        assert pending is not None and pending.merge == landed and pending.behind == ["prompts/system.md"]
    rerun = run(gate_repo, "merge", cand)
    assert rerun.exit_code == 0 and rerun.stdout.startswith("finished the interrupted merge"), rerun.output
    assert git(gate_repo, "status", "--porcelain") == ""
    assert (gate_repo / "prompts/system.md").read_text() == "You are brief.\n"


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_file_edited_since_the_kill_is_left_alone(gate_repo: Path) -> None:
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    killed_merge(gate_repo, cand)
    write(gate_repo, "SKILL.md", skill(10, "my own line"))  # neither side's content
    before = snapshot(gate_repo)
    refused = run(gate_repo, "merge", cand)
    line = one_error_line(refused)
    assert "landed on main as" in line and "a kill stopped its working tree" in line
    assert "SKILL.md changed since" in line
    assert "nothing was touched" in line
    assert snapshot(gate_repo) == before
    assert "my own line" in (gate_repo / "SKILL.md").read_text()


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_kill_inside_git_read_tree_is_finished_once_its_lock_is_gone(gate_repo: Path) -> None:
    """git writes the files, then the index: killed in between, it leaves the new file,
    the old index and its index.lock. That state, made by hand after a real kill."""
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    landed = killed_merge(gate_repo, cand)
    write(gate_repo, "SKILL.md", skill(30))
    lock = gate_repo / ".git" / "index.lock"
    lock.write_bytes(b"")
    before = snapshot(gate_repo)
    line = one_error_line(run(gate_repo, "merge", cand))
    assert f"main's working tree cannot follow {landed[:12]} now: .git/index.lock (" in line
    assert snapshot(gate_repo) == before
    lock.unlink()
    rerun = run(gate_repo, "merge", cand)
    assert rerun.exit_code == 0 and rerun.stdout.startswith("finished the interrupted merge"), rerun.output
    assert git(gate_repo, "status", "--porcelain") == ""


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_nothing_else_lands_on_an_unfinished_checkout(gate_repo: Path) -> None:
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    killed_merge(gate_repo, cand)
    other = candidate(gate_repo, {"prompts/system.md": "You are brief.\n"})
    before = written(gate_repo)
    line = one_error_line(run(gate_repo, "merge", other))
    assert (
        f"the merge of {cand} landed on main" in line
        and f"finish it first (`harnessgit merge {cand}`)" in line
    )
    assert written(gate_repo) == before  # refused before the gate: nothing evaluated or recorded


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_rerunning_revert_no_gate_finishes_its_checkout(gate_repo: Path) -> None:
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    with Store.discover(gate_repo) as store:
        accepted = merge(
            store, load_config(gate_repo), GateRequest(cand), execution=BATCHES, check=check_change
        ).merge
    assert accepted is not None
    args = ("revert", accepted, "--no-gate", "--reason", "incident 42")
    killed = harnessgit(gate_repo, *args, kill_at="after-branch-move")
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    landed = git(gate_repo, "rev-parse", "main").strip()
    # The override landed, and the staged content is the reverted edit: a commit would undo the override.
    assert git(gate_repo, "status", "--porcelain") == "M  SKILL.md\n"
    assert git(gate_repo, "show", ":SKILL.md") == skill(30)
    refs = written(gate_repo)
    rerun = run(gate_repo, *args)
    assert rerun.exit_code == 0, rerun.output
    assert rerun.stderr.startswith("finished the interrupted merge of ")
    assert f"main's tip {landed[:12]} (SKILL.md)" in rerun.stderr
    assert git(gate_repo, "status", "--porcelain") == "" and (gate_repo / "SKILL.md").read_text() == skill(10)
    assert written(gate_repo) == refs  # no second revert candidate, no second override


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
@pytest.mark.parametrize(("name", "code"), [("SIGTERM", 143), ("SIGINT", 130)])
def test_sigterm_and_sigint_wait_until_the_working_tree_followed(
    gate_repo: Path, name: str, code: int
) -> None:
    """The two steps are shut to catchable signals: SIGTERM (a CI cancel) or SIGINT (Ctrl-C)
    arriving right after the branch moved acts only once the working tree followed."""
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    result = harnessgit(gate_repo, "merge", cand, kill_at=f"after-branch-move:{name}")
    assert result.returncode == code, result.stderr
    assert git(gate_repo, "status", "--porcelain") == ""
    assert (gate_repo / "SKILL.md").read_text() == skill(30)
    assert git(gate_repo, "log", "-1", "--format=%s", "main").startswith(f"Merge candidate {cand}")


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_doctor_can_find_and_finish_an_unfinished_checkout(gate_repo: Path) -> None:
    """The functions `harnessgit doctor` calls: what is unfinished, and finishing it."""
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    with Store.discover(gate_repo) as store:
        assert unfinished_checkout(store) is None
    landed = killed_merge(gate_repo, cand)
    with Store.discover(gate_repo) as store:
        pending = unfinished_checkout(store)
        assert pending is not None
        assert (pending.branch, pending.merge, pending.candidate, pending.action) == (
            "main",
            landed,
            cand,
            "merge",
        )
        assert pending.behind == pending.changed == ["SKILL.md"] and pending.edited == []
        assert pending.rerun == f"harnessgit merge {cand}"
        finish_checkout(store, pending)
        assert unfinished_checkout(store) is None
    assert git(gate_repo, "status", "--porcelain") == ""


def test_a_file_put_back_by_hand_is_no_unfinished_checkout(gate_repo: Path) -> None:
    """After a finished merge, editing a file back to its old content (to propose a
    revert from the working tree) is the user's edit: nothing to finish, nothing refused."""
    cand = candidate(gate_repo, {"SKILL.md": skill(30)})
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        assert merge(store, config, GateRequest(cand), execution=BATCHES, check=check_change).merge
        write(gate_repo, "SKILL.md", skill(10))
        assert unfinished_checkout(store) is None
        back = propose(store, config).candidate
        for rev in ("main", back):
            evaluate(store, config, rev)
    gated = run(gate_repo, "merge", back)
    assert gated.exit_code == 1 and "gate: FAIL" in gated.stdout  # gated as usual (and worse)
    assert git(gate_repo, "status", "--porcelain") == " M SKILL.md\n"
