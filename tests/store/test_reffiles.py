"""Ref values read from git's files agree with git, loose, packed or gone."""

from __future__ import annotations

from pathlib import Path

from harnessgit.store import Store
from harnessgit.store.reffiles import SEARCHES, UNKNOWN, RefFiles
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
