"""How a bisect looks: the search, then the first bad edit (or checkpoint) and how it got through."""

from __future__ import annotations

from harnessgit.bisect.bisect import BisectResult, FirstBad
from harnessgit.bisect.checkpoints import CheckpointBisectResult
from harnessgit.bisect.explain import OwnEffect
from harnessgit.bisect.judge import Step
from harnessgit.bisect.weights import ModelChange
from harnessgit.render import EMPTY, changes, points, short


def _value(step: Step) -> str:
    if step.state == "skip":
        return f"not judged: {step.reason}"
    if step.scores:
        shown = ", ".join(f"{name} {score:.2f}" for name, score in list(step.scores.items())[:5])
        failing = f"; failing: {', '.join(step.failing)}" if step.failing else ""
        return shown + failing
    return f"mean {points(step.mean, False)}" if step.mean is not None else EMPTY


def _row(where: str, what: str, step: Step) -> str:
    """One judged step: where it stands, the commit or checkpoint, and its verdict."""
    return f"{where:>5}  {what}  {step.state:<4}  {step.source:<9}  {_value(step)}"


def _head(
    what: str, bad_means: str, noun: str, size: int, r: BisectResult | CheckpointBisectResult
) -> list[str]:
    """What was searched, what bad means, and how much of the search ran the evaluator
    (against its bound); ``size``: the steps from good to bad."""
    return [
        f"bisect: {what}",
        f"  bad means: {bad_means}",
        f"  judged {len(r.steps)} {noun}; evaluated {r.evaluations} (at most ceil(log2 {size}) + 2 = "
        f"{r.bound}), the rest from stored scores",
    ]


def step_line(step: Step) -> str:
    # position -1: the one commit bisect-judge was asked about
    where = "good" if step.position == 0 else f"#{step.position}" if step.position > 0 else "judged"
    return _row(where, short(step.commit), step)


def bisect_text(result: BisectResult) -> str:
    r = result
    lines = _head(
        f"{r.edits} commits on the first-parent chain from good {short(r.good)} to bad {short(r.bad)}",
        f"{r.description}, every commit judged for model {r.model}",
        "commits",
        r.edits,
        r,
    )
    lines += [f"  {step_line(step)}" for step in r.steps]
    lines.append(r.message)
    if r.model_change is not None:
        lines += model_change_text(r.model_change, r.criterion.split)
    lines += [f"note: {note}" for note in r.notes]
    if r.suspects:
        lines += [f"  suspect {short(sha)}" for sha in r.suspects]
    if r.first_bad is not None:
        lines += first_bad_text(r.first_bad)
    return "\n".join(lines)


def own_effect_lines(own: OwnEffect) -> list[str]:
    """The first bad edit or checkpoint against the one before it, when they compare."""
    if own.difference is None:
        return []
    lost = f"; lower on {', '.join(own.regressed[:10])}" if own.regressed else ""
    more = f" and {len(own.regressed) - 10} more" if len(own.regressed) > 10 else ""
    return [
        f"  its own effect: {points(own.difference)} points on {own.n} instances "
        f"(wins/losses/ties {own.wins}/{own.losses}/{own.ties}){lost}{more}"
    ]


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
    lines += own_effect_lines(own)
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


def model_change_text(change: ModelChange, split: str) -> list[str]:
    """The weights change at good's harness, apart from the harness edits bisect searched."""
    how = "as given" if change.found == "given" else "its scores on record there"
    source = ", evaluated now (not counted above)" if change.source == "evaluated" else ""
    lines = [
        f"model change: good {short(change.harness)} was measured with model {change.old} ({how}{source}); "
        f"at that fixed harness, model {change.old} -> {change.new} moves the {split} mean from "
        f"{points(change.old_mean, False)} to {points(change.new_mean, False)} points",
    ]
    if change.lineage:
        lines.append(f"  {change.new} is a checkpoint of {change.old}: lineage {' <- '.join(change.lineage)}")
    else:
        lines.append(f"  {change.old} is not an ancestor of {change.new} in the checkpoint lineage")
    if not change.regressed:
        lines.append(
            "  on its own that is not bad by the criterion: the weights change is not the regression"
        )
        return lines
    failing = f" (breaks {', '.join(change.failing[:10])})" if change.failing else ""
    lines.append(f"  on its own that is bad by the criterion{failing}: a weights change, not a harness edit")
    if len(change.lineage) > 2:
        lines.append(
            f"  which checkpoint: harnessgit bisect --good-model {change.old} --bad-model {change.new} "
            f"--harness {short(change.harness)}"
        )
    return lines


def checkpoint_step_line(step: Step, width: int = 0) -> str:
    where = "good" if step.position == 0 else f"#{step.position}"
    return _row(where, f"{step.model:<{width}}", step)


def checkpoint_bisect_text(result: CheckpointBisectResult) -> str:
    r = result
    lines = _head(
        f"{r.checkpoints} checkpoints on the lineage from good {r.good_model} to bad {r.bad_model} "
        f"({' -> '.join(r.lineage)}), harness fixed at {short(r.harness)}",
        r.description,
        "checkpoints",
        r.checkpoints,
        r,
    )
    width = max(len(model) for model in r.lineage)
    lines += [f"  {checkpoint_step_line(step, width)}" for step in r.steps]
    lines.append(r.message)
    lines += [f"  suspect {model}" for model in r.suspects]
    first = r.first_bad
    if first is not None:
        lines += [
            "",
            f"first bad checkpoint: #{first.position} {first.model} <- {first.parent}",
            f"  registered by {first.author or 'unknown'} at {short(first.registered)}"
            + (f": {first.note}" if first.note else " (no note)"),
            f"  before it ({first.parent}): {_value(first.before)}; after: {_value(first.after)}",
        ]
        lines += own_effect_lines(first.own)
    return "\n".join(lines)
