from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.label import history, list_labels, move_label
from harnessgit.candidates.log import accepted_log
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.gate.merge import merge
from harnessgit.gate.revert import revert
from harnessgit.gate.verify import verify
from harnessgit.records import GateRecord, OverrideRecord, RetireRecord
from harnessgit.store import Store, Transaction
from tests.conftest import git, snapshot, write
from tests.gating_fixtures import skill


def test_merge_lands_one_readable_merge_with_its_gate_record(gate_repo: Path) -> None:
    old_main = git(gate_repo, "rev-parse", "main").strip()
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(
            store,
            config,
            {"SKILL.md": skill(30)},
            rationale="Raise the level\n\nIt helps.",
            evidence=[{"kind": "critique", "text": "levels too low"}],
        )
        result = merge(store, config, cand.candidate)
        assert result.merge is not None and result.worktree_updated
        merge_commit = result.merge
        parents = git(gate_repo, "rev-list", "--parents", "-n1", merge_commit).split()[1:]
        assert parents == [old_main, cand.commit]
        assert git(gate_repo, "rev-parse", "main").strip() == merge_commit
        assert git(gate_repo, "rev-parse", f"{merge_commit}^{{tree}}") == git(
            gate_repo, "rev-parse", f"{cand.commit}^{{tree}}"
        )
        message = git(gate_repo, "log", "-1", "--format=%B", merge_commit)
        assert message.startswith(f"Merge candidate {cand.candidate}: Raise the level")
        assert "Gate: passed on 40 selection instances" in message and "Evidence: 1 evidence items" in message
        (gate,) = [r for r in store.notes_on(layout.NOTES_GATE, merge_commit) if isinstance(r, GateRecord)]
        assert gate.passed and gate.merge == merge_commit and gate.commit == cand.commit
        # The candidate is retired, still pinned and audited.
        refs = git(gate_repo, "for-each-ref", "--format=%(refname)").split()
        assert layout.candidate_ref(cand.candidate) not in refs and layout.archive_ref(cand.candidate) in refs
        retired = [
            r for r in store.notes_on(layout.NOTES_EVIDENCE, cand.commit) if isinstance(r, RetireRecord)
        ]
        assert retired[0].reason == "merged"
        log = accepted_log(store, config)
        assert log.entries[0].kind == "merge" and log.entries[0].candidate == cand.candidate
    assert git(gate_repo, "status", "--porcelain") == ""  # checked-out main followed the merge
    assert (gate_repo / "SKILL.md").read_text() == skill(30)


def test_a_rejected_merge_changes_nothing_on_main(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(10, "3. Be polite.")})
        main_before = git(gate_repo, "rev-parse", "main")
        result = merge(store, config, cand.candidate)
    assert result.merge is None and git(gate_repo, "rev-parse", "main") == main_before
    assert git(gate_repo, "rev-parse", f"harnessgit/cand/{cand.candidate}").strip() == cand.commit


def test_merge_refuses_to_clobber_local_edits(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        write(gate_repo, "SKILL.md", skill(10, "my local notes"))
        before = git(gate_repo, "for-each-ref", "refs/heads")
        with pytest.raises(HarnessgitError, match=r"uncommitted changes to SKILL\.md"):
            merge(store, config, cand.candidate)
    assert git(gate_repo, "for-each-ref", "refs/heads") == before
    assert "my local notes" in (gate_repo / "SKILL.md").read_text()


MERGER = """
import sys
from pathlib import Path
from harnessgit.cli import main
sys.exit(main(["-C", sys.argv[1], "-q", "merge", sys.argv[2]]))
"""


def test_two_concurrent_merges_exactly_one_lands(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        first = propose(store, config, {"SKILL.md": skill(30)})
        second = propose(store, config, {"SKILL.md": skill(32)})
        git(gate_repo, "checkout", "-q", "--detach")  # nobody has main checked out
    before = git(gate_repo, "rev-parse", "main").strip()
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", MERGER, str(gate_repo), cid], stderr=subprocess.PIPE, text=True
        )
        for cid in (first.candidate, second.candidate)
    ]
    outputs = [proc.communicate(timeout=120)[1] for proc in procs]
    results = [(proc.returncode, err or "") for proc, err in zip(procs, outputs, strict=True)]
    codes = sorted(code for code, _ in results)
    assert codes[0] == 0 and codes[1] in (1, 3), results
    chain = git(gate_repo, "rev-list", "--first-parent", f"{before}..main").split()
    assert len(chain) == 1  # exactly one merge landed
    landed = chain[0]
    with Store.discover(gate_repo) as store:
        gate_notes = store.notes(layout.NOTES_GATE)
    merges = [
        commit
        for commit, records in gate_notes.items()
        if any(isinstance(r, GateRecord) and r.merge for r in records)
    ]
    assert merges == [landed]  # no half-written merge record for the loser
    if codes[1] == 3:
        assert "moved while the gate ran" in next(err for code, err in results if code == 3)


def test_revert_proposes_the_inverse_and_no_gate_records_an_override(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(store, config, cand.candidate).merge
        assert landed
        proposal, none = revert(store, config, landed)
        assert none is None
        assert git(gate_repo, "show", f"{proposal.commit}:SKILL.md") == skill(10)
        with pytest.raises(HarnessgitError, match="needs --reason"):
            revert(store, config, landed, no_gate=True)
        _, forced = revert(store, config, landed, no_gate=True, reason="production incident 42")
        assert forced is not None and forced.merge
        records = store.notes_on(layout.NOTES_GATE, forced.merge)
        (override,) = [r for r in records if isinstance(r, OverrideRecord)]
        assert override.reason == "production incident 42" and override.action == "revert"
        report = verify(store, config)
    assert report.ok and len(report.overrides) == 1 and report.gated == 1


def test_revert_refuses_what_is_not_an_accepted_edit(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        with pytest.raises(HarnessgitError, match="not an accepted edit"):
            revert(store, config, cand.candidate)


def test_labels_move_with_an_audit_trail(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        first = git(gate_repo, "rev-parse", "main").strip()
        move_label(store, "production", "main", reason="first release")
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(store, config, cand.candidate).merge
        assert landed
        record = move_label(store, "production", "main", reason="ship the level change")
        assert (
            record.previous == first and record.gate is not None and record.author.startswith("Test Author")
        )
        with pytest.raises(HarnessgitError, match="already points"):
            move_label(store, "production", "main")
        with pytest.raises(HarnessgitError, match="invalid label name"):
            move_label(store, "a..b", "main")
        (label,) = list_labels(store).labels
        assert label.name == "production" and label.commit == landed
        assert [m.reason for m in history(store, "production")] == ["first release", "ship the level change"]
    assert git(gate_repo, "rev-parse", "refs/harnessgit/labels/production").strip() == landed


def test_verify_finds_a_commit_that_skipped_the_gate(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        assert merge(store, config, cand.candidate).merge
        assert verify(store, config).ok
        write(gate_repo, "SKILL.md", skill(35))
        git(gate_repo, "commit", "-qam", "sneaky direct edit")
        report = verify(store, config)
    assert not report.ok and "without the gate" in report.findings[0].problem


def test_verify_finds_a_forged_gate_record(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(store, config, cand.candidate).merge
        assert landed
        (real,) = [r for r in store.notes_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        # A merge by hand of another edit, with a copy of the real gate record pasted on it.
        write(gate_repo, "SKILL.md", skill(5))
        git(gate_repo, "commit", "-qam", "worse edit")
        forged = git(gate_repo, "rev-parse", "HEAD").strip()
        txn = Transaction("forge")
        txn.append(layout.NOTES_GATE, forged, [real.model_copy(update={"merge": forged, "id": "f" * 32})])
        store.commit(txn)
        report = verify(store, config)
    problems = " ".join(f.problem for f in report.findings)
    assert "merged tree" in problems and "parents" in problems


def test_verify_finds_a_decision_that_does_not_recompute(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        landed = merge(store, config, cand.candidate).merge
        assert landed
        (real,) = [r for r in store.notes_on(layout.NOTES_GATE, landed) if isinstance(r, GateRecord)]
        txn = Transaction("tamper")
        tampered = real.model_copy(update={"lower_bound": 0.9, "id": "e" * 32, "supersedes": real.id})
        txn.append(layout.NOTES_GATE, landed, [tampered])
        store.commit(txn)
        report = verify(store, config)
    assert any("does not recompute" in f.problem for f in report.findings)


def test_cli_exit_codes(gate_repo: Path) -> None:
    from click.testing import CliRunner

    from harnessgit.cli import cli
    from harnessgit.cli._base import State

    def run(*args: str) -> tuple[int, str, str]:
        result = CliRunner(catch_exceptions=False).invoke(cli, ["-C", str(gate_repo), *args], obj=State())
        return result.exit_code, result.stdout, result.stderr

    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        good = propose(store, config, {"SKILL.md": skill(30)}).candidate
        noop = propose(store, config, {"SKILL.md": skill(10, "# cosmetic")}).candidate
    code, out, _ = run("gate", noop)
    assert code == 1 and "REJECT" in out
    code, out, _ = run("gate", good, "--json")
    assert code == 0 and '"verdict": "pass"' in out
    assert isinstance(json.loads(out)["check_findings"], list)
    before = snapshot(gate_repo)
    code, _, _ = run("merge", "no-such-candidate")
    assert code == 3 and snapshot(gate_repo) == before
    code, out, _ = run("merge", good)
    assert code == 0 and "merged into main" in out
    code, out, _ = run("verify")
    assert code == 0 and "verify: OK" in out
    code, out, _ = run("label", "production", "main", "--reason", "ship")
    assert code == 0
    code, out, _ = run("label", "--list")
    assert "production" in out and "ship" in out
    code, out, _ = run("log")
    assert good in out
