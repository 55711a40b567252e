"""One commit of the history audit (`log --all-history`) and its files: what
`history.harness_history` builds and `history_cache` keeps between runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from harnessgit.check_findings import Unread
from harnessgit.checks import Finding
from harnessgit.checks.section_changes import SectionChanges


@dataclass(frozen=True, kw_only=True)
class HistoryFile:
    """One harness file a commit changed; sizes in bytes, tokens as the checks count them."""

    path: str
    old_path: str | None  # its previous name, when renamed
    status: str  # "added", "modified", "deleted" or "renamed"
    bytes_before: int | None  # None: absent before
    bytes_after: int | None  # None: absent after
    tokens_before: int | None  # None: absent, binary, or over [checks] max_file_bytes
    tokens_after: int | None
    sections: SectionChanges | None  # Markdown files only
    chars_before: int | None = None  # characters, when read as text (as tokens)
    chars_after: int | None = None


@dataclass(frozen=True, kw_only=True)
class HistoryEntry:
    commit: str
    date: str
    author: str
    subject: str
    merge: bool  # a merge: its change against its first parent
    harness_bytes: int  # every harness file's bytes after this commit
    harness_files: int
    growth: int  # the bytes this commit added to the harness (negative: took away)
    files: list[HistoryFile]
    findings: list[Finding]  # `check_change(parent, commit)`'s, as the gate would see them today
    failed: bool  # a finding would block the gate
    unread: list[Unread] = field(default_factory=list)  # its harness files no rule read
