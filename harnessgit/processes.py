"""Child processes that run the user's programs: the evaluator and a proposer command.

Each is started in a process group of its own (``start_new_session=True``), so that
ending it ends everything it started too: a timed-out evaluator's agent, a shell
pipeline inside a proposer.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path


def start_group(
    argv: list[str], cwd: Path | None, env: dict[str, str] | None = None
) -> subprocess.Popen[bytes]:
    """Start ``argv`` with three pipes, leading a process group of its own; OSError when
    it cannot start (the caller says which program that was)."""
    return subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Kill a child and everything it started (it leads its own process group)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:  # pragma: no cover - no process groups
            proc.kill()
