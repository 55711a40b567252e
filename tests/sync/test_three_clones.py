"""Three clones and a bare remote, each writing and syncing in a random (seeded) order,
some syncs at the same time: every clone ends with the same refs and every record ever
written, no candidate both live and archived, and a clean `verify` (issue 17)."""

from __future__ import annotations

import contextlib
import random
import threading
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.label import LabelUnchanged, move_label
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.errors import GateRefused, ProposalError
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest, run_gate
from harnessgit.gate.merge import merge
from harnessgit.gate.verify import verify
from harnessgit.store import Store
from tests.conftest import git
from tests.sync.test_sync import candidates, clones, make, record_ids, refs, retire_here, synced

BATCHES = with_batches()  # the runner the gate takes from its caller

SHARED = ("refs/heads/harnessgit", "refs/harnessgit", "refs/notes/harnessgit")


def step(repo: Path, what: str, rng: random.Random) -> None:
    live = sorted(candidates(repo)[0])
    pick = rng.choice(live) if live else None
    with Store.discover(repo) as store:
        config = load_config(repo)
        try:
            if what == "gate" and pick:
                run_gate(store, config, GateRequest(pick), execution=BATCHES, check=check_change)
            elif what == "merge" and pick:
                merge(store, config, GateRequest(pick), execution=BATCHES, check=check_change)
            elif what == "label" and pick:
                move_label(store, rng.choice(["production", "staging"]), layout.candidate_ref(pick))
        except (GateRefused, LabelUnchanged):
            pass  # not descending from this clone's base tip, the alpha spent, already there
    if what == "propose":
        with contextlib.suppress(ProposalError):  # the level its base has already
            make(repo, rng.randrange(8, 30))
    elif what == "retire" and pick:
        retire_here(repo, pick)
    elif what == "sync":
        synced(repo)


def sync_at_once(repos: list[Path]) -> None:
    failures: list[BaseException] = []

    def one(repo: Path) -> None:
        try:
            synced(repo)
        except BaseException as exc:  # reported below, in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=one, args=(repo,)) for repo in repos]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures


@pytest.mark.slow
@pytest.mark.parametrize("seed", [1, 2])
def test_three_clones_writing_and_syncing_in_any_order_agree(
    gate_repo: Path, tmp_path: Path, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = random.Random(seed)
    remote, repos = clones(gate_repo, tmp_path, ("a", "b", "c"))
    actions = ["propose"] * 3 + ["gate"] * 2 + ["sync"] * 3 + ["retire", "label"] * 2 + ["merge"]
    for number in range(30):
        if number % 8 == 7:
            sync_at_once(repos)
            continue
        repo = rng.choice(repos)
        monkeypatch.setenv("HARNESSGIT_MACHINE", repo.name)
        step(repo, rng.choice(actions), rng)
    written: dict[str, set[str]] = {}
    for repo in repos:
        for ref, ids in record_ids(repo).items():
            written.setdefault(ref, set()).update(ids)
    for repo in [*repos, *repos]:
        synced(repo)
    for prefix in SHARED:
        assert all(refs(repo, prefix) == refs(remote, prefix) for repo in repos), prefix
    for repo in repos:
        assert record_ids(repo) == written  # identical, and not one record lost
        live, archived = candidates(repo)
        assert not live & archived
        with Store.discover(repo) as store:
            report = verify(store, load_config(repo))
        assert report.ok, [f.problem for f in report.findings]
    git(remote, "fsck", "--no-dangling")
