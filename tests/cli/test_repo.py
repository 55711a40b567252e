from __future__ import annotations

import importlib
import json
import os
import pkgutil
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result

import harnessgit.cli
from harnessgit.cli import cli, commands
from harnessgit.cli._base import COMMAND_MODULES, State
from tests.conftest import git, snapshot, write


def run(repo: Path, *args: str, input: str | None = None) -> Result:
    return CliRunner(catch_exceptions=False).invoke(cli, ["-C", str(repo), *args], input=input, obj=State())


def test_every_command_and_option_has_help() -> None:
    def walk(command: click.Command, path: str) -> None:
        assert command.help or command.short_help, f"{path} has no help text"
        for param in command.params:
            if isinstance(param, click.Option):
                assert param.help, f"{path} {param.opts} has no help text"
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None, f"{path} {name} does not load"
                walk(sub, f"{path} {name}")

    walk(cli, "harnessgit")
    assert {"init", "propose", "show", "log", "demo"} <= set(commands())


def test_each_command_loads_from_the_module_that_defines_it() -> None:
    # Import every module of the package: a command its module defines but the table
    # lacks would be in cli.commands and not in the table.
    for module in pkgutil.iter_modules(harnessgit.cli.__path__):
        importlib.import_module(f"harnessgit.cli.{module.name}")
    assert sorted(cli.commands) == sorted(commands()) == sorted(COMMAND_MODULES)
    for name, command in commands().items():
        assert command.callback is not None
        assert command.callback.__module__ == f"harnessgit.cli.{COMMAND_MODULES[name]}", name


def test_check_loads_no_other_command_module() -> None:
    code = (
        "import sys; from harnessgit.cli import main; main(['check', '--help']); "
        "print(sorted(m for m in sys.modules if m.startswith('harnessgit.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "['harnessgit.cli._base', 'harnessgit.cli.check']"


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


def test_propose_show_log(repo: Path) -> None:
    write(repo, "SKILL.md", (repo / "SKILL.md").read_text() + "3. Check the answer.\n")
    write(repo, "ev.jsonl", '{"kind": "critique", "text": "answers were unchecked"}\n')
    result = run(repo, "propose", "-m", "Add a check step", "--evidence", "ev.jsonl")
    assert result.exit_code == 0, result.output
    candidate = result.stdout.strip()
    assert git(repo, "rev-parse", "--verify", f"harnessgit/cand/{candidate}")

    shown = run(repo, "show", candidate)
    assert shown.exit_code == 0
    assert f"candidate {candidate}, live" in shown.stdout and "+3. Check the answer." in shown.stdout
    assert "critique: 1" in shown.stdout

    data = json.loads(run(repo, "show", candidate, "--json").stdout)
    assert data["candidate"] == candidate and data["state"] == "live"
    assert data["files"] == [{"path": "SKILL.md", "status": "M", "added": 1, "removed": 0, "old_path": None}]
    assert data["proposal"]["source"] == "worktree" and data["evidence"][0]["items"] == 1
    assert data["rationale"] == "Add a check step"

    log = json.loads(run(repo, "log", "--json").stdout)
    assert log["base"] == "main" and log["test_peeks"] == []
    assert [e["subject"] for e in log["entries"]] == ["Initial harness"]
    assert log["entries"][0]["kind"] == "direct"


def test_propose_from_stdin_patch_and_files(repo: Path) -> None:
    patch = (
        "--- a/prompts/system.md\n+++ b/prompts/system.md\n@@ -1 +1 @@\n"
        "-You are a careful assistant.\n+You are terse.\n"
    )
    result = run(repo, "propose", "--patch", "-", "--json", input=patch)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["components"] == ["prompts/system.md"]
    write(repo, "new.md", "file content\n")
    result = run(repo, "propose", "--file", "prompts/other.md=new.md", "--parent", data["candidate"])
    assert result.exit_code == 0, result.output
    assert (
        git(repo, "show", f"harnessgit/cand/{result.stdout.strip()}:prompts/system.md") == "You are terse.\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "no-such-rev"], "unknown revision"),
        (["show", "--", "--output=/tmp/x"], "looks like an option"),
        (["show", "main..HEAD"], "not a range"),
        (["show", "a b"], "space"),
        (["show", "@{"], "unknown revision"),
        (["show", "x\x01y"], "control character"),
        (["log", "--base", "no-such-branch"], "does not exist"),
        (["log", "--base", "a..b"], "invalid base branch"),
        (["propose", "--parent", "--output=/tmp/x"], "looks like an option"),
        (["propose", "--file", "eval.py=eval.py"], "not a harness file"),
        (["propose", "--file", "SKILL.md=missing.md"], "cannot read file"),
        (["propose", "--evidence", "bad.jsonl", "--file", "SKILL.md=eval.py"], "line 2 is not JSON"),
        (["propose", "--patch", "garbage.patch"], "does not apply"),
        (["propose"], "no uncommitted changes"),
    ],
)
def test_bad_input_exits_3_and_changes_nothing(repo: Path, args: list[str], message: str) -> None:
    write(repo, "bad.jsonl", '{"ok": 1}\n{not json\n')
    write(repo, "garbage.patch", "not a diff\n")
    before = snapshot(repo)
    result = run(repo, *args)
    assert result.exit_code == 3, result.output
    assert message in result.stderr
    assert result.stderr.count("\n") == 1  # one line, no traceback
    assert snapshot(repo) == before
    assert not Path("/tmp/x").exists()


def test_invalid_config_is_one_clear_error(repo: Path) -> None:
    write(repo, "harnessgit.toml", "[gate]\nalpha = 'high'\n")
    write(repo, "SKILL.md", "edited\n")
    before = snapshot(repo)
    result = run(repo, "propose")
    assert result.exit_code == 3
    assert result.stderr.startswith("harnessgit: error: harnessgit.toml: gate.alpha:")
    assert snapshot(repo) == before


def test_outside_a_repository_and_bare(tmp_path: Path) -> None:
    result = run(tmp_path, "log")
    assert result.exit_code == 3 and "not a git repository" in result.stderr
    git(tmp_path, "init", "-q", "--bare", "bare.git")
    result = run(tmp_path / "bare.git", "log")
    assert result.exit_code == 3 and "bare repository" in result.stderr


def test_usage_error_exits_2(repo: Path) -> None:
    result = run(repo, "log", "--no-such-option")
    assert result.exit_code == 2


def test_debug_shows_a_traceback(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(repo), "--debug", "show", "nope"], obj=State())
    assert result.exit_code == 3 and "Traceback" in result.stderr


def _env_with_venv_path() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


def test_real_subprocess_entry_points(repo: Path) -> None:
    env = _env_with_venv_path()
    out = subprocess.run(
        [sys.executable, "-m", "harnessgit", "--help"], capture_output=True, text=True, env=env
    )
    assert out.returncode == 0 and "propose" in out.stdout
    out = subprocess.run(
        ["git", "harnessgit", "log", "--json"], cwd=repo, capture_output=True, text=True, env=env
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["entries"][0]["subject"] == "Initial harness"
    out = subprocess.run(
        [sys.executable, "-m", "harnessgit", "show", "nope"],
        cwd=repo,
        capture_output=True,
        text=True,
        env=env,
    )
    assert out.returncode == 3 and out.stderr == "harnessgit: error: unknown revision 'nope'\n"


def test_every_command_is_documented() -> None:
    text = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    missing = [name for name in commands() if f"\n## {name}\n" not in text]
    assert not missing, f"docs/cli.md lacks a section for: {missing}"
