"""How `log --all-history` looks as text: each harness change, newest first, then the
summary (its ``--json`` is `harnessgit.render.to_json` of the result). Apart from
`candidates.render`, so that `show`, `log` and `status` never load the checks' renderer."""

from __future__ import annotations

from collections.abc import Callable

from harnessgit.candidates.history import HistoryResult, Step
from harnessgit.candidates.history_entries import HistoryEntry, HistoryFile
from harnessgit.checks.render import printable, unread_notes, where
from harnessgit.render import EMPTY, listing, plural, short, size, table

SHOWN_FILES = 12  # per commit in text; --json lists every file and finding
SHOWN_FINDINGS = 12


def history_text(result: HistoryResult) -> str:
    """Each harness change, newest first, then the summary (last, where a terminal leaves it)."""
    blocks = [_history_entry(entry) for entry in result.entries]
    return printable("\n\n".join([*blocks, _history_summary(result)]))


def _signed(nbytes: int) -> str:
    return ("+" if nbytes >= 0 else "-") + size(abs(nbytes))


def _history_entry(entry: HistoryEntry) -> str:
    merge = "  (merge: its change against the first parent)" if entry.merge else ""
    lines = [
        f"{short(entry.commit, 10)}  {entry.date[:10]}  {entry.author}  {entry.subject[:60]}{merge}",
        f"  harness {size(entry.harness_bytes)} in {plural(entry.harness_files, 'file')} "
        f"({_signed(entry.growth)})",
    ]
    rows = [_history_row(f) for f in entry.files[:SHOWN_FILES]]
    table_lines = table(rows, ["", "file", "bytes", "tokens", "sections +added -removed ~changed"])
    lines += [f"  {line}" for line in table_lines.splitlines()]
    if len(entry.files) > SHOWN_FILES:
        lines.append(f"  and {plural(len(entry.files) - SHOWN_FILES, 'more file')} (--json lists them)")
    for f in entry.files[:SHOWN_FILES]:
        if f.sections and (f.sections.added or f.sections.removed):
            gone = f"removed {listing(f.sections.removed)}" if f.sections.removed else ""
            came = f"added {listing(f.sections.added)}" if f.sections.added else ""
            lines.append(f"  {f.path}: {'; '.join(part for part in (gone, came) if part)}")
    for finding in entry.findings[:SHOWN_FINDINGS]:
        state = "" if finding.state == "new" else f", {finding.state}"
        lines.append(f"  {where(finding)}: {finding.rule}: {finding.message} ({finding.level}{state})")
    if len(entry.findings) > SHOWN_FINDINGS:
        lines.append(f"  and {plural(len(entry.findings) - SHOWN_FINDINGS, 'more finding')}")
    return "\n".join(lines)


def _history_row(f: HistoryFile) -> list[str]:
    sections = EMPTY
    if f.sections is not None:
        sections = f"+{len(f.sections.added)} -{len(f.sections.removed)} ~{len(f.sections.changed)}"
    return [
        f.status,
        f"{f.old_path} -> {f.path}" if f.old_path else f.path,
        _before_after(f.bytes_before, f.bytes_after, size),
        _before_after(f.tokens_before, f.tokens_after, "{:,}".format),
        sections,
    ]


def _before_after(before: int | None, after: int | None, shown: Callable[[int], str]) -> str:
    return f"{EMPTY if before is None else shown(before)} -> {EMPTY if after is None else shown(after)}"


def _history_summary(result: HistoryResult) -> str:
    lines = [
        f"{plural(result.harness_commits, 'commit')} of {result.examined} on {result.base}'s "
        f"first-parent chain changed a harness file; {len(result.entries)} shown",
        f"  judged under today's harnessgit.toml: [harness] paths = {', '.join(result.harness_paths)}",
        f"  tokens: {result.tokenizer}",
    ]
    for name, point in (("oldest", result.oldest), ("newest", result.newest)):
        if point is not None:
            lines.append(
                f"  harness after the {name} shown, {short(point.commit, 10)} ({point.date[:10]}): "
                f"{size(point.bytes)} in {plural(point.files, 'file')}"
            )
    for name, steps in (("largest growth", result.largest_growth), ("largest shrink", result.largest_shrink)):
        if steps:
            lines += ["", f"{name}:", _steps_table(steps)]
    if result.findings_by_rule:
        rows = [[r.rule, r.failures, r.warnings, r.commits, r.allowed] for r in result.findings_by_rule]
        lines += [
            "",
            "findings the changes brought, by rule (not those a file already had):",
            table(rows, ["rule", "failures", "warnings", "commits", "allowed (Harness-Allow)"]),
        ]
    elif result.entries:
        lines += ["", "no findings"]
    if result.unread:
        lines += ["", *unread_notes(result.unread)]
    return "\n".join(lines)


def _steps_table(steps: list[Step]) -> str:
    rows = [[_signed(s.growth), short(s.commit, 10), s.date[:10], s.subject[:60]] for s in steps]
    return table(rows, ["bytes", "commit", "date", "subject"])
