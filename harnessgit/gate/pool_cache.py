"""A derived cache of what the frontier reads of 20,000 programs (issue 17, item 3).

`harnessgit frontier` needs, for every program of the history, when it was created and
on what (its proposal record, else its commit), its cache key (one tree read per
commit) and its per-instance means (6 million scores at 20,000 candidates x 300
instances). Read from git each time, that took a minute. This cache keeps them:

- per commit, its author time, first parent and key: facts of an immutable object,
  valid as long as the configuration that keys them (its digest is in the header);
  missing ones are computed and added;
- the proposals (commit -> time, parent), derived from one evidence notes commit;
- every cache key's per-instance means, derived from one evaluation notes commit.

Both notes-derived parts name the notes commit and tree they were built from and are
brought up to date from a ``diff-tree`` of the two notes trees, forward or sideways
(after `sync` or a notes merge), reading only the notes that changed: for the
means, the harnesses named in a changed note's old or new text are recomputed from
every note of theirs (through the notes index and `ScoreBook`, as without the cache).
A note line the index cannot read (``*``), an old tree that is gone, or a file
that does not check out (format, digest, sha256 of the body) means a rebuild. git
stays the source of truth: delete the file and the frontier is the same, only slower
once. Saved by rename (`harnessgit.store.index.save_derived`), so a concurrent reader
sees the old file or the new one; two writers racing each leave a file true for the
commits it names.

On disk: a JSON header line, a JSON line with the commits, proposals and keys, then
the means as little-endian float64, each key's at its offset, in the order of its
instance list (lists are shared between keys).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from harnessgit import layout
from harnessgit.config import Config
from harnessgit.evaluation.context import Key, eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import ProposalRecord
from harnessgit.records.lines import Skipped, parse_note
from harnessgit.store import Store
from harnessgit.store.index import changed_notes, eval_tags, index_path, save_derived
from harnessgit.store.index_file import ANY

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

FORMAT = 1
NAME = "frontier-pool"


class CacheUnreadable(Exception):
    """Missing, truncated, edited, of another format or of another configuration."""


@dataclass
class PoolCache:
    digest: str  # of the configuration the keys were computed under
    evals: tuple[str, str] | None = None  # (notes commit, tree) the means are of
    evidence: tuple[str, str] | None = None  # (notes commit, tree) the proposals are of
    commits: dict[str, list[str]] = field(default_factory=dict)  # sha -> [time, parent, harness, fingerprint]
    proposals: dict[str, list[str]] = field(default_factory=dict)  # sha -> [time, parent]
    means: dict[tuple[str, str, str], dict[str, float]] = field(default_factory=dict)
    dirty: bool = False

    def dump(self) -> bytes:
        import numpy as np

        layouts: dict[tuple[str, ...], int] = {}
        keys: list[list[object]] = []
        values: list[float] = []
        offset = 0
        for (harness, fingerprint, model), by_instance in sorted(self.means.items()):
            instances = tuple(by_instance)
            place = layouts.setdefault(instances, len(layouts))
            keys.append([harness, fingerprint, model, place, offset])
            values.extend(by_instance.values())
            offset += len(instances)
        meta = {
            "commits": self.commits,
            "proposals": self.proposals,
            "keys": keys,
            "layouts": [list(instances) for instances in layouts],
        }
        body = json.dumps(meta, sort_keys=True).encode() + b"\n" + np.array(values, "<f8").tobytes()
        header = {
            "format": FORMAT,
            "digest": self.digest,
            "evals": self.evals,
            "evidence": self.evidence,
            "sha256": hashlib.sha256(body).hexdigest(),
        }
        return json.dumps(header, sort_keys=True).encode() + b"\n" + body


@dataclass(frozen=True)
class Means:
    """The means part as read from disk, kept as arrays until a frontier gathers them."""

    keys: dict[tuple[str, str, str], tuple[int, int]]  # key -> (its instance list, offset)
    layouts: list[list[str]]
    values: NDArray[np.float64]

    def matrix(self, keys: list[Key], ids: tuple[str, ...]) -> tuple[NDArray[np.float64], list[bool]]:
        """(a row of means over ``ids`` per key, whether each key has them all)."""
        import numpy as np

        columns: dict[int, NDArray[np.intp] | None] = {}
        for place, instances in enumerate(self.layouts):
            where = {instance: n for n, instance in enumerate(instances)}
            found = [where.get(instance) for instance in ids]
            columns[place] = None if None in found else np.array(found, dtype=np.intp)
        # Each key's row is its offset plus its layout's columns: gathered per layout in
        # one array operation (a row at a time took ~40 ms at 20,000 keys).
        places = np.full(len(keys), -1, dtype=np.intp)
        offsets = np.zeros(len(keys), dtype=np.intp)
        complete = []
        for n, key in enumerate(keys):
            entry = self.keys.get((key.harness, key.fingerprint, key.model))
            ok = entry is not None and columns.get(entry[0]) is not None
            complete.append(ok)
            if entry is not None and ok:
                places[n], offsets[n] = entry
        matrix = np.zeros((len(keys), len(ids)), dtype=np.float64)
        for place, cols in columns.items():
            chosen = np.flatnonzero(places == place)
            if cols is not None and len(chosen):
                matrix[chosen] = self.values[offsets[chosen, None] + cols[None, :]]
        return matrix, complete


def config_digest(config: Config) -> str:
    return hashlib.sha256(repr(config).encode()).hexdigest()


def cache_path(store: Store) -> object:
    return index_path(store, NAME)


def parse_cache(data: bytes, digest: str) -> tuple[PoolCache, Means]:
    import numpy as np

    # Offsets into ``data``, never slices of the means: at 20,000 candidates they are
    # 48 MB, and each copy cost ~40 ms.
    end = data.find(b"\n")
    try:
        header = json.loads(data[:end]) if end >= 0 else None
    except ValueError:
        raise CacheUnreadable("its header is not JSON") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise CacheUnreadable("its header is missing or of another format")
    body = memoryview(data)[end + 1 :]
    if header.get("sha256") != hashlib.sha256(body).hexdigest():
        raise CacheUnreadable("its checksum does not match (truncated or edited)")
    meta_end = data.find(b"\n", end + 1)  # the JSON line holds no newline
    if meta_end < 0 or (len(data) - meta_end - 1) % 8:
        raise CacheUnreadable("its body is not a JSON line and float64 means")
    meta = json.loads(data[end + 1 : meta_end])
    means = Means(
        {(h, f, m): (place, offset) for h, f, m, place, offset in meta["keys"]},
        meta["layouts"],
        np.frombuffer(data, dtype="<f8", offset=meta_end + 1),
    )
    evals, evidence = header.get("evals"), header.get("evidence")
    cache = PoolCache(
        header["digest"],
        tuple(evals) if evals else None,
        tuple(evidence) if evidence else None,
        meta["commits"] if header["digest"] == digest else {},
        meta["proposals"],
    )
    cache.digest = digest
    return cache, means


def _unpack(means: Means) -> dict[tuple[str, str, str], dict[str, float]]:
    values = means.values.tolist()
    found = {}
    for key, (place, offset) in means.keys.items():
        instances = means.layouts[place]
        found[key] = dict(zip(instances, values[offset : offset + len(instances)], strict=True))
    return found


class Pool:
    """What the frontier reads of the history, from the cache brought up to date."""

    def __init__(self, store: Store, config: Config, *, read: bool = True) -> None:
        """The cache as a reader has it (the file brought up to date), or with
        ``read=False`` built from the notes alone (`check_pool`, `rebuild_pool`)."""
        self.store, self.config = store, config
        self.book = ScoreBook.load(store)
        index = self.book.index
        assert index is not None
        tip = (index.commit, index.tree) if index.commit and index.tree else None
        path = index_path(store, NAME)
        digest = config_digest(config)
        try:
            if not read:
                raise CacheUnreadable("not read")
            self.cache, means = parse_cache(path.read_bytes(), digest)
        except (OSError, CacheUnreadable, ValueError, KeyError, TypeError):
            self.cache, means = PoolCache(digest, dirty=True), None
        if means is not None and self.cache.evals == tip:
            self.means: Means | None = means
        else:
            self.cache.means = _unpack(means) if means is not None else {}
            self._refresh_means(tip)
            self.means = None
        self._refresh_proposals()

    def _refresh_means(self, tip: tuple[str, str] | None) -> None:
        cache, store = self.cache, self.store
        changes = changed_notes(store, cache.evals[1], tip[1]) if cache.evals and tip else None
        if tip is None:
            cache.means = {}
        elif changes is None:
            cache.means = {}
            self._recompute(None)
        else:
            blobs = [blob for _target, old, new in changes for blob in (old, new) if blob]
            harnesses: set[str] = set()
            for _sha, _kind, data in store.objects.stream(blobs):
                harnesses |= eval_tags(data)
            if ANY in harnesses:
                cache.means = {}
                self._recompute(None)
            else:
                self._recompute(harnesses)
        cache.evals, cache.dirty = tip, True

    def _recompute(self, harnesses: set[str] | None) -> None:
        book = self.book
        if harnesses is None:
            keys = book.cache_keys()
        else:
            book.prefetch(harnesses)
            keys = [key for harness in sorted(harnesses) for key in book.keys_of(harness)]
            for old in [k for k in self.cache.means if k[0] in harnesses]:
                del self.cache.means[old]
        for key in keys:
            means = book.instance_means(key)
            if means:
                self.cache.means[(key.harness, key.fingerprint, key.model)] = means

    def _refresh_proposals(self) -> None:
        store, cache = self.store, self.cache
        tip = store.refs.value(layout.NOTES_EVIDENCE)
        current = (tip, store.objects.commit_info(tip).tree) if tip else None
        if cache.evidence == current:
            return
        changes = changed_notes(store, cache.evidence[1], current[1]) if cache.evidence and current else None
        if changes is None:
            cache.proposals = {}
            changes = [] if current is None else changed_notes(store, None, current[1]) or []
        wanted: dict[str, list[str]] = {}
        for target, _old, new in changes:
            cache.proposals.pop(target, None)
            if new:
                wanted.setdefault(new, []).append(target)
        for blob, _kind, data in store.objects.stream(list(wanted)):
            proposal = proposal_in(data)
            if proposal is not None:
                for target in wanted[blob]:
                    cache.proposals[target] = [proposal[0].isoformat(), proposal[1]]
        cache.evidence, cache.dirty = current, True

    def commit(self, sha: str) -> list[str]:
        """[author time, first parent or "", harness, fingerprint]."""
        facts = self.cache.commits.get(sha)
        if facts is None:
            info = self.store.objects.commit_info(sha)
            key = eval_context(self.store.objects, self.config, sha).key
            parent = info.parents[0] if info.parents else ""
            facts = [info.author_time.isoformat(), parent, key.harness, key.fingerprint]
            self.cache.commits[sha] = facts
            self.cache.dirty = True
        return facts

    def created(self, sha: str) -> datetime:
        found = self.cache.proposals.get(sha)
        return datetime.fromisoformat(found[0] if found else self.commit(sha)[0])

    def parent(self, sha: str) -> str | None:
        found = self.cache.proposals.get(sha)
        return found[1] if found else (self.commit(sha)[1] or None)

    def proposed_on(self) -> set[str]:
        return {parent for _ts, parent in self.cache.proposals.values()}

    def key(self, sha: str) -> Key:
        facts = self.commit(sha)
        return Key(facts[2], facts[3], self.config.evaluator.model)

    def matrix(
        self, keys: list[Key], ids: tuple[str, ...], split_hash: str
    ) -> tuple[NDArray[np.float64], list[bool]]:
        import numpy as np

        if self.means is None:
            rows = [self.cache.means.get((k.harness, k.fingerprint, k.model), {}) for k in keys]
            found = [[row.get(instance) for instance in ids] for row in rows]
            complete = [None not in row for row in found]
            matrix = np.array(
                [row if ok else [0.0] * len(ids) for row, ok in zip(found, complete, strict=True)]
            )
            return matrix.reshape(len(keys), len(ids)), complete
        return self.means.matrix(keys, ids)

    def all_means(self) -> dict[tuple[str, str, str], dict[str, float]]:
        return _unpack(self.means) if self.means is not None else self.cache.means

    def save(self) -> None:
        if not self.cache.dirty:
            return
        self.cache.means = self.all_means()
        save_derived(self.store, NAME, self.cache.dump())


def check_pool(store: Store, config: Config) -> str | None:
    """For `doctor`: what is wrong with the pool cache, or None. A missing file is fine
    (built on first use), and so is a stale one whose update from the notes equals a
    rebuild (readers update it) or one of another configuration (its commit facts are
    dropped on read); one that cannot be read, or that differs from a rebuild, is not:
    an edit with its checksum redone is found only this way."""
    path = index_path(store, NAME)
    if not path.exists():
        return None
    try:
        parse_cache(path.read_bytes(), config_digest(config))
    except (OSError, CacheUnreadable, ValueError, KeyError, TypeError) as exc:
        return f"the frontier's pool cache cannot be used: {exc}"
    current, rebuilt = Pool(store, config), Pool(store, config, read=False)
    if current.all_means() != rebuilt.all_means():
        return "the frontier's pool cache does not match the evaluation notes (its means differ)"
    if current.cache.proposals != rebuilt.cache.proposals:
        return "the frontier's pool cache does not match the evidence notes (its proposals differ)"
    wrong = [sha for sha, facts in current.cache.commits.items() if facts != rebuilt.commit(sha)]
    if wrong:
        return (
            f"the frontier's pool cache holds wrong facts of {len(wrong)} commit(s), "
            f"{wrong[0][:12]} first (its time, parent or cache key)"
        )
    return None


def rebuild_pool(store: Store, config: Config) -> int:
    """Rebuild the pool cache from the notes (commit facts are added as frontiers read
    them); the number of keys with means."""
    pool = Pool(store, config, read=False)
    pool.save()
    return len(pool.cache.means)


def proposal_in(note: bytes) -> tuple[datetime, str] | None:
    """(time, parent) of the last proposal record in one evidence note, as
    `gate.frontier.proposals_by_commit` reads it."""
    found = None
    for record in parse_note(note, "", Skipped()):
        if isinstance(record, ProposalRecord):
            found = (record.ts, record.parent)
    return found
