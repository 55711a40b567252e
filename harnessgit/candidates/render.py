"""How `propose`, `show`, `log` (and `log --all-history`), `status` and `label` look as
text (their ``--json`` is `harnessgit.render.to_json` of the result), and an edit's own
effect as the merge message and `review` say it."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timezone
from typing import TYPE_CHECKING

from harnessgit.render import EMPTY, changes, listing, mean_text, plural, points, short, size, table

# The results are only named here: importing their modules (and through them the checks,
# the gate statistics and every record model) would make `show` pay for `history` and
# `log` at every start (issue 17).
if TYPE_CHECKING:
    from harnessgit.candidates.chain import Effect
    from harnessgit.candidates.history import HistoryEntry, HistoryFile, HistoryResult, Step
    from harnessgit.candidates.label import Labels
    from harnessgit.candidates.log import LogEntry, LogResult, SelectionSpend
    from harnessgit.candidates.propose import Proposal
    from harnessgit.candidates.show import EvaluationSummary, Evidence, ShowResult
    from harnessgit.candidates.status import CandidateState, StatusResult
    from harnessgit.records import LabelRecord


def _when(ts: datetime) -> str:
    return ts.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S")


def proposal_text(result: Proposal) -> str:
    """What `propose` adds on standard error (standard output is only the candidate id)."""
    lines = [f"  {short(result.commit)} on {short(result.parent)}: {', '.join(result.components)}"]
    if result.ignored:
        from harnessgit.candidates.edits import first_few  # the edits' own listing, not at import

        lines.append(
            f"  left out {plural(len(result.ignored), 'changed file')} outside [harness] paths "
            f"({', '.join(result.harness_paths)}): {first_few(result.ignored)}"
        )
    return "\n".join(lines)


def show_text(result: ShowResult, *, diff: bool = True) -> str:
    lines = []
    head = f"commit {result.commit}"
    if result.candidate:
        head += f"  (candidate {result.candidate}{', ' + result.state if result.state else ''})"
    lines += [head, f"author {result.author}", f"date   {result.date}", ""]
    lines.append(f"    {result.subject}")
    if result.rationale and result.rationale.strip() != result.subject:
        lines += ["", "rationale:"] + [f"    {line}" for line in result.rationale.strip().splitlines()]
    if result.proposal:
        lines.append(
            f"\nproposed via {result.proposal.source}"
            + (f" by {result.proposal.proposer}" if result.proposal.proposer else "")
            + f" on parent {short(result.proposal.parent)}"
        )
    if result.files:
        lines += [
            "",
            table(
                [[f.status, f.path, changes(f.added, f.removed)] for f in result.files], ["", "file", "lines"]
            ),
        ]
    lines += _evidence_lines(result.evidence)
    if result.evaluations:
        lines += ["", "evaluations:", _evaluations_table(result.evaluations)]
    if diff and result.diff:
        lines += ["", result.diff.rstrip("\n")]
    return "\n".join(lines)


def _evidence_lines(evidence: list[Evidence]) -> list[str]:
    if not evidence:
        return ["", "evidence: none"]
    rows = [
        [
            e.label,
            e.items,
            size(e.bytes),
            ", ".join(f"{k}: {v}" for k, v in sorted(e.item_kinds.items())) or EMPTY,
            short(e.blob),
        ]
        for e in evidence
    ]
    return ["", "evidence:", table(rows, ["label", "items", "size", "kinds", "blob"])]


def _evaluations_table(evaluations: list[EvaluationSummary]) -> str:
    rows = [
        [
            e.split,
            e.model,
            short(e.fingerprint, 8) + ("" if e.current else " (old)"),
            e.n,
            f"{e.mean:.3f}" if e.mean is not None else EMPTY,
            f"{e.stderr:.3f}" if e.stderr is not None else EMPTY,
        ]
        for e in evaluations
    ]
    return table(rows, ["split", "model", "evaluator", "n", "mean", "SE"])


def effect_text(effect: Effect | None) -> str:
    """An edit's own effect, as the merge message and the review say it."""
    if effect is None:
        return "not evaluated"
    return (
        f"{points(effect.difference)} points on {plural(effect.n, 'selection instance')} "
        f"({points(effect.parent_mean, False)} -> {points(effect.mean, False)})"
    )


def _gate_cell(entry: LogEntry) -> str:
    if entry.override is not None:
        return f"override ({entry.override.action}): {entry.override.reason[:30]}"
    gate = entry.gate
    if gate is None:
        return "ungated" if entry.kind == "direct" else "no gate record"
    diff = f"{points(gate.difference)} pts" if gate.difference is not None else EMPTY
    if gate.corrected is not None:  # the gain corrected for selection (docs/gate.md)
        diff += f" ({points(gate.corrected)} corrected)"
    return f"{gate.shown_verdict} {diff} (n={gate.n}, attempt {gate.attempt})"


def log_text(result: LogResult) -> str:
    if not result.entries:
        return "no commits"
    # A merge lands its candidate and every candidate that one was proposed on: "edits"
    # counts them, so a chain's gain is not read as its last edit's.
    rows = [
        [
            short(e.commit, 10),
            e.date[:10],
            e.kind,
            len(e.proposals) if e.kind == "merge" else EMPTY,
            e.candidate or EMPTY,
            e.subject[:50],
            _gate_cell(e),
        ]
        for e in result.entries
    ]
    text = table(rows, ["commit", "date", "kind", "edits", "candidate", "subject", "gate"])
    for spend in result.selection_sets:
        text += "\n" + _spend_line(spend)
    if result.test_peeks:
        peeks = [
            [
                _when(p.ts),
                short(p.commit, 10),
                short(p.harness, 10),
                p.model,
                p.n,
                f"{p.mean:.3f}",
                "forced" if p.forced else "",
            ]
            for p in result.test_peeks
        ]
        text += "\n\ntest-split peeks (never used to decide):\n" + table(
            peeks, ["when", "commit", "harness", "model", "n", "mean", ""]
        )
    if result.exports:
        text += "\n\n" + _exports_text(result)
    if result.models:
        models = [[_when(m.ts), m.name, m.parent or EMPTY, m.note[:60]] for m in result.models]
        text += "\n\nmodel checkpoints (harnessgit model add):\n" + table(
            models, ["when", "model", "parent", "note"]
        )
    return text


def _exports_text(result: LogResult) -> str:
    """One line per forced export of a guarded split, where the base branch was then."""
    rows = [
        [
            _when(e.ts),
            short(e.commit, 10),
            e.split,
            e.model or "every model",
            e.conversations,
            "pairs" if e.pairs else "",
            e.author or EMPTY,
        ]
        for e in result.exports
    ]
    return "exports of guarded splits as training data (harnessgit export failures --force):\n" + table(
        rows, ["when", "base at", "split", "model", "conversations", "", "by"]
    )


SHOWN_FILES = 12  # per commit in text; --json lists every file and finding
SHOWN_FINDINGS = 12


def history_text(result: HistoryResult) -> str:
    """Each harness change, newest first, then the summary (last, where a terminal leaves it)."""
    from harnessgit.checks.render import printable  # the checks package, only for `history`

    blocks = [_history_entry(entry) for entry in result.entries]
    return printable("\n\n".join([*blocks, _history_summary(result)]))


def _signed(nbytes: int) -> str:
    return ("+" if nbytes >= 0 else "-") + size(abs(nbytes))


def _history_entry(entry: HistoryEntry) -> str:
    from harnessgit.checks.render import where

    merge = "  (merge: its change against the first parent)" if entry.merge else ""
    lines = [
        f"{short(entry.commit, 10)}  {entry.date[:10]}  {entry.author}  {entry.subject[:60]}{merge}",
        f"  harness {size(entry.harness_bytes)} in {plural(entry.harness_files, 'file')} "
        f"({_signed(entry.growth)})",
    ]
    rows = [_history_row(f) for f in entry.files[:SHOWN_FILES]]
    table_lines = table(rows, ["", "file", "bytes", "tokens", "sections +added -removed ~changed"])
    lines += [f"  {line}" for line in table_lines.splitlines()]
    if len(entry.files) > SHOWN_FILES:
        lines.append(f"  and {plural(len(entry.files) - SHOWN_FILES, 'more file')} (--json lists them)")
    for f in entry.files[:SHOWN_FILES]:
        if f.sections and (f.sections.added or f.sections.removed):
            gone = f"removed {listing(f.sections.removed)}" if f.sections.removed else ""
            came = f"added {listing(f.sections.added)}" if f.sections.added else ""
            lines.append(f"  {f.path}: {'; '.join(part for part in (gone, came) if part)}")
    for finding in entry.findings[:SHOWN_FINDINGS]:
        state = "" if finding.state == "new" else f", {finding.state}"
        lines.append(f"  {where(finding)}: {finding.rule}: {finding.message} ({finding.level}{state})")
    if len(entry.findings) > SHOWN_FINDINGS:
        lines.append(f"  and {plural(len(entry.findings) - SHOWN_FINDINGS, 'more finding')}")
    return "\n".join(lines)


def _history_row(f: HistoryFile) -> list[str]:
    sections = EMPTY
    if f.sections is not None:
        sections = f"+{len(f.sections.added)} -{len(f.sections.removed)} ~{len(f.sections.changed)}"
    return [
        f.status,
        f"{f.old_path} -> {f.path}" if f.old_path else f.path,
        _before_after(f.bytes_before, f.bytes_after, size),
        _before_after(f.tokens_before, f.tokens_after, "{:,}".format),
        sections,
    ]


def _before_after(before: int | None, after: int | None, shown: Callable[[int], str]) -> str:
    return f"{EMPTY if before is None else shown(before)} -> {EMPTY if after is None else shown(after)}"


def _history_summary(result: HistoryResult) -> str:
    lines = [
        f"{plural(result.harness_commits, 'commit')} of {result.examined} on {result.base}'s "
        f"first-parent chain changed a harness file; {len(result.entries)} shown",
        f"  judged under today's harnessgit.toml: [harness] paths = {', '.join(result.harness_paths)}",
        f"  tokens: {result.tokenizer}",
    ]
    for name, point in (("oldest", result.oldest), ("newest", result.newest)):
        if point is not None:
            lines.append(
                f"  harness after the {name} shown, {short(point.commit, 10)} ({point.date[:10]}): "
                f"{size(point.bytes)} in {plural(point.files, 'file')}"
            )
    for name, steps in (("largest growth", result.largest_growth), ("largest shrink", result.largest_shrink)):
        if steps:
            lines += ["", f"{name}:", _steps_table(steps)]
    if result.findings_by_rule:
        rows = [[r.rule, r.failures, r.warnings, r.commits] for r in result.findings_by_rule]
        lines += [
            "",
            "findings the changes brought, by rule (not those a file already had):",
            table(rows, ["rule", "failures", "warnings", "commits"]),
        ]
    elif result.entries:
        lines += ["", "no findings"]
    return "\n".join(lines)


def _steps_table(steps: list[Step]) -> str:
    rows = [[_signed(s.growth), short(s.commit, 10), s.date[:10], s.subject[:60]] for s in steps]
    return table(rows, ["bytes", "commit", "date", "subject"])


def _spend_line(spend: SelectionSpend) -> str:
    return (
        f"selection set {spend.split_hash[:10]}: {plural(spend.attempts, 'gate attempt')}, "
        f"{spend.passed} passed, alpha spent {spend.alpha_spent:.4f} of {spend.alpha}"
    )


def status_text(result: StatusResult) -> str:
    base, size = result.base, result.selection_size
    if result.problem:
        scored = f"no selection numbers: {result.problem}"
    elif base.n:
        scored = f"selection {mean_text(base.mean, base.stderr)} on {base.n} of {size} instances"
    else:
        scored = f"not evaluated on the selection split (harnessgit eval {base.branch})"
    lines = [
        f"{base.branch} at {short(base.commit)}: {scored}",
    ]
    if result.has_evaluator:
        lines.append(f"  evaluator {short(result.fingerprint, 8)}, model {result.model}")
    if result.selection is not None:
        lines.append(_spend_line(result.selection))
    lines.append("")
    if result.candidates:
        rows = [_candidate_row(c, size, result.as_of) for c in result.candidates]
        headers = ["candidate", "parent", "age", "selection", "mean", "frontier", "last gate", "subject"]
        lines += [f"{plural(len(rows), 'live candidate')}:", table(rows, headers)]
    else:
        lines.append("no live candidates (edit a harness file, then: harnessgit propose -m 'why')")
    archived = ", ".join(f"{count} {reason}" for reason, count in result.archived.items())
    lines.append(f"archived: {archived or 'none'}")
    return "\n".join(lines)


def _candidate_row(c: CandidateState, size: int, now: datetime) -> list[str]:
    if c.on_frontier is None:
        frontier = EMPTY if c.comparable else "other evaluator"
    else:
        frontier = "yes" if c.on_frontier else "no"
    gate = EMPTY
    if c.gate is not None:
        diff = f" {points(c.gate.difference)} pts" if c.gate.difference is not None else ""
        gate = f"{c.gate.shown_verdict}{diff} (attempt {c.gate.attempt})"
    return [
        c.candidate,
        c.parent or EMPTY,
        _age((now - c.created).total_seconds()),
        f"{c.n}/{size}",
        points(c.mean, False),
        frontier,
        gate,
        c.subject[:50],
    ]


def _age(seconds: float) -> str:
    """How long ago, in the largest whole unit: 45s, 12m, 5h, 3d."""
    for unit, width in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= width:
            return f"{int(seconds // width)}{unit}"
    return f"{max(int(seconds), 0)}s"


def labels_text(found: Labels) -> str:
    labels = found.labels
    if not labels:
        return "no labels"
    rows = [
        [
            label.name,
            short(label.commit),
            _when(label.last_move.ts) if label.last_move else EMPTY,
            label.last_move.author if label.last_move else "(moved outside harnessgit)",
            label.last_move.reason if label.last_move else "",
        ]
        for label in labels
    ]
    return table(rows, ["label", "commit", "moved", "by", "reason"])


def label_move_text(record: LabelRecord) -> str:
    was = f" (was {short(record.previous)})" if record.previous else ""
    gated = "" if record.gate else "  note: this commit has no passing gate record"
    return f"label {record.name} -> {short(record.commit)}{was}{gated}"


def label_history_text(moves: list[LabelRecord]) -> str:
    return "\n".join(f"{label_move_text(move)}  {move.reason}" for move in moves) or "no recorded moves"
