"""Reading the retire tags of the evidence notes' index (`harnessgit.store.index`):
which archived candidate was retired why, for `status`, without reading 20,000 notes.

A retire tag is ``retire/<line>/<candidate>/<reason>/<time>`` (`index.retire_tags`);
its lines stand together in the index, sorted. `retire_reasons` matches them with one
pattern and decodes only the lines of the candidates asked about; `archived_reasons`
keeps the counts by reason beside the indexes, derived like them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import unquote

from harnessgit.store.index import RETIRE, index_path, quoted, read_index, save_derived

if TYPE_CHECKING:
    from harnessgit.store import Store

# One retire line of the index: its tag's four parts, then its target:blob pairs.
RETIRE_LINE = re.compile(
    rb"^retire/([!-.0-~]+)/([!-.0-~]+)/([!-.0-~]+)/([!-.0-~]+)((?: [0-9a-f]{40,64}:[0-9a-f]{40,64})+)$",
    re.MULTILINE,
)


def retire_reasons(store: Store, ref: str, archived: Mapping[str, str]) -> dict[str, str]:
    """Candidate -> the reason of its newest retire record on its own commit, for the
    ``archived`` candidates (candidate -> commit). One pattern over the block of retire
    lines, decoding only the lines of the candidates asked about: `status` counts 20,000
    archived candidates this way (parsing each line whole took 130 ms)."""
    # Matched as written in the tags (percent-encoded, `retire_tags`): a line is decoded
    # only when its candidate is asked about and another of its records competes.
    wanted = {quoted(cid): (cid, f" {sha}:".encode()) for cid, sha in archived.items()}
    newest: dict[str, tuple[bytes, bytes, bytes]] = {}  # candidate -> (n, time, reason) as written
    for n, candidate, reason, ts, pairs in RETIRE_LINE.findall(read_index(store, ref).block(RETIRE)):
        cid, on_commit = wanted.get(candidate, ("", b""))
        if not cid or on_commit not in pairs:
            continue
        if cid not in newest or _later((n, ts), newest[cid][:2]):
            newest[cid] = (n, ts, reason)
    return {cid: _unquoted(reason) for cid, (_n, _ts, reason) in newest.items()}


REASONS = "archived-reasons"  # the derived file of `archived_reasons`


def archived_reasons(store: Store, ref: str, archived: Mapping[str, str]) -> dict[str, int]:
    """How many of the ``archived`` candidates (candidate -> commit) have each reason as
    their newest retire record ("unknown" without one). Derived like the indexes and kept
    beside them, keyed by the notes commit of ``ref`` and a digest of ``archived``: a
    `status` with nothing retired since reads a few bytes instead of 20,000 retire lines."""
    key = _reasons_key(store, ref, archived)
    saved = _saved_reasons(store)
    if saved is not None and saved[0] == key:
        return saved[1]
    counts = _counted(store, ref, archived)
    save_derived(store, REASONS, json.dumps({"format": 1, "key": key, "counts": counts}).encode())
    return counts


def check_reasons(store: Store, ref: str, archived: Mapping[str, str]) -> str | None:
    """For `doctor`: None unless the saved counts are for the archive as it is now and
    differ from a count of the retire lines (an edited file; readers would trust it)."""
    saved = _saved_reasons(store)
    if saved is None or saved[0] != _reasons_key(store, ref, archived):
        return None  # missing, unreadable or stale: recounted on the next `status`
    if _counted(store, ref, archived) != saved[1]:
        return "the saved counts of archived candidates do not match the notes"
    return None


def _counted(store: Store, ref: str, archived: Mapping[str, str]) -> dict[str, int]:
    newest = retire_reasons(store, ref, archived)
    counts: dict[str, int] = {}
    for cid in archived:
        reason = newest.get(cid, "unknown")
        counts[reason] = counts.get(reason, 0) + 1
    return counts


def _reasons_key(store: Store, ref: str, archived: Mapping[str, str]) -> str:
    listing = "".join(f"{cid} {sha}\n" for cid, sha in sorted(archived.items()))
    return hashlib.sha256(f"{store.refs.value(ref)}\n{listing}".encode()).hexdigest()


def _saved_reasons(store: Store) -> tuple[str, dict[str, int]] | None:
    try:
        data = json.loads(index_path(store, REASONS).read_bytes())
        key, counts = data["key"], data["counts"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    valid = isinstance(key, str) and isinstance(counts, dict) and data.get("format") == 1
    if not valid or not all(isinstance(n, int) and n >= 0 for n in counts.values()):
        return None
    return key, counts


def _later(a: tuple[bytes, bytes], b: tuple[bytes, bytes]) -> bool:
    """Whether the retire record at (place, time) ``a`` is newer than ``b``; of equal
    times the first in the note is (as ``max`` over the records reads)."""
    ta, tb = (datetime.fromisoformat(_unquoted(ts)) for _n, ts in (a, b))
    return ta > tb or (ta == tb and int(a[0]) < int(b[0]))


def _unquoted(part: bytes) -> str:
    text = part.decode()
    return unquote(text) if "%" in text else text
