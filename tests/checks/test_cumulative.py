"""Cumulative growth (issue 14): small steps that add up are seen like one big one."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.runner import run
from tests.conftest import git, write


def grown(chars: int) -> str:
    """A prompt of about ``chars`` characters, in distinct lines."""
    lines: list[str] = []
    size = 0
    while size < chars:
        line = f"- Rule {len(lines)}: answer question {len(lines)} with its own cited source.\n"
        lines.append(line)
        size += len(line)
    return "".join(lines)


STEPS = [grown(int(1000 * 1.45**step)) for step in range(5)]  # 4.4x after four 1.45x steps


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"prompts/long.md": STEPS[0]})


def commit_steps(repo: Path, steps: list[str]) -> list[int]:
    """Commit each step and return `check --rev HEAD`'s exit code after each."""
    codes = []
    for number, text in enumerate(steps, 1):
        write(repo, "prompts/long.md", text)
        git(repo, "commit", "-qam", f"step {number}")
        result = run(repo, "check", "--rev", "HEAD")
        assert "grew" not in result.output or "since" in result.output, result.output  # no one-step growth
        codes.append(result.exit_code)
    return codes


def test_steps_on_a_branch_add_up_against_the_merge_base(repo: Path) -> None:
    # On main every step passed (1.45x < the 1.5x warning): [0, 0, 0, 0].
    git(repo, "switch", "-qc", "grow")
    assert commit_steps(repo, STEPS[1:]) == [0, 1, 1, 1]  # 1.45x, then 2.1x, 3.0x, 4.4x since the fork
    report = json.loads(run(repo, "check", "--rev", "HEAD", "--format", "json").output)
    [finding] = [f for f in report["findings"] if f["rule"] == "growth"]
    assert finding["measure"].startswith("size / size at the merge base with main")
    assert finding["value"] == pytest.approx(4.4, abs=0.1) and finding["state"] == "new"


def test_the_hook_sees_it_too_and_a_change_that_does_not_grow_is_not_blocked(repo: Path) -> None:
    git(repo, "switch", "-qc", "grow")
    for number, text in enumerate(STEPS[1:3], 1):
        write(repo, "prompts/long.md", text)
        git(repo, "commit", "-qam", f"step {number}")  # plain git: nothing checked
    write(repo, "prompts/long.md", STEPS[3])
    git(repo, "add", "-A")
    staged = run(repo, "check", "--staged")
    assert (
        staged.exit_code == 1
        and "grew 3.0" in staged.output
        and "x since the merge base with main" in staged.output
    )
    # The ratchet: an edit that keeps the size is not held to the growth before it.
    write(repo, "prompts/long.md", STEPS[2].replace("Rule 3: answer question", "Rule 3: answer"))
    git(repo, "add", "-A")
    same = run(repo, "check", "--staged")
    assert same.exit_code == 0 and "existing" in same.output, same.output


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_on_the_base_branch_the_last_label_is_the_reference(repo: Path) -> None:
    assert commit_steps(repo, STEPS[1:3]) == [0, 0]  # no label: nothing to add up from
    git(repo, "update-ref", "refs/harnessgit/labels/production", "HEAD~2")
    write(repo, "prompts/long.md", STEPS[3])
    git(repo, "commit", "-qam", "step 3")
    result = run(repo, "check", "--rev", "HEAD")
    assert result.exit_code == 1 and "since label production" in result.output


def test_since_and_the_setting(repo: Path) -> None:
    for number, text in enumerate(STEPS[1:3], 1):
        write(repo, "prompts/long.md", text)
        git(repo, "commit", "-qam", f"step {number}")
    since = run(repo, "check", "--rev", "HEAD", "--since", "HEAD~2")
    assert since.exit_code == 1 and "grew 2.13x since HEAD~2" in since.output
    config = (repo / "harnessgit.toml").read_text()
    write(repo, "harnessgit.toml", config + '\n[checks]\ngrowth_since = "label:nope"\n')
    noted = run(repo, "check", "--rev", "HEAD")
    assert noted.exit_code == 0 and "no label 'nope'; cumulative growth was not checked" in noted.output
