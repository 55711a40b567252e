"""Talking to a real program: input written and output read together, with caps and a
deadline, and whatever ends the talk ends the program and what it started."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from harnessgit.processes.pipes import Child, Limits, _Stderr, _Stdout, communicate
from tests.conftest import ended, kill

HAS_PROC = Path("/proc/self/environ").exists()


def python(code: str) -> Child:
    return Child([sys.executable, "-c", code], None, {"PATH": os.environ["PATH"]})


def test_input_and_output_larger_than_a_pipe_flow_both_ways() -> None:
    # 4 MiB each way: written while read, or both sides would block on full pipes.
    payload = bytes(range(256)) * (16 * 1024)
    child = python("import sys; sys.stdout.buffer.write(sys.stdin.buffer.read())")
    outcome = communicate(child, payload, Limits(timeout=30, max_stdout=len(payload)))
    assert outcome.end == "exited" and outcome.returncode == 0 and outcome.stdout == payload


def test_a_program_that_does_not_read_its_input_is_not_waited_for() -> None:
    child = python("import sys; sys.stderr.write('not reading\\n')")
    outcome = communicate(child, b"x" * (4 * 1024 * 1024), Limits(timeout=30, max_stdout=1024))
    assert outcome.end == "exited" and outcome.returncode == 0 and outcome.stderr_tail == ["not reading"]


def test_one_byte_past_the_cap_ends_it() -> None:
    child = python("import sys, time; sys.stdout.write('x' * 1025); sys.stdout.flush(); time.sleep(30)")
    outcome = communicate(child, b"", Limits(timeout=30, max_stdout=1024))
    assert outcome.end == "overflow" and outcome.problem == "printed more than 1.0 KiB on standard output"
    assert outcome.stdout == b"" and outcome.returncode is None
    assert child.proc.returncode == -signal.SIGKILL  # killed, not waited for


def test_exactly_the_cap_is_kept() -> None:
    outcome = communicate(python("print('x' * 1023)"), b"", Limits(timeout=30, max_stdout=1024))
    assert outcome.end == "exited" and outcome.stdout == b"x" * 1023 + b"\n"


@pytest.mark.skipif(not HAS_PROC, reason="finds escaped processes in /proc")
def test_an_interrupt_ends_the_program_and_what_left_its_group(tmp_path: Path) -> None:
    # A Ctrl-C or SIGTERM arrives as an exception in the loop (here: from the stderr sink).
    # The daemon writes its pid once it runs, and the program waits for that: a daemon
    # still inside exec has no readable environment yet (group.py says when it is missed).
    pidfile = tmp_path / "daemon.pid"
    daemon = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    child = python(
        "import os, subprocess, sys, time\n"
        f"subprocess.Popen([sys.executable, '-c', {daemon!r}], start_new_session=True)\n"
        f"while not os.path.exists({str(pidfile)!r}) or not os.path.getsize({str(pidfile)!r}):\n"
        "    time.sleep(0.01)\n"
        "sys.stderr.write('started\\n'); sys.stderr.flush(); time.sleep(30)\n"
    )

    def interrupt(line: str) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        communicate(child, b"", Limits(timeout=30, max_stdout=1024), on_stderr=interrupt)
    assert child.proc.returncode == -signal.SIGKILL
    assert child.proc.stdout is not None and child.proc.stdout.closed
    pid = int(pidfile.read_text())
    try:
        assert ended(pid)
    finally:
        kill(pid)


def test_stop_ends_the_talk_at_once() -> None:
    child = python("import time; time.sleep(30)")
    outcome = communicate(child, b"", Limits(timeout=30, max_stdout=1024), stopped=lambda: True)
    assert outcome.end == "stopped" and child.proc.returncode == -signal.SIGKILL


@pytest.mark.parametrize("sink", [True, False], ids=["shown", "not shown"])
@pytest.mark.parametrize("step", [1, 7, 64, 100_000])
def test_the_stderr_tail_does_not_depend_on_how_the_pipe_cut_it(step: int, sink: bool) -> None:
    # Past max_shown (or with no sink) only the lines that can reach the tail are split.
    data = b"".join(f"line {n}\n".encode() for n in range(300)) + b"last, unfinished"
    shown: list[str] = []
    stderr = _Stderr(line_bytes=100, max_shown=1000, sink=shown.append if sink else None)
    for start in range(0, len(data), step):
        stderr.feed(data[start : start + step])
    stderr.flush()
    assert list(stderr.tail) == ["line 296", "line 297", "line 298", "line 299", "last, unfinished"]
    if sink:  # 10 lines of 7 bytes, 90 of 8, 23 of 9: 997 bytes
        assert shown[:2] == ["line 0", "line 1"] and shown[-2] == "line 122"
        assert shown[-1] == "[standard error beyond 1000 B is not shown]"
    else:
        assert not shown


def test_a_long_stderr_line_is_cut_and_says_how_much() -> None:
    stderr = _Stderr(line_bytes=10, max_shown=1000, sink=None)
    for chunk in (b"0123456789abc", b"def\nshort\n"):
        stderr.feed(chunk)
    assert list(stderr.tail) == ["0123456789... [6 B cut]", "short"]


@pytest.mark.parametrize("step", [1, 5, 1000])
def test_a_line_past_max_line_is_found_across_chunks(step: int) -> None:
    data = b"short\n" * 3 + b"y" * 40 + b"\nnever read\n"
    stdout = _Stdout(cap=10_000, max_line=32)
    stopped_at = next(
        (start for start in range(0, len(data), step) if stdout.feed(data[start : start + step])), None
    )
    assert stopped_at is not None and stdout.problem == "output line 4 is longer than 32 bytes"
