"""harnessgit.toml as a hostile repository writes it (issue 28, defects 6 and 9): nesting
deep enough to break the TOML parser, sizes and counts of 2**63-1, option-shaped ref
names. Each is one line naming the problem, exit 3, in every command (the pre-commit
hook's `check --staged` included)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.config import parse_config
from harnessgit.errors import ConfigError
from harnessgit.evaluation.splits import ManifestError, parse_manifest
from tests.conftest import CONFIG, git

ROOT = Path(__file__).resolve().parents[2]
DEEP = b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n"
BIG = 2**63 - 1


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (DEEP, "harnessgit.toml nests arrays or tables too deeply to read"),
        (b"x = " + b"{a = " * 3000 + b"1" + b"}" * 3000 + b"\n", "nests arrays or tables too deeply"),
        (f"[evaluator]\nbatch_size = {BIG}".encode(), "evaluator.batch_size: must be at most 100000"),
        (f"[evaluator]\njobs = {BIG}".encode(), "evaluator.jobs: must be at most 1024"),
        (
            f"[evaluator]\nmax_output_bytes = {BIG}".encode(),
            "evaluator.max_output_bytes: must be at most 1073741824",
        ),
        (f"[evaluator]\nmax_line_bytes = {BIG}".encode(), "evaluator.max_line_bytes: must be at most"),
        (f"[evaluator]\nmax_stderr_bytes = {BIG}".encode(), "evaluator.max_stderr_bytes: must be at most"),
        (
            f'[proposer]\ncommand = ["x"]\nmax_output_bytes = {BIG}'.encode(),
            "proposer.max_output_bytes: must be at most",
        ),
        (b'[harness]\nbase = "-main"', "harness.base: '-main' is not a branch name: it looks like an option"),
        (b'[harness]\nbase = "main..x"', "harness.base: 'main..x' is not a branch name"),
        (b'[harness]\nbase = "ma in"', "harness.base: 'ma in' is not a branch name"),
        (b'[gate]\nremote = "--upload-pack=x"', "gate.remote: '--upload-pack=x' is not a remote name"),
        (
            b'[checks]\ngrowth_since = "label:-x"',
            "checks.growth_since: 'label:-x' does not name a label",
        ),
    ],
)
def test_a_hostile_value_is_one_line(text: bytes, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_the_bounds_admit_what_they_should() -> None:
    config = parse_config(
        b'[harness]\nbase = "release/v1.2"\n'
        b"[evaluator]\nbatch_size = 100000\njobs = 1024\nmax_output_bytes = 1073741824\n"
        b'[gate]\nremote = "origin"\n'
    )
    assert config.harness.base == "release/v1.2" and config.evaluator.jobs == 1024


@pytest.mark.parametrize(
    ("text", "check"),
    [
        (DEEP.decode() + CONFIG, True),
        # `check` reads [harness] and [checks] only (the hook's few milliseconds)
        (CONFIG.replace("env = ", f"max_output_bytes = {BIG}\nenv = "), False),
        (CONFIG.replace('base = "main"', 'base = "-main"'), True),
    ],
    ids=["deep", "unbounded", "option-shaped-base"],
)
def test_every_command_says_one_line_and_exits_3(
    make_repo: Callable[..., Path], text: str, check: bool
) -> None:
    repo = make_repo({"SKILL.md": "# Skill\n"})
    (repo / "harnessgit.toml").write_text(text)
    git(repo, "add", "-A")
    before = git(repo, "for-each-ref")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    commands = [["eval", "HEAD"], ["status"], ["log"]] + [["check", "--staged"]] * check
    for args in commands:
        done = subprocess.run(
            [sys.executable, "-m", "harnessgit", *args], cwd=repo, env=env, capture_output=True, text=True
        )
        assert done.returncode == 3, (args, done.returncode, done.stderr[-500:])
        assert len(done.stderr.strip().splitlines()) == 1, (args, done.stderr[-500:])
        assert "Traceback" not in done.stderr
    assert git(repo, "for-each-ref") == before


def test_a_deep_split_manifest_is_one_line() -> None:
    with pytest.raises(ManifestError) as info:
        parse_manifest(b"[" * 100_000 + b"]" * 100_000, "splits.json")
    assert str(info.value) == "splits.json nests arrays or objects too deeply to read"
