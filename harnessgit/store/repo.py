"""The store: harnessgit's one door to git.

It speaks in object ids, models and records. Objects are written straight into
the object database (the store's own loose-object writer), so building a candidate
never touches the user's index, working tree or HEAD; refs move only through
`commit`, one ``git update-ref --stdin`` transaction at a time.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
from collections.abc import Callable, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING

from harnessgit import layout
from harnessgit.errors import HarnessgitError, InvalidName, NotARepository, UnknownRevision
from harnessgit.names import check_ref_name, check_revision
from harnessgit.objects import MODE_TREE, CommitInfo, TreeEntry, format_tree, parse_commit, parse_tree
from harnessgit.store import landing_lock
from harnessgit.store.changes import ChangesMixin
from harnessgit.store.git import Git
from harnessgit.store.history import HistoryMixin
from harnessgit.store.journal import JOURNAL_DIR
from harnessgit.store.locks import find_locks, stale_error
from harnessgit.store.notes import NotesMixin
from harnessgit.store.objects import CatFile, write_loose
from harnessgit.store.recovery import recover
from harnessgit.store.reffiles import UNKNOWN, RefFiles
from harnessgit.store.refsession import RefSession
from harnessgit.store.staging import Staged
from harnessgit.store.transaction import Transaction
from harnessgit.store.trees import Blob, edit_tree
from harnessgit.store.worktree import WorktreeMixin

if TYPE_CHECKING:
    from harnessgit.records import Record

log = logging.getLogger("harnessgit")

Clock = Callable[[], datetime]
_FULL_SHA = re.compile(r"[0-9a-f]{40}")
_TREE_CACHE = 4096


def local_now() -> datetime:
    return datetime.now(timezone.utc).astimezone()


class Store(HistoryMixin, WorktreeMixin, ChangesMixin, NotesMixin):
    def __init__(
        self,
        root: Path,
        git_dir: Path,
        objects: Path,
        *,
        clock: Clock = local_now,
        common_dir: Path | None = None,
    ) -> None:
        self.root = root
        self.git_dir = git_dir
        self.common_dir = common_dir or git_dir  # refs, shared by every worktree
        self.journal_dir = self.common_dir / JOURNAL_DIR
        self.objects = objects
        self.clock = clock
        self.git = Git(root)
        self.catfile = CatFile(self.git)
        self.refs = RefSession(self.git)  # ref transactions of records
        self.ref_files = RefFiles(self.common_dir)  # ref reads without a git process
        self._idents: dict[str, tuple[str, str]] | None = None
        self._trees: dict[str, list[TreeEntry]] = {}  # objects never change: safe to keep
        self._commits: dict[str, CommitInfo] = {}
        self._listings: dict[str, dict[str, TreeEntry]] = {}
        self._tips: dict[str, str | None] = {}  # notes tips this store wrote last
        self._staged: Staged | None = None  # `staging`: transactions not applied yet
        self._notes_read: dict[str, tuple[str | None, dict[str, list[Record]]]] = {}
        self._note_texts: dict[str, bytes] = {}
        self._object_dirs: set[str] = set()  # objects/xx directories that exist

    @classmethod
    def discover(
        cls,
        path: Path | None = None,
        *,
        clock: Clock = local_now,
        preflight: bool = True,
        writes: bool = True,
    ) -> Store:
        """The store of the repository at ``path``; with ``preflight`` (every command but
        `doctor` and `check`), interrupted transactions are rolled forward and stale locks
        refused first, or, for a command that only reads (``writes=False``), warned about."""
        store = cls._open(path, clock)
        if preflight:
            try:
                store.preflight(writes=writes)
            except BaseException:
                store.close()
                raise
        return store

    @classmethod
    def _open(cls, path: Path | None, clock: Clock) -> Store:
        where = Path(path or os.getcwd())
        if not where.is_dir():
            raise NotARepository(f"not a directory: {where}")
        git = Git(where)
        # One git process: rev-parse answers in order, so a bare repository (or the
        # inside of .git) still prints the first four answers before refusing the last.
        probe = git.run(
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
            raise NotARepository(
                f"{git_dir} is a bare repository: harnessgit needs a working tree (clone it)"
            )
        common_dir = (where / common).resolve()
        return cls(Path(top), Path(git_dir), where / objects, clock=clock, common_dir=common_dir)

    def preflight(self, *, writes: bool = True) -> None:
        """What every command does on opening the store, cheaply (one directory listing,
        one walk of refs/): finish or drop transactions a kill interrupted, then refuse
        to go on past a stale lock, which would fail the command's writes at the end. A
        command that only reads (`log`, `show`, `review`...) is not stopped by a lock
        that blocks only writes: it warns, as git's own readers ignore ref locks."""
        recover(self)
        stale = [lock for lock in find_locks(self.common_dir, self.git_dir) if lock.stale]
        if stale and writes:
            raise stale_error(stale, self.root)
        if stale:
            log.warning("%s", stale_error(stale, self.root))

    @contextlib.contextmanager
    def staging(self, reason: str, *, max_age: float) -> Iterator[None]:
        """Stage every transaction committed in the body and apply them as one when it
        ends, however it ends, or once the oldest is ``max_age`` seconds old
        (`harnessgit.store.staging`). Reads in the body see what is staged."""
        if self._staged is not None:  # nested: the outer staging lands it
            yield
            return
        self._staged = Staged(reason, max_age)
        try:
            yield
        finally:
            try:
                self.flush()
            finally:
                self._staged = None

    @contextlib.contextmanager
    def landing(self, branch: str) -> Iterator[None]:
        """Hold ``branch`` for one landing (`merge`, `revert --no-gate`), from before the
        gate to its checkout; `LandingBusy` when another harnessgit holds it."""
        with landing_lock.landing(self.common_dir, branch, checked_out=self.head_branch() == branch):
            yield

    @contextlib.contextmanager
    def direct(self) -> Iterator[None]:
        """Apply what is staged, then write straight through for the body (a step that
        runs git on what it reads: the gate's checkouts and merges)."""
        staged, self._staged = self._staged, None
        if staged is not None and (txn := staged.take()) is not None:
            self.commit(txn)
        try:
            yield
        finally:
            self._staged = staged

    def flush(self) -> None:
        """Apply what is staged now, as one transaction."""
        staged, self._staged = self._staged, None
        try:
            if staged is not None and (txn := staged.take()) is not None:
                self.commit(txn)
        finally:
            self._staged = staged

    def close(self) -> None:
        self.catfile.close()
        self.refs.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- objects ---------------------------------------------------------

    def read_object(self, sha: str) -> tuple[str, bytes]:
        found = self.catfile.read(sha)
        if found is None:
            raise HarnessgitError(f"object {sha} is missing from the repository")
        return found

    def read_blob(self, sha: str) -> bytes:
        kind, data = self.read_object(sha)
        if kind != "blob":
            raise HarnessgitError(f"object {sha} is a {kind}, not a blob")
        return data

    def read_tree(self, sha: str) -> list[TreeEntry]:
        cached = self._trees.get(sha)
        if cached is None:
            kind, data = self.read_object(sha)
            if kind != "tree":
                raise HarnessgitError(f"object {sha} is a {kind}, not a tree")
            cached = parse_tree(data)
            if len(self._trees) >= _TREE_CACHE:
                self._trees.clear()
            self._trees[sha] = cached
        return cached

    def commit_info(self, sha: str) -> CommitInfo:
        cached = self._commits.get(sha)
        if cached is not None:
            return cached
        kind, data = self.read_object(sha)
        if kind != "commit":
            raise HarnessgitError(f"object {sha} is a {kind}, not a commit")
        info = parse_commit(sha, data)
        if len(self._commits) >= _TREE_CACHE:
            self._commits.clear()
        self._commits[sha] = info
        return info

    def commit_tree_id(self, rev: str) -> str:
        """The tree of a commit (or the tree itself, given a tree id)."""
        if rev in self._commits:
            return self._commits[rev].tree
        kind, _data = self.read_object(rev)
        if kind == "tree":
            return rev
        if kind != "commit":
            raise HarnessgitError(f"object {rev} is a {kind}, not a commit")
        return self.commit_info(rev).tree

    def write_object(self, kind: str, data: bytes) -> str:
        # In process: `git hash-object` would be a process per object.
        return write_loose(self.objects, kind, data, self._object_dirs)

    def write_blob(self, data: bytes) -> str:
        return self.write_object("blob", data)

    def write_tree(self, entries: list[TreeEntry]) -> str:
        sha = self.write_object("tree", format_tree(entries))
        self._trees.setdefault(sha, sorted(entries, key=lambda entry: entry.name))
        return sha

    def edit_tree(self, base: str | None, changes: dict[str, Blob | None]) -> str:
        return edit_tree(self.read_tree, self.write_tree, base, changes)

    def write_commit(self, tree: str, parents: Iterable[str], message: str) -> str:
        lines = [f"tree {tree}"]
        lines += [f"parent {parent}" for parent in parents]
        lines.append(f"author {self._signature('AUTHOR')}")
        lines.append(f"committer {self._signature('COMMITTER')}")
        text = "\n".join(lines) + "\n\n" + message.rstrip("\n") + "\n"
        sha = self.write_object("commit", text.encode("utf-8"))
        if len(self._commits) < _TREE_CACHE:  # read back at once (a candidate's, a notes tip)
            self._commits.setdefault(sha, parse_commit(sha, text.encode("utf-8")))
        return sha

    def identity(self) -> str:
        """Who is acting: the committer, as ``Name <email>``."""
        return self._signature("COMMITTER").rsplit(" ", 2)[0]

    def _signature(self, who: str) -> str:
        if self._idents is None:
            self._idents = {}
            listing = self.git.out(["var", "-l"], check=False)
            for line in listing.splitlines():
                key, _, value = line.partition("=")
                if key in ("GIT_AUTHOR_IDENT", "GIT_COMMITTER_IDENT"):
                    person, _, when = value.rpartition("> ")
                    self._idents[key.split("_")[1]] = (person + ">", when)
        if who not in self._idents:
            raise HarnessgitError("git does not know who you are: set user.name and user.email (git config)")
        person, when = self._idents[who]
        if f"GIT_{who}_DATE" not in os.environ:
            now = self.clock()
            offset = now.utcoffset()
            minutes = int(offset.total_seconds() // 60) if offset else 0
            sign = "-" if minutes < 0 else "+"
            when = f"{int(now.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"
        return f"{person} {when}"

    # -- revisions and refs ----------------------------------------------

    def resolve_commit(self, rev: str) -> str:
        """The commit a revision names: git's meaning first (a branch, a tag, a commit id,
        ``HEAD~2``), then a label's (``production``, ``production~2``: the name under
        refs/harnessgit/labels/). The one resolver every command's revision goes through.

        When a branch or tag and a label share a name, git's meaning wins, as for any
        ref git already knows, and a warning names the label's explicit form
        (``refs/harnessgit/labels/NAME``) when the two point at different commits."""
        check_revision(rev)
        if _FULL_SHA.fullmatch(rev):
            # A full object id needs no revision parsing: one cat-file lookup, no git process.
            found = self.catfile.lookup(rev)
            if found is not None and found[1] == "commit":
                return rev
        sha = self._rev_parse(rev)
        label_ref, as_label = _label_form(rev)
        # Only a label that exists costs a git process more (ref files are read in-process).
        labelled = self._rev_parse(as_label) if label_ref and self.ref_value(label_ref) else None
        if sha is None:
            if labelled is None:
                raise UnknownRevision(f"unknown revision {rev!r}")
            return labelled
        if labelled is not None and labelled != sha:
            log.warning(
                "%s is taken as git names it (%s), not as the label (%s): write %s to mean the label",
                rev,
                sha[:12],
                labelled[:12],
                as_label,
            )
        return sha

    def _rev_parse(self, rev: str) -> str | None:
        result = self.git.run(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"{rev}^{{commit}}"],
            check=False,
        )
        return result.stdout.decode().strip() if result.returncode == 0 else None

    def ref_values(self, refs: Iterable[str]) -> dict[str, str]:
        """Current values of the refs that exist, by full name."""
        values = {}
        for ref in refs:
            sha = self.ref_value(ref)
            if sha is not None:
                values[ref] = sha
        return values

    def ref_value(self, ref: str) -> str | None:
        """The object a full ref name points at now, or None: from git's ref files
        (`RefFiles`), else through the persistent cat-file; never a new process."""
        if not ref.startswith("refs/"):
            raise ValueError(f"not a full ref name: {ref}")
        if self._staged is not None:
            staged, value = self._staged.ref(ref)
            if staged:
                return value
        value = self.ref_files.value(ref)
        if value != UNKNOWN:
            return value
        found = self.catfile.lookup(ref)
        return found[0] if found else None

    def list_refs(self, *prefixes: str) -> dict[str, str]:
        listing = self.git.out(["for-each-ref", "--format=%(objectname) %(refname)", *prefixes])
        refs = {}
        for line in listing.splitlines():
            sha, _, ref = line.partition(" ")
            refs[ref] = sha
        return self._staged.listed(refs, prefixes) if self._staged is not None else refs


def _label_form(rev: str) -> tuple[str, str]:
    """``production~2`` -> (``refs/harnessgit/labels/production``,
    ``refs/harnessgit/labels/production~2``): the label's ref and the revision read as
    that label's; ("", "") when the revision does not begin with a name a label could have."""
    cut = next((i for i, char in enumerate(rev) if char in "~^@:"), len(rev))
    name = rev[:cut]
    try:
        check_ref_name(name)
    except InvalidName:
        return "", ""
    if name.startswith("refs/"):
        return "", ""
    return layout.LABELS + name, layout.LABELS + rev


__all__ = ["MODE_TREE", "Blob", "CommitInfo", "Store", "Transaction"]
