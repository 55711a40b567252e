from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.check_findings import CheckReport
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.errors import GateRefused, HarnessgitError
from harnessgit.evaluation.eval import EvalRequest, Execution, evaluate, with_batches
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.gate.gate import GateRequest, evaluate_sides, gate_sides, preview_gate, run_gate
from harnessgit.records import GateRecord
from harnessgit.stats.decision import alpha_for_attempt
from harnessgit.store import Store
from tests.conftest import CONFIG, git, write
from tests.gating_fixtures import SPLITS, skill

BATCHES = with_batches()  # the runner the gate takes from its caller


def test_a_real_improvement_passes_and_is_recorded(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)}, rationale="Raise the level")
        outcome = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
        record = outcome.record
        assert outcome.passed and record.reasons == []
        assert record.n == 40 and record.base_mean == pytest.approx(0.25)
        assert record.candidate_mean == pytest.approx(0.75) and record.wins == 20 and record.losses == 0
        assert record.lower_bound is not None and record.lower_bound > 0
        assert record.attempt == 1 and record.alpha_k == pytest.approx(alpha_for_attempt(0.05, 1))
        assert record.tree == git(gate_repo, "rev-parse", f"{cand.commit}^{{tree}}").strip()
        notes = store.notes.records_on(layout.NOTES_GATE, cand.commit)
        assert [r.id for r in notes if isinstance(r, GateRecord)] == [record.id]
        assert git(gate_repo, "cat-file", "-p", record.instances or "").split() == sorted(SPLITS["selection"])


def test_no_effect_is_rejected_with_the_reason(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(10, "3. Be polite.")})
        outcome = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    assert not outcome.passed
    assert any("lower bound" in reason for reason in outcome.record.reasons)
    assert outcome.record.difference == 0.0


def test_regressions_are_named(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30, "break s-3", "break s-4")})
        outcome = run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    assert outcome.record.regressed == ["s-3", "s-4"] and outcome.record.regressed_count == 2
    assert outcome.record.losses == 2


def written(repo: Path) -> str:
    """Every harnessgit ref and note: what a refused gate must leave as it was."""
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/notes", "refs/harnessgit")


def test_a_candidate_that_does_not_descend_from_the_tip_is_refused_before_anything_runs(
    gate_repo: Path,
) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        write(gate_repo, "prompts/system.md", "moved main\n")
        git(gate_repo, "commit", "-qam", "main moves on")
        before = written(gate_repo)
        with pytest.raises(GateRefused, match=r"does not descend.*propose the edit again") as refused:
            run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    assert refused.value.exit_code == 1
    assert written(gate_repo) == before  # no evaluation, no gate record: no attempt spent


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_small_selection_sets_need_allow_small(make_repo: object) -> None:
    from tests.gating_fixtures import EVALUATOR

    splits = {**SPLITS, "selection": [f"s-{i}" for i in range(12)]}
    repo = make_repo(
        {
            "eval.py": EVALUATOR,
            "splits.json": json.dumps(splits),  # type: ignore[operator]
            "SKILL.md": skill(0),
        }
    )
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(12)})
        before = written(repo)
        with pytest.raises(GateRefused, match=r"12 instances.*min_instances"):
            run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
        assert written(repo) == before  # a refusal is not an attempt
        allowed = run_gate(
            store,
            config,
            GateRequest(cand.candidate, allow_small=True),
            execution=BATCHES,
            check=check_change,
        )
        assert allowed.passed and allowed.record.attempt == 1
        assert "on 12 instances" in str(getattr(allowed.decision, "detectable", ""))


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_attempts_spend_alpha_and_a_regate_keeps_its_k(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        attempts = []
        for level in (10, 11, 12):
            cand = propose(store, config, {"SKILL.md": skill(level, f"# try {level}")})
            attempts.append(
                run_gate(
                    store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
                ).record.attempt
            )
        again = run_gate(
            store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
        ).record
    assert attempts == [1, 2, 3] and again.attempt == 3
    assert again.alpha_spent == pytest.approx(sum(alpha_for_attempt(0.05, k) for k in (1, 2, 3)))


def test_a_changed_evaluator_is_not_comparable(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
    # Commit a grader change on top of the candidate by hand (propose refuses non-harness edits).
    git(gate_repo, "checkout", "-q", f"harnessgit/cand/{cand.candidate}")
    write(gate_repo, "eval.py", (gate_repo / "eval.py").read_text() + "# changed\n")
    git(gate_repo, "commit", "-qam", "change the grader")
    before = written(gate_repo)
    with Store.discover(gate_repo) as store, pytest.raises(GateRefused, match="evaluator fingerprint"):
        run_gate(store, config, GateRequest("HEAD"), execution=BATCHES, check=check_change)
    assert written(gate_repo) == before


def test_gating_the_tip_itself_is_an_error(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store, pytest.raises(HarnessgitError, match="nothing to gate"):
        run_gate(store, load_config(gate_repo), GateRequest("main"), execution=BATCHES, check=check_change)


def test_unevaluated_without_evaluating_says_what_to_run(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        outcome = preview_gate(store, config, cand.candidate, check=check_change)
    assert not outcome.passed
    assert outcome.not_evaluated == [
        "harnessgit eval main --split selection",
        f"harnessgit eval {cand.candidate} --split selection",
    ]
    assert git(gate_repo, "notes", "--ref", layout.NOTES_GATE, "list") == ""


def test_config_needed(make_repo: object) -> None:
    repo = make_repo(config=CONFIG.replace('command = ["python3", "eval.py"]\n', ""))  # type: ignore[operator]
    with Store.discover(repo) as store, pytest.raises(HarnessgitError):
        run_gate(store, load_config(repo), GateRequest("main"), execution=BATCHES, check=check_change)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_base_commit_other_than_the_tip_is_compared_without_recording(gate_repo: Path) -> None:
    # `review` asks what the gate would say about BASE..HEAD where BASE is any commit.
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        first = git(gate_repo, "rev-parse", "main").strip()
        step = propose(store, config, {"SKILL.md": skill(20)})
        git(gate_repo, "update-ref", "refs/heads/main", step.commit)  # main moves past `first`
        cand = propose(store, config, {"SKILL.md": skill(30)})
        unevaluated = preview_gate(store, config, cand.candidate, base_commit=first, check=check_change)
        assert unevaluated.not_evaluated[0] == f"harnessgit eval {first[:12]} --split selection"
        book = ScoreBook.load(store)
        sides = gate_sides(store, config, cand.candidate, base_commit=first)
        evaluate_sides(store, sides, book, execution=BATCHES)
        outcome = preview_gate(
            store, config, cand.candidate, base_commit=first, book=book, check=check_change
        )
        assert git(gate_repo, "for-each-ref", "refs/notes/harnessgit/gate") == ""
    assert outcome.passed and outcome.base.commit == first
    assert outcome.record.base_mean == pytest.approx(0.25) and outcome.record.candidate_mean == pytest.approx(
        0.75
    )


GATER = """
import sys
from harnessgit.cli import main
sys.exit(main(["-C", sys.argv[1], "-q", "gate", sys.argv[2], "--json"]))
"""


@pytest.mark.slow
def test_concurrent_gates_of_different_comparisons_never_share_an_attempt(gate_repo: Path) -> None:
    # Issue 12: two gates racing on one selection set both read k attempts so far and
    # both recorded attempt k + 1 (5 of 6 trials), each testing at a level only one
    # of them may use. Scores are on record first, so the gates race on deciding alone.
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        candidates = [propose(store, config, {"SKILL.md": skill(30 + n)}).candidate for n in range(6)]
        for candidate in ["main", *candidates]:
            evaluate(store, config, candidate)
    for first, second in zip(candidates[::2], candidates[1::2], strict=True):
        racers = [
            subprocess.Popen(
                [sys.executable, "-c", GATER, str(gate_repo), name], stdout=subprocess.PIPE, text=True
            )
            for name in (first, second)
        ]
        for racer in racers:
            racer.communicate(timeout=120)
    with Store.discover(gate_repo) as store:
        records = [
            r
            for rs in store.notes.records(layout.NOTES_GATE).values()
            for r in rs
            if isinstance(r, GateRecord)
        ]
    attempts = sorted(r.attempt for r in records)
    assert attempts == [1, 2, 3, 4, 5, 6], attempts


def test_the_gate_reads_its_settings_from_the_base_commit_not_the_working_tree(
    gate_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 12, finding 1: an uncommitted `min_effect = -0.5` let a candidate that lost
    # 12.2 points through, and verify raised nothing.
    write(
        gate_repo,
        "harnessgit.toml",
        (gate_repo / "harnessgit.toml").read_text() + "[gate]\nmin_effect = -0.5\n",
    )
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        assert config.gate.min_effect == -0.5  # what the working tree says
        worse = propose(store, config, {"SKILL.md": skill(5)})  # 10 -> 5 of 40 instances: -12.5 points
        with caplog.at_level("WARNING", logger="harnessgit"):
            outcome = run_gate(
                store, config, GateRequest(worse.candidate), execution=BATCHES, check=check_change
            )
        main = git(gate_repo, "rev-parse", "main").strip()
    assert not outcome.passed and outcome.record.min_effect == 0.0
    assert outcome.record.settings == main
    assert any("harnessgit.toml" in r.message and "ignored" in r.message for r in caplog.records)


def test_the_gate_names_uncommitted_evaluator_edits_as_ignored(
    gate_repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 12, finding 7: uncommitted evaluator edits were silently ignored.
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        better = propose(store, config, {"SKILL.md": skill(30)})
        write(gate_repo, "eval.py", (gate_repo / "eval.py").read_text() + "# regrade, not committed\n")
        with caplog.at_level("WARNING", logger="harnessgit"):
            run_gate(store, config, GateRequest(better.candidate), execution=BATCHES, check=check_change)
        main = git(gate_repo, "rev-parse", "main").strip()
    assert [r.getMessage() for r in caplog.records if "ignored" in r.getMessage()] == [
        f"the gate against main: the working tree's eval.py differs from {main[:12]}'s and is ignored: "
        "decisions read the committed settings and run the committed evaluator"
    ]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_an_uncommitted_manifest_does_not_make_a_fresh_selection_set(gate_repo: Path) -> None:
    # Issue 12, finding 1: moving one id into selection in an uncommitted splits.json
    # reset the gate to "attempt 1, alpha spent 0.0304".
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        first = propose(store, config, {"SKILL.md": skill(30)})
        assert (
            run_gate(
                store, config, GateRequest(first.candidate), execution=BATCHES, check=check_change
            ).record.attempt
            == 1
        )
        moved = {
            **SPLITS,
            "train": SPLITS["train"][1:],
            "selection": [*SPLITS["selection"], SPLITS["train"][0]],
        }
        write(gate_repo, "splits.json", json.dumps(moved))
        second = propose(store, config, {"SKILL.md": skill(31)})
        record = run_gate(
            store, config, GateRequest(second.candidate), execution=BATCHES, check=check_change
        ).record
    assert record.attempt == 2 and record.n == len(SPLITS["selection"])


def _no_checking(*_args: object) -> CheckReport:
    raise AssertionError("the gate ran the checks although its proposal kept the verdict")


def test_the_gate_runs_only_with_what_its_caller_gives(gate_repo: Path) -> None:
    """The runner and the checker are the caller's (issue 26): with scores missing and no
    runner, the gate says so and records nothing; with every score and the checks'
    verdict on record, it decides without either."""
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        before = written(gate_repo)
        with pytest.raises(HarnessgitError, match=r"not on record and no evaluator runner was given"):
            run_gate(store, config, GateRequest(cand.candidate), execution=Execution(), check=check_change)
        assert written(gate_repo) == before
        for rev in ("main", cand.candidate):
            evaluate(store, config, rev, EvalRequest(split="selection"))
        outcome = run_gate(
            store, config, GateRequest(cand.candidate), execution=Execution(), check=_no_checking
        )
    assert outcome.passed and outcome.record.attempt == 1
