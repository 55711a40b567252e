"""Ref values read from git's files agree with git, loose, packed or gone."""

from __future__ import annotations

from pathlib import Path

from harnessgit.store import Store
from harnessgit.store.reffiles import UNKNOWN, RefFiles
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
        assert store.ref_value("refs/heads/alias") == second
        assert store.ref_value("refs/heads/nothing") is None


def test_a_linked_worktree_reads_the_shared_refs(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", str(tmp_path / "linked"), "-b", "other")
    head = git(repo, "rev-parse", "HEAD").strip()
    with Store.discover(tmp_path / "linked") as store:
        assert store.ref_value("refs/heads/main") == head
        assert store.ref_value("refs/heads/other") == head
