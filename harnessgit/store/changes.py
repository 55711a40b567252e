"""Reading what a change touches: between two trees, the index or the working tree.

Read-only: nothing here writes an object, the index or a ref. Every listing is one
git process with NUL-separated output, so any file name survives.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from harnessgit.errors import HarnessgitError
from harnessgit.objects import ZERO, TreeEntry

if TYPE_CHECKING:
    from harnessgit.store.git import Git
    from harnessgit.store.objects import CatFile

# Plumbing-stable raw diffs: no colour, no external diff, no renames limit surprises,
# paths relative to the repository root whatever diff.relative says.
_RAW_DIFF = [
    "-c",
    "core.quotePath=false",
    "diff",
    "--raw",
    "-z",
    "-M",
    "--no-abbrev",
    "--no-color",
    "--no-ext-diff",
    "--no-relative",
]


@dataclass(frozen=True)
class Side:
    """One side of a changed path: its mode and blob id. The id is ZERO for a
    working-tree file that git has not hashed (read it from disk)."""

    mode: str
    sha: str


@dataclass(frozen=True)
class RawChange:
    status: str  # A added, M modified, D deleted, R renamed, T type changed
    path: str
    old: Side | None  # None when added
    new: Side | None  # None when deleted
    old_path: str | None = None  # the previous name of a renamed file


def parse_raw_diff(raw: bytes) -> list[RawChange]:
    """``git diff --raw -z`` output: ``:old_mode new_mode old_sha new_sha status\\0path\\0[path\\0]``."""
    fields = raw.split(b"\0")
    changes = []
    i = 0
    while i < len(fields) and fields[i].startswith(b":"):
        change, i = raw_record(fields, i)
        changes.append(change)
    return changes


def raw_record(fields: list[bytes], i: int) -> tuple[RawChange, int]:
    """The raw-diff record at ``fields[i]`` (its ``:modes ids status`` field, then one
    path, or two for a rename or copy) and the index of the field after it."""
    old_mode, new_mode, old_sha, new_sha, status = fields[i][1:].decode().split()
    code = status[0]
    first = fields[i + 1].decode("utf-8", "surrogateescape")
    i += 2
    old_path = None
    path = first
    if code in "RC":
        path = fields[i].decode("utf-8", "surrogateescape")
        old_path = first if code == "R" else None
        i += 1
    old = None if code in "AC" or old_mode == "000000" else Side(old_mode, old_sha)
    new = None if code == "D" or new_mode == "000000" else Side(new_mode, new_sha)
    return RawChange("A" if code == "C" else code, path, old, new, old_path), i


class ChangesMixin:
    git: Git
    catfile: CatFile

    def empty_tree(self) -> str:
        """The id of the empty tree in this repository's hash (it need not be stored)."""
        return self.git.out(["hash-object", "-t", "tree", "--stdin"], input=b"").strip()

    def diff_raw(self, old: str, new: str | None = None, *, cached: bool = False) -> list[RawChange]:
        """Changes from ``old`` (a commit or tree id) to ``new``, to the index
        (``cached``), or to the working tree (neither). Untracked files are not included."""
        if new is not None and cached:
            raise HarnessgitError("diff_raw: pass either new or cached")
        args = [*_RAW_DIFF, *(["--cached"] if cached else []), old, *([new] if new else []), "--"]
        return parse_raw_diff(self.git.run(args).stdout)

    def untracked_files(self, paths: list[str] | None = None) -> list[str]:
        """Files in the working tree that git does not track and does not ignore
        (only among ``paths`` when given)."""
        if paths == []:
            return []
        args = ["--literal-pathspecs", "ls-files", "-z", "--others", "--exclude-standard", "--full-name"]
        raw = self.git.run([*args, "--", *(paths or [])]).stdout
        return [item.decode("utf-8", "surrogateescape") for item in raw.split(b"\0") if item]

    def would_be_untracked(self, path: str) -> bool:
        """Whether a file at ``path`` (from the top of the working tree) shows in `git
        status` as untracked, so that `git add -A` would commit it: not tracked, not ignored."""
        tracked = self.git.run(["--literal-pathspecs", "ls-files", "-z", "--cached", "--", path]).stdout
        if tracked:
            return False
        return self.git.run(["check-ignore", "-q", "--no-index", "--", path], check=False).returncode == 1

    def tracked_files(self) -> list[str]:
        raw = self.git.run(["ls-files", "-z", "--cached", "--full-name"]).stdout
        return [item.decode("utf-8", "surrogateescape") for item in raw.split(b"\0") if item]

    def index_entries(self, paths: list[str] | None = None) -> dict[str, TreeEntry]:
        """Staged files (stage 0) by path: what the next commit will contain."""
        args = ["--literal-pathspecs", "ls-files", "-s", "-z", "--full-name"]
        raw = self.git.run([*args, "--", *(paths or [])]).stdout if paths != [] else b""
        entries = {}
        for item in raw.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, sha, stage = meta.decode().split()
            if stage == "0":
                name = path.decode("utf-8", "surrogateescape")
                entries[name] = TreeEntry(mode, name, sha)
        return entries

    def entries_at(self, treeish: str, paths: list[str] | None = None) -> dict[str, TreeEntry]:
        """Files (blobs, links, submodules) in a commit or tree, by path; only ``paths`` when given."""
        if paths == []:
            return {}
        args = ["--literal-pathspecs", "ls-tree", "-r", "-z", "--full-tree", treeish, "--", *(paths or [])]
        entries = {}
        for item in self.git.run(args).stdout.split(b"\0"):
            if not item:
                continue
            meta, _, path = item.partition(b"\t")
            mode, _kind, sha = meta.decode().split()
            name = path.decode("utf-8", "surrogateescape")
            entries[name] = TreeEntry(mode, name, sha)
        return entries

    def object_sizes(self, shas: list[str]) -> dict[str, int]:
        """Size in bytes of each object, without reading its content."""
        wanted = sorted({sha for sha in shas if sha != ZERO})
        if not wanted:
            return {}
        out = self.git.run(
            ["cat-file", "--batch-check"], input="".join(f"{sha}\n" for sha in wanted).encode()
        )
        sizes = {}
        for line in out.stdout.decode().splitlines():
            parts = line.split()
            if len(parts) == 3:
                sizes[parts[0]] = int(parts[2])
        return sizes

    def read_blobs(self, shas: list[str]) -> dict[str, bytes]:
        """The content of many blobs through one pipelined ``cat-file --batch``."""
        wanted = sorted(set(shas))
        blobs = {}
        for sha, kind, data in self.catfile.read_many(wanted):
            if kind != "blob":
                raise HarnessgitError(f"object {sha} is a {kind}, not a blob")
            blobs[sha] = data
        return blobs
