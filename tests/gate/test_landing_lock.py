"""Issue 28, defect 5: concurrent merges in one checkout.

Two `merge`s into a checked-out main at once both gated and recorded a pass (each
spending its attempt's alpha); the slower one then found the checkout moved by the
other and said "uncommitted changes ... commit or stash them first" although nobody had
edited the tree. A landing now holds the branch from before the gate
(`store/landing_lock.py`): the second is refused at once and says why.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.records import GateRecord
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot
from tests.gating_fixtures import skill

MERGER = """
import sys
from harnessgit.cli import main
sys.exit(main(["-C", sys.argv[1], "-q", "merge", sys.argv[2]]))
"""

HOLDER = """
import sys
from pathlib import Path
from harnessgit.store import Store
with Store.discover(Path(sys.argv[1])) as store, store.refs.landing("main"):
    print("held", flush=True)
    sys.stdin.read()
"""


def gate_decisions(repo: Path) -> set[str]:
    """The ids of the gate records: one per decision (a merge copies its record onto the
    merge commit, under the same id)."""
    with Store.discover(repo) as store:
        notes = store.notes.records(layout.NOTES_GATE)
    return {r.id for records in notes.values() for r in records if isinstance(r, GateRecord)}


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_two_merges_in_one_checkout_spend_one_attempt_and_say_what_happened(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        first = propose(store, config, {"SKILL.md": skill(30)})
        second = propose(store, config, {"SKILL.md": skill(32)})
    before = git(gate_repo, "rev-parse", "main").strip()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MERGER, str(gate_repo), cid], stderr=subprocess.PIPE, text=True
        )
        for cid in (first.candidate, second.candidate)
    ]
    results = [(proc.wait(timeout=120), proc.communicate()[1]) for proc in procs]
    codes = sorted(code for code, _ in results)
    assert codes[0] == 0 and codes[1] in (1, 3), results
    assert len(git(gate_repo, "rev-list", "--first-parent", f"{before}..main").split()) == 1
    # The loser spent nothing: refused while the other held main, or, started after it
    # landed, refused by the gate (not on the new tip), which records nothing either.
    assert len(gate_decisions(gate_repo)) == 1, results
    lost = next(err for code, err in results if code != 0)
    assert "uncommitted changes" not in lost
    if codes[1] == 3:
        assert "another harnessgit merge (pid " in lost
        assert "is landing on main and updating this checkout" in lost
    assert git(gate_repo, "status", "--porcelain") == ""


def test_a_merge_while_another_holds_the_branch_is_refused_before_the_gate(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        cand = propose(store, load_config(gate_repo), {"SKILL.md": skill(30)}).candidate
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(gate_repo)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        before = snapshot(gate_repo)
        line = one_error_line(run(gate_repo, "merge", cand))
        assert (
            f"another harnessgit merge (pid {holder.pid}) is landing on main and updating this checkout: "
            "nothing was gated or written; rerun once it ends"
        ) in line
        assert snapshot(gate_repo) == before and gate_decisions(gate_repo) == set()
    finally:
        holder.communicate("")
    # The holder gone, its lock is too (the kernel drops a flock with its process).
    assert run(gate_repo, "-q", "merge", cand).exit_code == 0
