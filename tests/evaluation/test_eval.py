from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import evaluate
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.test import peek_test_split
from harnessgit.evaluation.trajectory import trajectories
from harnessgit.records import EvalRecord
from harnessgit.render import to_json
from harnessgit.store import Store
from tests.conftest import CONFIG, git, snapshot, write

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.
EVALUATOR = """\
import json, os, sys
from pathlib import Path
calls = os.environ.get("CALLS_FILE")
if calls:
    with open(calls, "a") as handle:
        handle.write(os.environ["HARNESSGIT_SPLIT"] + "\\n")
skill = Path("SKILL.md").read_text()
ids = [line.strip() for line in sys.stdin if line.strip()]
assert ids == Path(os.environ["HARNESSGIT_INSTANCES_FILE"]).read_text().split()
assert Path(os.environ["HARNESSGIT_HARNESS_DIR"]).resolve() == Path.cwd().resolve()
for instance in ids:
    word = instance.split("-")[0]
    print(json.dumps({"instance": instance, "score": 1.0 if word in skill else 0.0,
                      "feedback": f"needs {word}" , "cluster": word,
                      "trajectory": {"steps": ["read SKILL.md", f"look for {word}"],
                                     "env": "OPENAI_API_KEY=sk-" + "x" * 30},
                      "failure_class": None if word in skill else "missing-rule"}))
"""

SPLITS = {
    "train": [f"alpha-{i}" for i in range(4)],
    "selection": [f"{w}-{i}" for w in ("alpha", "beta", "gamma") for i in range(10, 14)],
    "test": [f"{w}-{i}" for w in ("alpha", "beta") for i in range(20, 23)],
}


@pytest.fixture
def eval_repo(make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    repo = make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "batch_size = 3\n"
    )
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    return repo


def calls(tmp_path: Path) -> int:
    path = tmp_path / "calls.txt"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_evaluate_records_scores_and_never_repeats_work(eval_repo: Path, tmp_path: Path) -> None:
    status = git(eval_repo, "status", "--porcelain")
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        first = evaluate(store, config, "main", jobs=2)
        assert first.evaluated == 12 and first.cached == 0 and first.batches == 4
        assert first.summary.n == 12 and first.summary.mean == 0.0
        assert calls(tmp_path) == 4
        again = evaluate(store, config, "main", jobs=2)
        assert again.evaluated == 0 and again.cached == 12 and calls(tmp_path) == 4

        # A candidate that mentions alpha: only its harness is new.
        cand = propose(store, config, {"SKILL.md": "alpha\n"})
        scored = evaluate(store, config, cand.candidate)
        assert scored.evaluated == 12 and scored.summary.mean == pytest.approx(4 / 12)
        # A revert to main's text on another branch: the same harness tree, no evaluator call.
        before = calls(tmp_path)
        original = git(eval_repo, "show", "main:SKILL.md")
        revert = propose(store, config, {"SKILL.md": original}, parent=cand.candidate)
        cached = evaluate(store, config, revert.candidate)
        assert cached.evaluated == 0 and calls(tmp_path) == before

        fresh = evaluate(store, config, "main", no_cache=True, instances=["beta-10"])
        assert fresh.evaluated == 1
        records = [
            r for rs in store.notes(layout.NOTES_EVALS).values() for r in rs if isinstance(r, EvalRecord)
        ]
        assert any(r.fresh for r in records)
        record = records[0]
        assert record.split == "selection" and record.model == "sim-1"
        assert record.worker and record.wall_time > 0 and len(record.split_hash) == 64
    assert git(eval_repo, "status", "--porcelain") == status  # never ran in the working tree


def test_trajectories_are_scrubbed_and_retrievable(eval_repo: Path) -> None:
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        evaluate(store, config, "main", instances=["gamma-10"])
        (entry,) = trajectories(store, config, "main", "gamma-10").repeats
    assert entry.feedback == "needs gamma" and entry.failure_class == "missing-rule"
    assert entry.trajectory["steps"][1] == "look for gamma"
    assert "sk-" not in to_json(entry) and "[REDACTED]" in entry.trajectory["env"]


def test_repeats_average_per_instance(make_repo: Callable[..., Path]) -> None:
    flaky = (
        "import json, os, sys\n"
        "r = int(os.environ['HARNESSGIT_REPEAT'])\n"
        "for line in sys.stdin:\n"
        "    print(json.dumps({'instance': line.strip(), 'score': 1.0 if r == 0 else 0.5}))\n"
    )
    repo = make_repo({"eval.py": flaky, "splits.json": json.dumps(SPLITS)})
    with Store.discover(repo) as store:
        result = evaluate(store, load_config(repo), "main", repeats=3, instances=["alpha-10", "beta-10"])
    assert result.evaluated == 6
    assert [i.scores for i in result.summary.instances] == [[1.0, 0.5, 0.5]] * 2
    assert result.summary.mean == pytest.approx(2 / 3)


def test_held_out_split_is_guarded(eval_repo: Path) -> None:
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        with pytest.raises(HarnessgitError, match="held out"):
            evaluate(store, config, "main", split="test")
        first = peek_test_split(store, config, "main")
        assert first.evaluation.summary.n == 6 and not first.peek.forced
        assert peek_test_split(store, config, "main").evaluation.evaluated == 0  # same harness: fine
        cand = propose(store, config, {"SKILL.md": "alpha beta\n"})
        with pytest.raises(HarnessgitError, match="already evaluated"):
            peek_test_split(store, config, cand.candidate)
        forced = peek_test_split(store, config, cand.candidate, force=True)
        assert forced.peek.forced and forced.evaluation.summary.mean == 1.0
        book = ScoreBook.load(store)
        assert len(book.peeks) == 3
        with pytest.raises(HarnessgitError, match="never feeds"):
            book.summary(forced.evaluation.context.key, "test", SPLITS["test"], for_decision=True)


BAD_OUTPUTS = {
    "not json": ("print('hello')", "line 1 is not JSON"),
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


def test_failed_batch_keeps_earlier_batches(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    script = (
        "import json, sys\n"
        "ids = sys.stdin.read().split()\n"
        "if 'gamma-13' in ids: sys.exit('grader crashed on gamma-13')\n"
        "for i in ids: print(json.dumps({'instance': i, 'score': 1}))\n"
    )
    repo = make_repo(
        {"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "batch_size = 4\n"
    )
    with Store.discover(repo) as store:
        config = load_config(repo)
        with pytest.raises(HarnessgitError, match="grader crashed on gamma-13"):
            evaluate(store, config, "main", jobs=1)
        book = ScoreBook.load(store)
        (key,) = book.cache_keys()
        assert len(book.rows(key)) == 8  # the two batches before the crash
    write(repo, "eval.py", script.replace("gamma-13", "never"))
    git(repo, "commit", "-qam", "fix the grader")  # a new evaluator: a new fingerprint
    with Store.discover(repo) as store:
        assert evaluate(store, load_config(repo), "main").evaluated == 12


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"train": ["a", "a"], "selection": ["b"]}, "appears twice"),
        ({"train": ["a"], "selection": ["a"]}, "splits must be disjoint"),
        ({"train": "a"}, "must be a list"),
        ({"selection": [1]}, "invalid instance id"),
        ([], "JSON object"),
    ],
)
def test_bad_manifests_are_refused_before_anything_runs(
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    manifest: object,
    message: str,
) -> None:
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    repo = make_repo({"eval.py": EVALUATOR, "splits.json": json.dumps(manifest)})
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(HarnessgitError, match=message):
        evaluate(store, load_config(repo), "main")
    assert calls(tmp_path) == 0 and snapshot(repo) == before


def test_unknown_split_and_instance(eval_repo: Path, tmp_path: Path) -> None:
    with Store.discover(eval_repo) as store:
        config = load_config(eval_repo)
        with pytest.raises(HarnessgitError, match="unknown split 'validation'"):
            evaluate(store, config, "main", split="validation")
        with pytest.raises(HarnessgitError, match="not in split"):
            evaluate(store, config, "main", instances=["alpha-0"])  # a train instance
    assert calls(tmp_path) == 0


INTERRUPTIBLE = """
import sys
from pathlib import Path
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.store import Store
with Store.discover(Path(sys.argv[1])) as store:
    evaluate(store, load_config(store.root), "main", jobs=1, progress=lambda d, t: print(d, flush=True))
"""


def test_interrupt_keeps_finished_batches_and_resumes(make_repo: Callable[..., Path]) -> None:
    script = (
        "import json, sys, time\n"
        "ids = sys.stdin.read().split()\n"
        "time.sleep(0.3)\n"
        "for i in ids: print(json.dumps({'instance': i, 'score': 0.5}))\n"
    )
    repo = make_repo(
        {"eval.py": script, "splits.json": json.dumps(SPLITS)}, config=CONFIG + "batch_size = 2\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTIBLE, str(repo)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "0"
    assert proc.stdout.readline().strip() == "2"  # one batch recorded
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=30)
    assert proc.returncode != 0
    with Store.discover(repo) as store:
        book = ScoreBook.load(store)
        done = sum(len(book.rows(key)) for key in book.cache_keys())
        assert 2 <= done < 12
        resumed = evaluate(store, load_config(repo), "main")
    assert resumed.cached == done and resumed.evaluated == 12 - done
