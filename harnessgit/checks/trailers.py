"""Deliberate work, said in the commit message: ``Harness-Allow: RULE -- reason``.

A rework that cuts a README's sections on purpose, or an upstream sync that touches a
hundred places, is right and still trips collapse or edit-size: as blocks, such findings
are noise a maintainer overrides or switches off (issue 27). A commit can say instead that
a finding is intended, with why, in a trailer of its message::

    Harness-Allow: collapse -- the examples moved into workflows/
    Harness-Allow: edit-size, growth -- upstream release sync

Every finding of a named rule that the change brings is then kept and shown as
suppressed, with the commit and the reason, and blocks nothing in `check --rev`, `review`
and the pre-commit hook at the commit-msg stage; `log --all-history` counts it apart. The
gate never reads trailers (`with_trailers` says why). The reason is required. A
trailer naming no rule or an unknown one, or giving no reason, allows nothing and is a
note in the report. Pure: messages in, findings out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace

from harnessgit.check_findings import RULES, CheckReport, Finding, Rule
from harnessgit.readstore import Repository

TRAILER = "Harness-Allow"
# The newest commits of a change whose messages can allow a finding (a release sync of a
# long-lived branch is not read back to its first commit).
MESSAGES = 500
_LINE = re.compile(rf"^{TRAILER}\s*:(?P<body>.*)$", re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Allowance:
    """One well-formed Harness-Allow trailer: the rules it allows, why, and where."""

    rules: tuple[Rule, ...]
    reason: str
    commit: str | None  # None: the message of a commit being made (the commit-msg hook)


def allowances(message: str, commit: str | None) -> tuple[list[Allowance], list[str]]:
    """The Harness-Allow trailers of one commit message, and a note per malformed one."""
    found: list[Allowance] = []
    notes: list[str] = []
    where = f"commit {commit[:12]}" if commit else "the commit message"
    for match in _LINE.finditer(message):
        body = match.group("body").strip()
        names, sep, reason = body.partition("--")
        wanted = [name for name in re.split(r"[\s,]+", names.strip()) if name]
        unknown = [name for name in wanted if name not in RULES]
        if not sep or not reason.strip():
            notes.append(f"{TRAILER} in {where} gives no reason (write `{TRAILER}: RULE -- why`): ignored")
        elif not wanted or unknown:
            notes.append(
                f"{TRAILER} in {where} names {', '.join(unknown) or 'no rule'}; rules are "
                f"{', '.join(RULES)}: ignored"
            )
        else:
            rules = tuple(rule for rule in RULES if rule in wanted)
            found.append(Allowance(rules, reason.strip(), commit))
    return found, notes


def with_trailers(store: Repository, report: CheckReport, old: str | None, new: str) -> CheckReport:
    """``report`` with what the commits of old..new say is deliberate (`trailers`): read by
    CI's `check --rev`, `review` and the history audit. Never by the gate: an automated
    decision is not switched off by text inside the change it judges (a proposer writes
    its commits' messages); a person decides that with `harnessgit override`."""
    if not report.findings:
        return report
    commits = store.history.commits_between(new, old, limit=MESSAGES)
    return allow(report, ((commit, store.objects.commit_info(commit).message) for commit in commits))


def allow(report: CheckReport, messages: Iterable[tuple[str | None, str]]) -> CheckReport:
    """``report`` with every finding the change brought (state "new") of a rule a trailer
    names marked "suppressed", saying which commit allowed it and why; notes for the
    trailers that allow nothing. ``messages``: (commit or None, message) pairs."""
    granted: dict[Rule, Allowance] = {}
    notes: list[str] = []
    for commit, message in messages:
        found, bad = allowances(message, commit)
        notes += bad
        for allowance in found:
            for rule in allowance.rules:
                granted.setdefault(rule, allowance)
    if not granted and not notes:
        return report
    findings = [
        replace(finding, state="suppressed", details=[*finding.details, _why(granted[finding.rule])])
        if finding.state == "new" and finding.rule in granted
        else finding
        for finding in report.findings
    ]
    return replace(report, findings=findings, notes=[*report.notes, *notes])


def deliberate(finding: Finding) -> bool:
    """Whether a commit message allowed ``finding`` (`allow`)."""
    return finding.state == "suppressed" and any(d.startswith(_ALLOWED) for d in finding.details)


_ALLOWED = f"allowed by {TRAILER} in "


def _why(allowance: Allowance) -> str:
    where = f"commit {allowance.commit[:12]}" if allowance.commit else "the commit message"
    return f"{_ALLOWED}{where}: {allowance.reason}"
