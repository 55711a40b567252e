"""Derived files beside the notes indexes, as a reader finds and checks them.

``<common git dir>/harnessgit/index/<name>``: the notes indexes, the history audit's
caches, the frontier's pool cache. Each is sealed: a JSON header line (its format, what
it was built from, the sha256 of the body), then the body. Here so that a command that
only reads one (a repeat `log --all-history`) needs none of the store's write machinery;
writing them is `harnessgit.store.index.save_derived`'s.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


class IndexUnreadable(Exception):
    """The index file is missing, truncated, tampered with or of another format."""


def derived_path(common_dir: Path, name: str) -> Path:
    """Where the derived file ``name`` (a notes ref: its name after refs/notes/) lives."""
    return common_dir / "harnessgit" / "index" / name.removeprefix("refs/notes/").replace("/", "-")


def seal(header: dict[str, object], body: bytes) -> bytes:
    """A derived file as both are written (this index and the frontier's pool cache):
    a JSON header line, ``header`` with the sha256 of the body, then the body."""
    sealed = {**header, "sha256": hashlib.sha256(body).hexdigest()}
    return json.dumps(sealed, sort_keys=True).encode() + b"\n" + body


def unseal(data: bytes, format: int) -> tuple[dict[str, Any], int]:
    """A file `seal` wrote: (its header, where its body starts) once the header is JSON
    of ``format`` and the body matches its checksum. The body is not copied: the pool
    cache's means are 48 MB at 20,000 candidates, and each copy cost ~40 ms."""
    end = data.find(b"\n")
    try:
        header = json.loads(data[:end]) if end >= 0 else None
    except ValueError:
        raise IndexUnreadable("its header is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != format:
        raise IndexUnreadable("its header is missing or of another format")
    if header.get("sha256") != hashlib.sha256(memoryview(data)[end + 1 :]).hexdigest():
        raise IndexUnreadable("its checksum does not match (truncated or edited)")
    return header, end + 1
