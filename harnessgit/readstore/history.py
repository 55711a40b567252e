"""The history part of the store (`Store.history`): ancestry, first-parent chains and
diffs between commits, trees, the index and the working tree."""

from __future__ import annotations

from dataclasses import dataclass

from harnessgit.errors import HarnessgitError
from harnessgit.readstore.changes import RAW_DIFF, RawChange, parse_raw_diff, raw_record
from harnessgit.readstore.git import Git

# Diffs for people and for unidiff: immune to a user's color.ui=always, external
# diff drivers and quoted non-ASCII names.
DIFF_OPTIONS = ["-c", "core.quotePath=false", "diff", "--no-color", "--no-ext-diff", "-M"]


@dataclass(frozen=True)
class FileStat:
    """One file's added and removed lines in a commit (`git log --numstat`)."""

    path: str
    status: str  # A added, M modified, D deleted, R renamed, T type changed
    added: int | None  # None for a binary file
    removed: int | None
    old_path: str | None = None


class History:
    def __init__(self, git: Git) -> None:
        self.git = git

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        result = self.git.run(["merge-base", "--is-ancestor", ancestor, descendant], check=False)
        return result.returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        result = self.git.run(["merge-base", a, b], check=False)
        return result.stdout.decode().strip() or None

    def first_parent_chain(self, tip: str, *, stop: str | None = None, limit: int | None = None) -> list[str]:
        """Commits on tip's first-parent chain, newest first, excluding ``stop`` and before."""
        args = ["rev-list", "--first-parent"]
        if limit is not None:
            args.append(f"--max-count={limit}")
        args.append(tip)
        if stop:
            args.append(f"^{stop}")
        return self.git.out(args).split()

    def commits_between(self, tip: str, stop: str | None, *, limit: int) -> list[str]:
        """Every commit reachable from ``tip`` and not from ``stop`` (a range's commits, a
        merge's second parents included), newest first, at most ``limit``."""
        args = ["rev-list", f"--max-count={limit}", tip]
        if stop:
            args.append(f"^{stop}")
        return self.git.out(args).split()

    def first_parent_changes(self, tip: str) -> list[tuple[str, list[RawChange]]]:
        """Every commit on tip's first-parent chain, newest first, with what it changed
        against its first parent (a merge: the change it brought; a root commit: its
        files). One ``git log`` for the whole chain: a process per commit costs ~3 ms,
        and a chain has thousands of commits."""
        args = [
            "-c",
            "core.quotePath=false",
            "-c",
            "log.showSignature=false",
            "log",
            "--first-parent",
            "--diff-merges=first-parent",
            "--root",
            "-M",
            "--raw",
            "-z",
            "--no-abbrev",
            "--no-color",
            "--no-ext-diff",
            "--no-relative",
            "--no-notes",
            "--format=%x01%H",
            tip,
            "--",
        ]
        fields = self.git.run(args).stdout.split(b"\0")
        chain: list[tuple[str, list[RawChange]]] = []
        i = 0
        while i < len(fields):
            field = fields[i].lstrip(b"\n")
            if field.startswith(b"\x01"):  # a commit's header: the records after it are its own
                chain.append((field[1:].decode(), []))
                i += 1
            elif field.startswith(b":") and chain:
                fields[i] = field  # the first record of a commit follows a newline
                change, i = raw_record(fields, i)
                chain[-1][1].append(change)
            else:
                i += 1  # the empty field after the last NUL
        return chain

    def diff_raw(self, old: str, new: str | None = None, *, cached: bool = False) -> list[RawChange]:
        """Changes from ``old`` (a commit or tree id) to ``new``, to the index
        (``cached``), or to the working tree (neither). Untracked files are not included."""
        if new is not None and cached:
            raise HarnessgitError("diff_raw: pass either new or cached")
        args = [*RAW_DIFF, *(["--cached"] if cached else []), old, *([new] if new else []), "--"]
        return parse_raw_diff(self.git.run(args).stdout)

    def diff_text(self, a: str, b: str, paths: list[str] | None = None) -> str:
        args = [*DIFF_OPTIONS, a, b, "--"]
        return self.git.out([*args, *(paths or [])])

    def diff_patch(self, a: str, b: str) -> str:
        """The patch from commit (or tree) ``a`` to ``b``, in the one shape unidiff parses:
        ``a/`` and ``b/`` prefixes whatever diff.noprefix or diff.mnemonicPrefix say
        (unidiff fails on a patch without them), no textconv filters, binary files as
        a "Binary files ... differ" line."""
        args = [
            *DIFF_OPTIONS,
            "--src-prefix=a/",
            "--dst-prefix=b/",
            "--no-relative",
            "--no-textconv",
            a,
            b,
            "--",
        ]
        return self.git.out(args)

    def diff_files(self, a: str, b: str) -> list[FileStat]:
        """Files changed between two commits or trees, with added/removed line counts."""
        raw = self.git.run([*DIFF_OPTIONS, "--numstat", "-z", a, b, "--"]).stdout
        status = self._name_status(a, b)
        stats = []
        fields = raw.split(b"\0")
        i = 0
        while i < len(fields) and fields[i]:
            added, removed, path = fields[i].split(b"\t", 2)
            old_path = None
            if not path:  # a rename: the two names follow as separate fields
                old_path = fields[i + 1].decode("utf-8", "surrogateescape")
                path = fields[i + 2]
                i += 2
            i += 1
            name = path.decode("utf-8", "surrogateescape")
            stats.append(
                FileStat(
                    path=name,
                    status=status.get(name, "M"),
                    added=None if added == b"-" else int(added),
                    removed=None if removed == b"-" else int(removed),
                    old_path=old_path,
                )
            )
        return stats

    def _name_status(self, a: str, b: str) -> dict[str, str]:
        raw = self.git.run([*DIFF_OPTIONS, "--name-status", "-z", a, b, "--"]).stdout
        fields = raw.split(b"\0")
        status: dict[str, str] = {}
        i = 0
        while i < len(fields) and fields[i]:
            code = fields[i].decode()[0]
            if code in "RC":
                status[fields[i + 2].decode("utf-8", "surrogateescape")] = code
                i += 3
            else:
                status[fields[i + 1].decode("utf-8", "surrogateescape")] = code
                i += 2
        return status

    def changed_paths(self, a: str, b: str) -> dict[str, str]:
        """path -> A/M/D/T between two trees, renames split into delete and add."""
        raw = self.git.run(["diff-tree", "-r", "-z", "--no-renames", "--name-status", a, b]).stdout
        fields = raw.split(b"\0")
        return {
            fields[i + 1].decode("utf-8", "surrogateescape"): fields[i].decode()
            for i in range(0, len(fields) - 1, 2)
        }
