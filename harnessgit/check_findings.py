"""What the checks read (a `FileVersion`: one file before and after a change) and
what they return (a `CheckReport` of `Finding`s).

Outside the `harnessgit.checks` package, as `harnessgit.check_rules` is: a gate that
reads back the verdict a proposal record kept (`harnessgit.candidates.checked`) builds
the report from here and imports no rule, collector or tokenizer (issue 26).

The models are the gate's interface: `CheckReport.failed` is what it reads, and
`harnessgit check --json` prints the report's `to_json`, `failed` included. They are
plain frozen dataclasses, not pydantic models: `harnessgit check` runs on every
commit and does not pay for importing pydantic (harnessgit.checkconfig.sections says more).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar, Literal

# The rules are defined in harnessgit.check_rules; re-exported here, with the report they fill.
from harnessgit.check_rules import RULES as RULES
from harnessgit.check_rules import Rule as Rule

Level = Literal["failure", "warning"]
Status = Literal["added", "modified", "deleted", "renamed", "unchanged"]
FindingState = Literal["new", "existing", "suppressed"]


# Everything here is built by trusted code (the rules, the collector, or a caller's
# own FileVersion.from_text), so nothing is validated at run time; mypy checks the types.
@dataclass(frozen=True)
class Content:
    """One side of a file: its size in bytes and, when it is UTF-8 text that was
    read, its text. ``text`` is None for a binary file (a NUL byte), for bytes that
    are not UTF-8, and for a file larger than ``[checks] max_file_bytes`` (not read)."""

    size: int
    text: str | None = None
    binary: bool = False
    invalid_utf8_at: int | None = None  # offset of the first byte that is not UTF-8
    too_large: bool = False

    @classmethod
    def from_bytes(cls, data: bytes, *, max_bytes: int | None = None) -> Content:
        if max_bytes is not None and len(data) > max_bytes:
            return cls(size=len(data), too_large=True)
        # git's own test for "binary": a NUL byte in the first 8,000 bytes (xdiff-interface.c).
        if b"\0" in data[:8000]:
            return cls(size=len(data), binary=True)
        try:
            return cls(size=len(data), text=data.decode("utf-8"))
        except UnicodeDecodeError as exc:
            return cls(size=len(data), invalid_utf8_at=exc.start)

    @classmethod
    def unread(cls, size: int) -> Content:
        """A file over the size limit, known only by its size."""
        return cls(size=size, too_large=True)


@dataclass(frozen=True)
class FileVersion:
    """One file in a change. ``old`` is None for a new file (or one that did not
    exist at the revision compared against), ``new`` is None for a deleted file;
    ``old_path`` names the previous path of a renamed file; ``reference`` is the
    file at the revision cumulative growth is measured against (None: not there,
    or no reference)."""

    path: str
    old: Content | None = None
    new: Content | None = None
    old_path: str | None = None
    reference: Content | None = None

    @classmethod
    def from_text(
        cls, path: str, old: str | bytes | None, new: str | bytes | None, *, old_path: str | None = None
    ) -> FileVersion:
        """Convenience for callers that hold the texts (tests, the Python API)."""

        def side(value: str | bytes | None) -> Content | None:
            if value is None:
                return None
            return Content.from_bytes(value.encode("utf-8") if isinstance(value, str) else value)

        return cls(path=path, old=side(old), new=side(new), old_path=old_path)

    @property
    def status(self) -> Status:
        if self.new is None:
            return "deleted"
        if self.old is None:
            return "added"
        if self.old_path is not None and self.old_path != self.path:
            return "renamed"
        if self.old == self.new:
            return "unchanged"
        return "modified"


@dataclass(frozen=True)
class Finding:
    """One rule's verdict on one file (``path`` None: on the change as a whole)."""

    path: str | None
    rule: Rule
    level: Level
    measure: str  # what was measured, e.g. "body lines", "growth ratio", "hunks"
    value: int | float | str
    limit: int | float | str | None
    message: str  # one line: what is wrong
    hint: str  # one line: what to do about it
    details: list[str] = field(default_factory=list)  # e.g. the sections that disappeared
    # Where in the file (1-based, in the new text; in the old text for a deleted file):
    # None when the finding is about the file or the change as a whole.
    line: int | None = None
    end_line: int | None = None
    # "new": the change brings it (or makes its measure worse); "existing": the file had
    # it before the change (shown, never blocks); "suppressed": allowed by the file or
    # the configuration (shown by --all, never blocks).
    state: FindingState = "new"

    @property
    def blocks(self) -> bool:
        return self.level == "failure" and self.state == "new"


def failure(
    path: str | None,
    rule: Rule,
    measure: str,
    value: int | float | str,
    limit: int | float | str | None,
    message: str,
    hint: str,
) -> Finding:
    """A failing finding without details (the common case)."""
    return Finding(path, rule, "failure", measure, value, limit, message, hint)


@dataclass(frozen=True)
class FileSummary:
    """One checked file in a report: its path, kind, status and measured size."""

    path: str
    kind: str
    status: Status
    old_path: str | None = None
    chars: int | None = None
    lines: int | None = None
    tokens: int | None = None


@dataclass(frozen=True)
class Unread:
    """A harness file no rule read, and why (a script or lockfile in a skill folder)."""

    path: str
    reason: str


@dataclass(frozen=True, kw_only=True)
class CheckReport:
    """What one check found: the files, their findings and notes (``failed``: any blocks)."""

    JSON_EXTRA: ClassVar[tuple[str, ...]] = ("failed",)  # `harnessgit check --json` says whether it failed

    files: list[FileSummary] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    tokenizer: str  # e.g. "estimate: 4 characters per token" or "tiktoken o200k_base"
    tokens_exact: bool
    notes: list[str] = field(default_factory=list)  # e.g. a tokenizer that could not be loaded
    # The harness files of ``files`` no rule read, each with why: "no findings" says
    # nothing about them (issue 27: 257 .mdc rules "checked" that no rule had read).
    unread: list[Unread] = field(default_factory=list)
    # Format and length findings the previous version had and this change removed.
    fixed: list[Finding] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return any(finding.blocks for finding in self.findings)

    def count(self, level: Level) -> int:
        return sum(1 for finding in self.findings if finding.level == level)
