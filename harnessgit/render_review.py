"""How a review looks: GitHub-flavoured Markdown for a PR comment, text, JSON.

The Markdown starts with a hidden marker, so a CI job can find its own comment
and update it instead of adding one per push, and always fits GitHub's comment
limit (`render_budget`). Text from evaluators and proposers (feedback,
trajectories, rationales) is escaped: it must not be able to close a
``<details>`` or a table early.
"""

from __future__ import annotations

import html
import re

from harnessgit.render import size as human_size
from harnessgit.render import to_json
from harnessgit.render_budget import COMMENT_LIMIT, Section, assemble
from harnessgit.review import Edit, ReviewResult, Verdict
from harnessgit.review_diff import FileDiff
from harnessgit.review_scores import FailureShift, Flip, Flips, ScoreRow

MARKER = "<!-- harnessgit-review -->"
LONG_LINE = 2000  # a diff line longer than this is cut (a minified file must not eat the budget)
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|#~])")


def review_json(result: ReviewResult) -> str:
    return to_json(result)


def pts(value: float | None, signed: bool = True) -> str:
    """Scores in [0, 1] as points (0..100)."""
    if value is None:
        return "–"
    return f"{value * 100:+.1f}" if signed else f"{value * 100:.1f}"


def _p(value: float | None) -> str:
    return "–" if value is None else f"{value:.2g}" if value >= 0.001 else f"{value:.1e}"


def _mean(mean: float | None, se: float | None) -> str:
    if mean is None:
        return "–"
    return pts(mean, False) + (f" ± {se * 100:.1f}" if se is not None else "")


def _lines(item: FileDiff) -> str:
    if item.binary:
        return "binary"
    return f"+{item.added} −{item.removed}"


def _sizes(item: FileDiff) -> str:
    before = human_size(item.size_before) if item.size_before is not None else "new"
    after = human_size(item.size_after) if item.size_after is not None else "deleted"
    return f"{before} → {after}"


def _split_name(row: ScoreRow) -> str:
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
        f"[{pts(verdict.ci_low)}, {pts(verdict.ci_high)}], p = {_p(verdict.p_value)}, "
        f"attempt {verdict.attempt} at alpha {verdict.alpha_k:.3g})"
    )


# -- Markdown ------------------------------------------------------------------


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
        _md_files(result),
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
        f"### harnessgit review: {md_code(result.base[:12])} ({md_text(result.base_label)}) → "
        f"{md_code(result.head[:12])} ({md_text(result.head_label)})"
    )
    head = [MARKER, title, ""]
    body: list[str] = []
    if v.state == "not evaluated":
        head.append("**Gate: not evaluated.** The gate needs selection-split scores for both sides. Run:")
        body += ["", "```sh", *v.commands, "```", "", "then `harnessgit review` again."]
    else:
        word = "PASS" if v.state == "pass" else "REJECT"
        line = f"**Gate: {word}.**"
        if v.difference is not None:
            line += (
                f" {pts(v.difference)} points on {v.n} selection instances ({pts(v.base_mean, False)} → "
                f"{pts(v.head_mean, False)}; 95% CI [{pts(v.ci_low)}, {pts(v.ci_high)}]; "
                f"p = {_p(v.p_value)}; wins/losses/ties {v.wins}/{v.losses}/{v.ties}); "
                f"attempt {v.attempt} at alpha {v.alpha_k:.3g}."
            )
        if v.detectable:
            line += f" {md_text(v.detectable[0].upper() + v.detectable[1:])}."
        head.append(line)
        body += [f"- {md_text(reason)}" for reason in v.reasons]
    tail = [
        "",
        "<sub>What `harnessgit gate` would decide now, from stored scores; nothing was evaluated or "
        "recorded.</sub>",
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
    body = []
    for r in rows:
        diff = f"{pts(r.difference)} [{pts(r.ci_low)}, {pts(r.ci_high)}]" if r.difference is not None else "–"
        n = f"{r.n}/{r.split_size}"
        body.append(
            f"| {md_text(_split_name(r))} | {md_text(r.model)} | {n} | {_mean(r.base_mean, r.base_se)} | "
            f"{_mean(r.head_mean, r.head_se)} | {diff} | {_p(r.p_value)} | {pts(r.mde, False)} | "
            f"{r.wins}/{r.losses}/{r.ties} |"
        )
    return Section(head, body, [""], priority=1, what="score rows")


def _md_files(result: ReviewResult) -> Section:
    files = result.files
    added = sum(f.added or 0 for f in files)
    removed = sum(f.removed or 0 for f in files)
    head = [
        f"#### Files changed: {len(files)} (+{added} −{removed} lines)",
        "",
        "| file | change | lines | size |",
        "|---|---|--:|---|",
    ]
    body = []
    for f in files:
        name = md_code(f.path, in_table=True)
        if f.old_path is not None:
            name = f"{md_code(f.old_path, in_table=True)} → {name}"
        if not f.harness:
            name += " (not a harness file: the evaluator's)"
        body.append(f"| {name} | {f.status} | {_lines(f)} | {_sizes(f)} |")
    return Section(head, body, [""], priority=2, what="files")


def _md_checks(result: ReviewResult) -> Section:
    report = result.checks
    failures, warnings = report.count("failure"), report.count("warning")
    head = [
        f"**Checks:** {failures} failures, {warnings} warnings."
        if report.findings
        else "**Checks:** no findings."
    ]
    body = [
        f"- **{f.level}** {md_code(f.path) if f.path else 'the change'}: {f.rule}: {md_text(f.message)} "
        f"_{md_text(f.hint)}_"
        for f in sorted(report.findings, key=lambda f: (f.level != "failure", f.path or ""))
    ]
    return Section(head + ([""] if body else []), body, [""], priority=3, what="findings")


def _md_flip(flip: Flip) -> str:
    line = f"- {md_code(flip.instance)}: {flip.base_score:.2f} → {flip.head_score:.2f}"
    if flip.base_class or flip.head_class:
        line += f" (class {md_text(flip.base_class or '–')} → {md_text(flip.head_class or '–')})"
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
        f"#### Failure classes on {md_text(shift.split)} (share of failures: base {shift.base_failures}, "
        f"head {shift.head_failures})",
        "",
        "| class | base | head |",
        "|---|--:|--:|",
    ]
    body = [
        f"| {md_text(c.failure_class)} | {c.base_count} ({_share(c.base_share)}) | "
        f"{c.head_count} ({_share(c.head_share)}) |"
        for c in shift.classes
    ]
    return Section(head, body, [""], priority=6, what="classes")


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value * 100:.1f}%"


def _md_edit(edit: Edit) -> list[str]:
    who = [f"commit {md_code(edit.commit[:12])}"]
    if edit.candidate:
        who.append(f"candidate {md_code(edit.candidate)}")
    if edit.source:
        who.append(
            f"proposed via {md_text(edit.source)}"
            + (f" by {md_text(edit.proposer)}" if edit.proposer else "")
        )
    lines = [f"- **{md_text(edit.subject)}** ({', '.join(who)})"]
    rationale = _rationale_body(edit)
    if rationale:
        lines += [f"  > {md_text(line)}" if line.strip() else "  >" for line in rationale.splitlines()[:30]]
    for item in edit.evidence:
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(item.item_kinds.items()))
        lines.append(
            f"  - evidence: {md_text(item.label)}, {_plural(item.items, 'item')}, {human_size(item.bytes)}"
            + (f" ({md_text(kinds)})" if kinds else "")
            + f", blob {md_code(item.blob[:12])}"
        )
        lines += [f"    - {md_text(quote)}" for quote in item.quoted]
    return lines


def _rationale_body(edit: Edit) -> str:
    """The rationale without its first line when that line is the subject already shown."""
    text = (edit.rationale or "").strip()
    first, _, rest = text.partition("\n")
    return rest.strip() if first.strip() == edit.subject.strip() else text


def _plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def _md_edits(result: ReviewResult) -> Section:
    head = [f"#### Why: the rationale and evidence of {_plural(result.edits_count, 'commit')}", ""]
    body = [line for edit in result.edits for line in _md_edit(edit)]
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


# -- Text ----------------------------------------------------------------------


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
                _split_name(r),
                r.model,
                f"{r.n}/{r.split_size}",
                _mean(r.base_mean, r.base_se),
                _mean(r.head_mean, r.head_se),
                f"{pts(r.difference)} [{pts(r.ci_low)}, {pts(r.ci_high)}]"
                if r.difference is not None
                else "-",
                _p(r.p_value),
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
        [f.path if f.old_path is None else f"{f.old_path} -> {f.path}", f.status, _lines(f), _sizes(f)]
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
                f"{c.base_count} ({_share(c.base_share)})",
                f"{c.head_count} ({_share(c.head_share)})",
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
        out += [f"    | {line}" for line in _rationale_body(edit).splitlines()]
        for item in edit.evidence:
            out.append(
                f"    evidence: {item.label}, {_plural(item.items, 'item')}, {human_size(item.bytes)}, "
                f"blob {item.blob[:12]}"
            )
            out += [f"      {quote}" for quote in item.quoted]
    diff = "".join(f.patch for f in result.files)
    if diff:
        out += ["", diff.rstrip("\n")]
    return "\n".join(out)
