"""How a review looks as text, and the pieces its Markdown (`review.comment`, the
pull-request comment) shares with it. Its JSON is `harnessgit.render.to_json` of the
`ReviewResult`, like every command's."""

from __future__ import annotations

from typing import Literal

from harnessgit.candidates.render import effect_text
from harnessgit.checks.render import unread_notes
from harnessgit.render import (
    EMPTY,
    chance_text,
    changes,
    mean_text,
    p_text,
    plural,
    points,
    share,
    short,
    table,
)
from harnessgit.render import size as human_size
from harnessgit.review.diff import ChangeTotals, FileDiff, largest_first
from harnessgit.review.edits import Edit
from harnessgit.review.review import ReviewResult, Verdict
from harnessgit.review.scores import FailureShift, Flips, ScoreRow

# File rows a review shows in full, the largest changes first; the rest are counted (as
# text) or folded into a <details> block (Markdown). A release sync touching 116 files
# printed 116 rows before anything else (issue 27).
FILE_ROWS = 20
MD_FILE_ROWS = 10


def totals_text(totals: ChangeTotals) -> str:
    """The change as a whole, in one line: files, lines, and the harness text before -> after."""
    text = (
        f"{plural(totals.files, 'file')} ({totals.harness_files} harness), "
        f"{changes(totals.added, totals.removed)} lines"
    )
    if totals.harness_files:
        estimated = "" if totals.tokenizer.startswith("tiktoken") else ", estimated"
        text += (
            f"; harness text {totals.chars_before:,} → {totals.chars_after:,} characters "
            f"({totals.chars_after - totals.chars_before:+,}), {totals.tokens_before:,} → "
            f"{totals.tokens_after:,} tokens ({totals.tokens_after - totals.tokens_before:+,}{estimated})"
        )
    if totals.unread:
        text += f"; {plural(totals.unread, 'harness file')} not read as text (binary or too large)"
    return text


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
        name += f" (evaluator {short(row.fingerprint, 8)})"
    return name


def side_text(row: ScoreRow, side: Literal["base", "head"]) -> str:
    """One side's mean over the instances both sides have, and the side's own
    coverage when it has scores the other lacks (they are not in the mean)."""
    if side == "base":
        text, coverage = mean_text(row.base_mean, row.base_se), row.base_n
    else:
        text, coverage = mean_text(row.head_mean, row.head_se), row.head_n
    return text if coverage == row.n else f"{text} ({coverage} scored)"


def difference_text(row: ScoreRow) -> str:
    """The paired difference with its 95% interval, in points."""
    if row.difference is None:
        return EMPTY
    return f"{points(row.difference)} [{points(row.ci_low)}, {points(row.ci_high)}]"


def verdict_line(verdict: Verdict) -> str:
    """One sentence, no markup: the verdict and the numbers it rests on."""
    if not verdict.evaluable:
        return "not evaluated: " + "; ".join(verdict.reasons)
    if verdict.state == "not evaluated":
        return "not evaluated: the gate needs selection scores for both sides; run " + "; ".join(
            verdict.commands
        )
    word = verdict.state.upper()
    if verdict.difference is None:
        return f"{word}: " + "; ".join(verdict.reasons)
    return (
        f"{word}: {said_numbers(verdict)}{points(verdict.difference)} points on {verdict.n} selection "
        f"instances ({points(verdict.base_mean, False)} -> {points(verdict.head_mean, False)}, 95% CI "
        f"[{points(verdict.ci_low)}, {points(verdict.ci_high)}], p = {p_text(verdict.p_value)}, "
        f"attempt {verdict.attempt} at alpha {verdict.alpha_k:.3g})"
        + (f"; what would decide: {verdict.decides}" if verdict.decides else "")
    )


def said_numbers(verdict: Verdict) -> str:
    """The chance the edit is better, the expected loss if merged anyway and the gain
    corrected for selection, in words ("" for what has none), ending in "; "."""
    if verdict.chance_better is None or verdict.expected_loss is None:
        return ""
    corrected = (
        f", gain corrected for selection {points(verdict.corrected)}" if verdict.corrected is not None else ""
    )
    return (
        f"chance better {chance_text(verdict.chance_better)}, expected loss if merged anyway "
        f"{verdict.expected_loss * 100:.1f} points{corrected}; observed "
    )


def rationale_body(edit: Edit) -> str:
    """The rationale without its first line when that line is the subject already shown."""
    text = (edit.rationale or "").strip()
    first, _, rest = text.partition("\n")
    return rest.strip() if first.strip() == edit.subject.strip() else text


def review_text(result: ReviewResult) -> str:
    out = _verdict_lines(result)
    out += _score_lines(result.scores)
    out += _file_lines(result)
    for flips in result.flips:
        out += _flip_lines(flips)
    for shift in result.failure_shift:
        out += _shift_lines(shift)
    out += _edit_lines(result)
    diff = "".join(f.patch for f in result.files)
    if diff:
        out += ["", diff.rstrip("\n")]
    return "\n".join(out)


def _verdict_lines(result: ReviewResult) -> list[str]:
    v = result.verdict
    out = [
        f"review {short(result.base)} ({result.base_label}) -> {short(result.head)} ({result.head_label})",
        f"gate: {verdict_line(v)}" if v.evaluable else verdict_line(v),
    ]
    if v.detectable:
        out.append(f"  {v.detectable}")
    out += [f"  - {reason}" for reason in v.reasons if v.state != "not evaluated"]
    if v.evaluable:
        out.append("  (what `harnessgit gate` would decide now, from stored scores; nothing was recorded)")
    else:
        out.append("  (the change's files, sizes, checks and rationale, without scores: no gate decision)")
    return out + [f"note: {note}" for note in result.notes]


def _score_lines(scores: list[ScoreRow]) -> list[str]:
    if not scores:
        return []
    rows = [
        [
            split_name(r),
            r.model,
            f"{r.n}/{r.split_size}",
            side_text(r, "base"),
            side_text(r, "head"),
            difference_text(r),
            p_text(r.p_value),
            points(r.mde, False),
            f"{r.wins}/{r.losses}/{r.ties}",
        ]
        for r in scores
    ]
    headers = ["split", "model", "n", "base", "head", "difference [95% CI]", "p", "MDE", "w/l/t"]
    return ["", table(rows, headers)]


def _file_lines(result: ReviewResult) -> list[str]:
    """The files changed (the `FILE_ROWS` largest changes; the rest counted), then the
    harness checks on them."""
    ordered = largest_first(result.files)
    shown, rest = ordered[:FILE_ROWS], ordered[FILE_ROWS:]
    files = [
        [
            f.path if f.old_path is None else f"{f.old_path} -> {f.path}",
            f.status,
            changes(f.added, f.removed),
            file_sizes(f),
        ]
        + ([] if f.harness else ["the evaluator's" if f.evaluator else "not a harness file"])
        for f in shown
    ]
    more = []
    if rest:
        added, removed = sum(f.added or 0 for f in rest), sum(f.removed or 0 for f in rest)
        more = [
            f"... and {plural(len(rest), 'more file')} with smaller changes ({changes(added, removed)} "
            "lines; --json lists every file)"
        ]
    checks = result.checks
    return [
        "",
        *([f"change: {totals_text(result.totals)}"] if result.totals is not None else []),
        f"files changed: {len(result.files)}" + (", the largest changes first" if rest else ""),
        table(files, ["file", "change", "lines", "size", ""]),
        *more,
        f"checks: {plural(sum(f.blocks for f in checks.findings), 'failure')}, "
        f"{plural(sum(f.level == 'warning' and f.state == 'new' for f in checks.findings), 'warning')}",
        *[
            f"  {f.level}{'' if f.state == 'new' else f' ({f.state})'}: "
            f"{f.path or 'the change'}: {f.rule}: {f.message}"
            for f in checks.findings
        ],
        *[f"  fixed: {f.path}: {f.rule}: {f.message}" for f in checks.fixed],
        *[f"  {line.removeprefix('note: ')}" for line in unread_notes(checks.unread)],
    ]


def _flip_lines(flips: Flips) -> list[str]:
    out = ["", f"flipped on {flips.split}: {flips.regressed_count} regressed, {flips.fixed_count} fixed"]
    for name, shown, count in (
        ("regressed", flips.regressed, flips.regressed_count),
        ("fixed", flips.fixed, flips.fixed_count),
    ):
        for flip in shown:
            out.append(
                f"  {name} {flip.instance}: {flip.base_score:.2f} -> {flip.head_score:.2f}; feedback: "
                f"{flip.base_feedback or EMPTY} -> {flip.head_feedback or EMPTY}"
            )
            if flip.trajectory:
                out.append(f"    trajectory ({flip.trajectory_side}): {flip.trajectory}")
        if count > len(shown):
            out.append(f"  ... and {count - len(shown)} more {name}")
    return out


def _shift_lines(shift: FailureShift) -> list[str]:
    rows = [
        [
            c.failure_class,
            f"{c.base_count} ({share(c.base_share)})",
            f"{c.head_count} ({share(c.head_share)})",
        ]
        for c in shift.classes
    ]
    return [
        "",
        f"failure classes on {shift.split}, model {shift.model} (share of failures)",
        table(rows, ["class", "base", "head"]),
    ]


def _edit_lines(result: ReviewResult) -> list[str]:
    out = ["", f"edits: {result.edits_count}"]
    for edit in result.edits:
        origin = [f"candidate {edit.candidate}"] if edit.candidate else []
        origin += [f"merged in {short(edit.merge)}"] if edit.merge else []
        out.append(f"  {short(edit.commit)} {edit.subject}" + (f" ({', '.join(origin)})" if origin else ""))
        if result.verdict.evaluable:
            out.append(f"    own effect: {effect_text(edit.effect)}")
        out += [f"    | {line}" for line in rationale_body(edit).splitlines()]
        for item in edit.evidence:
            out.append(
                f"    evidence: {item.label}, {plural(item.items, 'item')}, {human_size(item.bytes)}, "
                f"blob {short(item.blob)}"
            )
            out += [f"      {quote}" for quote in item.quoted]
    return out
