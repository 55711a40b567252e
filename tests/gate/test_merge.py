"""`harnessgit merge`: one readable merge, all or nothing, never over local edits."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.log import accepted_log
from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.errors import GateRefused, HarnessgitError
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.records import GateRecord, RetireRecord
from harnessgit.store import Store
from tests.candidates.chain_fixtures import merged_chain
from tests.conftest import git, write
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller


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
        result = merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
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
        (gate,) = [
            r for r in store.notes.records_on(layout.NOTES_GATE, merge_commit) if isinstance(r, GateRecord)
        ]
        assert gate.passed and gate.merge == merge_commit and gate.commit == cand.commit
        # The candidate is retired, still pinned and audited.
        refs = git(gate_repo, "for-each-ref", "--format=%(refname)").split()
        assert layout.candidate_ref(cand.candidate) not in refs and layout.archive_ref(cand.candidate) in refs
        retired = [
            r
            for r in store.notes.records_on(layout.NOTES_EVIDENCE, cand.commit)
            if isinstance(r, RetireRecord)
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
        result = merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    assert result.merge is None and git(gate_repo, "rev-parse", "main") == main_before
    assert git(gate_repo, "rev-parse", f"harnessgit/cand/{cand.candidate}").strip() == cand.commit


def written(repo: Path) -> str:
    """Every ref, harnessgit's notes included: what a refused merge must leave as it was."""
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


def test_merge_refuses_to_clobber_local_edits_before_the_gate_spends_anything(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        write(gate_repo, "SKILL.md", skill(10, "my local notes"))
        before = written(gate_repo)
        with pytest.raises(HarnessgitError, match=r"uncommitted changes to SKILL\.md"):
            merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    # Refused first: no evaluation (no evals note), no gate attempt (no gate note).
    assert written(gate_repo) == before
    assert "my local notes" in (gate_repo / "SKILL.md").read_text()


def test_the_readme_flow_edit_propose_merge(gate_repo: Path) -> None:
    # The working tree already holds what the merge writes: that is not a conflict.
    write(gate_repo, "SKILL.md", skill(30))
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config)  # from the working tree, which it leaves as it is
        assert (gate_repo / "SKILL.md").read_text() == skill(30)
        result = merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    assert result.merge is not None and result.worktree_updated
    assert git(gate_repo, "status", "--porcelain") == ""  # index and files follow main
    assert git(gate_repo, "rev-parse", "HEAD").strip() == result.merge


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_merging_a_merged_candidate_again_is_refused_and_spends_nothing(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        assert merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change).merge
        before = written(gate_repo)
        with pytest.raises(GateRefused, match="merged into main already"):
            merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    assert written(gate_repo) == before


MERGER = """
import sys
from pathlib import Path
from harnessgit.cli import main
sys.exit(main(["-C", sys.argv[1], "-q", "merge", sys.argv[2]]))
"""


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
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
        gate_notes = store.notes.records(layout.NOTES_GATE)
    merges = [
        commit
        for commit, records in gate_notes.items()
        if any(isinstance(r, GateRecord) and r.merge for r in records)
    ]
    assert merges == [landed]  # no half-written merge record for the loser
    if codes[1] == 3:  # refused while the other held main (store/landing_lock.py), before its gate
        assert "another harnessgit merge (pid " in next(err for code, err in results if code == 3)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_merged_chain_lists_every_proposal_with_its_own_effect(gate_repo: Path) -> None:
    """Issue 12, finding 5: a candidate proposed on three others lands all four. The
    message lists them oldest first, each with its own measured effect, and its title
    does not credit the gain to the last edit (here a harmful one)."""
    chain, landed = merged_chain(gate_repo)
    message = git(gate_repo, "log", "-1", "--format=%B", landed)
    first, *_ = message.splitlines()
    assert first == f"Merge candidate {chain[-1].candidate}: 4 edits (last: Break s-3)"
    items = [line for line in message.splitlines() if line[:3] in {"1. ", "2. ", "3. ", "4. "}]
    assert items == [
        f"1. {chain[0].candidate}: Raise the level to 30",
        f"2. {chain[1].candidate}: Fix s-35",
        f"3. {chain[2].candidate}: Fix s-36",
        f"4. {chain[3].candidate}: Break s-3",
    ]
    effects = [line.strip() for line in message.splitlines() if line.strip().startswith("Effect: ")]
    assert effects == [
        "Effect: +50.0 points on 40 selection instances (25.0 -> 75.0)",
        "Effect: not evaluated",  # its own scores are missing
        "Effect: not evaluated",  # its parent's are
        "Effect: -2.5 points on 40 selection instances (80.0 -> 77.5)",
    ]
    assert "   Most failures are past s-9." in message and "   A harmful rule, last of four." in message
    assert "Gate (all edits together): passed on 40 selection instances" in message
    assert message.rstrip().endswith(f"Harnessgit-Candidate: {chain[-1].candidate}")


def test_merge_refuses_a_conflicted_index_before_the_gate_spends_anything(gate_repo: Path) -> None:
    """git moves no index with conflicts in it: found out after main moved, that left the
    working tree behind (issue 15, defect 3); now refused first, for any path."""
    git(gate_repo, "checkout", "-q", "-b", "side")
    write(gate_repo, "prompts/system.md", "You are terse.\n")
    git(gate_repo, "commit", "-q", "-am", "terse")
    git(gate_repo, "checkout", "-q", "main")
    write(gate_repo, "prompts/system.md", "You are verbose.\n")
    git(gate_repo, "commit", "-q", "-am", "verbose")
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)})
        subprocess.run(["git", "merge", "-q", "side"], cwd=gate_repo, capture_output=True, check=False)
        before = written(gate_repo)
        with pytest.raises(
            HarnessgitError, match=r"in the middle of a conflicted merge \(prompts/system\.md\)"
        ):
            merge(store, config, GateRequest(cand.candidate), execution=BATCHES, check=check_change)
    assert written(gate_repo) == before
