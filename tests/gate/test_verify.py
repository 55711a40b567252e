"""`harnessgit verify`: an ungated commit, a forged record, a decision that does not recompute."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest

import harnessgit.gate.gate as gate_module
from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.errors import ConfigError, GateRefused
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.gate.merge import merge
from harnessgit.gate.override import override
from harnessgit.gate.render import verify_text
from harnessgit.gate.verify import verify
from harnessgit.records import GateRecord
from harnessgit.stats.decision import alpha_for_attempt
from harnessgit.stats.verdict import screened_prior
from harnessgit.store import Store, Transaction
from tests.conftest import git, write
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller


def test_verify_finds_a_commit_that_skipped_the_gate(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        assert merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change).merge
        assert verify(store, config).ok
        write(gate_repo, "SKILL.md", skill(35))
        git(gate_repo, "commit", "-qam", "sneaky direct edit")
        report = verify(store, config)
    assert not report.ok and "without the gate" in report.findings[0].problem


def test_verify_finds_a_forged_gate_record(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
        ).merge
        assert landed
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        # A merge by hand of another edit, with a copy of the real gate record pasted on it.
        write(gate_repo, "SKILL.md", skill(5))
        git(gate_repo, "commit", "-qam", "worse edit")
        forged = git(gate_repo, "rev-parse", "HEAD").strip()
        txn = Transaction("forge")
        txn.append(layout.NOTES_GATE, forged, [real.model_copy(update={"merge": forged, "id": "f" * 32})])
        store.refs.commit(txn)
        report = verify(store, config)
    problems = " ".join(f.problem for f in report.findings)
    assert "merged tree" in problems and "parents" in problems


def verify_tampered(gate_repo: Path, **changes: object) -> list[str]:
    """Merge a candidate through the gate, supersede its gate record by a copy with
    ``changes`` (as anyone who can write notes could), and say what verify finds."""
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
        ).merge
        assert landed
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        txn = Transaction("tamper")
        copy = real.model_copy(update={**changes, "id": "e" * 32, "supersedes": real.id})
        txn.append(layout.NOTES_GATE, landed, [copy])
        store.refs.commit(txn)
        return [finding.problem for finding in verify(store, config).findings]


def test_verify_finds_a_decision_that_does_not_recompute(gate_repo: Path) -> None:
    problems = verify_tampered(gate_repo, lower_bound=0.9)
    assert any("does not recompute" in problem for problem in problems)


def test_verify_recomputes_the_verdict_and_the_prior(gate_repo: Path) -> None:
    """Issue 25: the verdict, the policy and the prior of true gains are on the record,
    and verify recomputes them (the prior from the gate records before it)."""
    problems = verify_tampered(gate_repo, prior_mean=0.2)
    assert problems and all("its prior (mean +0.2000" in problem for problem in problems)


def test_a_record_from_before_three_verdicts_reads_and_verifies_as_before(gate_repo: Path) -> None:
    """A gate record written before issue 25 has none of its fields: it reads as pass
    (or fail), and verify re-checks it as it always did."""
    new = (
        "verdict", "se", "upper_bound", "chance_better", "expected_loss", "corrected", "needed",
        "prior_mean", "prior_sd", "prior_looks", "q",
    )  # fmt: skip
    assert verify_tampered(gate_repo, **dict.fromkeys(new)) == []
    with Store.discover(gate_repo) as store:
        (old,) = [
            r for rs in store.notes.records(layout.NOTES_GATE).values() for r in rs
            if isinstance(r, GateRecord) and r.verdict is None and r.merge
        ]  # fmt: skip
        assert old.shown_verdict == "pass" and old.policy == "strict"


def test_verify_finds_a_stated_chance_that_does_not_recompute(gate_repo: Path) -> None:
    problems = verify_tampered(gate_repo, chance_better=0.5)
    assert problems == ["what it states does not recompute from the stored scores: chance_better"]


def test_verify_finds_a_verdict_that_does_not_recompute(gate_repo: Path) -> None:
    problems = verify_tampered(gate_repo, verdict="inconclusive")
    assert any("does not recompute" in problem and "(inconclusive)" in problem for problem in problems)


def test_verify_finds_a_decision_made_with_settings_its_base_did_not_commit(gate_repo: Path) -> None:
    # Issue 12, finding 1: a merge decided with an uncommitted `min_effect = -0.5`
    # passed verify. The record now has to match the settings committed at its base.
    problems = verify_tampered(gate_repo, min_effect=-0.5)
    assert any("settings its base did not commit: min_effect -0.5" in problem for problem in problems)


def test_verify_lists_infrastructure_and_asks_an_override_for_settings(gate_repo: Path) -> None:
    # Issue 12, finding 4: a README commit on main was "moved the base branch without the
    # gate", and only `revert --no-gate` could land it; a settings change went unnoticed.
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        write(gate_repo, "README.md", "How to run the evaluator.\n")
        git(gate_repo, "add", "README.md")
        git(gate_repo, "commit", "-qm", "Docs")
        docs = git(gate_repo, "rev-parse", "HEAD").strip()
        report = verify(store, config)
        assert report.ok and [(i.commit, i.files, i.beside) for i in report.infrastructure] == [
            (docs, ["README.md"], [])
        ]
        write(
            gate_repo,
            "harnessgit.toml",
            (gate_repo / "harnessgit.toml").read_text() + "[gate]\nmin_effect = -0.5\n",
        )
        git(gate_repo, "commit", "-qam", "Let candidates lose a little")
        lax = git(gate_repo, "rev-parse", "HEAD").strip()
        report = verify(store, config)
        (finding,) = report.findings
        assert finding.commit == lax and "the gate's settings ([gate])" in finding.problem
        assert f"harnessgit override {lax[:12]} --reason" in finding.problem
        record = override(store, config, lax, reason="agreed in review: small losses are noise here")
        assert record.action == "settings" and record.commit == lax
        report = verify(store, config)
    assert report.ok and [o.commit for o in report.overrides] == [lax]


def test_verify_names_a_regrade(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        write(gate_repo, "eval.py", (gate_repo / "eval.py").read_text() + "# stricter soon\n")
        git(gate_repo, "commit", "-qam", "A new grader")
        (finding,) = verify(store, config).findings
    assert "the evaluator (eval.py): a regrade" in finding.problem


def test_verify_before_harnessgit_is_set_up_is_an_error(make_repo: Callable[..., Path]) -> None:
    # Issue 12, finding 4: before `init`, verify printed OK and exited 0.
    repo = make_repo(config=None)
    with Store.discover(repo) as store, pytest.raises(ConfigError, match="not set up"):
        verify(store, load_config(repo))


def test_verify_notes_infrastructure_beside_a_harness_file(gate_repo: Path) -> None:
    # In anthropics/skills, 5 of 17 commits outside `**/SKILL.md` changed a skill's
    # reference files, which its agent reads: infrastructure by the globs, but worth a look.
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        write(gate_repo, "skills/pdf/SKILL.md", skill(10))
        git(gate_repo, "add", "-A")
        git(gate_repo, "commit", "-qm", "A pdf skill")
        override(store, config, "HEAD", reason="written by hand, before any evaluation")
        write(gate_repo, "skills/pdf/reference.md", "How to fill forms.\n")
        write(gate_repo, "docs/setup.md", "How to set up.\n")
        git(gate_repo, "add", "-A")
        git(gate_repo, "commit", "-qm", "Reference for the pdf skill")
        report = verify(store, config)
    assert report.ok
    (entry,) = report.infrastructure
    assert entry.files == ["docs/setup.md", "skills/pdf/reference.md"] and entry.beside == [
        "skills/pdf/reference.md"
    ]
    text = verify_text(report)
    assert f"infrastructure {entry.commit[:12]}: docs/setup.md, skills/pdf/reference.md" in text
    assert "note: skills/pdf/reference.md changed beside a harness file, outside [harness] paths" in text


def test_verify_reads_a_merge_whose_gate_note_another_commit_shares(gate_repo: Path) -> None:
    # Issue 15, defect 12: notes were keyed by blob id, so a commit carrying a copy of the
    # merge's gate note (`git notes copy`) hid the merge's note: "moved the base branch
    # changing the harness (SKILL.md) without the gate".
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
        ).merge
        assert landed and verify(store, config).ok
        # A commit whose id sorts after the merge's: the one that kept the blob before. A
        # merge id near ffff... may leave none in reach (64 tries missed once in CI): then
        # any commit, which tests the fix, if not the worst case of the old reader.
        made = ""
        for i in range(1024):
            made = git(gate_repo, "commit-tree", "HEAD^{tree}", "-p", landed, "-m", f"c{i}").strip()
            if made > landed:
                break
        later = made
        git(gate_repo, "notes", f"--ref={layout.NOTES_GATE}", "copy", landed, later)
        report = verify(store, config)
    assert report.ok and report.gated == 1, [f.problem for f in report.findings]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_verify_finds_an_attempt_number_counted_too_low(gate_repo: Path) -> None:
    # One repository, no second clone: a record that claims attempt 1 after another
    # comparison took it, with no two comparisons sharing a k, is a forged count.
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        first = propose(store, config, {"SKILL.md": skill(20)})
        assert (
            run_gate(
                store, config, GateRequest(first.candidate), execution=BATCHES, check=check_change
            ).record.attempt
            == 1
        )
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change
        ).merge
        assert landed
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        assert real.attempt == 2
        txn = Transaction("tamper")
        update = {"attempt": 1, "alpha_k": alpha_for_attempt(0.05, 1), "id": "c" * 32, "supersedes": real.id}
        txn.append(layout.NOTES_GATE, landed, [real.model_copy(update=update)])
        store.refs.commit(txn)
        report = verify(store, config)
    assert report.shared_attempts == []
    assert any("recorded as attempt 1, but 1 other comparisons" in f.problem for f in report.findings)


def clone_and_propose(
    origin: Path, where: Path, machine: str, level: int, monkeypatch: pytest.MonkeyPatch
) -> str:
    """A clone of ``origin`` with a candidate of its own; HARNESSGIT_MACHINE names the
    machine on the gate records it writes from now on. Returns the candidate id."""
    git(origin.parent, "clone", "-q", str(origin), str(where))
    monkeypatch.setenv("HARNESSGIT_MACHINE", machine)
    with Store.discover(where) as store:
        return propose(store, load_config(where), {"SKILL.md": skill(level)}).candidate


def share_gate_notes(repo: Path, remote: Path) -> None:
    """docs/ci.md's sharing commands, for the gate notes: fetch, cat_sort_uniq, push."""
    theirs = "refs/notes/remotes/origin/harnessgit/gate"
    if git(repo, "ls-remote", str(remote), layout.NOTES_GATE):
        git(repo, "fetch", "-q", str(remote), f"+{layout.NOTES_GATE}:{theirs}")
        git(repo, "notes", f"--ref={layout.NOTES_GATE}", "merge", "-q", "-s", "cat_sort_uniq", theirs)
    git(repo, "push", "-q", str(remote), f"{layout.NOTES_GATE}:{layout.NOTES_GATE}")


@pytest.mark.slow
def test_verify_names_an_attempt_two_clones_shared(
    gate_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 15, defect 4 across clones: two clones gated different candidates on one
    # selection set before syncing, so both took k = 1. After the notes merge, verify
    # said the properly gated merge "spent too little of alpha" (exit 1). It was gated
    # right with what its clone knew; what happened is that the selection set's alpha was
    # spent twice at alpha_1: verify now says that, naming both records and machines.
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(gate_repo), str(origin))
    ci = tmp_path / "ci"
    gated = clone_and_propose(origin, ci, "ci-runner", 20, monkeypatch)
    with Store.discover(ci) as store:
        assert (
            run_gate(
                store, load_config(ci), GateRequest(gated), execution=BATCHES, check=check_change
            ).record.attempt
            == 1
        )
    laptop = tmp_path / "laptop"
    merged = clone_and_propose(origin, laptop, "laptop", 30, monkeypatch)
    with Store.discover(laptop) as store:
        config = load_config(laptop)
        landed = merge(store, config, GateRequest(merged), execution=BATCHES, check=check_change).merge
        assert landed
        share_gate_notes(ci, origin)
        share_gate_notes(laptop, origin)
        report = verify(store, config)
        assert report.ok and report.findings == [] and report.gated == 1
        (shared,) = report.shared_attempts
        assert shared.attempt == 1 and shared.merges == [landed]
        assert [r.worker.split(":")[0] for r in shared.records if r.worker] == ["ci-runner", "laptop"]
        assert shared.spent == pytest.approx(2 * alpha_for_attempt(0.05, 1)) and shared.spent > shared.alpha
        text = verify_text(report)
        assert "took the same attempt 1" in text and "no longer bounded by alpha" in text
        assert all(r.id[:8] in text for r in shared.records)
        assert text.endswith("verify: OK (1 shared attempt: the gate's guarantee is weaker)")
        # 2 alpha_1 > alpha: no next level keeps the family-wise bound (issue 17; it
        # used to test the next comparison at alpha_3, spending 1.28 alpha in all).
        monkeypatch.setenv("HARNESSGIT_MACHINE", "laptop")
        cand = propose(store, config, {"SKILL.md": skill(35)})
        with pytest.raises(GateRefused, match="has spent its alpha"):
            run_gate(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)


def test_verify_learns_a_given_prior_again_from_the_gains_the_record_lists(gate_repo: Path) -> None:
    """Issue 25, item 7: evolve's gate learns its prior from the looks it screened and
    lists their (gain, se) on the record; verify learns the same prior from that list,
    and a list that does not give the recorded prior is a problem."""
    gains = [(0.02 * (i % 5) - 0.03, 0.07) for i in range(12)]
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store,
            config,
            GateRequest(cand.candidate, prior_gains=gains),
            execution=BATCHES,
            check=check_change,
        ).merge
        assert landed
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        assert real.prior_gains == [tuple(g) for g in gains] and real.prior_looks == 12
        assert verify(store, config).ok
        txn = Transaction("tamper")
        forged = [(0.3, 0.01)] * 12
        copy = real.model_copy(update={"prior_gains": forged, "id": "e" * 32, "supersedes": real.id})
        txn.append(layout.NOTES_GATE, landed, [copy])
        store.refs.commit(txn)
        problems = [finding.problem for finding in verify(store, config).findings]
    assert any("does not recompute from the gains it lists" in problem for problem in problems)


def test_verify_learns_the_prior_with_the_algorithm_the_record_names(
    gate_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25, item 3: the prior's algorithm changed (2: hierarchical); a record names
    the one that decided it, and a record from before (no name) was algorithm 1's, so
    verify re-checks it with algorithm 1 as before. Naming another fails to recompute."""
    gains = [(0.02 * (i % 5) - 0.03, 0.07) for i in range(12)]
    monkeypatch.setattr(gate_module, "screened_prior", partial(screened_prior, algorithm=1))
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store,
            config,
            GateRequest(cand.candidate, prior_gains=gains),
            execution=BATCHES,
            check=check_change,
        ).merge
        assert landed
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        assert real.prior_algorithm == 1
        assert real.prior_mean != screened_prior(gains, algorithm=2).mean  # the algorithms differ here
        found = {}
        for name, algorithm in (("before", None), ("wrong", 2)):
            txn = Transaction("tamper")
            copy = real.model_copy(
                update={"prior_algorithm": algorithm, "id": name[0] * 32, "supersedes": real.id}
            )
            txn.append(layout.NOTES_GATE, landed, [copy])
            store.refs.commit(txn)
            found[name] = [finding.problem for finding in verify(store, config).findings]
    assert found["before"] == []
    assert any("does not recompute from the gains it lists" in problem for problem in found["wrong"])


def test_verify_recomputes_a_record_of_prior_algorithm_3(
    gate_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 25 item 3, second pass: algorithm 3 learns the prior from the first gain on
    (algorithm 2 from the fifth) and states the chance of a look decided on its own se
    under Student's t; a record of algorithm 3 verifies, and the same record claiming
    algorithm 2 does not recompute."""
    gains = [(-0.03, 0.01), (0.01, 0.01), (0.05, 0.01)]
    monkeypatch.setattr(gate_module, "screened_prior", partial(screened_prior, algorithm=3))
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(
            store,
            config,
            GateRequest(cand.candidate, prior_gains=gains),
            execution=BATCHES,
            check=check_change,
        ).merge
        assert landed
        (real,) = [r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        assert real.prior_algorithm == 3 and real.prior_looks == 3
        assert verify(store, config).ok
        txn = Transaction("tamper")
        copy = real.model_copy(update={"prior_algorithm": 2, "id": "w" * 32, "supersedes": real.id})
        txn.append(layout.NOTES_GATE, landed, [copy])
        store.refs.commit(txn)
        problems = [finding.problem for finding in verify(store, config).findings]
    assert any("does not recompute from the gains it lists" in problem for problem in problems)
