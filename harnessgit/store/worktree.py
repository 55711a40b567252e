"""The worktree part of the store (`Store.worktree`): the user's working tree and index
(read, and moved only as a fast-forward of a landing), trees written out for the
evaluator, and patches and merges computed off to the side."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Callable
from pathlib import Path

from harnessgit.errors import HarnessgitError
from harnessgit.object_ids import object_id
from harnessgit.objects import MODE_EXEC, MODE_FILE, MODE_LINK, MODE_TREE, TreeEntry
from harnessgit.processes.scratch_dir import ScratchDir
from harnessgit.readstore.git import Git
from harnessgit.readstore.worktree import WorktreeReader
from harnessgit.store.objectdb import Objects


class Worktree(WorktreeReader):
    def __init__(self, git: Git, root: Path, objects: Objects) -> None:
        super().__init__(git, root)
        self._objects = objects

    def changes(self) -> dict[str, bool]:
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

    def hash_files(self, paths: list[str], *, write: bool = True) -> dict[str, str]:
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

    def unmerged_paths(self) -> list[str]:
        """Paths in conflict in the index (a merge stage other than 0): while there are
        any, git moves neither the index nor the working tree."""
        out = self.git.run(["ls-files", "--unmerged", "-z"]).stdout
        paths = {
            item.partition(b"\t")[2].decode("utf-8", "surrogateescape") for item in out.split(b"\0") if item
        }
        return sorted(paths)

    def disk_entries(self, paths: list[str]) -> dict[str, TreeEntry]:
        """What the working tree holds at ``paths`` (those that exist), as tree entries
        named by path: a regular file by its content through the clean filters, as mode
        100644 whatever its exec bit; a symlink by its target; anything else (a
        directory) as mode 40000 without an object id. Read only."""
        found: dict[str, TreeEntry] = {}
        regular = []
        for path in paths:
            try:
                info = os.lstat(self.root / path)
            except (FileNotFoundError, NotADirectoryError):
                continue
            if stat.S_ISLNK(info.st_mode):
                target = os.fsencode(os.readlink(self.root / path))
                found[path] = TreeEntry(MODE_LINK, path, object_id("blob", target))
            elif stat.S_ISREG(info.st_mode):
                regular.append(path)
            else:
                found[path] = TreeEntry(MODE_TREE, path, "")
        hashed = self.hash_files(regular, write=False)
        found.update((path, TreeEntry(MODE_FILE, path, sha)) for path, sha in hashed.items())
        return found

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
        with ScratchDir("index") as tmp:
            env = {"GIT_INDEX_FILE": str(tmp / "index")}
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
        """Write a tree's files into ``directory``, an empty directory, and nowhere else.

        A tree that cannot be written without leaving ``directory`` (a file below a
        symlink of the same tree, a ``..`` or ``.git`` component: git mktree takes them,
        git fsck does not) is refused before anything is written. The files go straight
        from the object database, walked down by directory descriptors with O_NOFOLLOW,
        so no symlink is ever followed, even one put there meanwhile (issue 15, defect
        10: a crafted tree made `eval` write outside the repository). A tree with
        .gitattributes goes through ``git checkout-index`` and a throw-away index
        instead (after the same refusal), so that filters (Git LFS, eol conversion)
        apply as in a checkout.
        """
        files = self._objects.files_at(tree)
        problem = unsafe_path(files)
        if problem:
            raise HarnessgitError(f"refused to check out the tree {tree[:12]}: {problem}")
        filtered = any(path.rsplit("/", 1)[-1] == ".gitattributes" for path in files)
        if not filtered and os.open in os.supports_dir_fd:
            _write_files(directory, files, self._objects.read_blob)
            return
        with ScratchDir("index") as tmp:
            env = {"GIT_INDEX_FILE": str(tmp / "index")}
            self.git.run(["read-tree", tree], env=env)
            self.git.run(["checkout-index", "--all", "--force", f"--prefix={directory}/"], env=env)

    def merge_text(self, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
        """A clean three-way merge of one file's text, or None on a conflict."""
        with ScratchDir("merge") as tmp:
            names = []
            for name, data in (("ours", ours), ("base", base), ("theirs", theirs)):
                (tmp / name).write_bytes(data)
                names.append(str(tmp / name))
            result = self.git.run(["merge-file", "-p", "--quiet", *names], check=False)
        return result.stdout if result.returncode == 0 else None

    def fast_forward_checkout(self, old: str, new: str) -> None:
        """Move the index and working tree from ``old`` to ``new`` (HEAD's branch already
        points at ``new``), as a fast-forward would; local edits to untouched files stay.

        One git process writes the files, then the index: a kill in between leaves the
        index at ``old``, which is how an unfinished move is recognised."""
        # Stale stat data (a file touched, not changed) makes read-tree call it "not
        # uptodate" and refuse: refresh it first, as `git merge` does.
        self.git.run(["update-index", "-q", "--refresh"], check=False)
        self.git.run(["read-tree", "-m", "-u", old, new])

    # -- the index -------------------------------------------------------

    def would_be_untracked(self, path: str) -> bool:
        """Whether a file at ``path`` (from the top of the working tree) shows in `git
        status` as untracked, so that `git add -A` would commit it: not tracked, not ignored."""
        tracked = self.git.run(["--literal-pathspecs", "ls-files", "-z", "--cached", "--", path]).stdout
        if tracked:
            return False
        return self.git.run(["check-ignore", "-q", "--no-index", "--", path], check=False).returncode == 1


def unsafe_path(files: dict[str, TreeEntry]) -> str | None:
    """Why a tree's files cannot all be written below one directory without leaving it
    (None: they can). Git's own checkout refuses the same paths (``verify_path``)."""
    for path in files:
        parts = path.split("/")
        for part in parts:
            if part in ("", ".", ".."):
                return f"{path} has a {part!r} component: it would be written outside the checkout"
            if part.lower() == ".git":
                return f"{path} lies in a .git directory, which git itself never checks out"
        for depth in range(1, len(parts)):
            above = files.get(prefix := "/".join(parts[:depth]))
            if above is not None and above.mode == MODE_LINK:
                return f"{path} lies below the symlink {prefix}, and writing it would follow the link"
            if above is not None:
                return f"{path} lies below the file {prefix}"
    return None


# getattr: the flags are POSIX; elsewhere (no dir_fd support) checkout_tree uses git.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
_DIRECTORY = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_NEW_FILE = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW


def _write_files(directory: Path, files: dict[str, TreeEntry], read: Callable[[str], bytes]) -> None:
    """Write ``files`` below ``directory`` openat-style: every parent opened with
    O_NOFOLLOW from the one above it, every file created new (O_EXCL) and never
    through a link, every symlink created as a symlink."""
    # The descriptors of the directories on the current path, root first. Files come
    # in tree order (a directory's files together), so one per level is open at a time.
    stack = [("", os.open(directory, _DIRECTORY))]
    try:
        for path, entry in files.items():
            *parents, name = path.split("/")
            try:
                parent = _descend(stack, parents)
                data = read(entry.sha)
                if entry.mode == MODE_LINK:
                    os.symlink(os.fsdecode(data), name, dir_fd=parent)
                    continue
                fd = os.open(name, _NEW_FILE, 0o777 if entry.mode == MODE_EXEC else 0o666, dir_fd=parent)
            except OSError as exc:
                why = f"{exc.strerror} (a symlink or a file is in the way)"
                raise HarnessgitError(f"cannot write {path} into the checkout: {why}") from None
            with os.fdopen(fd, "wb") as out:
                out.write(data)
    finally:
        for _name, fd in stack:
            os.close(fd)


def _descend(stack: list[tuple[str, int]], parents: list[str]) -> int:
    """The descriptor of the directory ``parents`` (components below the root), made
    where missing; the stack keeps the path in common with the previous file open."""
    keep = 0
    while keep < len(parents) and keep + 1 < len(stack) and stack[keep + 1][0] == parents[keep]:
        keep += 1
    while len(stack) > keep + 1:
        os.close(stack.pop()[1])
    for part in parents[keep:]:
        above = stack[-1][1]
        # One that exists is opened with O_NOFOLLOW all the same: a symlink fails.
        with contextlib.suppress(FileExistsError):
            os.mkdir(part, dir_fd=above)
        stack.append((part, os.open(part, _DIRECTORY, dir_fd=above)))
    return stack[-1][1]
