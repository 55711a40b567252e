"""The history audit's store answers what git would about the chain (issue 27): a
commit's entries at given paths, replayed from an older answer with the chain's changes
since, are `git ls-tree`'s, through adds, edits, deletions, renames (away, and a new file
of the old name in the same commit), a symbolic link, a file that becomes a folder and
back, and a merge."""

from __future__ import annotations

import gc
import os
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harnessgit.candidates import history
from harnessgit.candidates.history_store import ChainStore
from harnessgit.config import load_config
from harnessgit.store import Store
from tests.conftest import git, write

PATHS = ["SKILL.md", "a/SKILL.md", "a/b/SKILL.md", "c/SKILL.md", "d/SKILL.md", "e", "e/SKILL.md", "x/y"]


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


def move(repo: Path, source: str, target: str) -> None:
    (repo / target).parent.mkdir(parents=True, exist_ok=True)
    git(repo, "mv", source, target)


def make_history(repo: Path) -> None:
    write(repo, "a/SKILL.md", "# A\n")
    commit(repo, "add a")
    write(repo, "a/SKILL.md", "# A, edited\n")
    write(repo, "a/b/SKILL.md", "# B\n")
    commit(repo, "edit a, add b")
    move(repo, "a/SKILL.md", "c/SKILL.md")
    commit(repo, "rename a to c")
    write(repo, "a/SKILL.md", "# A again, a new file\n")
    move(repo, "c/SKILL.md", "d/SKILL.md")
    commit(repo, "a new a and c renamed to d")
    move(repo, "d/SKILL.md", "x")
    write(repo, "d/SKILL.md", "# D, new\n")
    commit(repo, "d renamed away and a new d in one commit")
    os.symlink("a/SKILL.md", repo / "e")
    git(repo, "rm", "-q", "a/b/SKILL.md")
    commit(repo, "a link, b deleted")
    (repo / "e").unlink()
    write(repo, "e/SKILL.md", "# E is a folder now\n")
    commit(repo, "e becomes a folder")
    git(repo, "checkout", "-q", "-b", "side")
    git(repo, "rm", "-q", "x")
    write(repo, "x/y", "y\n")
    commit(repo, "side: x becomes a folder")
    git(repo, "checkout", "-q", "main")
    git(repo, "rm", "-q", "-r", "e")
    write(repo, "e", "e is a file again\n")
    commit(repo, "e is a file again")
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    write(repo, "SKILL.md", "# Root, edited\n")
    commit(repo, "edit the root")


def test_entries_from_the_chain_are_gits(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    make_history(repo)
    rng = random.Random(27)
    with Store.discover(repo) as store:
        chain = store.history.first_parent_changes(store.refs.resolve("main"))
        assert len(chain) >= 10
        for trial in range(20):
            chained = ChainStore(store, chain, {})
            asked: list[str] = []
            real = store.objects.entries_at
            chained.objects._part = Asking(real, asked)
            for commit_id, _changes in reversed(chain):  # oldest first, as the audit asks
                paths = rng.sample(PATHS, rng.randint(1, len(PATHS))) if trial else PATHS
                expected = store.objects.entries_at(commit_id, paths)
                found = chained.objects.entries_at(commit_id, paths)
                assert list(found.items()) == list(expected.items()), (commit_id, paths)
            assert len(asked) < len(chain)  # not once a commit: most answers are replayed


class Asking:
    """The objects part, counting the `entries_at` questions that reach git."""

    def __init__(self, entries_at: Callable[..., dict[str, object]], asked: list[str]) -> None:
        self._entries_at, self.asked = entries_at, asked

    def entries_at(self, treeish: str, paths: list[str] | None = None) -> dict[str, object]:
        self.asked.append(treeish)
        return self._entries_at(treeish, paths)


def test_the_audit_collects_garbage_less_often_and_restores_the_setting(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_repo()
    write(repo, "SKILL.md", "# Skill, edited\n")
    commit(repo, "edit")
    seen: list[tuple[int, int, int]] = []
    real = history._harness

    def harness(*args: Any) -> Any:
        seen.append(gc.get_threshold())
        return real(*args)

    monkeypatch.setattr(history, "_harness", harness)
    before = gc.get_threshold()
    with Store.discover(repo) as store:
        result = history.harness_history(store, load_config(repo), cache=False)
    assert result.harness_commits >= 1 and seen
    assert all(during[0] == max(history.AUDIT_GC_THRESHOLD, before[0]) for during in seen)
    assert gc.get_threshold() == before
