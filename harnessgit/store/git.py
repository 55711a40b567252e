"""Running git: one place that builds the command line and the environment.

User-supplied values never reach a shell: every call is an argv list, and callers
put ``--end-of-options`` or ``--`` before anything a user typed.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from harnessgit.errors import GitFailed, HarnessgitError


@dataclass(frozen=True)
class Result:
    returncode: int
    stdout: bytes
    stderr: str


def git_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # Messages in English so that the few we recognise stay recognisable, and
    # never a password prompt from a command that was meant to be local.
    env.update(LC_ALL="C", LANGUAGE="", GIT_TERMINAL_PROMPT="0")
    if extra:
        env.update(extra)
    return env


def git_says(stderr: str) -> str:
    """git's own error line (its advice follows it, over several lines)."""
    for line in stderr.splitlines():
        if line.startswith(("fatal: ", "error: ")):
            return line.split(": ", 1)[1]
    return stderr.strip().splitlines()[-1] if stderr.strip() else "no message"


class Git:
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.env = git_environment()

    def run(
        self,
        args: list[str],
        *,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> Result:
        try:
            proc = subprocess.run(
                ["git", *args],
                cwd=self.cwd,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                env={**self.env, **env} if env else self.env,
            )
        except FileNotFoundError:
            raise HarnessgitError("git is not installed or not on PATH") from None
        result = Result(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))
        if check and proc.returncode != 0:
            raise GitFailed(args, proc.returncode, result.stderr)
        return result

    def out(self, args: list[str], *, input: bytes | None = None, check: bool = True) -> str:
        return self.run(args, input=input, check=check).stdout.decode("utf-8", "surrogateescape")
