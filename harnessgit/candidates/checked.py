"""The checks' verdict on a proposal, judged once: when it is proposed, read back by the gate.

A candidate proposed on the base branch's tip is judged by the gate against that same
tip (`harnessgit.gate.gate.preconditions`). The commits are immutable, so what the
checks say about the change is a fact of the two commits under the rules and settings
that judged it; `propose` records it in the proposal record (`RecordedChecks`) and the
gate reads it back instead of running every rule again. It is reused only when the
base is the same commit and the digest of everything else the verdict depends on is
equal: harnessgit's version, the ``[harness]`` and ``[checks]`` settings that decide
(the base commit's, for the gate), whether tiktoken is installed, the base branch's tip
and the labels cumulative growth can be measured from. Otherwise the gate checks as
before. A record that does not read back is ignored, never trusted.
"""

from __future__ import annotations

from dataclasses import asdict
from importlib.util import find_spec
from typing import Any, Protocol

import harnessgit
from harnessgit import layout
from harnessgit.canonical import dumps_canonical, sha256_canonical
from harnessgit.check_findings import CheckReport, FileSummary, Finding, Unread
from harnessgit.config import CheckSections
from harnessgit.errors import HarnessgitError
from harnessgit.records import ProposalRecord, RecordedChecks
from harnessgit.store import Store

FORMAT = 1


class Checker(Protocol):
    """The harness checks on the change from commit ``old`` to commit ``new``
    (`harnessgit.checks.check_change`), given by the caller of `judge_proposal` and of
    the gate: a gate that reads the verdict back (`reuse`) imports no rule (issue 26)."""

    def __call__(
        self, store: Store, config: CheckSections, old: str | None, new: str | None, /
    ) -> CheckReport: ...


def settings_digest(store: Store, config: CheckSections, base: str) -> str:
    """Everything the verdict on a change from ``base`` depends on besides the two commits."""
    facts = [
        harnessgit.__version__,
        FORMAT,
        base,
        repr(config.harness),
        repr(config.checks),
        find_spec("tiktoken") is not None,  # "auto" counts with it when it is installed
        store.refs.value(layout.branch_ref(config.harness.base)),
        sorted(store.refs.listing(layout.LABELS.rstrip("/")).items()),
    ]
    return sha256_canonical(facts)


def judge_proposal(
    store: Store, config: CheckSections, parent: str, commit: str, check: Checker
) -> RecordedChecks | None:
    """The verdict to keep in the proposal record of ``commit``, judged by ``check``
    against its ``parent`` when that is the base branch's tip (the base the gate will
    judge it against); None otherwise, or when the checks cannot judge it now (the gate
    will say why)."""
    if store.refs.value(layout.branch_ref(config.harness.base)) != parent:
        return None
    try:
        report = check(store, config, parent, commit)
    except HarnessgitError:
        return None
    return recorded(store, config, parent, report)


def recorded(store: Store, config: CheckSections, base: str, report: CheckReport) -> RecordedChecks | None:
    """What a proposal record keeps of ``report`` (judged against ``base``); None when
    it cannot be kept as JSON (a measure that is not finite): the gate then checks."""
    data = asdict(report)
    try:
        dumps_canonical(data)
    except ValueError:
        return None
    return RecordedChecks(base=base, settings=settings_digest(store, config, base), report=data)


def reuse(store: Store, config: CheckSections, base: str, commit: str) -> CheckReport | None:
    """The report recorded when ``commit`` was proposed, if it judged the change from
    ``base`` under the settings ``config`` and the refs state now; None: check again."""
    found = [
        record.checks
        for record in store.notes.records_on(layout.NOTES_EVIDENCE, commit)
        if isinstance(record, ProposalRecord) and record.checks is not None and record.checks.base == base
    ]
    if not found or found[0].settings != settings_digest(store, config, base):
        return None
    try:
        return _report(found[0].report)
    except (KeyError, TypeError, ValueError):
        return None


def _report(data: dict[str, Any]) -> CheckReport:
    return CheckReport(
        files=[FileSummary(**f) for f in data["files"]],
        findings=[Finding(**f) for f in data["findings"]],
        tokenizer=str(data["tokenizer"]),
        tokens_exact=bool(data["tokens_exact"]),
        notes=[str(note) for note in data["notes"]],
        unread=[Unread(**u) for u in data["unread"]],
        fixed=[Finding(**f) for f in data["fixed"]],
    )
