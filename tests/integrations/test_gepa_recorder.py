"""`GitRecorder` on real GEPA runs (gepa 0.1.4): the task of tests/integrations/gepa_task.py."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import gepa
import pytest
from click.testing import CliRunner
from gepa.gepa_utils import find_dominator_programs

from harnessgit import layout
from harnessgit.api import Repository
from harnessgit.cli import cli
from harnessgit.errors import HarnessgitError
from harnessgit.integrations.gepa import GitRecorder, content_instance_id
from harnessgit.records import EvalRecord, IterationRecord, ProposalRecord, RetireRecord, RunRecord
from harnessgit.store import Store
from tests.conftest import CONFIG, git
from tests.integrations.gepa_task import SEED, TRAIN, VAL, WordAdapter, reflection_lm

IDS = [content_instance_id(i, example) for i, example in enumerate(VAL)]
# The repository's own evaluator scores as the adapter does: an in-process function.
GRADER = f"""\
import os

WORDS = {[e["word"] for e in VAL]!r}

def evaluate(request):
    if os.environ.get("CALLS_FILE"):
        with open(os.environ["CALLS_FILE"], "a") as handle:
            handle.write(request.commit + "\\n")
    for instance in request.instances:
        index = int(instance.split("-")[0])
        text = request.harness["prompts/style.md" if index % 2 else "prompts/system.md"]
        yield {{"instance": instance, "score": 1.0 if WORDS[index] in text else 0.0}}
"""
PYTHON_CONFIG = CONFIG.replace('command = ["python3", "eval.py"]', 'python = "grader.score:evaluate"')
COMPONENTS = {"system_prompt": "prompts/system.md", "style": "prompts/style.md"}


class Counter:
    """Counts what GEPA proposed and keeps its final state."""

    def __init__(self) -> None:
        self.proposals = 0
        self.state: Any = None

    def on_proposal_end(self, event: Any) -> None:
        self.proposals += 1

    def on_merge_attempted(self, event: Any) -> None:
        self.proposals += 1

    def on_optimization_end(self, event: Any) -> None:
        self.state = event["final_state"]


@pytest.fixture(autouse=True)
def forget_grader() -> Iterator[None]:
    path = list(sys.path)
    yield
    for name in [name for name in sys.modules if name == "grader" or name.startswith("grader.")]:
        del sys.modules[name]
    sys.path[:] = path


@pytest.fixture
def gepa_repo(make_repo: Callable[..., Path]) -> Path:
    import json

    return make_repo(
        {
            "prompts/system.md": SEED["system_prompt"],
            "prompts/style.md": SEED["style"],
            "harnessgit.toml": PYTHON_CONFIG,
            "grader/__init__.py": "",
            "grader/score.py": GRADER,
            "splits.json": json.dumps({"selection": IDS, "train": ["t1"], "test": ["x1"]}),
        }
    )


class Quiet:
    def log(self, message: str) -> None:
        pass


def run(
    callbacks: list[Any] | None, *, budget: int = 300, adapter: WordAdapter | None = None, **kw: Any
) -> Any:
    return gepa.optimize(
        seed_candidate=dict(SEED),
        trainset=TRAIN,
        valset=VAL,
        adapter=adapter or WordAdapter(),
        reflection_lm=reflection_lm,
        max_metric_calls=budget,
        reflection_minibatch_size=3,
        seed=7,
        callbacks=callbacks,
        logger=Quiet(),
        **kw,
    )


def recorded(repo: Path) -> tuple[list[ProposalRecord], dict[str, list[EvalRecord]], list[Any]]:
    with Store.discover(repo) as store:
        evidence = store.notes.records(layout.NOTES_EVIDENCE)
        evals = store.notes.records(layout.NOTES_EVALS)
    proposals = [r for records in evidence.values() for r in records if isinstance(r, ProposalRecord)]
    others = [r for records in evidence.values() for r in records if not isinstance(r, ProposalRecord)]
    by_commit = {c: [r for r in records if isinstance(r, EvalRecord)] for c, records in evals.items()}
    return proposals, by_commit, others


def test_recording_does_not_change_the_run(gepa_repo: Path) -> None:
    plain = run(None)
    recorder = GitRecorder(str(gepa_repo), COMPONENTS, adapter=WordAdapter(), valset=VAL)
    with_recorder = run([recorder])
    recorder.close()
    assert recorder.error is None
    assert with_recorder.candidates == plain.candidates
    assert with_recorder.parents == plain.parents
    assert with_recorder.val_subscores == plain.val_subscores
    assert with_recorder.total_metric_calls == plain.total_metric_calls


def test_gepa_thread_never_waits_on_git(gepa_repo: Path) -> None:
    """Every object read and written and every ref transaction of a run happens on the
    recorder's writer thread: GEPA's callbacks only collect its events."""
    recorder = GitRecorder(str(gepa_repo), COMPONENTS, adapter=WordAdapter(), valset=VAL)
    store, threads = recorder.repo.store, []

    def spied(method: Callable[..., Any]) -> Callable[..., Any]:
        def spy(*args: Any) -> Any:
            threads.append(threading.current_thread())
            return method(*args)

        return spy

    for part, name in (
        (store.objects, "read_object"),
        (store.objects, "write_object"),
        (store.refs, "commit"),
    ):
        setattr(part, name, spied(getattr(part, name)))
    run([recorder], budget=120)
    recorder.close()
    assert recorder.recorded > 0 and threads
    assert threading.main_thread() not in threads


def test_a_recording_failure_stops_the_recording_and_surfaces_on_close(gepa_repo: Path) -> None:
    """A GEPA component with no harness path: the recording stops (GEPA's run does not
    notice), nothing of it is written, and close() raises the one line."""
    before = git(gepa_repo, "for-each-ref")
    plain = run(None, budget=120)
    recorder = GitRecorder(str(gepa_repo), {"system_prompt": "prompts/system.md"}, valset=VAL)
    result = run([recorder], budget=120)
    with pytest.raises(HarnessgitError, match="stopped recording: HarnessgitError: GEPA component 'style'"):
        recorder.close()
    assert recorder.error is not None and "has no harness path" in recorder.error
    assert result.candidates == plain.candidates
    assert git(gepa_repo, "for-each-ref") == before
    # as a context manager: raised at the block's end, unless GEPA's own error is on its way
    one = {"system_prompt": "prompts/system.md"}
    with (
        pytest.raises(HarnessgitError, match="stopped recording"),
        GitRecorder(str(gepa_repo), one) as recorder,
    ):
        run([recorder], budget=60)
    with pytest.raises(RuntimeError, match="went away"), GitRecorder(str(gepa_repo), one) as recorder:
        run([recorder], budget=120, adapter=WordAdapter(fail_after=3))


def test_every_proposal_and_valset_score_is_recorded(gepa_repo: Path) -> None:
    counter = Counter()
    recorder = GitRecorder(
        str(gepa_repo), COMPONENTS, adapter=WordAdapter(), valset=VAL, evaluator="repository"
    )
    result = run([counter, recorder])
    recorder.close()
    assert recorder.error is None
    proposals, evals, others = recorded(gepa_repo)
    # one candidate commit per proposal GEPA made, kept or not; the seed is main itself
    assert counter.proposals == len(proposals) == recorder.recorded
    kept = len(result.candidates) - 1
    assert 0 < kept < len(proposals), "the run should both keep and reject proposals"
    retired = [r for r in others if isinstance(r, RetireRecord)]
    assert len(retired) == len(proposals) - kept
    assert all(r.detail.startswith("GEPA: ") for r in retired)
    # eval records equal GEPA's valset scores, for every program, on its commit
    main = git(gepa_repo, "rev-parse", "main").strip()
    assert recorder.commits[0] == main
    for idx, subscores in enumerate(result.val_subscores):
        records = evals[recorder.commits[idx]]
        got = {i: s for r in records for i, s in zip(r.instances, r.scores, strict=True)}
        assert got == {IDS[val_id]: score for val_id, score in subscores.items()}
    iterations = [r for r in others if isinstance(r, IterationRecord)]
    assert {r.outcome for r in iterations} >= {"accepted", "rejected"}
    assert all(r.optimizer == "gepa" for r in iterations)
    (run_record,) = [r for r in others if isinstance(r, RunRecord)]
    assert run_record.seed == 7 and run_record.budget == 300
    assert run_record.metric_calls == result.total_metric_calls
    assert run_record.best == recorder.commits[result.best_idx]
    assert run_record.stop_reason.startswith("budget: ")
    # GEPA numbers iterations 1..N (its end event says N - 1): the run record says N
    numbers = {r.iteration for r in iterations}
    assert run_record.iterations == len(numbers) == max(numbers)
    # `show` on a rejected proposal says GEPA's reason, not only "archived"
    shown = CliRunner().invoke(cli, ["-C", str(gepa_repo), "show", retired[0].candidate, "--no-diff"])
    assert f"archived: rejected: {retired[0].detail}" in shown.output


def test_frontier_gate_and_merge_of_gepa_best(gepa_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With the repository's evaluator fingerprint, the gate and the frontier read
    GEPA's own valset scores: nothing is evaluated again."""
    calls = gepa_repo.parent / "calls"
    monkeypatch.setenv("CALLS_FILE", str(calls))
    counter = Counter()
    recorder = GitRecorder(
        str(gepa_repo), COMPONENTS, adapter=WordAdapter(), valset=VAL, evaluator="repository"
    )
    result = run([counter, recorder])
    recorder.close()
    state = counter.state
    expected = find_dominator_programs(state.get_pareto_front_mapping(), state.per_program_tracked_scores)
    with Repository.open(gepa_repo) as repo:
        view = repo.frontier()
        assert view.waiting == [] and view.incomparable == []
        assert sorted(view.members[m].commit for m in view.frontier.members) == sorted(
            recorder.commits[idx] for idx in expected
        )
        best = recorder.names[recorder.commits[result.best_idx]]
        outcome = repo.merge(best, allow_small=True)
    assert not calls.exists()  # the gate paired GEPA's own scores: nothing re-evaluated
    assert outcome.gate is not None
    assert outcome.merge is not None and outcome.gate.passed, (
        outcome.gate.reasons,
        outcome.gate.base_mean,
        outcome.gate.candidate_mean,
        outcome.gate.p_value,
        outcome.gate.n,
    )
    for name, path in COMPONENTS.items():
        assert git(gepa_repo, "show", f"main:{path}") == result.best_candidate[name]
    assert git(gepa_repo, "rev-parse", "main^2").strip() == recorder.commits[result.best_idx]


def test_the_gate_reevaluates_scores_of_another_fingerprint(
    gepa_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By default the records carry the recorder's own fingerprint (adapter and model):
    the frontier does not count them, and the gate evaluates both sides through the
    repository's evaluator once (then its cache), with the same scores here."""
    calls = gepa_repo.parent / "calls"
    monkeypatch.setenv("CALLS_FILE", str(calls))
    recorder = GitRecorder(str(gepa_repo), COMPONENTS, adapter=WordAdapter(), model="sim-task", valset=VAL)
    result = run([recorder])
    recorder.close()
    assert recorder.mode == "own"
    best = recorder.commits[result.best_idx]
    with Repository.open(gepa_repo) as repo:
        (record,) = repo.store.notes.records(layout.NOTES_EVALS)[best]
        assert isinstance(record, EvalRecord) and record.model == "sim-task"
        assert record.fingerprint.startswith("gepa:")
        with pytest.raises(HarnessgitError, match="not evaluated on the whole selection split"):
            repo.frontier()
        outcome = repo.gate(recorder.names[best], allow_small=True)
    assert sorted(set(calls.read_text().split())) == sorted({recorder.commits[0], best})
    assert outcome.record.candidate_mean == pytest.approx(result.val_aggregate_scores[result.best_idx])


KILLED_RUN = """\
import os, signal, sys, time
sys.path.insert(0, sys.argv[2])
import gepa
from harnessgit.integrations.gepa import GitRecorder
from tests.integrations.gepa_task import SEED, TRAIN, VAL, WordAdapter, reflection_lm

class Killer(WordAdapter):
    def evaluate(self, batch, candidate, capture_traces=False):
        if self.calls == int(sys.argv[3]):
            os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(0.01)  # so that the run spans several of the recorder's writes
        return super().evaluate(batch, candidate, capture_traces)

class Quiet:
    def log(self, message):
        pass

recorder = GitRecorder(sys.argv[1], {"system_prompt": "prompts/system.md", "style": "prompts/style.md"},
                       adapter=WordAdapter(), valset=VAL)
gepa.optimize(seed_candidate=dict(SEED), trainset=TRAIN, valset=VAL, adapter=Killer(),
              reflection_lm=reflection_lm, max_metric_calls=2000, reflection_minibatch_size=3,
              seed=7, callbacks=[recorder], logger=Quiet())
"""


def consistent(repo: Path) -> tuple[int, int]:
    """Every candidate has its proposal record and every record names commits that
    exist; `harnessgit doctor` finds nothing. Returns (candidates, eval records)."""
    with Store.discover(repo) as store:
        evidence = store.notes.records(layout.NOTES_EVIDENCE)
        evals = store.notes.records(layout.NOTES_EVALS)
        refs = store.refs.listing("refs/heads/harnessgit/cand/", "refs/harnessgit/archive/")
    proposed = {c for c, records in evidence.items() if any(isinstance(r, ProposalRecord) for r in records)}
    assert set(refs.values()) == proposed
    for records in evidence.values():
        for r in records:
            if isinstance(r, IterationRecord) and r.commit is not None:
                assert r.commit in proposed
    assert all(isinstance(r, EvalRecord) for records in evals.values() for r in records)
    assert CliRunner().invoke(cli, ["-C", str(repo), "doctor"]).exit_code == 0
    return len(proposed), sum(len(records) for records in evals.values())


@pytest.mark.slow
def test_a_killed_run_leaves_whole_iterations(gepa_repo: Path) -> None:
    """SIGKILL inside the adapter at several points of a run: what is on record is
    whole iterations (a candidate with its proposal and evidence, eval records,
    iteration records), never a part of one; at most the last second of them is lost."""
    script = gepa_repo.parent / "killed_run.py"
    script.write_text(KILLED_RUN)
    root = str(Path(__file__).resolve().parents[2])
    seen = []
    for after in (5, 120, 240):
        repo = gepa_repo.parent / f"killed{after}"
        git(gepa_repo.parent, "clone", "-q", str(gepa_repo), str(repo))
        done = subprocess.run([sys.executable, str(script), str(repo), root, str(after)], check=False)
        assert done.returncode == -signal.SIGKILL
        seen.append(consistent(repo))
    assert seen[0] < seen[1] < seen[2], seen  # later kills leave more on record


def test_an_adapter_error_ends_the_run_on_record(gepa_repo: Path) -> None:
    """An exception in the adapter stops GEPA (raise_on_exception): the iteration it
    broke is recorded as far as it went, and the run record says why it stopped."""
    counter = Counter()
    recorder = GitRecorder(str(gepa_repo), COMPONENTS, adapter=WordAdapter(), valset=VAL)
    with pytest.raises(RuntimeError, match="went away"):
        run([counter, recorder], adapter=WordAdapter(fail_after=12))
    recorder.close()
    assert recorder.error is None
    candidates, _evals = consistent(gepa_repo)
    assert candidates == counter.proposals
    _p, _e, others = recorded(gepa_repo)
    (run_record,) = [r for r in others if isinstance(r, RunRecord)]
    assert run_record.stop_reason == "error: RuntimeError: the task model went away"
    assert any(
        isinstance(r, IterationRecord) and r.outcome in ("error", "rejected") and "went away" in r.reason
        for r in others
    )
