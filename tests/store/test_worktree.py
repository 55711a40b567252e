"""Writing a tree's files for the evaluator: modes, links and filters as a checkout would."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.errors import HarnessgitError
from harnessgit.store import Store
from tests.conftest import git


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
        store.worktree.checkout_tree(store.objects.commit_info(store.refs.resolve("HEAD")).tree, target)
    assert (target / "prompts" / "system.md").read_text() == (repo / "prompts" / "system.md").read_text()
    assert (target / "run.sh").stat().st_mode & 0o111
    assert (target / "link.md").is_symlink()
    assert (target / "link.md").read_text() == (repo / "SKILL.md").read_text()
    assert sorted(p.name for p in target.iterdir()) == sorted(
        p.name for p in repo.iterdir() if p.name != ".git"
    )


def crafted_tree(repo: Path, listing: str) -> str:
    """HEAD's tree plus raw ``git mktree`` lines: what a hostile commit can hold."""
    return git(repo, "mktree", input=git(repo, "ls-tree", "HEAD") + listing).strip()


def blob(repo: Path, text: str) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=text).strip()


@pytest.mark.parametrize("attributes", [False, True])
def test_checkout_tree_never_writes_through_a_symlink(repo: Path, tmp_path: Path, attributes: bool) -> None:
    """Issue 15, defect 10: a symlink ``d`` -> outside and a file ``d/pwn.txt`` in one
    tree (duplicate names: git mktree takes them, git fsck does not) wrote outside."""
    outside = tmp_path / "outside"
    outside.mkdir()
    sub = git(repo, "mktree", input=f"100644 blob {blob(repo, 'pwned')}\tpwn.txt\n").strip()
    extra = f"100644 blob {blob(repo, '* text')}\t.gitattributes\n" if attributes else ""
    tree = crafted_tree(repo, f"120000 blob {blob(repo, str(outside))}\td\n040000 tree {sub}\td\n{extra}")
    target = tmp_path / "checkout"
    target.mkdir()
    with Store.discover(repo) as store, pytest.raises(HarnessgitError) as refused:
        store.worktree.checkout_tree(tree, target)
    assert str(refused.value) == (
        f"refused to check out the tree {tree[:12]}: d/pwn.txt lies below the symlink d, "
        "and writing it would follow the link"
    )
    assert list(outside.iterdir()) == [] and list(target.iterdir()) == []  # refused before any write


@pytest.mark.parametrize(
    ("listing", "reason"),
    [
        ("040000 tree {sub}\t..\n", "../pwn.txt has a '..' component"),
        ("040000 tree {sub}\t.\n", "./pwn.txt has a '.' component"),
        ("040000 tree {sub}\t.GIT\n", ".GIT/pwn.txt lies in a .git directory"),
        ("100644 blob {pwn}\tnotes\n040000 tree {sub}\tnotes\n", "notes/pwn.txt lies below the file notes"),
    ],
)
def test_checkout_tree_refuses_paths_that_leave_the_checkout(
    repo: Path, tmp_path: Path, listing: str, reason: str
) -> None:
    pwn = blob(repo, "pwned")
    sub = git(repo, "mktree", input=f"100644 blob {pwn}\tpwn.txt\n").strip()
    tree = crafted_tree(repo, listing.format(sub=sub, pwn=pwn))
    target = tmp_path / "box" / "checkout"
    target.mkdir(parents=True)
    with Store.discover(repo) as store, pytest.raises(HarnessgitError, match=reason.replace(".", r"\.")):
        store.worktree.checkout_tree(tree, target)
    assert [p.name for p in (tmp_path / "box").rglob("*")] == ["checkout"]  # nothing written


def test_checkout_tree_writes_with_no_follow_even_if_a_link_appears(repo: Path, tmp_path: Path) -> None:
    """The writes walk down by directory descriptors with O_NOFOLLOW: a symlink that is
    not in the tree (one put there by someone else) is an error, not a way out."""
    outside = tmp_path / "outside"
    outside.mkdir()
    target = tmp_path / "checkout"
    target.mkdir()
    (target / "prompts").symlink_to(outside)
    with (
        Store.discover(repo) as store,
        pytest.raises(HarnessgitError, match=r"cannot write prompts/system\.md"),
    ):
        store.worktree.checkout_tree(store.objects.commit_info(store.refs.resolve("HEAD")).tree, target)
    assert list(outside.iterdir()) == []
