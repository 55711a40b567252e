"""How a bisect looks: the search, then the first bad edit and how it got through."""

from __future__ import annotations

from harnessgit.bisect.bisect import BisectResult, FirstBad
from harnessgit.bisect.judge import Step
from harnessgit.render import EMPTY, changes, points, short


def _value(step: Step) -> str:
    if step.state == "skip":
        return f"not judged: {step.reason}"
    if step.scores:
        shown = ", ".join(f"{name} {score:.2f}" for name, score in list(step.scores.items())[:5])
        failing = f"; failing: {', '.join(step.failing)}" if step.failing else ""
        return shown + failing
    return f"mean {points(step.mean, False)}" if step.mean is not None else EMPTY


def step_line(step: Step) -> str:
    # position -1: the one commit bisect-judge was asked about
    where = "good" if step.position == 0 else f"#{step.position}" if step.position > 0 else "judged"
    return f"{where:>5}  {short(step.commit)}  {step.state:<4}  {step.source:<9}  {_value(step)}"


def bisect_text(result: BisectResult) -> str:
    r = result
    lines = [
        f"bisect: {r.edits} commits on the first-parent chain from good {short(r.good)} "
        f"to bad {short(r.bad)}",
        f"  bad means: {r.description}",
        f"  judged {len(r.steps)} commits; evaluated {r.evaluations} (at most ceil(log2 {r.edits}) + 2 = "
        f"{r.bound}), the rest from stored scores",
    ]
    lines += [f"  {step_line(step)}" for step in r.steps]
    lines.append(r.message)
    lines += [f"note: {note}" for note in r.notes]
    if r.suspects:
        lines += [f"  suspect {short(sha)}" for sha in r.suspects]
    if r.first_bad is not None:
        lines += first_bad_text(r.first_bad)
    return "\n".join(lines)


def first_bad_text(first: FirstBad) -> list[str]:
    own = first.own
    lines = [
        "",
        f"first bad edit: #{first.position} {short(first.commit)} {first.subject}",
        f"  {first.kind}"
        + (f" of candidate {first.candidate}" if first.candidate else "")
        + f", by {first.author}, {first.date}",
        f"  before it ({short(first.before.commit)}): {_value(first.before)}; after: {_value(first.after)}",
    ]
    if own.difference is not None:
        lost = f"; lower on {', '.join(own.regressed[:10])}" if own.regressed else ""
        more = f" and {len(own.regressed) - 10} more" if len(own.regressed) > 10 else ""
        lines.append(
            f"  its own effect: {points(own.difference)} points on {own.n} instances "
            f"(wins/losses/ties {own.wins}/{own.losses}/{own.ties}){lost}{more}"
        )
    lines.append("  how it got through:")
    lines += [f"  - {reason}" for reason in first.why]
    if first.accepted_on:
        lines.append(f"  accepted on: {first.accepted_on}")
    if first.gate is not None and first.gate.reasons:
        lines += [f"    gate reason: {reason}" for reason in first.gate.reasons]
    if first.proposal is not None:
        lines.append(f"  rationale ({first.proposal.source}):")
        lines += [f"    | {line}" for line in first.proposal.rationale.strip().splitlines()]
    for evidence in first.evidence:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(evidence.item_kinds.items()))
        lines.append(
            f"  evidence: {evidence.items} {evidence.label} items ({kinds or 'no kinds'}), "
            f"blob {short(evidence.blob)}"
        )
    lines.append("  files: " + ", ".join(f"{f.path} {changes(f.added, f.removed)}" for f in first.files))
    if first.diff:
        lines += ["", first.diff.rstrip("\n")]
    return lines
