"""How a `CheckReport` looks: lines for people and editors, JSON for programs, and
GitHub workflow annotations for CI.

Text lines start ``path:line:`` (``path:`` when a finding is about the whole file),
the form compilers use, so editors and terminals jump to the place. Only what
blocks gets its details and hint; new warnings, existing failures (the ratchet)
and suppressed findings are one line each, and the last line counts them all,
so a passing pre-commit hook still says what it saw in one line.
"""

from __future__ import annotations

from typing import Literal

from harnessgit.check_findings import CheckReport, Finding, Unread
from harnessgit.render import listing, plural, to_json

CHANGE = "(whole change)"
FIXED = "fixed by this change: the previous version had it"
Format = Literal["text", "json", "github"]
FORMATS: tuple[Format, ...] = ("text", "json", "github")
_STATE_WORDS = {
    "existing": "existing: the file had it before this change; not blocking",
    "suppressed": "suppressed; not blocking",
}


def printable(text: str) -> str:
    """File names that are not UTF-8 reach us with surrogate escapes; print U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def report_json(report: CheckReport) -> str:
    return printable(to_json(report))


def render(report: CheckReport, form: Format, *, quiet: bool = False) -> str:
    if form == "json":
        return report_json(report)
    if form == "github":
        return report_github(report, quiet=quiet)
    return report_text(report, quiet=quiet)


def number(value: int | float | str | None) -> str:
    if value is None:
        return "-"
    if isinstance(value, (bool, str)):
        return str(value)
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.3f}".rstrip("0").rstrip(".")


def _measured(finding: Finding) -> str:
    if isinstance(finding.value, str):
        return f"{finding.measure}: {finding.value}"
    return f"{number(finding.value)} {finding.measure}"


def where(finding: Finding) -> str:
    """``path:line`` (or ``path``, or the whole change) for the start of a line."""
    if finding.path is None:
        return CHANGE
    return f"{finding.path}:{finding.line}" if finding.line is not None else finding.path


def _order(finding: Finding) -> tuple[int, bool, str, int]:
    group = 0 if finding.blocks else 1 if finding.state == "new" else 2 if finding.state == "existing" else 3
    return (group, finding.path is None, finding.path or "", finding.line or 0)


def report_text(report: CheckReport, *, quiet: bool = False) -> str:
    out = []
    for finding in sorted(report.findings, key=_order):
        head = f"{where(finding)}: {finding.rule}: {finding.message}"
        if finding.blocks:
            limit = f", limit {number(finding.limit)}" if finding.limit is not None else ""
            out.append(head)
            out.append(f"  {finding.level}: {_measured(finding)}{limit}")
            out += [f"  {detail}" for detail in finding.details]
            out.append(f"  hint: {finding.hint}")
        elif finding.state == "new":
            out.append(f"{head} ({finding.level})")
        else:
            out.append(f"{head} ({finding.level}, {_STATE_WORDS[finding.state]})")
            if finding.state == "suppressed" and finding.details:
                out.append(f"  {finding.details[-1]}")  # what allowed it
    out += [
        f"{where(finding)}: {finding.rule}: {finding.message} (fixed by this change)"
        for finding in report.fixed
    ]
    if not quiet:
        out += [f"note: {note}" for note in report.notes]
        out += unread_notes(report.unread)
        out.append(summary(report))
    return printable("\n".join(out))


def unread_notes(unread: list[Unread], kept: int = 5) -> list[str]:
    """One line per reason: the harness files no rule read, named (a few, then how many)."""
    by_reason: dict[str, list[str]] = {}
    for file in unread:
        by_reason.setdefault(file.reason, []).append(file.path)
    return [
        f"note: no rule read {plural(len(paths), 'harness file')} ({reason}): {listing(paths, kept)}"
        for reason, paths in by_reason.items()
    ]


def summary(report: CheckReport) -> str:
    files = len(report.files)
    if not files:
        return "no harness files to check" + _aside(report)
    findings = report.findings
    failures = sum(1 for f in findings if f.blocks)
    warnings = sum(1 for f in findings if f.state == "new" and f.level == "warning")
    unread = f" ({len(report.unread)} read by no rule, named above)" if report.unread else ""
    counted = f"checked {plural(files, 'harness file')}{unread}"
    tokens = (
        "" if report.tokens_exact else f" (tokens: {report.tokenizer}; harnessgit[tokens] counts exactly)"
    )
    fixed = f"; fixed: {len(report.fixed)}" if report.fixed else ""
    if not findings:
        return f"{counted}: no findings{fixed}{tokens}"
    found = f"{plural(failures, 'failure')}, {plural(warnings, 'warning')}"
    return f"{counted}: {found}{_aside(report)}{fixed}{tokens}"


def _aside(report: CheckReport) -> str:
    existing = sum(1 for f in report.findings if f.state == "existing")
    suppressed = sum(1 for f in report.findings if f.state == "suppressed")
    parts = [f"{existing} existing" if existing else "", f"{suppressed} suppressed" if suppressed else ""]
    said = " and ".join(part for part in parts if part)
    return f"; not blocking: {said}" if said else ""


def _escape(text: str, *, prop: bool = False) -> str:
    # GitHub's workflow command encoding (actions/toolkit, command.ts).
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def annotation(finding: Finding) -> str:
    """One GitHub workflow command: a blocking finding is an error, a new warning a
    warning, an existing or suppressed finding a notice."""
    command = "error" if finding.blocks else "warning" if finding.state == "new" else "notice"
    props = []
    if finding.path is not None:
        props.append(f"file={_escape(finding.path, prop=True)}")
        if finding.line is not None:
            props.append(f"line={finding.line}")
            if finding.end_line not in (None, finding.line):  # GitHub: a span, not one line
                props.append(f"endLine={finding.end_line}")
    state = "" if finding.state == "new" else f" ({finding.state})"
    props.append(f"title={_escape(f'harnessgit {finding.rule}{state}', prop=True)}")
    message = "\n".join([finding.message, *finding.details, f"hint: {finding.hint}"])
    return f"::{command} {','.join(props)}::{_escape(message)}"


def report_github(report: CheckReport, *, quiet: bool = False) -> str:
    out = [annotation(finding) for finding in sorted(report.findings, key=_order)]
    if not quiet:
        out += [f"note: {note}" for note in report.notes]
        out.append(summary(report))
    return printable("\n".join(out))
