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
from harnessgit.evaluation.eval import EvalRequest, Execution, evaluate
from harnessgit.store import Store
from tests.conftest import CONFIG, ended, kill, snapshot

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
    "objective scores": (
        "print(json.dumps({'instance': 'alpha-10', 'score': 1, 'objective_scores': {'cost': 'high'}}))",
        "'objective_scores' must be an object of finite numbers",
    ),
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


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
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
        evaluate(store, load_config(repo), "main", EvalRequest(instances=["alpha-10", "alpha-11"]))
    assert "\n" not in str(info.value)
    if case in ("exit status", "crash halfway"):
        assert "last stderr" in str(info.value)
    assert snapshot(repo) == before


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
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
        evaluate(store, load_config(repo), "main", EvalRequest(instances=["alpha-10"]))
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


# An evaluator's answer: a perfect score for every instance it is given.
ANSWER = (
    "for instance in sys.stdin.read().split():\n    print(json.dumps({'instance': instance, 'score': 1.0}))\n"
)


def _daemon(pidfile: Path, woke: Path) -> str:
    """Lines of an evaluator that starts a daemon in a session of its own, holding the
    evaluator's stdout and stderr for 30 s (then it writes ``woke``)."""
    daemon = f"import time; time.sleep(30); open({str(woke)!r}, 'w').close()"
    return (
        "import json, subprocess, sys, time\n"
        f"daemon = subprocess.Popen([sys.executable, '-c', {daemon!r}], start_new_session=True)\n"
        f"open({str(pidfile)!r}, 'w').write(str(daemon.pid))\n"
    )


@pytest.mark.slow
def test_a_timeout_does_not_wait_for_a_process_that_left_the_group(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # A daemon in a session of its own holds the evaluator's stdout: the group kill cannot
    # reach it, and harnessgit used to read that stdout until the daemon ended.
    pidfile, woke = tmp_path / "daemon.pid", tmp_path / "daemon.woke"
    script = _daemon(pidfile, woke) + "time.sleep(60)\n"
    repo = make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "timeout = 1\n")
    try:
        with Store.discover(repo) as store, pytest.raises(HarnessgitError, match="timed out after 1 s"):
            evaluate(store, load_config(repo), "main", EvalRequest(instances=["alpha-10"]))
        assert not woke.exists()  # the evaluation ended before the daemon did
        if Path("/proc/self/environ").exists():  # and then killed it (found by HARNESSGIT_RUN)
            assert ended(int(pidfile.read_text()))
    finally:
        kill(int(pidfile.read_text()))


@pytest.mark.skipif(not Path("/proc/self/environ").exists(), reason="finds escaped processes in /proc")
def test_an_evaluator_that_exited_is_not_held_by_a_process_that_left_its_group(
    make_repo: Callable[..., Path], tmp_path: Path
) -> None:
    # Issue 15, defect 5: the daemon holds stdout open; harnessgit used to wait for it
    # until the timeout and then fail a batch whose evaluator had printed every result.
    pidfile, woke = tmp_path / "daemon.pid", tmp_path / "daemon.woke"
    script = _daemon(pidfile, woke) + ANSWER
    repo = make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "timeout = 8\n")
    try:
        with Store.discover(repo) as store:
            result = evaluate(
                store, load_config(repo), "main", EvalRequest(instances=["alpha-10", "alpha-11"])
            )
        assert result.evaluated == 2 and result.summary.mean == 1.0
        assert ended(int(pidfile.read_text()))  # the daemon was found and killed
        assert not woke.exists()
    finally:
        kill(int(pidfile.read_text()))


def test_output_past_max_output_bytes_fails_the_batch_and_records_nothing(
    make_repo: Callable[..., Path],
) -> None:
    # Issue 15, defect 6: every byte was kept, and recorded when it parsed (200 MiB of
    # trajectories took 985 MB of memory: docs/benchmarks.md). These are valid, only too big.
    script = (
        "import json, sys, time\n"
        "for instance in sys.stdin.read().split():\n"
        "    print(json.dumps({'instance': instance, 'score': 1.0, 'trajectory': 'x' * 40000}))\n"
        "sys.stdout.flush()\n"
        "time.sleep(30)\n"
    )
    config = CONFIG + "timeout = 20\nmax_output_bytes = 65536\n"
    repo = make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=config)
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(HarnessgitError) as info:
        evaluate(store, load_config(repo), "main", EvalRequest(instances=["alpha-10", "alpha-11"]))
    assert str(info.value) == (
        "evaluator: printed more than 64.0 KiB on standard output (max_output_bytes); it was killed"
    )
    assert snapshot(repo) == before


def _stderr_shown(repo: Path, shown: list[str] | None = None) -> list[str]:
    """The lines of the evaluator's stderr that `eval` of alpha-10 shows (into ``shown``)."""
    shown = [] if shown is None else shown
    with Store.discover(repo) as store:
        evaluate(
            store,
            load_config(repo),
            "main",
            EvalRequest(instances=["alpha-10"]),
            execution=Execution(on_stderr=shown.append),
        )
    return shown


def test_standard_error_is_shown_line_by_line_with_long_lines_cut(make_repo: Callable[..., Path]) -> None:
    # Issue 15, defect 6: a 300 MB stderr line was kept whole and echoed to the terminal.
    script = (
        "import json, sys\n"
        "sys.stderr.write('loading ' + 'w' * (3 * 1024 * 1024) + '\\n')\n"
        "sys.stderr.write('done\\n')\n" + ANSWER
    )
    shown = _stderr_shown(make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}))
    assert len(shown) == 2 and shown[1] == "done"
    assert shown[0] == "loading " + "w" * 1992 + "... [3.0 MiB cut]"


def test_a_secret_cut_short_with_a_long_stderr_line_is_still_redacted(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The cap cuts a line at 2,000 bytes, possibly inside a secret: the start that is
    # left must not reach the terminal (the scrubber knows cuts by their "...").
    secret = "live-c0ffee-d00d-feed-4242"
    monkeypatch.setenv("MY_SERVICE_API_KEY", secret)
    script = f"import json, sys\nsys.stderr.write('x' * 1985 + {secret!r} + 'y' * 5109 + '\\n')\n" + ANSWER
    shown = _stderr_shown(make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}))
    assert shown == ["x" * 1985 + "[REDACTED]... [5.0 KiB cut]"]


def test_standard_error_past_max_stderr_bytes_is_read_not_shown(make_repo: Callable[..., Path]) -> None:
    script = (
        "import sys\n"
        "for number in range(2000):\n"
        "    sys.stderr.write(f'progress {number:04d} ' + '.' * 35 + '\\n')\n"
        "sys.exit(2)\n"
    )
    config = CONFIG + "max_stderr_bytes = 10000\n"
    repo = make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=config)
    shown: list[str] = []
    with pytest.raises(HarnessgitError) as info:
        _stderr_shown(repo, shown)
    assert len(shown) == 10000 // 50 + 1 and shown[-1] == "[standard error beyond 9.8 KiB is not shown]"
    # The error still quotes the last lines, from past the cap.
    assert str(info.value).startswith("evaluator: exited with status 2; last stderr: progress 1995 ")
    assert str(info.value).endswith("progress 1999 " + "." * 35)


def test_the_evaluator_gets_an_allow_listed_environment(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 15, "Secrets": harnessgit's whole environment went to the evaluator, and from
    # its trajectories into 32 evidence blobs.
    monkeypatch.setenv("LEAKY_TOKEN", "tok-live-123")
    monkeypatch.setenv("WANTED_KEY", "sk-wanted")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    seen = tmp_path / "env.json"
    script = f"import json, os, sys\njson.dump(dict(os.environ), open({str(seen)!r}, 'w'))\n" + ANSWER
    config = CONFIG.replace('env = ["CALLS_FILE"]', 'env = ["WANTED_KEY"]')
    repo = make_repo({"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=config)
    with Store.discover(repo) as store:
        evaluate(store, load_config(repo), "main", EvalRequest(instances=["alpha-10"]))
    env = json.loads(seen.read_text())
    assert "LEAKY_TOKEN" not in env and "GIT_AUTHOR_NAME" not in env
    assert env["WANTED_KEY"] == "sk-wanted"  # listed in [evaluator] env
    # (PATH may have gained a prefix: pyenv's python3 shim adds one.)
    assert env["PATH"].endswith(os.environ["PATH"]) and env["HOME"] == os.environ["HOME"]
    assert env["LC_ALL"] == "C.UTF-8"
    assert env["HARNESSGIT_SPLIT"] == "selection" and env["HARNESSGIT_MODEL"] == "sim-1"
    assert env["HARNESSGIT_RUN"].count(".") == 3
