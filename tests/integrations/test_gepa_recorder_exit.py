"""A script that never calls `GitRecorder.close()` (the README's own example) loses
nothing: real `gepa.optimize` runs in a subprocess (issue 28, defect 1).

The recorder's writer is a daemon thread: before the fix, a script that exited without
close() recorded 0 of 9 proposals, and said nothing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from harnessgit.integrations.gepa.writer import summary
from tests.conftest import git
from tests.integrations.test_gepa_recorder import consistent, gepa_repo, recorded

__all__ = ["gepa_repo"]  # the fixture, used by name

ROOT = Path(__file__).resolve().parents[2]
# sys.argv: the repository, what to do ("end", "exit-mid-run", "raise" or "fail-writes").
SCRIPT = """\
import sys
sys.path.insert(0, {root!r})
import gepa
from harnessgit.integrations.gepa import GitRecorder
from tests.integrations.gepa_task import SEED, TRAIN, VAL, WordAdapter, reflection_lm

how = sys.argv[2]

class Counter:
    proposals = 0  # in iterations GEPA ended
    pending = 0
    def on_proposal_end(self, event):
        self.pending += 1
    def on_merge_attempted(self, event):
        self.pending += 1
    def on_iteration_end(self, event):
        Counter.proposals += self.pending
        self.pending = 0
        print("proposals", Counter.proposals, flush=True)

class Exits(WordAdapter):
    def evaluate(self, batch, candidate, capture_traces=False):
        if how == "exit-mid-run" and self.calls == 60:
            sys.exit(0)  # not an Exception: GEPA ends the iteration, never the run
        if how == "raise" and self.calls == 60:
            raise RuntimeError("the task model went away")  # on_error, then GEPA raises
        return super().evaluate(batch, candidate, capture_traces)

class Quiet:
    def log(self, message):
        pass

recorder = GitRecorder(sys.argv[1], {{"system_prompt": "prompts/system.md", "style": "prompts/style.md"}},
                       adapter=WordAdapter(), valset=VAL)
if how == "fail-writes":  # the first write (the seed) lands, the second fails
    real, writes = recorder.repo.commit, []
    def refused(txn):
        writes.append(txn)
        if len(writes) > 1:
            raise OSError("disk full")
        real(txn)
    recorder.repo.commit = refused
gepa.optimize(seed_candidate=dict(SEED), trainset=TRAIN, valset=VAL, adapter=Exits(),
              reflection_lm=reflection_lm, max_metric_calls=400, reflection_minibatch_size=3,
              seed=7, callbacks=[Counter(), recorder], logger=Quiet())
# no recorder.close(): the README's example ends here
"""


def run_script(gepa_repo: Path, name: str, how: str, code: int = 0) -> tuple[Path, int, str]:
    """The script on a clone of the repository: (the clone, proposals GEPA reported in
    ended iterations, stderr)."""
    repo = gepa_repo.parent / name
    git(gepa_repo.parent, "clone", "-q", str(gepa_repo), str(repo))
    script = gepa_repo.parent / "script.py"
    script.write_text(SCRIPT.format(root=str(ROOT)))
    done = subprocess.run(
        [sys.executable, str(script), str(repo), how], capture_output=True, text=True, check=False
    )
    assert done.returncode == code, done.stderr[-3000:]
    counts = [int(line.split()[1]) for line in done.stdout.splitlines() if line.startswith("proposals ")]
    return repo, counts[-1], done.stderr


def test_a_script_without_close_records_every_proposal(gepa_repo: Path) -> None:
    repo, proposals, stderr = run_script(gepa_repo, "ended", "end")
    assert proposals >= 5
    candidates, evals = consistent(repo)
    assert candidates == proposals and evals > 0
    _p, _e, others = recorded(repo)
    assert [type(r).__name__ for r in others].count("RunRecord") == 1
    assert "not written" not in stderr


def test_a_script_that_exits_mid_run_keeps_every_ended_iteration(gepa_repo: Path) -> None:
    """No optimization end and no close(): the exit hook writes what GEPA ended."""
    repo, proposals, stderr = run_script(gepa_repo, "exited", "exit-mid-run")
    assert proposals >= 2
    candidates, _evals = consistent(repo)
    assert candidates == proposals
    assert "not written" not in stderr


def test_a_run_gepa_stops_on_an_error_is_recorded_with_its_reason(gepa_repo: Path) -> None:
    """GEPA raises after on_error (will_continue=False): the script dies with the
    traceback, and the run is on record, the error as its stop reason."""
    repo, proposals, stderr = run_script(gepa_repo, "raised", "raise", code=1)
    assert "the task model went away" in stderr and "not written" not in stderr
    candidates, _evals = consistent(repo)
    assert candidates == proposals >= 2
    _p, _e, others = recorded(repo)
    (run,) = [r for r in others if type(r).__name__ == "RunRecord"]
    assert run.stop_reason == "error: RuntimeError: the task model went away"


def test_what_could_not_be_written_is_said_at_exit(gepa_repo: Path) -> None:
    """Recording stopped on an error and close() never came: one line names exactly what
    is not on record (the seed's write landed: it is not named)."""
    repo, proposals, stderr = run_script(gepa_repo, "failed", "fail-writes")
    assert proposals >= 5
    assert consistent(repo) == (0, 1)  # the seed's scores
    (line,) = [line for line in stderr.splitlines() if "not written" in line]
    assert "recording stopped on OSError: disk full" in line
    assert "seed" not in line and "iterations 1-" in line and line.endswith("the run record")


def test_summary_names_iterations_as_ranges() -> None:
    steps = ["the seed candidate", *(f"iteration {n}" for n in (1, 2, 3, 5)), "the run record"]
    assert summary(steps) == "the seed candidate, iterations 1-3, iteration 5, the run record"
    assert summary([]) == ""
