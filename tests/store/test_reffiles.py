"""Ref values read from git's files agree with git, loose, packed or gone."""

from __future__ import annotations

import subprocess
from pathlib import Path

from harnessgit.readstore.reffiles import SEARCHES, UNKNOWN, RefFiles
from harnessgit.store import Store
from tests.conftest import git


def test_ref_files_agree_with_git_loose_packed_and_deleted(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    second = git(repo, "rev-parse", "HEAD").strip()
    files = RefFiles(repo / ".git")
    git(repo, "update-ref", "refs/harnessgit/archive/a", head)
    assert files.value("refs/harnessgit/archive/a") == head  # loose
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs/harnessgit/archive/a").exists()
    assert files.value("refs/harnessgit/archive/a") == head  # packed
    git(repo, "update-ref", "refs/harnessgit/archive/a", second)
    assert files.value("refs/harnessgit/archive/a") == second  # loose wins over packed
    git(repo, "update-ref", "-d", "refs/harnessgit/archive/a")
    assert files.value("refs/harnessgit/archive/a") is None  # gone from both
    assert files.value("refs/heads/main") == second
    assert files.value("refs/heads/main/x") is None  # under a file: no such ref
    git(repo, "symbolic-ref", "refs/heads/alias", "refs/heads/main")
    assert files.value("refs/heads/alias") == UNKNOWN  # git resolves symbolic refs
    with Store.discover(repo) as store:
        assert store.refs.value("refs/heads/alias") == second
        assert store.refs.value("refs/heads/nothing") is None


def test_a_linked_worktree_reads_the_shared_refs(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "other")
    head = git(repo, "rev-parse", "HEAD").strip()
    with Store.discover(tmp_path / "linked") as store:
        assert store.refs.value("refs/heads/main") == head
        assert store.refs.value("refs/heads/other") == head


def test_packed_refs_searched_in_order_agree_with_git(repo: Path) -> None:
    """A sorted packed-refs is searched, not parsed whole (issue 17): every ref, names
    between and around them, and refs beside annotated tags' peeled lines."""
    head = git(repo, "rev-parse", "HEAD").strip()
    updates = "".join(f"create refs/harnessgit/archive/c{i:03d} {head}\n" for i in range(0, 300, 3))
    git(repo, "update-ref", "--stdin", input=updates)
    for name in ("a", "m", "z"):
        git(repo, "tag", "-a", "-m", name, f"t-{name}")
    git(repo, "pack-refs", "--all")
    packed = (repo / ".git" / "packed-refs").read_text()
    assert packed.startswith("# pack-refs with:") and " sorted" in packed.splitlines()[0]
    assert "\n^" in packed  # peeled lines, which the search must step over
    listed = dict(
        line.split() for line in git(repo, "for-each-ref", "--format=%(refname) %(objectname)").splitlines()
    )
    absent = ["refs/a", "refs/zzz", "refs/tags/t-b", "refs/tags/t-", "refs/tags/t-zz", "refs/heads/mai"]
    absent += [f"refs/harnessgit/archive/c{i:03d}" for i in range(1, 300, 3)]
    expected = {**listed, **dict.fromkeys(absent)}
    # Searched: a fresh reader for each ref (one reader parses the file after SEARCHES).
    assert {name: RefFiles(repo / ".git").value(name) for name in expected} == expected
    files = RefFiles(repo / ".git")
    assert {name: files.value(name) for name in expected} == expected
    assert len(expected) > SEARCHES and files._packed is not None  # the reader of many refs parsed it
    # Without git's "sorted" trait, every line is read, as before.
    (repo / ".git" / "packed-refs").write_text("\n".join(reversed(packed.splitlines()[1:])) + "\n")
    unsorted = RefFiles(repo / ".git")
    assert unsorted.value("refs/harnessgit/archive/c000") == head
    assert unsorted.value("refs/harnessgit/archive/c001") is None


def _rev_parse(repo: Path, rev: str) -> str | None:
    result = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    return result.stdout.strip() or None


def test_head_and_branch_names_read_from_files_agree_with_git(repo: Path, tmp_path: Path) -> None:
    """What `check` resolves on every commit (HEAD, [harness] base) without a process:
    the same commit git names, or UNKNOWN where git's reading is wider (tags, remotes,
    detached HEAD, pseudo-refs), whichever ref kind shadows which."""
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    second = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "branch", "old", head)
    git(repo, "update-ref", "refs/remotes/origin/main", head)
    git(repo, "update-ref", "refs/remotes/up", head)
    git(repo, "tag", "-a", "-m", "t", "shadow", head)
    git(repo, "branch", "shadow", second)  # the tag wins in git's order
    files = RefFiles(repo / ".git")
    git_dir = repo / ".git"
    for name in ("main", "old", "shadow", "up", "nothing", "origin", "origin/main", "HEAD", "main~1"):
        found = files.head(git_dir) if name == "HEAD" else files.branch(git_dir, name)
        assert found == UNKNOWN or found == _rev_parse(repo, name), name
    assert files.head(git_dir) == second and files.branch(git_dir, "old") == head
    assert files.branch(git_dir, "shadow") == UNKNOWN and files.branch(git_dir, "up") == UNKNOWN
    git(repo, "pack-refs", "--all")
    assert files.branch(git_dir, "old") == head and files.branch(git_dir, "nothing") == UNKNOWN
    assert files.branch(git_dir, head[:7]) == UNKNOWN  # no such ref: git reads an abbreviated id
    git(repo, "checkout", "-q", "--detach")
    assert files.head(git_dir) == UNKNOWN  # detached: git reads it
    git(repo, "checkout", "-q", "--orphan", "fresh")
    assert files.head(git_dir) is None and _rev_parse(repo, "HEAD") is None  # unborn
    git(repo, "checkout", "-q", "main")
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "other", "old")
    with Store.discover(tmp_path / "linked") as store:
        assert store.refs.resolve("HEAD") == head  # the linked worktree's own HEAD
        assert store.refs.resolve("main") == second


def test_ref_listings_read_from_files_agree_with_for_each_ref(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    labels = "refs/harnessgit/labels/"
    updates = "".join(f"create {labels}{name} {head}\n" for name in ("b", "a/x", "a-y", "c"))
    git(repo, "update-ref", "--stdin", input=updates)
    git(repo, "pack-refs", "--all")
    git(repo, "commit", "-q", "--allow-empty", "-m", "second")
    git(repo, "update-ref", f"{labels}c", "HEAD")  # loose over packed
    git(repo, "update-ref", f"{labels}a/z", "HEAD")  # loose only
    files = RefFiles(repo / ".git")
    listed = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", labels).splitlines()
    found = files.listing(labels)
    assert found is not None and [f"{ref} {sha}" for ref, sha in found.items()] == listed
    assert files.listing("refs/harnessgit/none/") == {}
    git(repo, "symbolic-ref", f"{labels}alias", "refs/heads/main")
    assert files.listing(labels) is None  # a symbolic ref: git lists it
    with Store.discover(repo) as store:
        assert [f"{ref} {sha}" for ref, sha in store.refs.listing(labels).items()] == git(
            repo, "for-each-ref", "--format=%(refname) %(objectname)", labels
        ).splitlines()
