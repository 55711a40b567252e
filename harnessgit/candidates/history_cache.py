"""The history audit's cache: each commit's judged change, kept beside the notes indexes.

`log --all-history` judges every commit of the base branch that changed a harness file;
a commit and its first parent are immutable, so what the checks say about that change is
a fact of the objects under the rules and settings that judged it. The cache holds, per
commit, the entry `harness_history` built (files, sizes, sections, findings, the files no
rule read), under a fingerprint of everything else the verdict depends on: harnessgit's
version and the source of the audit and its rules (`history_output.source_digest`:
an edited rule judges again even before a release), ``[harness] paths`` and every
``[checks]`` setting, the tokenizer, and the labels cumulative growth can be measured
from. Another fingerprint is another file's worth: the file is replaced, never mixed.

Derived, like the notes indexes (docs/design.md, "Reading fast"):
``<common git dir>/harnessgit/index/history-checks``, a JSON header (format, fingerprint,
sha256 of the body) and one JSON line per commit, written by rename. A file that fails
its format, fingerprint or sha256 check, or whose lines do not read back, is ignored and
rebuilt by the run; deleting it costs one slow run.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, replace
from typing import Any

import harnessgit
from harnessgit import layout
from harnessgit.candidates.history_entries import HistoryEntry, HistoryFile
from harnessgit.candidates.history_output import AUDIT_SOURCES, source_digest
from harnessgit.check_findings import Finding, Unread
from harnessgit.checks.section_changes import SectionChanges
from harnessgit.config import Config
from harnessgit.store import Refs, Store
from harnessgit.store.index import index_path, save_derived

NAME = "history-checks"
FORMAT = 1


def fingerprint(refs: Refs, config: Config, tokenizer: str) -> str:
    """What the verdict on a commit depends on besides the commit itself."""
    labels = sorted(refs.listing(layout.LABELS).items())
    facts = [
        harnessgit.__version__,
        source_digest(AUDIT_SOURCES),
        FORMAT,
        list(config.harness.paths),
        repr(config.checks),
        tokenizer,
        labels,
    ]
    return hashlib.sha256(json.dumps(facts, default=str).encode("utf-8")).hexdigest()


class HistoryCache:
    """The cached entries of one fingerprint; `save` writes the file when something was added."""

    def __init__(self, store: Store, key: str) -> None:
        self.store, self.key = store, key
        self.entries: dict[str, dict[str, Any]] = _load(store, key)
        self.added = 0

    def get(self, commit: str) -> tuple[HistoryEntry, int] | None:
        """The entry of ``commit`` (its running totals zero) and how many harness files it
        added, or None when it is not cached or does not read back."""
        data = self.entries.get(commit)
        if data is None:
            return None
        try:
            return _entry(data["entry"]), int(data["files_added"])
        except (KeyError, TypeError, ValueError):
            self.entries.pop(commit)
            return None

    def put(self, entry: HistoryEntry, files_added: int) -> None:
        bare = replace(entry, harness_bytes=0, harness_files=0)
        self.entries[entry.commit] = {"entry": asdict(bare), "files_added": files_added}
        self.added += 1

    def save(self) -> None:
        if not self.added:
            return
        body = "".join(
            json.dumps({"commit": commit, **data}, separators=(",", ":")) + "\n"
            for commit, data in sorted(self.entries.items())
        ).encode("utf-8")
        header = {"format": FORMAT, "fingerprint": self.key, "sha256": hashlib.sha256(body).hexdigest()}
        save_derived(self.store, NAME, json.dumps(header).encode("utf-8") + b"\n" + body)


def _load(store: Store, key: str) -> dict[str, dict[str, Any]]:
    try:
        data = index_path(store, NAME).read_bytes()
        head, _, body = data.partition(b"\n")
        header = json.loads(head)
        if not isinstance(header, dict) or header.get("format") != FORMAT or header.get("fingerprint") != key:
            return {}
        if header.get("sha256") != hashlib.sha256(body).hexdigest():
            return {}
        entries = {}
        for line in body.splitlines():
            item = json.loads(line)
            entries[str(item.pop("commit"))] = item
        return entries
    except (OSError, ValueError, AttributeError, KeyError, TypeError):
        return {}  # missing or damaged: rebuilt by this run


def _entry(data: dict[str, Any]) -> HistoryEntry:
    files = [
        HistoryFile(
            **{**f, "sections": SectionChanges(**f["sections"]) if f["sections"] is not None else None}
        )
        for f in data["files"]
    ]
    return HistoryEntry(
        **{
            **data,
            "files": files,
            "findings": [Finding(**f) for f in data["findings"]],
            "unread": [Unread(**u) for u in data["unread"]],
        }
    )
