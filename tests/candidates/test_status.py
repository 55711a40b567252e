"""`harnessgit status`: the base tip, the live candidates, the archive and the alpha
spent, from the record alone."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import Proposal, propose
from harnessgit.candidates.render import status_text
from harnessgit.candidates.status import StatusResult, status
from harnessgit.config import load_config
from harnessgit.gate.frontier import frontier_view
from harnessgit.render import to_json
from harnessgit.stats.decision import alpha_for_attempt, alpha_spent
from harnessgit.store import Store, Transaction
from harnessgit.store.index import index_path
from harnessgit.store.retired import REASONS
from harnessgit.targets import retire
from tests.cli.runner import run
from tests.conftest import git
from tests.gating_fixtures import skill
from tests.history_fixtures import _gate_record, store_scores

T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


def ticking() -> Iterator[datetime]:
    """A clock one minute later at every reading: candidates get distinct creation times."""
    now = T0
    while True:
        yield now
        now += timedelta(minutes=1)


@dataclass(frozen=True)
class Scene:
    main: str
    up: Proposal  # s-0..s-29 pass: the best, on the frontier; gated, passed
    tweak: Proposal  # on `up`, breaks s-1: dominated by it; gated twice, rejected
    down: Proposal  # s-0..s-4 only: dominated
    fresh: Proposal  # not evaluated


def scene(repo: Path) -> Scene:
    ticks = ticking()
    with Store.discover(repo, clock=lambda: next(ticks)) as store:
        config = load_config(repo)
        main = git(repo, "rev-parse", "main").strip()
        up = propose(store, config, {"SKILL.md": skill(30)}, rationale="Raise the level")
        tweak = propose(
            store, config, {"SKILL.md": skill(30, "break s-1")}, rationale="Break one", parent=up.candidate
        )
        down = propose(store, config, {"SKILL.md": skill(5)}, rationale="Lower the level")
        fresh = propose(store, config, {"SKILL.md": skill(12)}, rationale="Not evaluated yet")
        gone = [propose(store, config, {"SKILL.md": skill(11 + i)}, rationale=f"Gone {i}") for i in range(4)]
        txn = Transaction("test gates and retirements")
        for cand, attempt, passed, difference in [(up, 1, True, 0.5), (tweak, 2, False, -0.025)]:
            record = _gate_record(store, config, main, cand.commit, "", cand.candidate, 2, 0)
            txn.append(
                layout.NOTES_GATE,
                cand.commit,
                [
                    record.model_copy(
                        update={
                            "merge": None,
                            "passed": passed,
                            "attempt": attempt,
                            "difference": difference,
                            "alpha_k": alpha_for_attempt(0.05, attempt),
                            "alpha_spent": alpha_spent(0.05, attempt),
                        }
                    )
                ],
            )
        for cand, reason in zip(gone, ["dominated", "merged", "rejected", "dominated"], strict=True):
            retire(store, txn, cand.candidate, cand.commit, reason)
        store.refs.commit(txn)
    # Archived with no retire record of its own (the one on its commit is another id's).
    git(repo, "update-ref", "refs/harnessgit/archive/0ld0ne", gone[1].commit)
    store_scores(repo, [main, up.commit, tweak.commit, down.commit])
    return Scene(main, up, tweak, down, fresh)


def status_of(repo: Path, now: datetime = T0 + timedelta(hours=3)) -> StatusResult:
    with Store.discover(repo, clock=lambda: now) as store:
        return status(store, load_config(repo))


def test_status_shows_each_live_candidate_and_the_base(review_repo: Path) -> None:
    s = scene(review_repo)
    result = status_of(review_repo)
    assert (result.base.branch, result.base.commit, result.base.n) == ("main", s.main, 40)
    assert result.base.mean == pytest.approx(0.25) and result.selection_size == 40
    by_id = {c.candidate: c for c in result.candidates}
    assert [c.candidate for c in result.candidates] == [
        p.candidate for p in (s.up, s.tweak, s.down, s.fresh)
    ]  # oldest first
    up, tweak, down, fresh = (by_id[p.candidate] for p in (s.up, s.tweak, s.down, s.fresh))
    assert (up.parent, tweak.parent, fresh.parent) == ("main", s.up.candidate, "main")
    assert (up.subject, up.commit) == ("Raise the level", s.up.commit)
    assert (up.n, fresh.n) == (40, 0) and up.mean == pytest.approx(0.75) and fresh.mean is None
    assert all(c.comparable for c in result.candidates)
    assert [c.on_frontier for c in (up, tweak, down, fresh)] == [True, False, False, None]
    assert up.gate is not None and up.gate.passed and (up.gate.attempt, up.gate.difference) == (1, 0.5)
    assert tweak.gate is not None and not tweak.gate.passed and tweak.gate.attempt == 2
    assert down.gate is None and fresh.gate is None
    assert result.archived == {"merged": 1, "rejected": 1, "dominated": 2, "unknown": 1}
    spend = result.selection
    assert spend is not None and (spend.attempts, spend.passed) == (2, 1)
    assert spend.alpha_spent == pytest.approx(alpha_spent(0.05, 2))


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_frontier_membership_is_the_frontier_commands(review_repo: Path) -> None:
    scene(review_repo)
    result = status_of(review_repo)
    with Store.discover(review_repo) as store:
        view = frontier_view(store, load_config(review_repo))
    in_pool = {c.candidate for c in result.candidates if c.on_frontier is not None}
    assert in_pool == set(view.members) - {"main"}
    assert {c.candidate for c in result.candidates if c.on_frontier} == set(view.frontier.members) - {"main"}


def test_status_text_and_json(review_repo: Path) -> None:
    s = scene(review_repo)
    result = status_of(review_repo)
    text = status_text(result)
    lines = text.splitlines()
    assert lines[0] == f"main at {s.main[:12]}: selection 25.0 ± 6.9 on 40 of 40 instances"
    assert lines[1].startswith("  evaluator ") and lines[1].endswith(", model sim-1")
    assert lines[2].endswith(f": 2 gate attempts, 1 passed, alpha spent {alpha_spent(0.05, 2):.4f} of 0.05")
    assert "4 live candidates:" in lines
    (up,) = [line for line in lines if line.startswith(s.up.candidate)]
    assert up.split()[1:7] == ["main", "3h", "40/40", "75.0", "yes", "pass"]
    assert "+50.0 pts (attempt 1)" in up and up.endswith("Raise the level")
    (fresh,) = [line for line in lines if line.startswith(s.fresh.candidate)]
    assert fresh.split()[1:6] == ["main", "2h", "0/40", "-", "-"]  # 2h57m: whole hours
    assert lines[-1] == "archived: 1 merged, 1 rejected, 2 dominated, 1 unknown"
    data = json.loads(to_json(result))
    assert list(data) == [
        "base",
        "fingerprint",
        "model",
        "selection_size",
        "candidates",
        "archived",
        "selection",
        "problem",
        "has_evaluator",
    ]
    assert data["candidates"][0]["created"] == "2026-03-01T09:00:00.000000Z"
    assert data["candidates"][0]["gate"]["passed"] is True


def test_status_before_anything_is_evaluated_or_proposed(review_repo: Path) -> None:
    result = status_of(review_repo)
    assert result.base.n == 0 and result.candidates == [] and result.archived == {}
    assert result.selection is not None and result.selection.attempts == 0
    text = status_text(result)
    assert "not evaluated on the selection split (harnessgit eval main)" in text
    assert "0 gate attempts" in text and "no live candidates" in text and text.endswith("archived: none")
    (review_repo / "splits.json").unlink()
    missing = status_of(review_repo)
    assert missing.selection is None and missing.problem and "splits.json not found" in missing.problem
    assert "no selection numbers: split manifest splits.json not found" in status_text(missing)


def test_status_keeps_its_archive_counts_and_doctor_checks_them(review_repo: Path) -> None:
    """The counts of archived candidates by reason are derived and kept beside the notes
    indexes: the second `status` reads them; edited, `doctor` finds them and removes them."""
    scene(review_repo)
    expected = {"merged": 1, "rejected": 1, "dominated": 2, "unknown": 1}
    assert status_of(review_repo).archived == expected
    with Store.discover(review_repo) as store:
        saved = index_path(store, REASONS)
    data = json.loads(saved.read_bytes())
    saved.write_text(json.dumps({**data, "counts": {"merged": 5}}))
    assert status_of(review_repo).archived == {"merged": 5}  # trusted: only a recount tells
    found = run(review_repo, "doctor")
    assert found.exit_code == 1 and "archived-reasons" in found.output, found.output
    assert run(review_repo, "doctor", "--fix").exit_code == 0
    assert status_of(review_repo).archived == expected
