"""How evolve's progress lines and final report look."""

from __future__ import annotations

from harnessgit.evolve.state import EvolveReport
from harnessgit.records import IterationRecord
from harnessgit.render import EMPTY

# IterationRecord.outcome, as the iteration line says it
VERDICTS = {
    "rejected-proposal": "proposal rejected",
    "rejected-checks": "rejected by the checks",
    "not-better": "not better on the minibatch: archived",
    "not-gated": "kept on the frontier, not gated",
    "skipped-perfect": "minibatch already solved: no proposal",
    "gate-rejected": "gate: FAIL",  # a record from before three verdicts
    "gate-failed": "gate: FAIL",
    "gate-inconclusive": "gate: INCONCLUSIVE",
    "gate-refused": "gate refused it (nothing recorded)",
    "gate-passed": "gate: PASS",
    "merged": "gate: PASS, merged",
    "conflict": "conflicts with the base: not gated",
    "not-carried": "cannot be carried onto the base: not gated",
    "budget": "stopped by the budget",
    "interrupted": "interrupted",
}


def _score(value: float | None) -> str:
    return EMPTY if value is None else f"{value:.2f}"


def iteration_line(record: IterationRecord) -> str:
    """One iteration, as evolve prints it when its record is written."""
    head = (
        f"evolve {record.iteration:>3}: parent {record.parent_name} {record.component},"
        f" minibatch {_score(record.parent_score)}"
    )
    if record.candidate_score is not None:
        head += f" -> {_score(record.candidate_score)}"
    verdict = VERDICTS.get(record.outcome, record.outcome)
    parts = [head]
    if record.candidate:
        parts.append(f"candidate {record.candidate}")
    if record.selection_mean is not None:
        parts.append(f"selection {record.selection_mean:.3f}")
    parts.append(verdict)
    line = ", ".join(parts)
    if record.reason and record.outcome != "merged":
        line += f" ({record.reason[:140]})"
    return line


def report_text(report: EvolveReport) -> str:
    """What a run did, in a few lines: outcomes counted, spending, why it stopped."""
    counts: dict[str, int] = {}
    for record in report.iterations:
        counts[record.outcome] = counts.get(record.outcome, 0) + 1
    summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no iterations"
    lines = [
        f"evolve run {report.run} (seed {report.seed}): {len(report.iterations)} iterations: {summary}",
        f"  spent {report.spend.rollouts} evaluator rollouts, {report.spend.proposals} proposals"
        + (f", ${report.spend.cost_usd:.4f}" if report.spend.cost_usd else ""),
        f"  stopped: {report.stopped or 'finished'}",
    ]
    if report.merged:
        lines.append(f"  merged: {', '.join(report.merged)}")
    return "\n".join(lines)
