"""What recording a GEPA run in git costs (issue 16): the recorder's share of run time.

Runs gepa 0.1.4 (`gepa.optimize`) on the deterministic task of
tests/integrations/gepa_task.py (25 train, 20 valset examples, minibatch 3), with and
without `GitRecorder`, at each budget of metric calls. A metric call of the toy adapter
costs microseconds, which no real task does, so each call also sleeps ``--call-ms``
(default 10 ms: a fast, cached model; an LLM call is typically 0.3-5 s, which makes the
share 30-500 times smaller). Prints, per budget: GEPA's wall time without and with the
recorder (until `close()` returns: the writer thread has written everything), their
ratio, the time GEPA's thread spent inside the recorder's callbacks and waiting in
`close()` (measured around each call, so it does not drift with the machine's load as
a difference of two runs does), that time's share of the recorded run, and what it
wrote (proposals, programs). Each run is repeated ``--repeats`` times, alternating with
and without, and the fastest of each is kept (the machine is shared: the slower runs
measure other processes).

    .venv/bin/python tests/bench/bench_gepa_recorder.py                      # 500 and 2,000 calls
    .venv/bin/python tests/bench/bench_gepa_recorder.py --budgets 500 --call-ms 0
    # side by side with another checkout's recorder (e.g. `git archive main | tar -x -C /tmp/m`):
    .venv/bin/python tests/bench/bench_gepa_recorder.py --call-ms 3.7 --baseline /tmp/m

With ``--baseline DIR`` every run is a process of its own (GEPA alone, this checkout's
recorder, DIR's recorder, in turn, ``--repeats`` rounds): the two recorders are measured
in the same rounds, under the same load. Each row then also gives the CPU time the
recorder's writer thread used (``writer_cpu_s``, its own thread's clock): the load it puts
on a busy machine, which a wall-time ratio measures only through the noise of other
processes.

Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(os.environ.get("BENCH_ROOT") or Path(__file__).resolve().parents[2])
sys.path.insert(0, str(ROOT))

import gepa  # noqa: E402
from gepa.core.adapter import EvaluationBatch  # noqa: E402

from harnessgit.integrations.gepa import GitRecorder  # noqa: E402
from harnessgit.integrations.gepa import writer as writer_module  # noqa: E402
from tests.integrations.gepa_task import SEED, TRAIN, VAL, WordAdapter, reflection_lm  # noqa: E402

COMPONENTS = {"system_prompt": "prompts/system.md", "style": "prompts/style.md"}


class SlowAdapter(WordAdapter):
    def __init__(self, call_ms: float) -> None:
        super().__init__()
        self.call_s = call_ms / 1000

    def evaluate(
        self, batch: list[dict[str, str]], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[dict[str, Any], str]:
        time.sleep(self.call_s * len(batch))
        return super().evaluate(batch, candidate, capture_traces)


class Timed:
    """The recorder, with the time spent inside each of its callbacks added up."""

    def __init__(self, recorder: GitRecorder) -> None:
        self.recorder, self.seconds = recorder, 0.0

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.recorder, name)
        if not name.startswith("on_"):
            return method

        def timed(event: Any) -> None:
            start = time.perf_counter()
            try:
                method(event)
            finally:
                self.seconds += time.perf_counter() - start

        return timed


class Quiet:
    def log(self, message: str) -> None:
        pass


def make_repo(where: Path) -> Path:
    repo = where / "harness"
    (repo / "prompts").mkdir(parents=True)
    (repo / "prompts/system.md").write_text(SEED["system_prompt"])
    (repo / "prompts/style.md").write_text(SEED["style"])
    (repo / "harnessgit.toml").write_text('[harness]\npaths = ["prompts/*.md"]\n')
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "harness"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def run(budget: int, call_ms: float, callbacks: list[Any] | None) -> tuple[float, Any]:
    start = time.perf_counter()
    result = gepa.optimize(
        seed_candidate=dict(SEED),
        trainset=TRAIN,
        valset=VAL,
        adapter=SlowAdapter(call_ms),
        reflection_lm=reflection_lm,
        max_metric_calls=budget,
        reflection_minibatch_size=3,
        seed=7,
        callbacks=callbacks,
        logger=Quiet(),
    )
    return time.perf_counter() - start, result


class WriterClock:
    """The CPU time the writer thread spends in its steps (its own thread's clock)."""

    seconds = 0.0

    @classmethod
    def install(cls) -> None:
        do = writer_module.Writer._do

        def timed(self: Any, step: Any) -> None:
            start = time.thread_time()
            try:
                do(self, step)
            finally:
                cls.seconds += time.thread_time() - start

        writer_module.Writer._do = timed  # type: ignore[method-assign]


def recorded_run(budget: int, call_ms: float) -> dict[str, Any]:
    WriterClock.seconds = 0.0
    with tempfile.TemporaryDirectory() as where:
        recorder = GitRecorder(str(make_repo(Path(where))), COMPONENTS, adapter=WordAdapter(), valset=VAL)
        timed = Timed(recorder)
        start = time.perf_counter()
        _, result = run(budget, call_ms, [timed])
        closing = time.perf_counter()
        recorder.close()
        end = time.perf_counter()
    return {
        "wall": end - start,
        "callbacks": timed.seconds,
        "close": end - closing,
        "proposals": recorder.recorded,
        "programs": len(result.candidates),
        "writer_cpu": WriterClock.seconds,
    }


def one(kind: str, budget: int, call_ms: float) -> None:
    """One run in this process, as a JSON line: ``plain`` (GEPA alone) or ``recorded``."""
    if kind == "plain":
        print(json.dumps({"wall": run(budget, call_ms, None)[0]}))
    else:
        WriterClock.install()
        print(json.dumps(recorded_run(budget, call_ms)))


def in_process(kind: str, budget: int, call_ms: float, root: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--one", kind, "--budgets", str(budget), "--call-ms", str(call_ms)]
    env = {**os.environ, "BENCH_ROOT": str(root)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True, cwd=root)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def side_by_side(budget: int, call_ms: float, repeats: int, baseline: Path) -> None:
    """GEPA alone, this recorder, the baseline's recorder: in turn, each a process."""
    here = Path(__file__).resolve().parents[2]
    rounds = []
    for _ in range(repeats):
        plain = in_process("plain", budget, call_ms, here)["wall"]
        mine = in_process("recorded", budget, call_ms, here)
        theirs = in_process("recorded", budget, call_ms, baseline)
        rounds.append((plain, mine, theirs))
    plain = min(r[0] for r in rounds)
    for name, index in (("this", 1), ("baseline", 2)):
        runs = [r[index] for r in rounds]
        best = min(runs, key=lambda r: r["wall"])
        cpu = statistics.median(r.get("writer_cpu", 0.0) for r in runs)
        print(
            json.dumps(
                {
                    "budget": budget,
                    "call_ms": call_ms,
                    "recorder": name,
                    "gepa_s": round(plain, 3),
                    "with_recorder_s": round(best["wall"], 3),
                    "ratio": round(best["wall"] / plain, 4),
                    "median_ratio": round(statistics.median(r[index]["wall"] / r[0] for r in rounds), 4),
                    "close_s": round(best["close"], 3),
                    "writer_cpu_s": round(cpu, 3),
                    "proposals": best["proposals"],
                    "writer_cpu_ms_per_proposal": round(1000 * cpu / max(best["proposals"], 1), 2),
                }
            ),
            flush=True,
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--budgets", type=int, nargs="+", default=[500, 2000])
    parser.add_argument("--call-ms", type=float, default=10.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline", type=Path, help="another checkout whose recorder runs side by side")
    parser.add_argument("--one", choices=["plain", "recorded"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one(args.one, args.budgets[0], args.call_ms)
        return
    if args.baseline:
        for budget in args.budgets:
            side_by_side(budget, args.call_ms, args.repeats, args.baseline.resolve())
        return
    for budget in args.budgets:
        plain, recorded = [], []
        for _ in range(args.repeats):
            plain.append(run(budget, args.call_ms, None)[0])
            recorded.append(recorded_run(budget, args.call_ms))
        best = min(recorded, key=lambda r: r["wall"])
        on_thread = best["callbacks"] + best["close"]
        row = {
            "budget": budget,
            "call_ms": args.call_ms,
            "gepa_s": round(min(plain), 3),
            "with_recorder_s": round(best["wall"], 3),
            "ratio": round(best["wall"] / min(plain), 4),
            "callbacks_s": round(best["callbacks"], 3),
            "close_s": round(best["close"], 3),
            "share": round(on_thread / best["wall"], 4),
            "proposals": best["proposals"],
            "programs": best["programs"],
            "ms_per_proposal": round(1000 * on_thread / max(best["proposals"], 1), 2),
        }
        print(json.dumps(row), flush=True)


if __name__ == "__main__":
    main()
