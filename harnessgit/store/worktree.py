"""The user's working tree, read but never written, and patches applied off to the side."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from harnessgit.errors import HarnessgitError

if TYPE_CHECKING:
    from harnessgit.objects import TreeEntry
    from harnessgit.store.git import Git


class WorktreeMixin:
    git: Git
    root: Path

    if TYPE_CHECKING:

        def files_at(self, commit: str) -> dict[str, TreeEntry]: ...

        def read_blob(self, sha: str) -> bytes: ...

    def worktree_changes(self) -> dict[str, bool]:
        """Paths that differ from HEAD in the working tree: path -> still exists.

        Staged and unstaged changes alike, and untracked files not ignored.
        """
        raw = self.git.run(["status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames"]).stdout
        changes = {}
        for item in raw.split(b"\0"):
            if len(item) < 4:
                continue
            code, path = item[:2].decode(), item[3:].decode("utf-8", "surrogateescape")
            changes[path] = "D" not in code
        return changes

    def hash_worktree_files(self, paths: list[str], *, write: bool = True) -> dict[str, str]:
        """Working-tree files as blob ids, through the repository's clean filters; written
        into the object database unless ``write`` is False (ids only)."""
        if not paths:
            return {}
        for path in paths:
            if "\n" in path:
                raise HarnessgitError(f"cannot read a file whose name contains a newline: {path!r}")
        listing = "\n".join(paths) + "\n"
        args = ["hash-object", *(["-w"] if write else []), "--stdin-paths"]
        out = self.git.run(args, input=listing.encode("utf-8", "surrogateescape"))
        return dict(zip(paths, out.stdout.decode().split(), strict=True))

    def stage(self, entries: dict[str, TreeEntry | None]) -> None:
        """Set index entries (None removes one): the user's index, moved as a merge of
        these paths would move it."""
        lines = [
            f"{entry.mode} {entry.sha}\t{path}" if entry else f"0 {'0' * 40}\t{path}"
            for path, entry in entries.items()
        ]
        if lines:
            data = ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
            self.git.run(["update-index", "--index-info"], input=data)

    def apply_patch(self, tree: str, patch: bytes) -> str:
        """The tree that results from applying a unified diff to ``tree``.

        Uses a throw-away index, so the user's index and working tree never change.
        """
        with tempfile.TemporaryDirectory(prefix="harnessgit-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git.run(["read-tree", tree], env=env)
            applied = self.git.run(
                ["apply", "--cached", "--whitespace=nowarn", "--recount", "-"],
                input=patch,
                env=env,
                check=False,
            )
            if applied.returncode != 0:
                lines = [line for line in applied.stderr.splitlines() if line.strip()]
                errors = [line for line in lines if line.startswith("error:")]
                reason = (errors or lines or [""])[0]
                raise HarnessgitError(f"the patch does not apply: {reason.removeprefix('error: ')}")
            return self.git.run(["write-tree"], env=env).stdout.decode().strip()

    def checkout_tree(self, tree: str, directory: Path) -> None:
        """Write a tree's files into ``directory``.

        Straight from the object database when the tree has no .gitattributes (no
        git process); otherwise through ``git checkout-index`` and a throw-away
        index, so that filters (Git LFS, eol conversion) apply as in a checkout.
        """
        files = self.files_at(tree)
        if not any(path.rsplit("/", 1)[-1] == ".gitattributes" for path in files):
            for path, entry in files.items():
                target = directory / path
                target.parent.mkdir(parents=True, exist_ok=True)
                data = self.read_blob(entry.sha)
                if entry.mode == "120000":
                    target.symlink_to(os.fsdecode(data))
                    continue
                target.write_bytes(data)
                if entry.mode == "100755":
                    target.chmod(0o755)
            return
        with tempfile.TemporaryDirectory(prefix="harnessgit-") as tmp:
            env = {"GIT_INDEX_FILE": str(Path(tmp) / "index")}
            self.git.run(["read-tree", tree], env=env)
            self.git.run(["checkout-index", "--all", "--force", f"--prefix={directory}/"], env=env)

    def merge_text(self, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
        """A clean three-way merge of one file's text, or None on a conflict."""
        with tempfile.TemporaryDirectory(prefix="harnessgit-") as tmp:
            names = []
            for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
                (Path(tmp) / name).write_bytes(data)
                names.append(str(Path(tmp) / name))
            result = self.git.run(["merge-file", "-p", "--quiet", *names], check=False)
        return result.stdout if result.returncode == 0 else None

    def fast_forward_checkout(self, old: str, new: str) -> None:
        """Move the index and working tree from ``old`` to ``new`` (HEAD's branch already
        points at ``new``), as a fast-forward would; local edits to untouched files stay."""
        self.git.run(["read-tree", "-m", "-u", old, new])

    def head_branch(self) -> str | None:
        """The branch HEAD is on, or None when HEAD is detached."""
        result = self.git.run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
        return result.stdout.decode().strip() or None

    def config_values(self, key: str) -> list[str]:
        result = self.git.run(["config", "--get-all", key], check=False)
        return result.stdout.decode().splitlines()

    def config_add(self, key: str, value: str) -> None:
        self.git.run(["config", "--add", key, value])
