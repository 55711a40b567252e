"""`harnessgit init` through the CLI."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harnessgit.config import parse_config
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


def test_init_warns_about_a_harness_glob_that_matches_no_file(make_repo: object) -> None:
    repo = make_repo(config=None)  # type: ignore[operator]
    (repo / "drafts").mkdir()
    (repo / "drafts" / "new.md").write_text("untracked, but in the working tree\n")
    result = run(
        repo, "init", "--harness", "SKILL.md", "--harness", "promts/*.md", "--harness", "drafts/*.md"
    )
    assert result.exit_code == 0, result.output
    assert (
        result.stderr == "harnessgit: warning: --harness 'promts/*.md' matches no file in the working tree\n"
    )
    assert 'paths = ["SKILL.md", "promts/*.md", "drafts/*.md"]' in (repo / "harnessgit.toml").read_text()
    quiet = make_repo(config=None)  # type: ignore[operator]
    assert run(quiet, "-q", "init", "--harness", "nothing/**").stderr == ""
    after = make_repo(config=None)  # type: ignore[operator]
    silenced = run(after, "init", "-q", "--harness", "nothing/**")  # as docs/cli.md says
    assert silenced.exit_code == 0 and silenced.stderr == "", silenced.output


def test_init_proposes_the_evaluator_files_its_command_names(make_repo: object) -> None:
    repo = make_repo(config=None)  # type: ignore[operator]
    (repo / "grader").mkdir()
    (repo / "grader" / "rubric.py").write_text("")
    (repo / "eval[v2].py").write_text("")
    command = "python3 ./eval[v2].py --rubric grader/ --out /tmp/x missing.py"
    result = run(repo, "init", "--evaluator", command)
    assert result.exit_code == 0, result.output
    text = (repo / "harnessgit.toml").read_text()
    assert 'files = ["eval[[]v2].py", "grader/**"]' in text
    assert parse_config(text.encode()).evaluator.files == ["eval[[]v2].py", "grader/**"]
    assert "add whatever else the evaluator reads" in result.stdout
    plain = make_repo(config=None)  # type: ignore[operator]
    assert run(plain, "init", "--evaluator", "make eval").exit_code == 0
    assert '# files = ["eval.py"]' in (plain / "harnessgit.toml").read_text()


def test_init_dry_run_writes_nothing_and_says_what_it_leaves_out(make_repo: Callable[..., Path]) -> None:
    files: dict[str, str | bytes] = {f"leaked/vendor-{n}.md": f"You are assistant {n}.\n" for n in range(25)}
    repo = make_repo({"CLAUDE.md": "# Notes for agents\n", **files}, config=None)
    before = git(repo, "status", "--porcelain") + git(repo, "config", "--local", "--list")
    result = run(repo, "init", "--dry-run")
    assert result.exit_code == 0, result.output
    assert git(repo, "status", "--porcelain") + git(repo, "config", "--local", "--list") == before
    assert not (repo / "harnessgit.toml").exists()
    assert "would write" in result.output and "(nothing written)" in result.output
    assert "  **/CLAUDE.md  1\n" in result.output
    assert "largest folders of prose no glob matches" in result.output
    assert "  leaked/   25 files\n  prompts/  1 file\n" in result.output
    assert "25 prose files under leaked/ match no [harness] paths glob" in result.output
    assert 'paths = ["SKILL.md", "**/CLAUDE.md"]' in result.output
    # Written for real, the same warning goes to stderr.
    written = run(repo, "init")
    assert written.exit_code == 0 and "25 prose files under leaked/" in written.stderr
