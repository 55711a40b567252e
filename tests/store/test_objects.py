"""Objects read through one cat-file process, exactly as git reads them; refs seen fresh."""

from __future__ import annotations

from pathlib import Path

from harnessgit.store import Blob, Store
from tests.conftest import git


def test_objects_match_git(repo: Path) -> None:
    with Store.discover(repo) as store:
        blob = store.objects.write_blob(b"hello\n")
        assert blob == git(repo, "hash-object", "--stdin", input="hello\n").strip()
        head = store.refs.resolve("HEAD")
        tree = store.objects.commit_info(head).tree
        new_tree = store.objects.edit_tree(
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
        commit = store.objects.write_commit(new_tree, [head], "subject\n\nbody")
    assert git(repo, "fsck", "--strict", "--no-dangling") == ""
    assert git(repo, "log", "-1", "--format=%s|%b|%P", commit).strip() == f"subject|body\n|{head}"


def test_ref_reads_see_updates_by_other_processes(repo: Path) -> None:
    with Store.discover(repo) as store:
        first = store.refs.value("refs/heads/main")
        assert first == git(repo, "rev-parse", "main").strip()  # the cat-file process is running now
        git(repo, "commit", "-q", "--allow-empty", "-m", "moved by plain git")
        assert store.refs.value("refs/heads/main") == git(repo, "rev-parse", "main").strip() != first
        git(repo, "pack-refs", "--all")
        git(repo, "commit", "-q", "--allow-empty", "-m", "moved again, refs packed")
        assert store.refs.value("refs/heads/main") == git(repo, "rev-parse", "main").strip()
        git(repo, "update-ref", "-d", "refs/heads/main")
        assert store.refs.value("refs/heads/main") is None


def test_small_blobs_and_the_sizes_of_large_ones_from_one_process(repo: Path) -> None:
    """`read_small_blobs`: what `object_sizes` then `read_blobs` answered, from the one
    cat-file: a blob over the limit is sized and dropped, the process stays in step."""
    with Store.discover(repo) as store:
        small, large = store.objects.write_blob(b"hi\n"), store.objects.write_blob(b"x" * 3_000_000)
        found = store.objects.read_small_blobs([large, small, large], 10)
        assert found == {small: (3, b"hi\n"), large: (3_000_000, None)}
        assert store.objects.object_sizes([small, large]) == {small: 3, large: 3_000_000}
        assert store.objects.read_blob(small) == b"hi\n"  # after a dropped blob: in step
        assert store.objects.read_small_blobs([large], 3_000_000)[large][1] == b"x" * 3_000_000
