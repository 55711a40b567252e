"""How a review looks as text and JSON, and the helpers its Markdown shares
(`render_review_md`, the pull-request comment)."""

from __future__ import annotations

from harnessgit.render import size as human_size
from harnessgit.render import to_json
from harnessgit.review.diff import FileDiff
from harnessgit.review.review import Edit, ReviewResult, Verdict
from harnessgit.review.scores import ScoreRow


def review_json(result: ReviewResult) -> str:
    return to_json(result)


def pts(value: float | None, signed: bool = True) -> str:
    """Scores in [0, 1] as points (0..100)."""
    if value is None:
        return "–"
    return f"{value * 100:+.1f}" if signed else f"{value * 100:.1f}"


def p_text(value: float | None) -> str:
    return "–" if value is None else f"{value:.2g}" if value >= 0.001 else f"{value:.1e}"


def mean_text(mean: float | None, se: float | None) -> str:
    if mean is None:
        return "–"
    return pts(mean, False) + (f" ± {se * 100:.1f}" if se is not None else "")


def file_lines(item: FileDiff) -> str:
    if item.binary:
        return "binary"
    return f"+{item.added} −{item.removed}"


def file_sizes(item: FileDiff) -> str:
    before = human_size(item.size_before) if item.size_before is not None else "new"
    after = human_size(item.size_after) if item.size_after is not None else "deleted"
    return f"{before} → {after}"


def split_name(row: ScoreRow) -> str:
    name = row.split
    if row.decides:
        name += " (decides)"
    elif row.held_out:
        name += " (held out)"
    if not row.current:
        name += f" (evaluator {row.fingerprint[:8]})"
    return name


def verdict_line(verdict: Verdict) -> str:
    """One sentence, no markup: the verdict and the numbers it rests on."""
    if verdict.state == "not evaluated":
        return "not evaluated: the gate needs selection scores for both sides; run " + "; ".join(
            verdict.commands
        )
    word = "PASS" if verdict.state == "pass" else "REJECT"
    if verdict.difference is None:
        return f"{word}: " + "; ".join(verdict.reasons)
    return (
        f"{word}: {pts(verdict.difference)} points on {verdict.n} selection instances "
        f"({pts(verdict.base_mean, False)} -> {pts(verdict.head_mean, False)}, 95% CI "
        f"[{pts(verdict.ci_low)}, {pts(verdict.ci_high)}], p = {p_text(verdict.p_value)}, "
        f"attempt {verdict.attempt} at alpha {verdict.alpha_k:.3g})"
    )


def share(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def rationale_body(edit: Edit) -> str:
    """The rationale without its first line when that line is the subject already shown."""
    text = (edit.rationale or "").strip()
    first, _, rest = text.partition("\n")
    return rest.strip() if first.strip() == edit.subject.strip() else text


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def review_text(result: ReviewResult) -> str:
    from harnessgit.render import table

    out = [
        f"review {result.base[:12]} ({result.base_label}) -> {result.head[:12]} ({result.head_label})",
        f"gate: {verdict_line(result.verdict)}",
    ]
    v = result.verdict
    if v.detectable:
        out.append(f"  {v.detectable}")
    out += [f"  - {reason}" for reason in v.reasons if v.state != "not evaluated"]
    out.append("  (what `harnessgit gate` would decide now, from stored scores; nothing was recorded)")
    out += [f"note: {note}" for note in result.notes]
    if result.scores:
        rows = [
            [
                split_name(r),
                r.model,
                f"{r.n}/{r.split_size}",
                mean_text(r.base_mean, r.base_se),
                mean_text(r.head_mean, r.head_se),
                f"{pts(r.difference)} [{pts(r.ci_low)}, {pts(r.ci_high)}]"
                if r.difference is not None
                else "-",
                p_text(r.p_value),
                pts(r.mde, False),
                f"{r.wins}/{r.losses}/{r.ties}",
            ]
            for r in result.scores
        ]
        out += [
            "",
            table(rows, ["split", "model", "n", "base", "head", "difference [95% CI]", "p", "MDE", "w/l/t"]),
        ]
    files = [
        [
            f.path if f.old_path is None else f"{f.old_path} -> {f.path}",
            f.status,
            file_lines(f),
            file_sizes(f),
        ]
        + ([] if f.harness else ["not a harness file"])
        for f in result.files
    ]
    out += ["", f"files changed: {len(result.files)}", table(files, ["file", "change", "lines", "size", ""])]
    out.append(
        f"checks: {result.checks.count('failure')} failures, {result.checks.count('warning')} warnings"
    )
    out += [f"  {f.level}: {f.path or 'the change'}: {f.rule}: {f.message}" for f in result.checks.findings]
    for flips in result.flips:
        out += ["", f"flipped on {flips.split}: {flips.regressed_count} regressed, {flips.fixed_count} fixed"]
        for name, shown, count in (
            ("regressed", flips.regressed, flips.regressed_count),
            ("fixed", flips.fixed, flips.fixed_count),
        ):
            for flip in shown:
                out.append(
                    f"  {name} {flip.instance}: {flip.base_score:.2f} -> {flip.head_score:.2f}; feedback: "
                    f"{flip.base_feedback or '-'} -> {flip.head_feedback or '-'}"
                )
                if flip.trajectory:
                    out.append(f"    trajectory ({flip.trajectory_side}): {flip.trajectory}")
            if count > len(shown):
                out.append(f"  ... and {count - len(shown)} more {name}")
    for shift in result.failure_shift:
        rows = [
            [
                c.failure_class,
                f"{c.base_count} ({share(c.base_share)})",
                f"{c.head_count} ({share(c.head_share)})",
            ]
            for c in shift.classes
        ]
        out += [
            "",
            f"failure classes on {shift.split} (share of failures)",
            table(rows, ["class", "base", "head"]),
        ]
    out += ["", f"edits: {result.edits_count}"]
    for edit in result.edits:
        out.append(
            f"  {edit.commit[:12]} {edit.subject}"
            + (f" (candidate {edit.candidate})" if edit.candidate else "")
        )
        out += [f"    | {line}" for line in rationale_body(edit).splitlines()]
        for item in edit.evidence:
            out.append(
                f"    evidence: {item.label}, {plural(item.items, 'item')}, {human_size(item.bytes)}, "
                f"blob {item.blob[:12]}"
            )
            out += [f"      {quote}" for quote in item.quoted]
    diff = "".join(f.patch for f in result.files)
    if diff:
        out += ["", diff.rstrip("\n")]
    return "\n".join(out)
