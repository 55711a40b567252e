"""A repository opened to read: the half of the store the pre-commit hook needs.

`ReadStore.discover` opens a repository with one git process and none of the store's
write machinery (no journal, recovery, locks, staging or scratch worktrees): the parts
it holds are the reading halves the store's own parts extend (`ObjectReader` of
`Objects`, `RefReader` of `Refs`, `WorktreeReader` of `Worktree`, and `History`).
A function that only reads takes a `Repository`, which a `Store` is too, so the gate
and `harnessgit check` run the same code; the store's parts add what is staged.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple, Protocol

from harnessgit.errors import HarnessgitError, NotARepository
from harnessgit.readstore.git import Git
from harnessgit.readstore.history import History
from harnessgit.readstore.objects import ObjectReader
from harnessgit.readstore.refs import RefReader
from harnessgit.readstore.worktree import WorktreeReader


class Repository(Protocol):
    """What reading a repository needs: a `ReadStore`, or the whole `Store`."""

    @property
    def root(self) -> Path: ...

    @property
    def objects(self) -> ObjectReader: ...

    @property
    def refs(self) -> RefReader: ...

    @property
    def history(self) -> History: ...

    @property
    def worktree(self) -> WorktreeReader: ...


class Location(NamedTuple):
    root: Path  # the top of the working tree
    git_dir: Path  # this worktree's git directory (its HEAD, its index)
    objects_dir: Path
    common_dir: Path  # refs, shared by every worktree


def locate(path: Path | None) -> Location:
    """Where the repository around ``path`` (default: the current directory) keeps its
    working tree, git directory, objects and refs: one git process."""
    where = Path(path or os.getcwd())
    if not where.is_dir():
        raise NotARepository(f"not a directory: {where}")
    # One git process: rev-parse answers in order, so a bare repository (or the
    # inside of .git) still prints the first four answers before refusing the last.
    probe = Git(where).run(
        [
            "rev-parse",
            "--is-bare-repository",
            "--absolute-git-dir",
            "--git-path",
            "objects",
            "--git-common-dir",
            "--show-toplevel",
        ],
        check=False,
    )
    answers = probe.stdout.decode().split("\n")
    if probe.returncode != 0:
        message = probe.stderr.strip().splitlines()[-1] if probe.stderr.strip() else ""
        if "not a git repository" in message:
            raise NotARepository(f"not a git repository: {where}")
        if answers[0] == "true":
            raise NotARepository(
                f"{answers[1]} is a bare repository: harnessgit needs a working tree (clone it)"
            )
        if len(answers) >= 3 and answers[1]:
            raise NotARepository("not inside a working tree (run harnessgit from the checkout)")
        raise HarnessgitError(message.removeprefix("fatal: ") or "cannot open the repository")
    bare, git_dir, objects, common, top = answers[:5]
    if bare == "true" or not top:
        raise NotARepository(f"{git_dir} is a bare repository: harnessgit needs a working tree (clone it)")
    return Location(Path(top), Path(git_dir), where / objects, (where / common).resolve())


class ReadStore:
    """A repository opened only to read (`harnessgit check`): no preflight, no writes."""

    def __init__(self, where: Location) -> None:
        self.root = where.root
        self.git_dir = where.git_dir
        self.common_dir = where.common_dir
        self.git = Git(where.root)
        self.objects = ObjectReader(self.git)
        self.refs = RefReader(self.git, where.git_dir, where.common_dir, self.objects.catfile)
        self.history = History(self.git)
        self.worktree = WorktreeReader(self.git, where.root)

    @classmethod
    def discover(cls, path: Path | None = None) -> ReadStore:
        return cls(locate(path))

    def close(self) -> None:
        self.objects.close()

    def __enter__(self) -> ReadStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


__all__ = ["Location", "ReadStore", "Repository", "locate"]
