"""`harnessgit doctor`'s report for a terminal."""

from __future__ import annotations

from harnessgit.render import plural
from harnessgit.repair.findings import DoctorReport, Finding


def doctor_text(report: DoctorReport) -> str:
    if not report.findings:
        return f"no problems found (checked: {', '.join(report.checks)})"
    lines = []
    for finding in report.findings:
        lines += [f"{finding.check}: {finding.subject}", f"  {finding.problem}"]
        lines += [f"    {detail}" for detail in finding.details]
        lines.append(f"  {_fix_line(finding, report.fixing)}")
    found = plural(len(report.findings), "problem")
    if report.fixing:
        fixed = sum(finding.fixed for finding in report.findings)
        lines.append(f"{found}, {fixed} repaired")
    else:
        fixable = sum(finding.fixable for finding in report.findings)
        lines.append(f"{found}; `harnessgit doctor --fix` repairs {fixable} of them")
    return "\n".join(lines)


def _fix_line(finding: Finding, fixing: bool) -> str:
    if finding.fixed:
        return f"fixed: {finding.outcome}"
    if fixing and finding.fixable:
        return f"not fixed: {finding.outcome}"
    return f"fix: {finding.fix}" + ("" if finding.fixable or fixing else " (by hand)")
