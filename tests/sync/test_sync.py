"""`harnessgit sync`: clones and a bare remote end with the same records, by each ref's rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.label import move_label
from harnessgit.candidates.propose import propose
from harnessgit.candidates.status import status
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate, with_batches
from harnessgit.gate import gate as gate_module
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.gate.verify import verify
from harnessgit.records import GateRecord, LabelRecord, RetireRecord
from harnessgit.stats.decision import alpha_for_attempt, alpha_spent
from harnessgit.store import Store, Transaction
from harnessgit.sync import sync as sync_module
from harnessgit.sync.sync import SyncResult, sync
from harnessgit.targets import retire
from tests.cli.runner import one_error_line, run
from tests.conftest import CONFIG, git
from tests.gating_fixtures import EVALUATOR, SPLITS, skill

BATCHES = with_batches()  # the runner the gate takes from its caller

TEMPLATE = Path(__file__).parent.parent.parent / "templates" / "sync" / "harnessgit-sync.sh"


def clones(origin: Path, tmp_path: Path, names: tuple[str, ...] = ("a", "b")) -> tuple[Path, list[Path]]:
    """A bare remote made from ``origin`` and a clone of it per name."""
    remote = tmp_path / "remote.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(remote))
    made = []
    for name in names:
        git(tmp_path, "clone", "-q", str(remote), str(tmp_path / name))
        made.append(tmp_path / name)
    return remote, made


def synced(repo: Path, remote: str = "origin") -> SyncResult:
    with Store.discover(repo) as store:
        return sync(store, remote)


def make(repo: Path, level: int) -> tuple[str, str]:
    """A new candidate here, evaluated on the selection split: (id, commit)."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        made = propose(store, config, {"SKILL.md": skill(level)}, rationale=f"level {level}")
        evaluate(store, config, made.candidate)
    return made.candidate, made.commit


def refs(repo: Path, prefix: str) -> dict[str, str]:
    listed = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    return dict(line.split() for line in listed.splitlines())


def candidates(repo: Path) -> tuple[set[str], set[str]]:
    live = {ref.removeprefix(layout.CANDIDATES) for ref in refs(repo, layout.CANDIDATES.rstrip("/"))}
    archived = {ref.removeprefix(layout.ARCHIVE) for ref in refs(repo, layout.ARCHIVE.rstrip("/"))}
    return live, archived


def record_ids(repo: Path) -> dict[str, set[str]]:
    """Every record id on every harnessgit notes ref of a clone."""
    with Store.discover(repo) as store:
        return {
            ref: {record.id for records in store.notes.records(ref).values() for record in records}
            for ref in refs(repo, "refs/notes/harnessgit")
        }


def retire_here(repo: Path, candidate: str) -> None:
    with Store.discover(repo) as store:
        sha = store.refs.resolve(layout.candidate_ref(candidate))
        txn = Transaction(f"retire {candidate}")
        retire(store, txn, candidate, sha, "rejected")
        store.refs.commit(txn)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_labels_travel_and_the_last_recorded_move_wins(gate_repo: Path, tmp_path: Path) -> None:
    # Issue 17: templates/sync/harnessgit-sync.sh left labels behind, so `production`
    # meant one commit on the laptop and another in CI.
    remote, (a, b) = clones(gate_repo, tmp_path)
    first, second = make(a, 12), make(b, 14)
    synced(a), synced(b), synced(a)
    with Store.discover(a) as store:
        move_label(store, "production", first[1], reason="ship 12")
    with Store.discover(b) as store:  # b has not seen a's move: both move from nowhere
        later = move_label(store, "production", second[1], reason="ship 14")
    synced(a)
    result = synced(b)
    assert any("label production was moved from nowhere" in c for c in result.conflicts), result.conflicts
    synced(a)
    ref = layout.LABELS + "production"
    assert refs(a, ref) == refs(b, ref) == refs(remote, ref) == {ref: later.commit}
    with Store.discover(a) as store:
        moves = [
            r
            for rs in store.notes.records(layout.NOTES_LABELS).values()
            for r in rs
            if isinstance(r, LabelRecord)
        ]
    assert sorted(m.reason for m in moves) == ["ship 12", "ship 14"]  # both moves stay on record


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_template_script_now_runs_harnessgit_sync(gate_repo: Path, tmp_path: Path) -> None:
    # The script used to carry no label at all (it said so: "Labels are not synced").
    remote, (a,) = clones(gate_repo, tmp_path, ("a",))
    candidate, commit = make(a, 12)
    with Store.discover(a) as store:
        move_label(store, "staging", commit)
    path = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # the venv's harnessgit
    done = subprocess.run(
        ["bash", str(TEMPLATE), "origin"],
        cwd=a,
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "PATH": path},
    )
    assert done.returncode == 0, done.stderr
    assert refs(remote, layout.LABELS + "staging") == {layout.LABELS + "staging": commit}
    assert candidate in candidates(remote)[0]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_an_archive_move_wins_over_a_live_ref_pushed_back(gate_repo: Path, tmp_path: Path) -> None:
    # Issue 17: candidates retired in one clone came back live (6 of an audit were both
    # live and archived in every clone): an unleased push of a live branch, racing the
    # push that deleted it, recreated it on the remote after the retirement.
    remote, (a, b, c) = clones(gate_repo, tmp_path, ("a", "b", "c"))
    candidate, commit = make(a, 12)
    synced(a), synced(b), synced(c)
    retire_here(a, candidate)
    synced(a)
    assert candidates(remote) == (set(), {candidate})
    git(b, "push", "-q", "origin", f"{layout.candidate_ref(candidate)}:{layout.candidate_ref(candidate)}")
    assert candidates(remote) == ({candidate}, {candidate})  # the race's outcome
    result = synced(c)
    assert result.retired == [candidate]
    synced(b)
    for repo in (a, b, c, remote):
        assert candidates(repo) == (set(), {candidate}), repo
    git(remote, "gc", "-q", "--prune=now")
    git(remote, "cat-file", "-e", commit)  # archived, so still there


def test_a_checked_out_retired_candidate_keeps_its_branch_here_only(gate_repo: Path, tmp_path: Path) -> None:
    remote, (a, b) = clones(gate_repo, tmp_path)
    candidate, _commit = make(a, 12)
    synced(a), synced(b)
    git(b, "checkout", "-q", f"harnessgit/cand/{candidate}")
    retire_here(a, candidate)
    synced(a)
    result = synced(b)
    assert any("checked out here" in c for c in result.conflicts)
    assert candidates(b) == ({candidate}, {candidate}) and candidates(remote) == (set(), {candidate})
    git(b, "checkout", "-q", "main")
    synced(b)
    assert candidates(b) == (set(), {candidate})


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_push_that_loses_the_race_fetches_merges_and_pushes_again(
    gate_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote, (a, b) = clones(gate_repo, tmp_path)
    make(a, 12), make(b, 14)
    real = sync_module.fetch_shared
    calls = []

    def fetch_then_b_pushes(store: Store, name: str) -> dict[str, str]:
        found = real(store, name)
        if not calls:  # between a's fetch and a's push, b pushes its records
            calls.append(name)
            with monkeypatch.context() as inner:
                inner.setattr(sync_module, "fetch_shared", real)
                synced(b)
        return found

    monkeypatch.setattr(sync_module, "fetch_shared", fetch_then_b_pushes)
    result = synced(a)
    monkeypatch.setattr(sync_module, "fetch_shared", real)
    assert result.rounds == 2
    synced(b), synced(a)
    assert record_ids(a) == record_ids(b)
    assert refs(a, "refs/notes") == refs(b, "refs/notes") == refs(remote, "refs/notes")
    assert len(record_ids(a)[layout.NOTES_EVIDENCE]) == 2  # both proposals


def test_sync_with_an_unknown_remote_is_one_line_and_changes_nothing(gate_repo: Path) -> None:
    make(gate_repo, 12)
    before = git(gate_repo, "for-each-ref")
    result = run(gate_repo, "sync", "nowhere")
    assert "cannot fetch from nowhere" in one_error_line(result)
    assert git(gate_repo, "for-each-ref") == before


def test_sync_cli_reports_what_moved_and_then_nothing(gate_repo: Path, tmp_path: Path) -> None:
    remote, (a,) = clones(gate_repo, tmp_path, ("a",))
    make(a, 12)
    first = run(a, "sync")
    assert first.exit_code == 0 and "pushed" in first.output, first.output
    again = run(a, "sync", str(remote))  # a path works as well as a remote's name
    assert again.exit_code == 0 and "nothing to fetch or push" in again.output, again.output


def test_retire_records_and_evidence_survive_gc_on_the_remote(gate_repo: Path, tmp_path: Path) -> None:
    remote, (a, b) = clones(gate_repo, tmp_path)
    with Store.discover(a) as store:
        made = propose(store, load_config(a), {"SKILL.md": skill(12)}, evidence=[{"text": "why a"}])
    with Store.discover(b) as store:
        other = propose(store, load_config(b), {"SKILL.md": skill(14)}, evidence=[{"text": "why b"}])
    retire_here(b, other.candidate)
    synced(a), synced(b), synced(a)
    git(remote, "gc", "-q", "--prune=now")
    assert refs(remote, "refs/harnessgit/evidence-store") == refs(a, "refs/harnessgit/evidence-store")
    with Store.discover(a) as store:
        retired = [
            r
            for rs in store.notes.records(layout.NOTES_EVIDENCE).values()
            for r in rs
            if isinstance(r, RetireRecord)
        ]
        blobs = [
            r.blob
            for rs in store.notes.records(layout.NOTES_EVIDENCE).values()
            for r in rs
            if getattr(r, "blob", None)
        ]
    assert [r.candidate for r in retired] == [other.candidate]
    assert len(blobs) == 2
    for blob in blobs:
        git(remote, "cat-file", "-e", blob)
    assert made.candidate in candidates(remote)[0]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_live_ref_at_another_commit_than_its_archive_is_pinned_and_retired(
    gate_repo: Path, tmp_path: Path
) -> None:
    # Candidate ids are random and never reused, so this does not happen through
    # harnessgit; if it does, the archive still wins and no commit is left unnamed.
    remote, (a,) = clones(gate_repo, tmp_path, ("a",))
    first, second = make(a, 12), make(a, 14)
    git(a, "update-ref", layout.archive_ref(first[0]), second[1])
    result = synced(a)
    assert any(f"candidate {first[0]} was live here at {first[1][:12]}" in c for c in result.conflicts)
    assert candidates(a) == candidates(remote) == ({second[0]}, {first[0]})
    for repo in (a, remote):
        assert git(repo, "rev-parse", f"refs/harnessgit/pins/{first[1]}").strip() == first[1]


def gated(repo: Path, level: int, machine: str, monkeypatch: pytest.MonkeyPatch) -> GateRecord:
    monkeypatch.setenv("HARNESSGIT_MACHINE", machine)
    candidate, _commit = make(repo, level)
    with Store.discover(repo) as store:
        return run_gate(
            store, load_config(repo), GateRequest(candidate), execution=BATCHES, check=check_change
        ).record


@pytest.mark.slow
def test_gate_attempts_after_a_sync_count_every_comparison(
    gate_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 17: two comparisons gated on two clones before syncing both took one k; the
    # next one counted distinct comparisons (k = 4 here), so the levels tested summed past
    # alpha, and `status` showed the alpha of k = 2 as spent.
    _remote, (a, b) = clones(gate_repo, tmp_path)
    assert gated(a, 12, "a", monkeypatch).attempt == 1
    synced(a), synced(b)
    assert gated(a, 14, "a", monkeypatch).attempt == gated(b, 16, "b", monkeypatch).attempt == 2
    synced(a), synced(b), synced(a)
    tested = [alpha_for_attempt(0.05, k) for k in (1, 2, 2)]
    with Store.discover(b) as store:
        spend = status(store, load_config(b)).selection
    assert spend is not None and spend.attempts == 3 and spend.alpha_spent == pytest.approx(sum(tested))
    third = gated(b, 18, "b", monkeypatch)
    assert third.attempt == 8  # 1/9 + ... + 1/49 >= the extra 1/4 of the shared k = 2
    assert sum(tested) + third.alpha_k + (0.05 - alpha_spent(0.05, 8)) <= 0.05
    with Store.discover(a) as store:
        synced(a)
        report = verify(store, load_config(a))
    assert report.ok


@pytest.fixture
def remote_gated_repo(make_repo: Callable[..., Path]) -> Path:
    """gate_repo's harness, with `[gate] remote = "origin"` committed."""
    return make_repo(
        {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(10)},
        config=CONFIG + 'batch_size = 20\njobs = 2\n\n[gate]\nremote = "origin"\n',
    )


def gate_records(repo: Path) -> list[GateRecord]:
    with Store.discover(repo) as store:
        return [
            r
            for rs in store.notes.records(layout.NOTES_GATE).values()
            for r in rs
            if isinstance(r, GateRecord)
        ]


@pytest.mark.slow
def test_gate_remote_gives_every_comparison_its_own_attempt(
    remote_gated_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 17: gated on two clones, two comparisons both took k = 8. With [gate] remote
    # the gate syncs before counting and publishes its record with a lease before it
    # counts: a clone that never synced still takes the next k, and one that loses the
    # race to another clone's gate takes the k after that.
    _remote, (a, b) = clones(remote_gated_repo, tmp_path)
    assert gated(a, 12, "a", monkeypatch).attempt == 1
    assert gated(b, 14, "b", monkeypatch).attempt == 2  # b had not synced
    real = gate_module.synced_before_counting
    raced: list[int] = []

    def a_gates_meanwhile(store: Store, remote: str) -> dict[str, str]:
        before = real(store, remote)
        if not raced:  # once, and not again inside a's own gate
            raced.append(0)
            raced[0] = gated(a, 16, "a", monkeypatch).attempt
            monkeypatch.setenv("HARNESSGIT_MACHINE", "b")
        return before

    monkeypatch.setattr(gate_module, "synced_before_counting", a_gates_meanwhile)
    late = gated(b, 18, "b", monkeypatch)
    assert raced == [3] and late.attempt == 4
    synced(a), synced(b)
    records = gate_records(a)
    assert sorted(r.attempt for r in records) == [1, 2, 3, 4]  # b's lost attempt 3 was taken back
    assert sorted(r.id for r in records) == sorted(r.id for r in gate_records(b))
