"""`harnessgit init` through the CLI."""

from __future__ import annotations

from tests.cli.runner import run
from tests.conftest import git


def test_init_writes_config_and_refuses_to_overwrite(make_repo: object) -> None:
    repo = make_repo(config=None)  # type: ignore[operator]
    result = run(repo, "init", "--harness", "SKILL.md", "--evaluator", "python3 'my eval.py' --fast")
    assert result.exit_code == 0, result.output
    text = (repo / "harnessgit.toml").read_text()
    assert 'command = ["python3", "my eval.py", "--fast"]' in text
    assert git(repo, "config", "--get-all", "notes.displayRef").split() == [
        "refs/notes/harnessgit/evidence*",
        "refs/notes/harnessgit/gate*",
    ]
    again = run(repo, "init")
    assert again.exit_code == 3 and "already exists" in again.stderr
    assert (repo / "harnessgit.toml").read_text() == text


def test_init_on_detached_head_needs_a_base(make_repo: object) -> None:
    repo = make_repo(config=None)  # type: ignore[operator]
    git(repo, "checkout", "-q", "--detach")
    result = run(repo, "init")
    assert result.exit_code == 3 and "detached" in result.stderr
    assert not (repo / "harnessgit.toml").exists()
    assert run(repo, "init", "--base", "main").exit_code == 0
