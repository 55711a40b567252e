"""The store's repository: finding it, resolving revisions, refusing bad ones."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.errors import NotARepository, UnknownRevision
from harnessgit.store import Store
from tests.conftest import git


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
        blob = store.objects.write_blob(b"written from a linked worktree\n")
    assert git(repo, "cat-file", "-p", blob) == "written from a linked worktree\n"


def test_resolve_rejects_bad_revisions(repo: Path) -> None:
    with Store.discover(repo) as store:
        with pytest.raises(UnknownRevision):
            store.refs.resolve("no-such-branch")
        with pytest.raises(Exception, match="looks like an option"):
            store.refs.resolve("--output=/tmp/x")
