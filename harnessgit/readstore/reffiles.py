"""Reading a ref's value from the files git keeps it in, without a git process.

An evolve iteration reads refs about twenty times (the base tip, the notes tips before
each note read, candidate branches), and each read through the persistent cat-file is
a round trip to another process: 0.1 ms on an idle machine, 1-2 ms on a loaded 2-core
one (issue 13). With the files backend git stores a ref as a loose file
(``<common dir>/<ref>``, one object id) or as a line of ``packed-refs``, the loose file
winning; this reads both as git does. Anything else (a symbolic ref, a per-worktree
ref, the reftable backend, a file that does not look like a ref) is left to git:
`value` answers `UNKNOWN`.

A reader racing a writer sees the old value or the new one, never a mix: git writes a
loose ref by renaming a lock file into place, and rewrites ``packed-refs`` the same way
before it deletes the loose files it packed.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Final

UNKNOWN: Final = "?"  # git must be asked
_SHA = re.compile(rb"[0-9a-f]{40}\n?")
SEARCHES = 64  # binary searches of one packed-refs before it is parsed whole
# Refs each worktree keeps for itself, under its own git dir (git's "per-worktree" refs).
_PER_WORKTREE = ("refs/bisect/", "refs/worktree/", "refs/rewritten/")
# A ref name read from files without asking git: plain characters, no component that
# starts with a dot or ends in ``.lock`` (git's own rules are wider; the rest is git's).
_BRANCH = re.compile(
    r"refs/(?:[A-Za-z0-9_+-][A-Za-z0-9._+-]*(?<!\.lock)(?<!\.)/)*[A-Za-z0-9_+-][A-Za-z0-9._+-]*(?<!\.lock)(?<!\.)"
)


class RefFiles:
    def __init__(self, common_dir: Path) -> None:
        self.common_dir = common_dir
        self.usable = not (common_dir / "reftable").exists()
        self._packed_stamp: tuple[int, int, int] | None = None
        self._packed_data = b""
        self._packed_sorted = False
        self._packed: dict[str, str] | None = None  # parsed when unsorted, or after SEARCHES
        self._searches = 0

    def value(self, ref: str) -> str | None:
        """The object id ``ref`` points at, None when it does not exist, `UNKNOWN`
        when only git can tell."""
        if not self.usable or ref.startswith(_PER_WORKTREE) or "/." in ref or ".." in ref:
            return UNKNOWN
        try:
            data = (self.common_dir / ref).read_bytes()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return self._packed_value(ref)
        except OSError:
            return UNKNOWN
        if _SHA.fullmatch(data):
            return data[:40].decode("ascii")
        return UNKNOWN  # a symbolic ref, or something being written in an odd way

    def head(self, git_dir: Path) -> str | None:
        """The commit HEAD (``git_dir``'s own) is on, when it names a branch: None on an
        unborn branch, `UNKNOWN` when only git can tell (a detached HEAD, another ref)."""
        try:
            data = (git_dir / "HEAD").read_bytes()
        except OSError:
            return UNKNOWN
        target = data.removeprefix(b"ref: ").strip().decode("utf-8", "surrogateescape")
        if not data.startswith(b"ref: refs/heads/") or not _BRANCH.fullmatch(target):
            return UNKNOWN
        return self.value(target)

    def branch(self, git_dir: Path, name: str) -> str | None:
        """The commit ``name`` names when git's reading of it (``git rev-parse``'s order:
        ``$GIT_DIR/name``, refs/name, refs/tags/name, refs/heads/name, refs/remotes/name,
        refs/remotes/name/HEAD) finds a branch first; `UNKNOWN` for anything else (a tag
        may need peeling, a pseudo-ref, a remote or an abbreviated object id is git's to read)."""
        # One plain component ("main"): a name with a slash or a revision suffix is git's.
        if "/" in name or not _BRANCH.fullmatch("refs/heads/" + name):
            return UNKNOWN
        if (git_dir / name).exists() or (self.common_dir / name).exists():
            return UNKNOWN
        for ref in (f"refs/{name}", f"refs/tags/{name}", f"refs/heads/{name}", f"refs/remotes/{name}"):
            found = self.value(ref)
            if found is not None:
                return found if ref.startswith("refs/heads/") else UNKNOWN
        # No ref of that name: git reads it as something else (an abbreviated object id).
        return UNKNOWN

    def listing(self, prefix: str) -> dict[str, str] | None:
        """Every ref under the folder ``prefix`` (``refs/harnessgit/labels/``), by name and
        sorted as ``git for-each-ref`` lists them; None when only git can tell."""
        if not self.usable or not _BRANCH.fullmatch(prefix + "x") or prefix.startswith(_PER_WORKTREE):
            return None
        packed = self._parsed() if self._load_packed() else {}
        found = {ref: sha for ref, sha in packed.items() if ref.startswith(prefix)}
        top = self.common_dir / prefix
        for folder, dirs, files in os.walk(top):
            dirs.sort()
            for name in files:
                ref = (Path(folder) / name).relative_to(self.common_dir).as_posix()
                value = self.value(ref)
                if value == UNKNOWN or value is None or not _BRANCH.fullmatch(ref):
                    return None  # a symbolic ref, a lock file, an odd name: git's to list
                found[ref] = value
        return {
            ref: found[ref] for ref in sorted(found, key=lambda ref: ref.encode("utf-8", "surrogateescape"))
        }

    def _packed_value(self, ref: str) -> str | None:
        if not self._load_packed():
            return None
        # A search reads ~16 lines; a reader of many refs (a transaction of thousands of
        # moves) is served from one parse of the file instead, as before.
        self._searches += 1
        if self._packed_sorted and self._searches <= SEARCHES:
            return _search_sorted(self._packed_data, ref.encode("utf-8", "surrogateescape"))
        return self._parsed().get(ref)

    def _load_packed(self) -> bool:
        """Whether there is a ``packed-refs`` (read again when it changed)."""
        path = self.common_dir / "packed-refs"
        try:
            stat = os.stat(path)
        except FileNotFoundError:
            return False
        stamp = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        if stamp != self._packed_stamp:
            try:
                data = path.read_bytes()
            except FileNotFoundError:
                return False
            header = data[: data.find(b"\n") + 1] if data.startswith(b"#") else b""
            self._packed_data, self._packed_sorted = data, b" sorted" in header
            self._packed, self._packed_stamp, self._searches = None, stamp, 0
        return True

    def _parsed(self) -> dict[str, str]:
        if self._packed is None:
            self._packed = _parse_packed(self._packed_data)
        return self._packed


def _parse_packed(data: bytes) -> dict[str, str]:
    packed: dict[str, str] = {}
    for line in data.splitlines():
        if line[:1] in (b"#", b"^") or len(line) < 42:
            continue
        packed[line[41:].decode("utf-8", "surrogateescape")] = line[:40].decode("ascii")
    return packed


def _search_sorted(data: bytes, ref: bytes) -> str | None:
    """``ref``'s object id by binary search in a ``packed-refs`` that git declares sorted
    (by the bytes of the ref name, as git itself searches it): with 60,000 refs, parsing
    every line cost a read command about 20 ms (issue 17); this reads about 16 of them.
    A line is ``<id> <ref>``, possibly followed by a ``^<peeled id>`` line of its own."""
    lo = data.find(b"\n") + 1 if data.startswith(b"#") else 0
    hi = len(data)
    while lo < hi:
        start = data.rfind(b"\n", lo, lo + (hi - lo) // 2) + 1 or lo
        if data[start : start + 1] == b"^":  # a peeled line belongs to the line above it
            start = data.rfind(b"\n", lo, start - 1) + 1 or lo
        end = data.find(b"\n", start)
        end = len(data) if end < 0 else end
        name = data[start + 41 : end]
        if name == ref and end - start >= 42:
            return data[start : start + 40].decode("ascii")
        if name < ref:
            lo = end + 1  # a peeled line there next reads as b"", below every name
        else:
            hi = start
    return None
