"""What every command shares: help texts, lazy command loading, exit codes, -C, and the
entry points."""

from __future__ import annotations

import importlib
import json
import keyword
import os
import pkgutil
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

import harnessgit.cli
from harnessgit.cli import cli, commands
from harnessgit.cli._base import COMMAND_MODULES, State
from tests.cli.runner import run
from tests.conftest import CONFIG, ended, git, kill, snapshot, write
from tests.evaluation.conftest import SPLITS


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


def test_each_command_module_is_named_as_the_command() -> None:
    # A newcomer looks for `harnessgit X` in cli/X.py (issue 26): a hyphen is an
    # underscore there, and a Python keyword takes one at the end (cli/import_.py).
    for name, module in COMMAND_MODULES.items():
        expected = name.replace("-", "_")
        assert module == (f"{expected}_" if keyword.iskeyword(expected) else expected), name


def test_check_loads_no_other_command_module() -> None:
    code = (
        "import sys; from harnessgit.cli import main; main(['check', '--help']); "
        "print(sorted(m for m in sys.modules if m.startswith('harnessgit.cli.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "['harnessgit.cli._base', 'harnessgit.cli.check']"


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


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["chekc"], "no such command 'chekc'; did you mean 'check'? (try 'harnessgit -h')"),
        (["bisetc"], "did you mean 'bisect'?"),  # a command not loaded yet is suggested too
        (["log", "-n", "abc"], "'abc' is not a valid integer range (try 'harnessgit log -h')"),
        (["log", "--limt", "3"], "no such option '--limt'. Did you mean '--limit'?"),
        (["--bogus", "log"], "no such option '--bogus' (try 'harnessgit -h')"),
    ],
)
def test_a_usage_error_is_one_line_with_a_suggestion(repo: Path, args: list[str], said: str) -> None:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], obj=State(), prog_name="harnessgit")
    assert result.exit_code == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harnessgit: usage error: ") and said in lines[0], lines


def test_debug_shows_a_traceback(repo: Path) -> None:
    result = CliRunner().invoke(cli, ["-C", str(repo), "--debug", "show", "nope"], obj=State())
    assert result.exit_code == 3 and "Traceback" in result.stderr


def _env_with_venv_path() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    return env


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
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


def test_warnings_reach_the_stderr_of_each_command_in_one_process(repo: Path) -> None:
    # CI found it: the first command's handler kept the first CliRunner's stderr, so a
    # later command's warnings went into a closed buffer and its stderr was empty.
    import logging

    out = CliRunner().invoke(cli, ["-C", str(repo), "status"], catch_exceptions=False)
    assert out.exit_code == 0, out.output  # the first command sets up the handler
    runner = CliRunner()
    with runner.isolation() as (_, _, err):
        logging.getLogger("harnessgit").warning("seen %s", "here")
        assert err.getvalue() == b"harnessgit: warning: seen here\n"


def _slow_evaluator(started: Path, flag: Path) -> str:
    """An evaluator that records its pid in ``started`` and, while ``flag`` exists,
    sleeps 30 s before it answers."""
    return (
        "import json, os, sys, time\n"
        f"open(os.path.join({str(started)!r}, str(os.getpid())), 'w').close()\n"
        f"if os.path.exists({str(flag)!r}):\n"
        "    time.sleep(30)\n"
        "for instance in sys.stdin.read().split():\n"
        "    print(json.dumps({'instance': instance, 'score': 1.0}))\n"
    )


def _eval_until_started(repo: Path, tmpdir: Path, started: Path, count: int) -> subprocess.Popen[bytes]:
    """`harnessgit eval` as a real process with its own TMPDIR, once ``count``
    evaluators have started."""
    env = {**_env_with_venv_path(), "TMPDIR": str(tmpdir)}
    argv = [sys.executable, "-m", "harnessgit", "-q", "eval", "main", "--instances", "alpha-10,alpha-11"]
    proc = subprocess.Popen(argv, cwd=repo, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 30
    while len(list(started.iterdir())) < count:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.02)
    return proc


def _signal_repo(make_repo: Callable[..., Path], tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    started, tmpdir, flag = tmp_path / "started", tmp_path / "tmp", tmp_path / "slow"
    for path in (started, tmpdir):
        path.mkdir()
    flag.touch()
    config = CONFIG + "batch_size = 1\njobs = 2\ntimeout = 60\n"
    files = {"eval.py": _slow_evaluator(started, flag), "splits.json": json.dumps(SPLITS)}
    return make_repo(files, config=config), started, tmpdir, flag


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="checks processes in /proc")
@pytest.mark.parametrize(
    ("signum", "code", "word"),
    [(signal.SIGTERM, 143, "terminated"), (signal.SIGINT, 130, "interrupted")],
    ids=["SIGTERM", "SIGINT"],
)
def test_a_signal_ends_the_evaluators_and_removes_the_temporary_directories(
    make_repo: Callable[..., Path], tmp_path: Path, signum: int, code: int, word: str
) -> None:
    # Issue 15, defect 13: SIGTERM acted as SIGKILL: 3 temporary directories left per
    # run, and the evaluators ran on, orphaned.
    repo, started, tmpdir, _flag = _signal_repo(make_repo, tmp_path)
    before = snapshot(repo)
    proc = _eval_until_started(repo, tmpdir, started, count=2)
    proc.send_signal(signum)
    _out, err = proc.communicate(timeout=30)
    assert proc.returncode == code and err.decode().splitlines() == [f"harnessgit: {word}"]
    assert sorted(path.name for path in tmpdir.iterdir()) == []
    assert all(ended(int(path.name)) for path in started.iterdir())
    assert snapshot(repo) == before


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="checks processes in /proc")
def test_the_next_eval_sweeps_what_a_sigkill_left(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    # SIGKILL cannot be handled: the next evaluation removes the temporary directories
    # and kills the evaluators of a harnessgit that is gone.
    repo, started, tmpdir, flag = _signal_repo(make_repo, tmp_path)
    proc = _eval_until_started(repo, tmpdir, started, count=2)
    proc.kill()
    proc.communicate(timeout=30)
    orphans = [int(path.name) for path in started.iterdir()]
    try:
        left = sorted(path.name.rsplit("-", 1)[0] for path in tmpdir.iterdir())
        assert left == ["harnessgit-eval", "harnessgit-eval", "harnessgit-tree"]
        assert not any(ended(pid, within=0) for pid in orphans)  # still running
        flag.unlink()
        env = {**_env_with_venv_path(), "TMPDIR": str(tmpdir)}
        out = subprocess.run(
            [sys.executable, "-m", "harnessgit", "eval", "main", "--instances", "alpha-12"],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
        )
        assert out.returncode == 0, out.stderr
        # Killed: 2, unless another harnessgit of this user (a parallel test run, a
        # benchmark) swept the orphans first: any eval ends those of a harnessgit that is gone.
        assert re.search(r"temporary directories removed: 3, processes killed: [0-2]\b", out.stderr)
        assert list(tmpdir.iterdir()) == []
        assert all(ended(pid) for pid in orphans)
    finally:
        for pid in orphans:
            kill(pid)


def test_an_error_message_never_prints_a_secret(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # The last net: whatever a message quotes (a name the user typed, a path, a program's
    # output) passes the configured scrubber before it is printed.
    repo = make_repo(config=CONFIG + '\n[scrub]\nenv = ["CORP_CRED"]\n')
    monkeypatch.setenv("CORP_CRED", "hunter2-corp-credential")
    out = run(repo, "show", "hunter2-corp-credential")
    assert out.exit_code == 3 and "hunter2" not in out.stderr and "[REDACTED]" in out.stderr
    # Before any configuration is read: the default secret variables.
    monkeypatch.setenv("ACME_API_KEY", "acme-key-0123456789")
    out = run(repo, "-C", str(tmp_path / "acme-key-0123456789"), "log")
    assert out.exit_code == 3 and "acme-key" not in out.stderr, out.stderr
