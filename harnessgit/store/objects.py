"""Writing git objects in process: the loose-object writer (reading them is
`harnessgit.readstore.catfile`'s persistent cat-file)."""

from __future__ import annotations

import contextlib
import os
import secrets
import zlib
from pathlib import Path

from harnessgit.object_ids import object_id


def write_loose(objects: Path, kind: str, data: bytes, made: set[str] | None = None) -> str:
    """Write an object as a loose object of ``objects`` (a repository's objects
    directory) unless it is there already; its id.

    As git does it: zlib at git's default loose level (1), a temporary file in the
    object's own directory, made read-only and renamed into place, so a reader never
    sees half an object. An object already there is not written again (an unchanged
    subtree, a note written twice): about a third of evolve's object writes (issue 13).
    gitdb's writer, used before, wrote and renamed every object, then chmod-ed it.
    ``made``: the fan-out directories known to exist, not made again (a directory
    operation costs about as much as the object's write on a loaded disk: issue 13).
    """
    sha = object_id(kind, data)
    directory = objects / sha[:2]
    target = directory / sha[2:]
    if target.exists():
        return sha
    if made is None or sha[:2] not in made:
        directory.mkdir(exist_ok=True)
        if made is not None:
            made.add(sha[:2])
    packed = zlib.compress(f"{kind} {len(data)}\0".encode() + data, 1)
    temporary = directory / f"tmp_obj_{os.getpid()}_{secrets.token_hex(6)}"
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    except FileNotFoundError:  # a `git prune` removed the emptied directory meanwhile
        directory.mkdir(exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(packed)
        os.replace(temporary, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        raise
    return sha
