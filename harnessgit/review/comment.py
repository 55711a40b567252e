"""A review as GitHub-flavoured Markdown, for a pull-request comment.

The comment starts with a hidden marker, so a CI job can find its own comment and
update it instead of adding one per push, and always fits GitHub's comment limit
(`review.budget`). Text from evaluators and proposers (feedback, trajectories,
rationales) is escaped: it must not be able to close a ``<details>`` or a table early.
"""

from __future__ import annotations

import html
import re

from harnessgit.candidates.render import effect_text
from harnessgit.checks.render import unread_notes
from harnessgit.render import EMPTY, chance_text, changes, p_text, plural, points, share, short, sparkline
from harnessgit.render import size as human_size
from harnessgit.review.budget import COMMENT_LIMIT, Section, assemble
from harnessgit.review.diff import FileDiff, largest_first
from harnessgit.review.edits import Edit
from harnessgit.review.render import (
    MD_FILE_ROWS,
    difference_text,
    file_sizes,
    rationale_body,
    side_text,
    split_name,
    totals_text,
)
from harnessgit.review.review import ReviewResult
from harnessgit.review.scores import FailureShift, Flip, Flips, ScoreRow

MARKER = "<!-- harnessgit-review -->"
LONG_LINE = 2000  # a diff line longer than this is cut (a minified file must not eat the budget)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def md_text(text: str | None) -> str:
    """Free text on one Markdown line: no HTML, no table breaks, no emphasis."""
    if text is None:
        return ""
    flat = " ".join(str(text).split())
    return _MD_SPECIAL.sub(r"\\\1", html.escape(flat, quote=False))


def md_code(text: str, *, in_table: bool = False) -> str:
    """Inline code that survives backticks inside it (and pipes, in a table cell,
    where GitHub needs them escaped even inside code)."""
    flat = " ".join(text.split())
    if in_table:
        flat = flat.replace("|", "\\|")
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def _fence(lines: list[str]) -> str:
    longest = max((len(run) for line in lines for run in re.findall(r"`{3,}", line)), default=2)
    return "`" * max(3, longest + 1)


def review_markdown(result: ReviewResult, limit: int = COMMENT_LIMIT) -> str:
    sections = [
        _md_verdict(result),
        _md_scores(result.scores),
        _md_history(result),
        *_md_files(result),
        _md_checks(result),
        _md_edits(result),
        *[_md_flips(flips) for flips in result.flips],
        *[_md_shift(shift) for shift in result.failure_shift],
        _md_diff(result.files),
    ]
    return assemble([s for s in sections if s.head or s.body], limit)


def _md_verdict(result: ReviewResult) -> Section:
    v = result.verdict
    title = (
        f"### harnessgit review: {md_code(short(result.base))} ({md_text(result.base_label)}) → "
        f"{md_code(short(result.head))} ({md_text(result.head_label)})"
    )
    head = [MARKER, title, ""]
    body: list[str] = []
    if not v.evaluable:
        # Adoption level 2 (issue 20): no evaluation, so no gate word at all, only why.
        head.append(f"**Not evaluated:** {md_text('; '.join(v.reasons))}.")
    elif v.state == "not evaluated":
        head.append("**Gate: not evaluated.** The gate needs selection-split scores for both sides. Run:")
        body += ["", "```sh", *v.commands, "```", "", "then `harnessgit review` again."]
    else:
        word = v.state.upper()
        line = f"**Gate: {word}.**"
        if v.chance_better is not None and v.expected_loss is not None:
            line += (
                f" Chance the edit is better: {chance_text(v.chance_better)}; expected loss if merged"
                f" anyway: {v.expected_loss * 100:.1f} points"
                + (
                    f"; gain corrected for selection: {points(v.corrected)} points."
                    if v.corrected is not None
                    else "."
                )
            )
        if v.decides:
            line += f" What would decide: {md_text(v.decides)}."
        if v.difference is not None:
            line += (
                f" Observed {points(v.difference)} points on {v.n} selection instances "
                f"({points(v.base_mean, False)} → {points(v.head_mean, False)}; "
                f"95% CI [{points(v.ci_low)}, {points(v.ci_high)}]; "
                f"p = {p_text(v.p_value)}; wins/losses/ties {v.wins}/{v.losses}/{v.ties}); "
                f"attempt {v.attempt} at alpha {v.alpha_k:.3g}."
            )
        if v.detectable:
            line += f" {md_text(v.detectable[0].upper() + v.detectable[1:])}."
        head.append(line)
        body += [f"- {md_text(reason)}" for reason in v.reasons]
    about = (
        "What `harnessgit gate` would decide now, from stored scores; nothing was evaluated or recorded."
        if v.evaluable
        else "The change's files, sizes, checks and rationale, without scores: no gate decision, "
        "nothing evaluated or recorded."
    )
    tail = [
        "",
        f"<sub>{about}</sub>",
        *[f"> **Note:** {md_text(note)}" for note in result.notes],
        "",
    ]
    return Section(head, body, tail, priority=0, what="reasons")


def _md_scores(rows: list[ScoreRow]) -> Section:
    if not rows:
        return Section([])
    head = [
        "#### Scores (points; mean ± standard error)",
        "",
        "| split | model | n | base | head | difference [95% CI] | p | MDE | wins/losses/ties |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|",
    ]
    body = [
        f"| {md_text(split_name(r))} | {md_text(r.model)} | {r.n}/{r.split_size} | "
        f"{side_text(r, 'base')} | {side_text(r, 'head')} | {difference_text(r)} | "
        f"{p_text(r.p_value)} | {points(r.mde, False)} | {r.wins}/{r.losses}/{r.ties} |"
        for r in rows
    ]
    return Section(head, body, [""], priority=1, what="score rows")


def _md_history(result: ReviewResult) -> Section:
    """The score history as one line of block characters: a comment cannot run a chart."""
    head_mean = next((row.head_mean for row in result.scores if row.decides), None)
    values = [*result.score_history, *([head_mean] if head_mean is not None else [])]
    if len(values) < 2:
        return Section([])
    # From the lowest to the highest mean, but at least 10 points tall: a 1-point wobble stays flat.
    low = min(min(values), max(values) - 0.1)
    line = (
        f"**Score history** (selection mean at each gated merge before BASE"
        f"{', then HEAD' if head_mean is not None else ''}): `{sparkline(values, low, max(values))}` "
        f"{points(values[0], False)} → {points(values[-1], False)}"
    )
    return Section([line, ""], priority=1, what="lines")


def _md_files(result: ReviewResult) -> list[Section]:
    """The files, the largest changes first: `MD_FILE_ROWS` rows in the open, the rest
    folded in a <details> block (its own section, so that the comment's budget can cut
    its rows and still close it)."""
    files = largest_first(result.files)
    added = sum(f.added or 0 for f in files)
    removed = sum(f.removed or 0 for f in files)
    header = ["| file | change | lines | size |", "|---|---|--:|---|"]
    head = [f"#### Files changed: {len(files)} ({changes(added, removed)} lines)", ""]
    if result.totals is not None:
        head += [f"**The change:** {md_text(totals_text(result.totals))}.", ""]
    head += header
    shown, rest = files[:MD_FILE_ROWS], files[MD_FILE_ROWS:]
    sections = [Section(head, _md_file_rows(shown), [""], priority=2, what="files")]
    if rest:
        lines = changes(sum(f.added or 0 for f in rest), sum(f.removed or 0 for f in rest))
        summary = f"{len(rest)} more files, smaller changes ({lines} lines)"
        folded = ["<details>", f"<summary>{summary}</summary>", "", *header]
        sections.append(
            Section(folded, _md_file_rows(rest), ["", "</details>", ""], priority=7, what="files")
        )
    return sections


def _md_file_rows(files: list[FileDiff]) -> list[str]:
    body = []
    for f in files:
        name = md_code(f.path, in_table=True)
        if f.old_path is not None:
            name = f"{md_code(f.old_path, in_table=True)} → {name}"
        if f.evaluator:
            name += " (not a harness file: the evaluator's)"
        elif not f.harness:
            name += " (not a harness file)"
        body.append(f"| {name} | {f.status} | {changes(f.added, f.removed)} | {file_sizes(f)} |")
    return body


def _md_checks(result: ReviewResult) -> Section:
    report = result.checks
    # Existing (the base had them) and suppressed findings are listed but not counted as failures.
    failures = sum(1 for f in report.findings if f.blocks)
    warnings = sum(1 for f in report.findings if f.level == "warning" and f.state == "new")
    head = [
        f"**Checks:** {plural(failures, 'failure')}, {plural(warnings, 'warning')}."
        if report.findings
        else "**Checks:** no findings."
    ]
    body = [
        f"- **{f.level if f.state == 'new' else f'{f.level}, {f.state}'}** "
        f"{md_code(f.path) if f.path else 'the change'}: {f.rule}: {md_text(f.message)} "
        f"_{md_text(f.hint)}_"
        for f in sorted(report.findings, key=lambda f: (f.level != "failure", f.path or ""))
    ]
    body += [f"- **fixed** {md_code(f.path or '')}: {f.rule}: {md_text(f.message)}" for f in report.fixed]
    body += [f"- **not read** {md_text(line.removeprefix('note: '))}" for line in unread_notes(report.unread)]
    return Section(head + ([""] if body else []), body, [""], priority=3, what="findings")


def _md_flip(flip: Flip) -> str:
    line = f"- {md_code(flip.instance)}: {flip.base_score:.2f} → {flip.head_score:.2f}"
    if flip.base_class or flip.head_class:
        line += f" (class {md_text(flip.base_class or EMPTY)} → {md_text(flip.head_class or EMPTY)})"
    if flip.base_feedback or flip.head_feedback:
        line += f". Feedback: base “{md_text(flip.base_feedback)}”, head “{md_text(flip.head_feedback)}”"
    if flip.trajectory:
        line += f". Trajectory ({flip.trajectory_side}): {md_code(flip.trajectory)}"
    return line


def _md_flips(flips: Flips) -> Section:
    head = [
        f"#### Flipped instances on {md_text(flips.split)}: {flips.regressed_count} regressed, "
        f"{flips.fixed_count} fixed",
        "",
        "<details><summary>Regressed and fixed instances, with feedback and trajectories</summary>",
        "",
    ]
    body = []
    for name, shown, count in (
        ("Regressed", flips.regressed, flips.regressed_count),
        ("Fixed", flips.fixed, flips.fixed_count),
    ):
        if not count:
            continue
        body.append(f"**{name}** ({count}):")
        body += [_md_flip(flip) for flip in shown]
        if count > len(shown):
            body.append(f"- … and {count - len(shown)} more (`harnessgit scores` lists them all)")
        body.append("")
    return Section(head, body, ["</details>", ""], priority=5, what="flipped-instance lines")


def _md_shift(shift: FailureShift) -> Section:
    head = [
        f"#### Failure classes on {md_text(shift.split)}, model {md_text(shift.model)} "
        f"(share of failures: base {shift.base_failures}, "
        f"head {shift.head_failures})",
        "",
        "| class | base | head |",
        "|---|--:|--:|",
    ]
    body = [
        f"| {md_text(c.failure_class)} | {c.base_count} ({share(c.base_share)}) | "
        f"{c.head_count} ({share(c.head_share)}) |"
        for c in shift.classes
    ]
    return Section(head, body, [""], priority=6, what="classes")


def _md_edit(edit: Edit, evaluable: bool) -> list[str]:
    who = [f"commit {md_code(short(edit.commit))}"]
    if edit.candidate:
        who.append(f"candidate {md_code(edit.candidate)}")
    if edit.merge:
        who.append(f"merged in {md_code(short(edit.merge))}")
    if edit.source:
        who.append(
            f"proposed via {md_text(edit.source)}"
            + (f" by {md_text(edit.proposer)}" if edit.proposer else "")
        )
    lines = [f"- **{md_text(edit.subject)}** ({', '.join(who)})"]
    if evaluable:
        lines.append(f"  - own effect on the selection split: {md_text(effect_text(edit.effect))}")
    rationale = rationale_body(edit)
    if rationale:
        lines += [f"  > {md_text(line)}" if line.strip() else "  >" for line in rationale.splitlines()[:30]]
    for item in edit.evidence:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(item.item_kinds.items()))
        lines.append(
            f"  - evidence: {md_text(item.label)}, {plural(item.items, 'item')}, {human_size(item.bytes)}"
            + (f" ({md_text(kinds)})" if kinds else "")
            + f", blob {md_code(short(item.blob))}"
        )
        lines += [f"    - {md_text(quote)}" for quote in item.quoted]
    return lines


def _md_edits(result: ReviewResult) -> Section:
    head = [f"#### Why: the rationale and evidence of {plural(result.edits_count, 'commit')}", ""]
    body = [line for edit in result.edits for line in _md_edit(edit, result.verdict.evaluable)]
    if result.edits_count > len(result.edits):
        body.append(f"- … and {result.edits_count - len(result.edits)} older commits")
    return Section(head, body, [""], priority=4, what="rationale and evidence lines")


def _md_diff(files: list[FileDiff]) -> Section:
    lines = [
        line if len(line) <= LONG_LINE else line[:LONG_LINE] + " …"
        for f in files
        for line in f.patch.splitlines()
    ]
    if not lines:
        return Section([])
    fence = _fence(lines)
    head = [f"<details><summary>Diff ({len(lines):,} lines)</summary>", "", f"{fence}diff"]
    return Section(head, lines, [fence, "</details>"], priority=9, what="diff lines")
