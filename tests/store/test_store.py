from __future__ import annotations

import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.errors import ConcurrentUpdate, NotARepository, UnknownRevision
from harnessgit.records import EvidenceRecord, ProposalRecord
from harnessgit.store import EVIDENCE_STORE, PINS_PREFIX, Blob, Store, Transaction
from tests.conftest import git

TS = datetime(2026, 1, 1, tzinfo=timezone.utc)


def record(n: int = 0) -> ProposalRecord:
    return ProposalRecord(
        ts=TS, candidate=f"c{n}", parent="0" * 40, components=["SKILL.md"], rationale=f"r{n}", source="api"
    )


def test_discover_errors(tmp_path: Path) -> None:
    with pytest.raises(NotARepository, match="not a git repository"):
        Store.discover(tmp_path)
    bare = tmp_path / "bare.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    with pytest.raises(NotARepository, match="bare repository"):
        Store.discover(bare)
    with pytest.raises(NotARepository, match="not a directory"):
        Store.discover(tmp_path / "missing")
    work = tmp_path / "work"
    git(tmp_path, "init", "-q", str(work))
    with pytest.raises(NotARepository, match="not inside a working tree"):
        Store.discover(work / ".git")


def test_discover_from_subdirectory_and_linked_worktree(repo: Path, tmp_path: Path) -> None:
    with Store.discover(repo / "prompts") as store:
        assert store.root == repo
    linked = tmp_path / "linked"
    git(repo, "worktree", "add", "-q", str(linked))
    with Store.discover(linked) as store:
        blob = store.write_blob(b"written from a linked worktree\n")
    assert git(repo, "cat-file", "-p", blob) == "written from a linked worktree\n"


def test_objects_match_git(repo: Path) -> None:
    with Store.discover(repo) as store:
        blob = store.write_blob(b"hello\n")
        assert blob == git(repo, "hash-object", "--stdin", input="hello\n").strip()
        head = store.resolve_commit("HEAD")
        tree = store.commit_info(head).tree
        new_tree = store.edit_tree(
            tree, {"prompts/new.md": Blob(blob), "SKILL.md": None, "deep/a/b/c.md": Blob(blob)}
        )
        listing = git(repo, "ls-tree", "-r", "--name-only", new_tree).split()
        assert listing == [
            "deep/a/b/c.md",
            "eval.py",
            "harnessgit.toml",
            "prompts/new.md",
            "prompts/system.md",
        ]
        commit = store.write_commit(new_tree, [head], "subject\n\nbody")
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    assert git(repo, "log", "-1", "--format=%s|%b|%P", commit).strip() == f"subject|body\n|{head}"


def test_resolve_rejects_bad_revisions(repo: Path) -> None:
    with Store.discover(repo) as store:
        with pytest.raises(UnknownRevision):
            store.resolve_commit("no-such-branch")
        with pytest.raises(Exception, match="looks like an option"):
            store.resolve_commit("--output=/tmp/x")


def test_notes_are_readable_by_git_and_back(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.resolve_commit("HEAD")
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, head, [record(1)])
        store.commit(txn)
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, head, [record(2)])
        store.commit(txn)
        shown = git(repo, "notes", f"--ref={layout.NOTES_EVIDENCE}", "show", head)
        assert shown.count("\n") == 2 and '"candidate":"c1"' in shown
        # git's own writer on the same ref; then we append again on top of it.
        git(repo, "notes", f"--ref={layout.NOTES_EVIDENCE}", "append", "-m", "", "HEAD")
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, head, [record(3)])
        store.commit(txn)
        records = store.notes_on(layout.NOTES_EVIDENCE, head)
        assert [r.candidate for r in records if isinstance(r, ProposalRecord)] == ["c1", "c2", "c3"]
        assert store.notes(layout.NOTES_EVIDENCE)[head] == records
        assert git(repo, "rev-parse", f"{PINS_PREFIX}{head}").strip() == head


def test_notes_written_by_git_with_fanout_are_found(repo: Path) -> None:
    # 300 notes make git use a fanout layout; we must find and extend them in place.
    shas = []
    for i in range(300):
        shas.append(git(repo, "commit-tree", "HEAD^{tree}", "-m", f"c{i}").strip())
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=repo, check=True, input=_notes_import(shas).encode()
    )
    tree = git(repo, "ls-tree", layout.NOTES_EVIDENCE)
    assert "\ttree" not in tree and " tree " in tree  # git chose a fanout
    with Store.discover(repo) as store:
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, shas[7], [record(7)])
        store.commit(txn)
        text = git(repo, "notes", f"--ref={layout.NOTES_EVIDENCE}", "show", shas[7])
        assert text.startswith("note7\n") and '"candidate":"c7"' in text
        assert len(store.raw_notes(layout.NOTES_EVIDENCE)) == 300


def _notes_import(shas: list[str]) -> str:
    lines = [f"commit {layout.NOTES_EVIDENCE}", "committer T <t@e> 0 +0000", "data 0", ""]
    for i, sha in enumerate(shas):
        body = f"note{i}\n"
        lines += [f"N inline {sha}", f"data {len(body)}", body.rstrip("\n")]
    return "\n".join(lines) + "\n\n"


def test_transaction_is_all_or_nothing(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.resolve_commit("HEAD")
        txn = Transaction("setup")
        txn.create("refs/heads/harnessgit/cand/x", head)
        store.commit(txn)
        before = git(repo, "for-each-ref")
        txn = Transaction("conflicting")
        txn.create("refs/heads/harnessgit/cand/y", head)
        txn.create("refs/heads/harnessgit/cand/x", head)  # exists already: the whole thing fails
        txn.append(layout.NOTES_GATE, head, [record()])
        txn.keep(store.write_blob(b"evidence"))
        with pytest.raises(ConcurrentUpdate):
            store.commit(txn)
        assert git(repo, "for-each-ref") == before


def test_kept_blobs_and_pinned_commits_survive_gc(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.resolve_commit("HEAD")
        tree = store.commit_info(head).tree
        orphan = store.write_commit(tree, [head], "an evaluated commit no branch holds")
        blob = store.write_blob(b"a trajectory nobody else references\n")
        txn = Transaction("test")
        txn.append(layout.NOTES_EVALS, orphan, [EvidenceRecord(ts=TS, blob=blob, items=1, bytes=10)])
        txn.keep(blob)
        store.commit(txn)
    git(repo, "gc", "-q", "--prune=now")
    assert git(repo, "cat-file", "-t", orphan).strip() == "commit"
    assert git(repo, "cat-file", "-p", blob) == "a trajectory nobody else references\n"
    assert git(repo, "rev-parse", EVIDENCE_STORE)


APPENDER = """
import sys
from datetime import datetime, timezone
from harnessgit.records import ProposalRecord
from harnessgit.store import Store, Transaction
repo, target, who = sys.argv[1], sys.argv[2], sys.argv[3]
with Store.discover(__import__("pathlib").Path(repo)) as store:
    for i in range(50):
        txn = Transaction("append")
        txn.append("refs/notes/harnessgit/evals", target, [ProposalRecord(
            ts=datetime.now(timezone.utc), candidate=f"{who}-{i}", parent="0" * 40,
            components=[], rationale="", source="api")])
        store.commit(txn)
"""


def test_concurrent_writers_lose_nothing(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(repo), head, f"w{n}"]) for n in range(8)]
    assert [proc.wait(timeout=300) for proc in procs] == [0] * 8
    with Store.discover(repo) as store:
        records = store.notes_on(layout.NOTES_EVALS, head)
    names = {r.candidate for r in records if isinstance(r, ProposalRecord)}
    assert len(records) == 400 and len(names) == 400


def test_ref_reads_see_updates_by_other_processes(repo: Path) -> None:
    with Store.discover(repo) as store:
        first = store.ref_value("refs/heads/main")
        assert first == git(repo, "rev-parse", "main").strip()  # the cat-file process is running now
        git(repo, "commit", "-q", "--allow-empty", "-m", "moved by plain git")
        assert store.ref_value("refs/heads/main") == git(repo, "rev-parse", "main").strip() != first
        git(repo, "pack-refs", "--all")
        git(repo, "commit", "-q", "--allow-empty", "-m", "moved again, refs packed")
        assert store.ref_value("refs/heads/main") == git(repo, "rev-parse", "main").strip()
        git(repo, "update-ref", "-d", "refs/heads/main")
        assert store.ref_value("refs/heads/main") is None


@pytest.mark.parametrize("attributes", [False, True])
def test_checkout_tree_writes_files_modes_and_links(repo: Path, tmp_path: Path, attributes: bool) -> None:
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link.md").symlink_to("SKILL.md")
    if attributes:  # through git checkout-index, so that filters and eol rules apply
        (repo / ".gitattributes").write_text("*.md text eol=lf\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "modes")
    target = tmp_path / f"out-{attributes}"
    target.mkdir()
    with Store.discover(repo) as store:
        store.checkout_tree(store.commit_info(store.resolve_commit("HEAD")).tree, target)
    assert (target / "prompts" / "system.md").read_text() == (repo / "prompts" / "system.md").read_text()
    assert (target / "run.sh").stat().st_mode & 0o111
    assert (target / "link.md").is_symlink()
    assert (target / "link.md").read_text() == (repo / "SKILL.md").read_text()
    assert sorted(p.name for p in target.iterdir()) == sorted(
        p.name for p in repo.iterdir() if p.name != ".git"
    )
