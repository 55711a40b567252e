from __future__ import annotations

import os
from pathlib import Path

from harnessgit.readstore.changes import parse_raw_diff
from harnessgit.store import ZERO, Side, Store
from tests.conftest import git, write


def test_diff_raw_between_commits_index_and_worktree(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "mv", "prompts/system.md", "prompts/renamed.md")
    write(repo, "SKILL.md", "staged\n")
    git(repo, "add", "SKILL.md")
    write(repo, "SKILL.md", "unstaged\n")
    (repo / "eval.py").unlink()
    write(repo, "prompts/new.md", "untracked\n")
    with Store.discover(repo) as store:
        staged = {change.path: change for change in store.history.diff_raw(head, cached=True)}
        assert set(staged) == {"SKILL.md", "prompts/renamed.md"}
        renamed = staged["prompts/renamed.md"]
        assert (renamed.status, renamed.old_path) == ("R", "prompts/system.md")
        assert store.objects.read_blob(staged["SKILL.md"].new.sha) == b"staged\n"  # type: ignore[union-attr]
        worktree = {change.path: change for change in store.history.diff_raw(head)}
        assert worktree["SKILL.md"].new == Side("100644", ZERO)  # read it from disk
        assert worktree["eval.py"].status == "D" and worktree["eval.py"].new is None
        assert store.worktree.untracked_files() == ["prompts/new.md"]
        assert store.worktree.untracked_files(["prompts/new.md", "SKILL.md"]) == ["prompts/new.md"]
        assert store.worktree.untracked_files(["SKILL.md"]) == [] and store.worktree.untracked_files([]) == []
        git(repo, "commit", "-q", "-m", "next")
        new = git(repo, "rev-parse", "HEAD").strip()
        between = {change.path: change.status for change in store.history.diff_raw(head, new)}
        assert between == {"SKILL.md": "M", "prompts/renamed.md": "R"}
        empty = store.objects.empty_tree()
        assert {change.status for change in store.history.diff_raw(empty, new)} == {"A"}


def test_index_entries_entries_at_and_sizes(repo: Path) -> None:
    write(repo, "weird [name]*.md", "glob characters are literal\n")
    git(repo, "add", "-A")
    with Store.discover(repo) as store:
        entries = store.worktree.index_entries(["weird [name]*.md", "missing.md"])
        assert list(entries) == ["weird [name]*.md"]
        assert store.worktree.index_entries([]) == {}
        head = store.refs.resolve("HEAD")
        at_head = store.objects.entries_at(head, ["SKILL.md", "prompts/system.md"])
        assert sorted(at_head) == ["SKILL.md", "prompts/system.md"]
        sha = at_head["SKILL.md"].sha
        assert store.objects.object_sizes([sha, ZERO]) == {sha: len((repo / "SKILL.md").read_bytes())}
        assert store.objects.read_blobs([sha, sha]) == {sha: (repo / "SKILL.md").read_bytes()}
        assert "weird [name]*.md" in store.worktree.tracked_files()


def test_parse_raw_diff_handles_names_with_newlines_and_tabs() -> None:
    raw = (
        b":100644 100644 " + b"a" * 40 + b" " + b"b" * 40 + b" M\0we\tird\nname.md\0"
        b":000000 100644 " + b"0" * 40 + b" " + b"c" * 40 + b" A\0new.md\0"
        b":100644 100644 " + b"d" * 40 + b" " + b"d" * 40 + b" R100\0old.md\0moved.md\0"
    )
    changes = parse_raw_diff(raw)
    assert [(c.status, c.path, c.old_path) for c in changes] == [
        ("M", "we\tird\nname.md", None),
        ("A", "new.md", None),
        ("R", "moved.md", "old.md"),
    ]
    assert changes[1].old is None


def test_listings_do_not_touch_the_index(repo: Path) -> None:
    write(repo, "SKILL.md", "changed\n")
    index = repo / ".git" / "index"
    before = (index.read_bytes(), os.stat(index).st_mtime_ns)
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        store.history.diff_raw(head)
        store.history.diff_raw(head, cached=True)
        store.worktree.index_entries()
    assert (index.read_bytes(), os.stat(index).st_mtime_ns) == before


def test_first_parent_changes_reads_the_chain_in_one_pass(repo: Path) -> None:
    """Each commit of the first-parent chain with its change against its first parent:
    a merge is the change its branch brought, the branch's own commits are not listed,
    and odd names and an empty commit survive."""
    root = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "checkout", "-q", "-b", "side")
    write(repo, "prompts/line\nbreak.md", "a name with a newline\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "odd name")
    git(repo, "mv", "prompts/system.md", "prompts/main.md")
    git(repo, "commit", "-q", "-m", "rename")
    git(repo, "checkout", "-q", "main")
    git(repo, "commit", "-q", "--allow-empty", "-m", "empty")
    empty = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "merge", "-q", "--no-ff", "-m", "merge side", "side")
    merge = git(repo, "rev-parse", "HEAD").strip()
    write(repo, "SKILL.md", "changed\n")
    git(repo, "commit", "-q", "-am", "edit")
    edit = git(repo, "rev-parse", "HEAD").strip()
    with Store.discover(repo) as store:
        chain = store.history.first_parent_changes(edit)
    assert [commit for commit, _ in chain] == [edit, merge, empty, root]
    changes = {commit: {(c.status, c.path, c.old_path) for c in found} for commit, found in chain}
    assert changes[edit] == {("M", "SKILL.md", None)}
    assert changes[merge] == {
        ("A", "prompts/line\nbreak.md", None),
        ("R", "prompts/main.md", "prompts/system.md"),
    }
    assert changes[empty] == set()
    assert {status for status, _p, _o in changes[root]} == {"A"} and len(changes[root]) == 4
    (edited,) = chain[0][1]
    assert edited.old is not None and edited.old.mode == "100644"  # the first record after the header
