"""One evaluator process over one batch: its output is checked, its whole process group ends."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.batch import OutputProblem, parse_output
from harnessgit.evaluation.eval import evaluate
from harnessgit.store import Store
from tests.conftest import CONFIG, snapshot

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.
from tests.evaluation.conftest import SPLITS

BAD_OUTPUTS = {
    "not json": ("print('hello')", "line 1 is not JSON (Expecting value at column 1): 'hello'"),
    "nan": ('print(\'{"instance": "alpha-10", "score": NaN}\')', "NaN"),
    "infinity": ('print(\'{"instance": "alpha-10", "score": Infinity}\')', "Infinity"),
    "out of range": ("print(json.dumps({'instance': 'alpha-10', 'score': 1.5}))", "outside [0, 1]"),
    "bool score": ("print(json.dumps({'instance': 'alpha-10', 'score': True}))", "must be a number"),
    "string score": ("print(json.dumps({'instance': 'alpha-10', 'score': '1'}))", "must be a number"),
    "missing": (
        "print(json.dumps({'instance': 'alpha-10', 'score': 1}))",
        "no result for instance 'alpha-11'",
    ),
    "duplicate": (
        "[print(json.dumps({'instance': i, 'score': 1})) for i in ['alpha-10', 'alpha-10', 'alpha-11']]",
        "reported twice",
    ),
    "unrequested": ("print(json.dumps({'instance': 'zeta-1', 'score': 1}))", "'zeta-1' was not requested"),
    "wrong types": ("print(json.dumps({'instance': 5, 'score': 1}))", "'instance' must be"),
    "feedback type": ("print(json.dumps({'instance': 'alpha-10', 'score': 1, 'feedback': 3}))", "'feedback'"),
    "too long": ("print('x' * 3000)", "longer than"),
    "non utf8": ("sys.stdout.buffer.write(b'\\xff\\xfe\\n')", "not UTF-8"),
    "empty": ("pass", "printed no results"),
    "exit status": ("sys.stderr.write('boom: the grader crashed\\n'); sys.exit(4)", "exited with status 4"),
    "crash halfway": (
        "print(json.dumps({'instance': 'alpha-10', 'score': 1})); sys.stdout.flush(); "
        "sys.stderr.write('Traceback: KeyError\\n'); raise SystemExit(1)",
        "exited with status 1",
    ),
    "hang": ("import time; time.sleep(60)", "timed out"),
}


@pytest.mark.parametrize("case", sorted(BAD_OUTPUTS))
def test_bad_evaluator_output_records_nothing(make_repo: Callable[..., Path], case: str) -> None:
    body, message = BAD_OUTPUTS[case]
    script = "import json, sys\nids = sys.stdin.read().split()\n" + body + "\n"
    config = CONFIG + "timeout = 1.5\n"
    if case == "too long":
        config += "max_line_bytes = 2048\n"
    repo = make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=config)
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(HarnessgitError, match=re.escape(message)) as info:
        evaluate(store, load_config(repo), "main", instances=["alpha-10", "alpha-11"])
    assert "\n" not in str(info.value)
    if case in ("exit status", "crash halfway"):
        assert "last stderr" in str(info.value)
    assert snapshot(repo) == before


def test_a_hang_kills_the_whole_process_group(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(120)\n"
    )
    repo = make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "timeout = 1\n")
    with Store.discover(repo) as store, pytest.raises(HarnessgitError, match="timed out"):
        evaluate(store, load_config(repo), "main", instances=["alpha-10"])
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(child, 0)
        except ProcessLookupError:
            break
        _reap(child)
        time.sleep(0.05)
    else:
        os.kill(child, signal.SIGKILL)
        pytest.fail("the evaluator's child process outlived the timeout")


def _reap(pid: int) -> None:
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


@pytest.mark.parametrize(
    ("line", "shown"),
    [
        (
            b"Traceback (most recent call last):",
            "line 2 is not JSON (Expecting value at column 1): 'Traceback (most recent call last):'",
        ),
        (
            b'{"instance": "a", "score": NaN}',
            """line 2 is not JSON (NaN is not valid JSON): """
            """'{"instance": "a", "score": NaN}'""",
        ),
        (b'["a", 1]', """line 2 is not a JSON object: '["a", 1]'"""),
        # Control characters are escaped: the error stays one line that a terminal shows as is.
        (
            b"\x1b[31mFAILED\x1b[0m\tgrader\r",
            r"line 2 is not JSON (Expecting value at column 1): "
            r"'\x1b[31mFAILED\x1b[0m\tgrader\r'",
        ),
        (b"\xff\xfeok", r"line 2 is not UTF-8: b'\xff\xfeok'"),
    ],
    ids=["text", "nan", "list", "control characters", "bytes"],
)
def test_a_line_that_is_not_a_result_is_shown(line: bytes, shown: str) -> None:
    with pytest.raises(OutputProblem) as info:
        parse_output([b'{"instance": "a", "score": 1}', line], ["a"])
    assert str(info.value) == "output " + shown


def test_a_long_offending_line_shows_its_start() -> None:
    with pytest.raises(OutputProblem) as info:
        parse_output([b"Loading model weights " + b"." * 5000], ["a"])
    message = str(info.value)
    assert message.endswith(": 'Loading model weights " + "." * 58 + "'...")  # 80 characters of it


@pytest.mark.slow
def test_a_timeout_does_not_wait_for_a_process_that_left_the_group(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # A daemon in a session of its own holds the evaluator's stdout: the group kill cannot
    # reach it, and harnessgit used to read that stdout until the daemon ended.
    pidfile, ended = tmp_path / "daemon.pid", tmp_path / "daemon.ended"
    daemon = f"import time; time.sleep(30); open({str(ended)!r}, 'w').close()"
    script = (
        "import subprocess, sys, time\n"
        f"daemon = subprocess.Popen([sys.executable, '-c', {daemon!r}], start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(daemon.pid))\n"
        "time.sleep(60)\n"
    )
    repo = make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "timeout = 1\n")
    try:
        with Store.discover(repo) as store, pytest.raises(HarnessgitError, match="timed out after 1 s"):
            evaluate(store, load_config(repo), "main", instances=["alpha-10"])
        assert not ended.exists()  # the evaluation ended before the daemon did
    finally:
        with contextlib.suppress(ProcessLookupError, FileNotFoundError):
            os.kill(int(pidfile.read_text()), signal.SIGKILL)
