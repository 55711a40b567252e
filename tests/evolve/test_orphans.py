"""No orphans (issue 13): every iteration evolve starts writes its record, whatever
stops it (a conflict carrying its edit onto a moved base, a budget half-way, Ctrl-C),
and what a run reports spending equals what its records say it spent."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.config import load_config
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.records import IterationRecord, RetireRecord
from harnessgit.records.lines import parse_record
from harnessgit.store import Store
from harnessgit.targets import candidate_tips
from tests.conftest import git
from tests.evolve.evolve_fixtures import assert_on_record
from tests.evolve.test_iteration import climbing_repo

# Scores follow the text (tests/gating_fixtures.py), and every result costs $0.001.
EVALUATOR = """\
import json, re, sys
from pathlib import Path
skill = Path("SKILL.md").read_text()
level = int(re.search(r"LEVEL: (\\d+)", skill).group(1))
fixed = set(re.findall(r"fix (\\S+)", skill))
for line in sys.stdin:
    instance = line.strip()
    good = int(instance.split("-")[1]) < level or instance in fixed
    print(json.dumps({"instance": instance, "score": 1.0 if good else 0.0,
                      "feedback": "ok" if good else f"{instance} failed", "cost": {"usd": 0.001}}))
"""

# Raises the level and fixes its minibatch's failures; costs $0.01 a call. The first
# call moves main meanwhile, to a LEVEL line of its own: every edit of that line
# proposed on the old tip conflicts with main's.
MOVING = """
import json, os, re, subprocess, sys
request = json.load(sys.stdin)
text = request["current_text"]
if not os.path.exists("moved"):
    open("moved", "w").close()
    skill = open("SKILL.md").read()
    open("SKILL.md", "w").write(re.sub(r"LEVEL: \\d+", "LEVEL: 3", skill))
    git = ["git", "-c", "user.name=x", "-c", "user.email=x@x.invalid"]
    subprocess.run(git + ["commit", "-qam", "main moves"], check=True)
level = int(re.search(r"LEVEL: (\\d+)", text).group(1))
failing = [e["instance"] for e in request["examples"] if (e.get("score") or 0) < 1]
text = text.replace(f"LEVEL: {level}", f"LEVEL: {level + 30}") + "".join(f"fix {i}\\n" for i in failing)
print(json.dumps({"text": text, "rationale": "raise the level", "usage": {"cost_usd": 0.01}}))
"""

CLIMBING = MOVING.replace('not os.path.exists("moved")', "False")


def costly_repo(make_repo: Callable[..., Path], proposer: str) -> Path:
    return climbing_repo(make_repo, EVALUATOR, proposer)


@pytest.mark.slow
def test_a_conflict_carrying_onto_a_moved_base_is_recorded_and_the_run_goes_on(
    make_repo: Callable[..., Path],
) -> None:
    """main moves while the first proposal is asked for; the edit, proposed on the old
    tip, cannot be carried onto the new one. Before: exit 3, a live candidate, no record."""
    repo = costly_repo(make_repo, MOVING)
    with Store.discover(repo) as store:
        report = evolve(
            store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=3), seed=0, auto_merge=True)
        )
        assert report.stopped == "max proposals (3)" and len(report.iterations) == 3
        first = report.iterations[0]
        assert first.outcome == "conflict" and first.files == ["SKILL.md"]
        assert first.reason.startswith(f"conflicts with main: SKILL.md: {first.candidate}'s edit conflicts")
        assert first.selection_mean is not None  # judged before the carry: a frontier member
        # Kept as any candidate not gated: live while on the frontier, else archived as dominated.
        tips = candidate_tips(store.refs)
        for record in report.iterations:
            state = tips[record.candidate or ""][0]
            retired = [
                r
                for r in store.notes.records_on(layout.NOTES_EVIDENCE, record.commit or "")
                if isinstance(r, RetireRecord)
            ]
            assert (state == "live") == (not retired)
            assert all(r.reason == "dominated" for r in retired)
        assert_on_record(store, report)


@pytest.mark.slow
def test_a_rollout_budget_half_way_is_recorded_and_the_summary_equals_the_record(
    make_repo: Callable[..., Path],
) -> None:
    """The budget runs out while the candidate waits for its selection run. Before: no
    record, the candidate live and never judged, the summary more than the record."""
    repo = costly_repo(make_repo, CLIMBING)
    with Store.discover(repo) as store:
        config = load_config(repo)
        # main on selection (40) + the parent's minibatch (3) + the candidate's (3): the
        # candidate's selection run (40) does not fit.
        report = evolve(store, config, EvolveRequest(budget=Budget(max_rollouts=60), seed=0))
        (last,) = report.iterations
        assert last.outcome == "budget" and last.reason.startswith("max rollouts (60)")
        assert report.stopped == last.reason and last.candidate_score == 1.0
        assert candidate_tips(store.refs)[last.candidate or ""][0] == "archived"
        (retired,) = [
            r
            for r in store.notes.records_on(layout.NOTES_EVIDENCE, last.commit or "")
            if isinstance(r, RetireRecord)
        ]
        assert retired.reason == "rejected" and "before judging it" in retired.detail
        assert_on_record(store, report)
        resumed = evolve(store, config, EvolveRequest(budget=Budget(max_rollouts=100), seed=0))
        assert resumed.iterations[0].iteration == last.iteration + 1
        assert resumed.iterations[-1].outcome == "budget"
        assert_on_record(store, resumed)
        stop = repo / "stop"
        stop.write_text("")
        stopped = evolve(
            store, config, EvolveRequest(budget=Budget(max_rollouts=100), seed=0, stop_file=stop)
        )
        assert stopped.iterations == [] and stopped.spend.rollouts == 0
        assert_on_record(store, stopped)


# As CLIMBING, but the first call moves main by an edit that does not touch the lines the
# proposals change: the edit carries onto the new tip cleanly, as a new harness.
MOVING_CLEANLY = MOVING.replace("LEVEL: \\d+", "A demo skill").replace('"LEVEL: 3"', '"A moved skill"')


@pytest.mark.slow
def test_a_budget_reached_while_the_carried_copy_is_scored_records_the_copy(
    make_repo: Callable[..., Path],
) -> None:
    """The gate step carries the kept candidate onto the moved main and scores the copy
    on the selection split; the rollout budget runs out there. The record names the copy
    (what the carry step returned), which is archived as never judged."""
    repo = costly_repo(make_repo, MOVING_CLEANLY)
    with Store.discover(repo) as store:
        # main (40) + the parent's minibatch (3) + the candidate's (3) + its selection
        # run (40) + the moved main's, as the frontier is rebuilt (40): the carried
        # copy's selection run (40) does not fit.
        request = EvolveRequest(budget=Budget(max_rollouts=140), seed=0, auto_merge=True)
        report = evolve(store, load_config(repo), request)
        (last,) = report.iterations
        assert last.outcome == "budget" and last.reason.startswith("max rollouts (140)"), last.reason
        assert last.rollouts == 126 and last.candidate_score == 1.0 and last.selection_mean is None
        tips = candidate_tips(store.refs)
        assert tips[last.candidate or ""] == ("archived", last.commit)
        (retired,) = [
            r
            for r in store.notes.records_on(layout.NOTES_EVIDENCE, last.commit or "")
            if isinstance(r, RetireRecord)
        ]
        assert retired.reason == "rejected" and "before judging it" in retired.detail
        originals = [cid for cid, (state, _) in tips.items() if cid != last.candidate]
        assert [tips[cid][0] for cid in originals] == ["live"]  # judged: on the frontier
        assert_on_record(store, report)


INTERRUPTING = CLIMBING.replace(
    "request = json.load(sys.stdin)",
    "request = json.load(sys.stdin)\n"
    "import signal, time\n"
    "if os.path.exists('asked'):\n"
    "    os.kill(os.getppid(), signal.SIGINT)\n"
    "    time.sleep(30)\n"
    "open('asked', 'w').close()",
)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_ctrl_c_half_way_is_recorded_and_reported(make_repo: Callable[..., Path]) -> None:
    """Ctrl-C during the second proposal: the iteration is on record as interrupted
    (its proposal counted), and the report, which the CLI prints before exiting 130,
    equals the record."""
    repo = costly_repo(make_repo, INTERRUPTING)
    with Store.discover(repo) as store:
        report = evolve(store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=5), seed=0))
        assert isinstance(report.interruption, KeyboardInterrupt) and report.stopped == "interrupted"
        last = report.iterations[-1]
        assert last.outcome == "interrupted" and last.candidate is None and last.proposer_calls == 1
        assert_on_record(store, report)
    assert git(repo, "fsck", "--no-dangling") == ""


def test_an_older_record_without_the_new_fields_still_reads() -> None:
    old = {
        "v": 1,
        "id": "a" * 32,
        "kind": "evolve-iteration",
        "ts": "2026-01-01T00:00:00.000000Z",
        "run": "r",
        "seed": 0,
        "iteration": 0,
        "parent": "p" * 40,
        "parent_name": "main",
        "component": "SKILL.md",
        "minibatch": ["a"],
        "outcome": "not-better",
        "cost_usd": 0.5,
    }
    record = parse_record(json.dumps(old).encode())
    assert isinstance(record, IterationRecord)
    assert record.files == [] and record.proposals is None and record.proposer_calls == 1
    skipped = parse_record(json.dumps({**old, "outcome": "skipped-perfect"}).encode())
    assert isinstance(skipped, IterationRecord) and skipped.proposer_calls == 0
