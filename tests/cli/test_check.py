"""`harnessgit check` through the CLI: exit codes, output, and bad input."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

from harnessgit.cli import cli, commands, main
from tests.conftest import git, write
from tests.harness_text import prompt

GOOD = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n\n1. Read the task.\n"


def run(repo: Path, *args: str) -> Result:
    return CliRunner().invoke(cli, ["-C", str(repo), "check", *args], catch_exceptions=False)


@pytest.fixture
def harness(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"prompts/long.md": prompt(8), "skills/demo/SKILL.md": GOOD})


def test_every_command_and_option_has_help() -> None:
    assert isinstance(cli, click.Group)
    for name, command in commands().items():
        assert command.help, f"{name} has no help"
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{name} {param.opts} has no help"


def test_clean_change_exits_0(harness: Path) -> None:
    write(harness, "skills/demo/SKILL.md", GOOD.replace("Read the task.", "Read the whole task."))
    result = run(harness)
    assert result.exit_code == 0, result.output
    assert "checked 1 harness file: no findings" in result.output


def test_bloated_skill_fails(harness: Path) -> None:
    write(harness, "skills/demo/SKILL.md", GOOD + "".join(f"{i}. Do step {i} now.\n" for i in range(600)))
    result = run(harness, "skills/demo/SKILL.md")
    assert result.exit_code == 1
    assert "skills/demo/SKILL.md:505: length: body is 603 lines, over the skill limit of 500" in result.output
    assert "hint: move detail into references/" in result.output


def test_collapsed_prompt_fails_with_the_sections_gone(harness: Path) -> None:
    write(harness, "prompts/long.md", "## Part 0\nAnswer.\n")
    result = run(harness)
    assert result.exit_code == 1
    assert "prompts/long.md: collapse: shrank to" in result.output
    assert "section gone: ## Part 3" in result.output


def test_warnings_only_exit_0(harness: Path) -> None:
    write(harness, "prompts/long.md", prompt(8) + prompt(5, seed=9).replace("## Part", "## More"))
    result = run(harness, "--json")
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["failed"] is False
    assert [(f["rule"], f["level"]) for f in report["findings"]] == [("growth", "warning")]


def test_json_report_shape(harness: Path) -> None:
    write(harness, "skills/demo/SKILL.md", "---\nname: other\ndescription: d\n---\n")
    report = json.loads(run(harness, "--json").output)
    [finding] = report["findings"]
    assert set(finding) == {
        "path",
        "rule",
        "level",
        "measure",
        "value",
        "limit",
        "message",
        "hint",
        "details",
        "line",
        "end_line",
        "state",
    }
    assert finding["limit"] == "folder name 'demo'" and finding["state"] == "new"
    assert report["files"][0]["kind"] == "skill" and report["tokens_exact"] is False


def test_errors_and_usage(harness: Path) -> None:
    bad_rev = CliRunner().invoke(cli, ["-C", str(harness), "check", "--against", "nope"])
    assert bad_rev.exit_code == 3 and "unknown revision 'nope'" in bad_rev.output
    assert "Traceback" not in bad_rev.output
    assert run(harness, "--staged", "--rev", "HEAD").exit_code == 2
    assert run(harness, "--rule", "nonsense").exit_code == 2
    outside = CliRunner().invoke(cli, ["-C", str(harness), "check", "/etc/hostname"])
    assert outside.exit_code == 3 and "is outside the repository" in outside.output
    write(harness, "harnessgit.toml", "[checks.kinds.skill]\nmax_tokenz = 3\n")
    config = CliRunner().invoke(cli, ["-C", str(harness), "check"])
    assert config.exit_code == 3
    assert "harnessgit.toml: checks.kinds.skill.max_tokenz: unknown key" in config.output


def test_binary_and_non_utf8_files(harness: Path) -> None:
    write(harness, "prompts/image.md", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    write(harness, "prompts/latin.md", "R\xe9ponds en fran\xe7ais.\n".encode("latin-1"))
    result = run(harness)
    assert result.exit_code == 1
    assert "prompts/image.md: format: is a binary file" in result.output
    assert "prompts/latin.md: format: is not UTF-8 text (invalid byte at offset 1)" in result.output


def test_huge_file_is_not_read(harness: Path) -> None:
    huge = harness / "prompts" / "huge.md"
    with open(huge, "wb") as handle:
        handle.truncate(100 * 1024 * 1024)  # sparse: 100 MB that cost no disk
    result = run(harness, "prompts/huge.md")
    assert result.exit_code == 1
    assert "prompts/huge.md: length: is 104,857,600 bytes, over [checks] max_file_bytes" in result.output


def test_malformed_frontmatter(harness: Path) -> None:
    write(harness, "skills/demo/SKILL.md", "---\nname: demo\ndescription: [unclosed\n---\n# Demo\n")
    result = run(harness)
    assert result.exit_code == 1
    assert "skills/demo/SKILL.md:4: format: frontmatter is not valid YAML" in result.output


def test_rev_checks_a_commit_against_its_parent(harness: Path) -> None:
    git(harness, "mv", "prompts/long.md", "prompts/moved.md")
    git(harness, "rm", "-q", "prompts/system.md")
    git(harness, "commit", "-qm", "move and delete")
    report = json.loads(run(harness, "--rev", "HEAD", "--json").output)
    assert {(f["path"], f["status"]) for f in report["files"]} == {
        ("prompts/moved.md", "renamed"),
        ("prompts/system.md", "deleted"),
    }
    assert report["findings"] == []


def test_a_file_that_did_not_exist_at_against(harness: Path) -> None:
    write(harness, "prompts/fresh.md", "A prompt added after the base.\n")
    git(harness, "add", "-A")
    git(harness, "commit", "-qm", "add")
    write(harness, "prompts/fresh.md", "A prompt added after the base, now ten times longer. " * 20)
    report = json.loads(run(harness, "--against", "HEAD~1", "--json").output)
    assert [(f["path"], f["status"]) for f in report["files"]] == [("prompts/fresh.md", "added")]
    assert report["findings"] == []  # no previous version: no growth to measure


def test_staged_mode_and_rule_filter(harness: Path) -> None:
    write(harness, "prompts/long.md", "## Part 0\n```\n")
    git(harness, "add", "-A")
    write(harness, "prompts/long.md", prompt(8))
    assert run(harness).exit_code == 0  # the working tree is unchanged
    staged = json.loads(run(harness, "--staged", "--json").output)
    assert sorted(f["rule"] for f in staged["findings"]) == ["collapse", "format"]
    only = json.loads(run(harness, "--staged", "--rule", "format", "--json").output)
    assert [f["rule"] for f in only["findings"]] == ["format"]


def test_outside_a_repository(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(tmp_path, "SKILL.md", GOOD.replace("name: demo", "name: Demo"))
    monkeypatch.chdir(tmp_path)
    assert main(["check", "SKILL.md"]) == 1
    assert main(["check"]) == 3  # nothing to compare without git


def test_python_m_harnessgit_check(harness: Path) -> None:
    write(harness, "prompts/long.md", "## Part 0\nAnswer.\n")
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(
        [sys.executable, "-m", "harnessgit", "check", "prompts/long.md"],
        cwd=harness,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "collapse" in proc.stdout and proc.stderr == ""


def test_file_names_that_are_not_utf8(harness: Path) -> None:
    name = os.fsencode(harness / "prompts") + b"/caf\xe9.md"
    with open(name, "wb") as handle:
        handle.write(b"```\nunclosed\n")
    result = run(harness)
    assert result.exit_code == 1
    assert "prompts/caf\ufffd.md:1: format: code fence ``` at line 1 is never closed" in result.output
    report = json.loads(run(harness, "--json").output)
    assert report["findings"][0]["path"] == "prompts/caf\ufffd.md"


def test_the_check_path_never_imports_gitpython(harness: Path) -> None:
    # GitPython costs ~120 ms to import: no longer a dependency, it must not come back here.
    write(harness, "prompts/long.md", "## Part 0\nAnswer.\n")
    code = (
        "import sys; from harnessgit.cli import main; code = main(['check']); "
        "print(code, sorted(m for m in sys.modules if m == 'git' or m.startswith(('git.', 'gitdb'))))"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=harness, capture_output=True, text=True, env=env, check=False
    )
    assert proc.stdout.strip().splitlines()[-1] == "1 []", proc.stdout + proc.stderr
