"""`harnessgit log --all-history`: every past change to the harness, judged today.

A team that adopts harnessgit late has a history nobody checked: the audit walks the
base branch's first-parent chain once and shows each commit that changed a harness file,
with its size before and after, the sections it touched and what the checks say about
it, under the working tree's harnessgit.toml (its ``[harness] paths`` and ``[checks]``),
also for commits made before that file existed. Then a summary of the harness's size
over the span, the largest growths and shrinks, and the findings by rule: bloat and
collapse over time, before any evaluation exists.

A merge on the chain is the change it brought (a pull request): it is compared with its
first parent, as the gate compares a candidate with the base. The findings are
`check_change`'s, ratchet included, so a problem a file already had is "existing" there
and counted only where it first came in.
"""

from __future__ import annotations

import gc
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import cast

from harnessgit.candidates.history_cache import HistoryCache, fingerprint
from harnessgit.candidates.history_entries import HistoryEntry, HistoryFile
from harnessgit.candidates.history_store import ChainStore
from harnessgit.candidates.history_verdicts import Verdicts
from harnessgit.candidates.history_verdicts import fingerprint as verdicts_fingerprint
from harnessgit.check_findings import Unread
from harnessgit.checks import Content, check_change
from harnessgit.checks.collect import is_harness
from harnessgit.checks.markdown_edit import parse_edit
from harnessgit.checks.section_changes import Outline, compare, is_markdown, outline
from harnessgit.checks.tokens import load_tokenizer
from harnessgit.checks.trailers import deliberate, with_trailers
from harnessgit.checks.verdicts import keep_verdicts
from harnessgit.config import Config, require
from harnessgit.objects import MODE_EXEC, MODE_FILE
from harnessgit.store import Objects, RawChange, Side, Store
from harnessgit.targets import base_tip

_REGULAR = (MODE_FILE, MODE_EXEC)  # links and submodules have no text to size or check (as in checks)
_STATUS = {"A": "added", "D": "deleted", "R": "renamed"}
STEPS = 3  # the largest growths and shrinks the summary names


@dataclass(frozen=True, kw_only=True)
class SizePoint:
    """The whole harness after one commit."""

    commit: str
    date: str
    bytes: int
    files: int


@dataclass(frozen=True, kw_only=True)
class Step:
    commit: str
    date: str
    subject: str
    growth: int  # bytes


@dataclass(frozen=True, kw_only=True)
class RuleCount:
    """The findings of one rule the changes shown brought in (state "new")."""

    rule: str
    failures: int
    warnings: int
    commits: int  # how many commits brought one
    # Findings a commit message said were deliberate (`checks.trailers`): counted apart,
    # in neither column above.
    allowed: int = 0


@dataclass(frozen=True, kw_only=True)
class HistoryResult:
    base: str
    harness_paths: list[str]  # [harness] paths the history was read with
    tokenizer: str
    examined: int  # commits on the chain
    harness_commits: int  # of those, the ones that changed a harness file
    entries: list[HistoryEntry]  # newest first; at most --limit
    oldest: SizePoint | None  # the harness after the oldest entry shown
    newest: SizePoint | None
    largest_growth: list[Step]
    largest_shrink: list[Step]
    findings_by_rule: list[RuleCount]
    # The harness files of the changes shown that no rule read, with why (once per path).
    unread: list[Unread] = field(default_factory=list)


# Allocations between two runs of Python's cyclic garbage collector during an audit
# (Python's default: 700). See `_fewer_collections`.
AUDIT_GC_THRESHOLD = 50_000


@contextmanager
def _fewer_collections() -> Iterator[None]:
    """The audit allocates millions of small objects (parsed blocks, outlines, sentences,
    verdicts), many kept until it ends: at Python's default threshold the cyclic
    collector ran about 2,000 times over them in a first run on ccsp, 1.2 s of its ~10 s
    of CPU (docs/benchmarks.md, hist2). Less often while the audit runs, as before after."""
    before = gc.get_threshold()
    gc.set_threshold(max(AUDIT_GC_THRESHOLD, before[0]), *before[1:])
    try:
        yield
    finally:
        gc.set_threshold(*before)


@_fewer_collections()
def harness_history(
    store: Store,
    config: Config,
    *,
    base: str | None = None,
    limit: int | None = None,
    judge: bool = True,
    cache: bool = True,
) -> HistoryResult:
    """The newest ``limit`` (default: all) commits of the base branch's first-parent
    chain that changed a harness file, each checked against its first parent (with
    ``judge=False``, only sized: the report's length pictures need no findings).
    ``cache=False`` judges every commit and neither reads nor writes the cache."""
    config = require(config)
    branch = base or config.harness.base
    chain = store.history.first_parent_changes(base_tip(store.refs, branch))
    touched = [(commit, harness) for commit, changes in chain if (harness := _harness(changes, config))]
    shown = touched[:limit] if limit is not None else touched
    tokenizer, _notes = load_tokenizer(config.checks)
    sizes = store.objects.object_sizes([side.sha for _c, changes in shown for side in _sides(changes)])
    # Git's answers about the chain, from what the audit has read (`history_store`).
    store = cast("Store", ChainStore(store, chain, sizes))
    reader = _Reader(store, config, sizes, tokenizer.count, sections=judge)
    entries: list[HistoryEntry] = []
    if shown:
        # Oldest first, adding up from the harness before the oldest: a file's version
        # before one commit is then the one the commit before parsed (`markdown.parse`
        # keeps the last few), and the checks find the texts the sections parsed.
        parents = store.objects.commit_info(shown[-1][0]).parents
        total, count = _harness_size(store.objects, config, parents[0]) if parents else (0, 0)
        # Each commit is judged once per fingerprint: a repeat audit reads the cache (the
        # report only sizes the history: nothing to cache).
        key = fingerprint(store.refs, config, tokenizer.name)
        kept = HistoryCache(store, key) if judge and cache else None
        # Each file version is judged once per fingerprint too: a commit the per-commit
        # cache does not hold judges only the versions no audit has judged.
        verdicts = Verdicts(store, verdicts_fingerprint(config)) if kept is not None else None
        with keep_verdicts(verdicts if verdicts is not None else {}):
            for commit, changes in reversed(shown):
                if kept is None:
                    entry = _entry(store, config, reader, commit, changes, total, count, judge=judge)
                else:
                    entry = _cached_entry(store, config, reader, kept, commit, changes, total, count)
                entries.insert(0, entry)
                total, count = entry.harness_bytes, entry.harness_files
        if kept is not None:
            kept.save()
        if verdicts is not None:
            verdicts.save()
    return HistoryResult(
        base=branch,
        harness_paths=list(config.harness.paths),
        tokenizer=tokenizer.name,
        examined=len(chain),
        harness_commits=len(touched),
        entries=entries,
        oldest=_point(entries[-1]) if entries else None,
        newest=_point(entries[0]) if entries else None,
        largest_growth=_steps(entries, grew=True),
        largest_shrink=_steps(entries, grew=False),
        findings_by_rule=_by_rule(entries),
        unread=list({file.path: file for entry in entries for file in entry.unread}.values()),
    )


def _harness(changes: list[RawChange], config: Config) -> list[RawChange]:
    """The changes to harness files (a rename counts when either name is one); links and
    submodules are left out, as the checks leave them (they have no text)."""
    return [
        c
        for c in changes
        if (is_harness(c.path, config) or (c.old_path is not None and is_harness(c.old_path, config)))
        and any(side is not None and side.mode in _REGULAR for side in (c.old, c.new))
    ]


def _sides(changes: list[RawChange]) -> list[Side]:
    return [side for c in changes for side in (c.old, c.new) if side is not None and side.mode in _REGULAR]


def _harness_size(objects: Objects, config: Config, commit: str) -> tuple[int, int]:
    """Bytes and number of the harness files at ``commit``."""
    entries = [
        e for path, e in objects.entries_at(commit).items() if e.mode in _REGULAR and is_harness(path, config)
    ]
    sizes = objects.object_sizes([e.sha for e in entries])
    return sum(sizes[e.sha] for e in entries), len(entries)


class _Reader:
    """Blob sizes (read once for the whole history) and texts, token counts memoised by
    blob: a file's version after one commit is its version before the next one."""

    def __init__(
        self,
        store: Store,
        config: Config,
        sizes: dict[str, int],
        count: Callable[[str], int],
        *,
        sections: bool = True,
    ) -> None:
        self.store, self.max_bytes, self.sizes = store, config.checks.max_file_bytes, sizes
        self.count, self.sections = count, sections  # sections=False: sizes only
        self.tokens: dict[str, int | None] = {}
        self.outlines: dict[str, Outline] = {}

    def texts(self, sides: list[Side]) -> dict[str, str | None]:
        small = [s.sha for s in sides if self.sizes.get(s.sha, 0) <= self.max_bytes]
        # Text as the checks read it: None for a binary file or bytes that are not UTF-8.
        return {
            sha: Content.from_bytes(data).text for sha, data in self.store.objects.read_blobs(small).items()
        }

    def outline_of(self, side: Side | None, text: str | None) -> Outline | None:
        """The sections of a blob, parsed once: its version before the next commit that
        changes it is this one (Markdown parsing is most of an audit's time)."""
        if side is None or text is None:
            return None
        found = self.outlines.get(side.sha)
        if found is None:
            if len(self.outlines) > 4096:
                self.outlines.clear()
            found = self.outlines[side.sha] = outline(text)
        return found

    def tokens_of(self, sha: str, text: str | None) -> int | None:
        if sha not in self.tokens:
            self.tokens[sha] = None if text is None else self.count(text)
        return self.tokens[sha]


def _cached_entry(
    store: Store,
    config: Config,
    reader: _Reader,
    cache: HistoryCache,
    commit: str,
    changes: list[RawChange],
    total: int,
    count: int,
) -> HistoryEntry:
    """`_entry` through the cache: judged with running totals of zero (its own growth
    and files added), then placed on the running totals."""
    cached = cache.get(commit)
    if cached is None:
        entry = _entry(store, config, reader, commit, changes, 0, 0)
        cache.put(entry, entry.harness_files)
        cached = entry, entry.harness_files
    return replace(cached[0], harness_bytes=total + cached[0].growth, harness_files=count + cached[1])


def _entry(
    store: Store,
    config: Config,
    reader: _Reader,
    commit: str,
    changes: list[RawChange],
    total: int,
    count: int,
    judge: bool = True,
) -> HistoryEntry:
    """The change ``commit`` made, the harness being ``total`` bytes in ``count`` files before."""
    info = store.objects.commit_info(commit)
    parent = info.parents[0] if info.parents else None
    texts = reader.texts(_sides(changes))
    files = [_file(reader, change, texts) for change in changes]
    report = (
        with_trailers(store, check_change(store, config, parent, commit), parent, commit) if judge else None
    )
    # A file renamed into the harness paths (or out of them) is harness on one side only.
    growth = sum(
        (f.bytes_after or 0) * is_harness(f.path, config)
        - (f.bytes_before or 0) * is_harness(f.old_path or f.path, config)
        for f in files
    )
    total += growth
    count += _file_count(files, config)
    return HistoryEntry(
        commit=commit,
        date=info.author_time.isoformat(),
        author=info.author,
        subject=info.subject,
        merge=len(info.parents) > 1,
        harness_bytes=total,
        harness_files=count,
        growth=growth,
        files=files,
        findings=report.findings if report else [],
        failed=report.failed if report else False,
        unread=report.unread if report else [],
    )


def _file(reader: _Reader, change: RawChange, texts: dict[str, str | None]) -> HistoryFile:
    old = change.old if change.old is not None and change.old.mode in _REGULAR else None
    new = change.new if change.new is not None and change.new.mode in _REGULAR else None
    old_text = texts.get(old.sha) if old else None
    new_text = texts.get(new.sha) if new else None
    if old is None and new is not None:
        status = "added"
    elif new is None:
        status = "deleted"
    else:
        status = _STATUS.get(change.status, "modified")
    # Sections only when every side there is was read: a side over [checks] max_file_bytes
    # (or binary) would make each section of the other look added or removed.
    readable = (old is None or old_text is not None) and (new is None or new_text is not None)
    sections = None
    if readable and reader.sections and is_markdown(change.path):
        if old_text is not None and new_text is not None:
            parse_edit(old_text, new_text)  # from where the edit starts (the checks read it too)
        sections = compare(reader.outline_of(old, old_text), reader.outline_of(new, new_text))
    return HistoryFile(
        path=change.path,
        old_path=change.old_path,
        status=status,
        bytes_before=reader.sizes[old.sha] if old else None,
        bytes_after=reader.sizes[new.sha] if new else None,
        tokens_before=reader.tokens_of(old.sha, old_text) if old else None,
        tokens_after=reader.tokens_of(new.sha, new_text) if new else None,
        sections=sections,
        chars_before=None if old_text is None else len(old_text),
        chars_after=None if new_text is None else len(new_text),
    )


def _file_count(files: list[HistoryFile], config: Config) -> int:
    """How many harness files a commit added (negative: took away)."""
    return sum(
        (f.bytes_after is not None and is_harness(f.path, config))
        - (f.bytes_before is not None and is_harness(f.old_path or f.path, config))
        for f in files
    )


def _point(entry: HistoryEntry) -> SizePoint:
    return SizePoint(
        commit=entry.commit, date=entry.date, bytes=entry.harness_bytes, files=entry.harness_files
    )


def _steps(entries: list[HistoryEntry], *, grew: bool) -> list[Step]:
    """The ``STEPS`` commits that grew (or shrank) the harness most, largest first."""
    moved = [e for e in entries if (e.growth > 0 if grew else e.growth < 0)]
    moved.sort(key=lambda e: -abs(e.growth))
    return [Step(commit=e.commit, date=e.date, subject=e.subject, growth=e.growth) for e in moved[:STEPS]]


def _by_rule(entries: list[HistoryEntry]) -> list[RuleCount]:
    failures: Counter[str] = Counter()
    warnings: Counter[str] = Counter()
    allowed: Counter[str] = Counter()
    commits: Counter[str] = Counter()
    for entry in entries:
        brought = [f for f in entry.findings if f.state == "new"]
        for finding in brought:
            (failures if finding.level == "failure" else warnings)[finding.rule] += 1
        allowed.update(f.rule for f in entry.findings if deliberate(f))
        commits.update({f.rule for f in brought})
    return [
        RuleCount(
            rule=rule,
            failures=failures[rule],
            warnings=warnings[rule],
            commits=commits[rule],
            allowed=allowed[rule],
        )
        for rule in sorted(commits | allowed, key=lambda r: (-failures[r] - warnings[r], r))
    ]
