"""Running the CLI in-process for the tests of tests/cli/, as a user's shell would."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner, Result

from harnessgit.cli import cli
from harnessgit.cli._base import State


def run(repo: Path, *args: str, input: str | None = None) -> Result:
    """`harnessgit -C REPO ARGS...`, exceptions not swallowed."""
    return CliRunner(catch_exceptions=False).invoke(cli, ["-C", str(repo), *args], input=input, obj=State())


def one_error_line(result: Result, code: int = 3) -> str:
    """The one line a failing command prints, after checking its exit code."""
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("harnessgit: error: "), result.stderr
    return lines[0]
