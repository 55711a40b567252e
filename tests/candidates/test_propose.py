from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError, ProposalError
from harnessgit.records import EvidenceRecord, ProposalRecord
from harnessgit.store import Store
from tests.conftest import git, snapshot, write


def test_worktree_edit_becomes_one_commit_and_leaves_the_tree_alone(repo: Path) -> None:
    write(repo, "prompts/system.md", "You are a careful assistant.\nBe brief.\n")
    write(repo, "eval.py", "print('changed evaluator')\n")
    write(repo, "notes.txt", "untracked, not harness\n")
    status_before = git(repo, "status", "--porcelain")
    head_before = git(repo, "rev-parse", "HEAD")
    index_before = (repo / ".git" / "index").read_bytes()
    with Store.discover(repo) as store:
        result = propose(store, load_config(repo), rationale="Ask for brevity")
    assert git(repo, "status", "--porcelain") == status_before
    assert git(repo, "rev-parse", "HEAD") == head_before
    assert (repo / ".git" / "index").read_bytes() == index_before
    assert result.components == ["prompts/system.md"]
    assert result.ignored == ["eval.py", "notes.txt"]
    tip = git(repo, "rev-parse", f"refs/heads/harnessgit/cand/{result.candidate}").strip()
    assert tip == result.commit
    assert git(repo, "rev-parse", f"{tip}^").strip() == head_before.strip()
    assert git(repo, "diff", "--name-only", f"{tip}^", tip).split() == ["prompts/system.md"]
    assert git(repo, "show", f"{tip}:prompts/system.md").endswith("Be brief.\n")
    message = git(repo, "log", "-1", "--format=%B", tip)
    assert message.startswith("Ask for brevity\n")
    assert f"Harnessgit-Candidate: {result.candidate}" in message


def test_file_source_and_parent_chain(repo: Path) -> None:
    with Store.discover(repo) as store:
        config = load_config(repo)
        first = propose(store, config, {"SKILL.md": "---\nname: demo\ndescription: d\n---\nv2\n"})
        second = propose(store, config, {"./prompts/system.md": "new system\n"}, parent=first.candidate)
    assert second.parent == first.commit
    assert git(repo, "show", f"{second.commit}:SKILL.md").endswith("v2\n")
    assert git(repo, "show", f"{second.commit}:prompts/system.md") == "new system\n"
    records = git(repo, "notes", "--ref", layout.NOTES_EVIDENCE, "show", second.commit)
    assert json.loads(records)["parent"] == first.commit


def test_patch_source(repo: Path) -> None:
    patch = (
        "--- a/prompts/system.md\n+++ b/prompts/system.md\n@@ -1 +1,2 @@\n"
        " You are a careful assistant.\n+Cite your sources.\n"
    )
    with Store.discover(repo) as store:
        result = propose(store, load_config(repo), patch.encode(), rationale="Cite")
    assert git(repo, "show", f"{result.commit}:prompts/system.md").endswith("Cite your sources.\n")
    assert result.components == ["prompts/system.md"]


def test_worktree_edit_onto_another_parent_merges_three_ways(repo: Path) -> None:
    with Store.discover(repo) as store:
        config = load_config(repo)
        base = "You are a careful assistant.\n\nline a\nline b\nline c\nline d\n"
        # Commit a longer file first so both edits have room to merge cleanly.
        write(repo, "prompts/system.md", base)
        git(repo, "commit", "-qam", "longer prompt")
        parent = propose(store, config, {"prompts/system.md": base.replace("line a", "line A")})
        write(repo, "prompts/system.md", base.replace("line d", "line D"))
        child = propose(store, config, parent=parent.candidate)
        text = git(repo, "show", f"{child.commit}:prompts/system.md")
        assert "line A" in text and "line D" in text
        write(repo, "prompts/system.md", base.replace("line a", "line X"))
        with pytest.raises(ProposalError, match="conflicts"):
            propose(store, config, parent=parent.candidate)


def test_evidence_is_attached_kept_and_scrubbed(repo: Path) -> None:
    secret = "sk-" + "a" * 40
    evidence = [{"kind": "trajectory", "text": f"key={secret}"}, {"kind": "critique", "text": "ok"}]
    with Store.discover(repo) as store:
        result = propose(store, load_config(repo), {"SKILL.md": "x\n"}, evidence=evidence)
        records = store.notes.records_on(layout.NOTES_EVIDENCE, result.commit)
    (proposal,) = [r for r in records if isinstance(r, ProposalRecord)]
    (ev,) = [r for r in records if isinstance(r, EvidenceRecord)]
    assert proposal.candidate == result.candidate and ev.items == 2
    assert ev.item_kinds == {"trajectory": 1, "critique": 1}
    git(repo, "gc", "-q", "--prune=now")
    stored = git(repo, "cat-file", "-p", ev.blob)
    assert secret not in stored and "[REDACTED]" in stored
    assert git(repo, "cat-file", "-t", result.commit).strip() == "commit"


@pytest.mark.parametrize(
    ("source", "message"),
    [
        ({"eval.py": "print(2)\n"}, "not a harness file"),
        ({"../outside.md": "x"}, "not a path inside the repository"),
        ({"SKILL.md": b"\x00\x01binary"}, "binary"),
        ({"SKILL.md": b"caf\xe9\n"}, "not UTF-8"),
        (b"--- a/prompts/system.md\n+++ b/prompts/system.md\n@@ -1 +1 @@\n-nope\n+x\n", "does not apply"),
        (b"this is not a patch\n", "does not apply"),
        (b"--- a/eval.py\n+++ b/eval.py\n@@ -1 +1 @@\n-print('evaluator')\n+x\n", "not a harness file"),
    ],
)
def test_bad_edits_leave_everything_as_it_was(
    repo: Path, source: dict[str, str | bytes] | bytes, message: str
) -> None:
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(HarnessgitError, match=message):
        propose(store, load_config(repo), source)
    assert snapshot(repo) == before


def test_an_edit_that_changes_nothing_is_refused(repo: Path) -> None:
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(ProposalError, match="changes nothing"):
        propose(store, load_config(repo), {"SKILL.md": (repo / "SKILL.md").read_text()})
    assert snapshot(repo) == before


def test_nothing_to_propose(repo: Path) -> None:
    write(repo, "eval.py", "print('other')\n")
    with Store.discover(repo) as store, pytest.raises(ProposalError, match="no uncommitted changes"):
        propose(store, load_config(repo))


def test_detached_head_still_proposes_on_the_base_branch(repo: Path) -> None:
    git(repo, "checkout", "-q", "--detach")
    write(repo, "SKILL.md", "---\nname: demo\ndescription: d\n---\nedited while detached\n")
    with Store.discover(repo) as store:
        result = propose(store, load_config(repo))
    assert result.parent == git(repo, "rev-parse", "main").strip()


def test_no_commits_yet(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q", "-b", "main")
    write(tmp_path, "harnessgit.toml", "[harness]\npaths = ['SKILL.md']\n")
    write(tmp_path, "SKILL.md", "x\n")
    with Store.discover(tmp_path) as store, pytest.raises(HarnessgitError, match="no commits yet"):
        propose(store, load_config(tmp_path))


PROPOSER = """
import sys
from pathlib import Path
from harnessgit.config import load_config
from harnessgit.candidates.propose import propose
from harnessgit.store import Store
repo = Path(sys.argv[1])
with Store.discover(repo) as store:
    result = propose(store, load_config(repo), {"prompts/system.md": f"writer {sys.argv[2]}\\n"})
print(result.candidate)
"""


@pytest.mark.slow  # several processes race for the same refs
def test_concurrent_proposals_lose_nothing(repo: Path) -> None:
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", PROPOSER, str(repo), str(n)], stdout=subprocess.PIPE, text=True
        )
        for n in range(8)
    ]
    ids = [proc.communicate(timeout=120)[0].strip() for proc in procs]
    assert [proc.returncode for proc in procs] == [0] * 8
    refs = git(repo, "for-each-ref", "--format=%(refname)", layout.CANDIDATES.rstrip("/")).split()
    assert sorted(ref.removeprefix(layout.CANDIDATES) for ref in refs) == sorted(ids)
    notes = git(repo, "notes", "--ref", layout.NOTES_EVIDENCE, "list").splitlines()
    assert len(notes) == 8
    git(repo, "gc", "-q", "--prune=now")
    for ref in refs:
        assert git(repo, "cat-file", "-t", ref).strip() == "commit"
