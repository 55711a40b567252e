"""How evolve's progress lines and final report look."""

from __future__ import annotations

from harnessgit.evolve import EvolveReport, IterationOutcome
from harnessgit.render import short, to_json


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def iteration_line(outcome: IterationOutcome) -> str:
    r = outcome.record
    head = (
        f"evolve {r.iteration:>3}: parent {r.parent_name} {r.component}, minibatch {_score(r.parent_score)}"
    )
    if r.candidate_score is not None:
        head += f" -> {_score(r.candidate_score)}"
    verdict = {
        "rejected-proposal": "proposal rejected",
        "rejected-checks": "rejected by the checks",
        "not-better": "not better on the minibatch: archived",
        "not-gated": "kept on the frontier, not gated",
        "skipped-perfect": "minibatch already solved: no proposal",
        "gate-rejected": "gate: REJECT",
        "gate-passed": "gate: PASS",
        "merged": "gate: PASS, merged",
    }.get(r.outcome, r.outcome)
    parts = [head]
    if r.candidate:
        parts.append(f"candidate {r.candidate}")
    if r.selection_mean is not None:
        parts.append(f"selection {r.selection_mean:.3f}")
    parts.append(verdict)
    line = ", ".join(parts)
    if r.reason and r.outcome != "merged":
        line += f" ({r.reason[:140]})"
    return line


def report_text(report: EvolveReport) -> str:
    counts: dict[str, int] = {}
    for record in report.iterations:
        counts[record.outcome] = counts.get(record.outcome, 0) + 1
    summary = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no iterations"
    lines = [
        f"evolve run {report.run} (seed {report.seed}): {len(report.iterations)} iterations: {summary}",
        f"  spent {report.spend.rollouts} evaluator rollouts, {report.spend.proposals} proposals"
        + (f", ${report.spend.cost:.4f}" if report.spend.cost else ""),
        f"  stopped: {report.stopped or 'finished'}",
    ]
    if report.merged:
        lines.append(f"  merged: {', '.join(report.merged)}")
    return "\n".join(lines)


def report_json(report: EvolveReport) -> str:
    return to_json(
        {
            "run": report.run,
            "seed": report.seed,
            "stopped": report.stopped,
            "rollouts": report.spend.rollouts,
            "proposals": report.spend.proposals,
            "cost_usd": report.spend.cost,
            "merged": report.merged,
            "iterations": [record.model_dump(mode="json") for record in report.iterations],
        }
    )


def short_commit(sha: str) -> str:
    return short(sha)
