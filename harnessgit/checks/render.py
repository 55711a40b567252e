"""How a `CheckReport` looks: a table for people, JSON for programs."""

from __future__ import annotations

from harnessgit.checks.models import CheckReport, Finding
from harnessgit.render import table, to_json

CHANGE = "(whole change)"


def printable(text: str) -> str:
    """File names that are not UTF-8 reach us with surrogate escapes; print U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def report_json(report: CheckReport) -> str:
    return printable(to_json(report))


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


def _where(finding: Finding) -> str:
    return finding.path if finding.path is not None else CHANGE


def report_text(report: CheckReport, *, quiet: bool = False) -> str:
    out = []
    findings = sorted(report.findings, key=lambda f: (f.level != "failure", f.path is None, f.path or ""))
    if findings:
        # render.table imports tabulate only when there is a table to print.
        rows = [[_where(f), f.rule, f.level, _measured(f), number(f.limit)] for f in findings]
        out.append(table(rows, ["file", "rule", "level", "measured", "limit"]))
        out.append("")
        for finding in findings:
            out.append(f"{_where(finding)}: {finding.rule}: {finding.message}")
            out += [f"  {detail}" for detail in finding.details]
            out.append(f"  hint: {finding.hint}")
    if not quiet:
        if findings:
            out.append("")
        out += [f"note: {note}" for note in report.notes]
        out.append(summary(report))
    return printable("\n".join(out))


def summary(report: CheckReport) -> str:
    files = len(report.files)
    if not files:
        return "no harness files to check"
    failures, warnings = report.count("failure"), report.count("warning")
    counted = f"{files} harness file{'s' if files != 1 else ''}"
    tokens = (
        "" if report.tokens_exact else f" (tokens: {report.tokenizer}; harnessgit[tokens] counts exactly)"
    )
    if not failures and not warnings:
        return f"checked {counted}: no findings{tokens}"
    counts = (
        f"{failures} failure{'s' if failures != 1 else ''}, {warnings} warning{'s' if warnings != 1 else ''}"
    )
    return f"checked {counted}: {counts}{tokens}"
