"""Issue 28, defect 4: `log` and `verify`'s summary trusted a forged gate note.

A real passing gate record copied onto an ungated commit (its ``merge`` set to that
commit): `verify` reported the problem and exited 1, but `log` showed the commit as
"pass +15.0 pts" and verify's summary counted it among the gated merges. A verdict
shown is now one that holds for the commit, or says that it does not.
"""

from __future__ import annotations

import json
from pathlib import Path

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.records import GateRecord
from harnessgit.store import Store, Transaction
from tests.cli.runner import run
from tests.conftest import git
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller


def forged(repo: Path) -> tuple[str, str]:
    """A gated merge, then a direct commit carrying a copy of its gate record: (merge, forged)."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        landed = merge(
            store,
            config,
            GateRequest(propose(store, config, {"SKILL.md": skill(30)}).candidate),
            execution=BATCHES,
            check=check_change,
        ).merge
        assert landed is not None
        (record,) = [
            r for r in store.notes.records_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)
        ]
    (repo / "SKILL.md").write_text(skill(35))
    git(repo, "commit", "-q", "-am", "An edit that skipped the gate")
    direct = git(repo, "rev-parse", "HEAD").strip()
    with Store.discover(repo) as store:
        txn = Transaction("a forged gate note")
        txn.append(layout.NOTES_GATE, direct, [record.model_copy(update={"merge": direct})])
        store.refs.commit(txn)
    return landed, direct


def test_log_says_a_copied_gate_record_does_not_verify(gate_repo: Path) -> None:
    landed, direct = forged(gate_repo)
    shown = run(gate_repo, "log")
    assert shown.exit_code == 0, shown.output
    (row,) = [line for line in shown.stdout.splitlines() if line.startswith(direct[:10])]
    assert "does not verify" in row and "pts" not in row, row
    (good,) = [line for line in shown.stdout.splitlines() if line.startswith(landed[:10])]
    assert "pass +" in good and "does not verify" not in good
    entries = {e["commit"]: e for e in json.loads(run(gate_repo, "log", "--json").stdout)["entries"]}
    assert "this merge's parents are" in entries[direct]["gate"]["problem"]
    assert entries[landed]["gate"]["problem"] is None


def test_verify_counts_only_the_gated_merges_that_verify(gate_repo: Path) -> None:
    _, direct = forged(gate_repo)
    checked = run(gate_repo, "verify")
    assert checked.exit_code == 1
    assert "1 gated merge," in checked.stdout and "2 gated merges" not in checked.stdout, checked.stdout
    assert direct[:12] in checked.stdout
