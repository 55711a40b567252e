"""`harnessgit report`: gather the record's pictures for one page (`page.render_page`).

Everything comes from the functions the other commands use: `accepted_log` (how each
commit of the base branch landed), `ScoreBook` (selection scores), `harness_history`
(`log --all-history`: file lengths), the records on candidates (the tree),
`frontier_view` and `review` (the flips of a merge, and its failure-class shift per
model: `review.scores.failure_shift`, for every model the evaluator scored on both
sides). Reads only; the command writes
the one file it is asked for.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from harnessgit.candidates.history import harness_history
from harnessgit.candidates.log import LogEntry, accepted_log
from harnessgit.config import Config, require
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.scores import ScoreBook, ScoreSummary
from harnessgit.evaluation.splits import ManifestError, load_manifest
from harnessgit.gate.frontier import Known, frontier_view, proposals_by_commit
from harnessgit.render import short
from harnessgit.report.contents import MergeFlips, Report
from harnessgit.report.lengths import length_steps
from harnessgit.report.page import render_page
from harnessgit.report.scores import ClassShares, ScorePoint, class_shares, score_point
from harnessgit.report.tree import SELECTION, candidate_tree
from harnessgit.review.review import review
from harnessgit.stats.frontier_types import FrontierRow
from harnessgit.store import Store
from harnessgit.targets import base_tip, resolve

# What a commit's selection scores are when there is no selection split to score.
_NO_SCORES = ScoreSummary(
    split=SELECTION,
    harness="",
    fingerprint="",
    model="",
    n=0,
    missing=[],
    mean=None,
    stderr=None,
    instances=[],
    records=[],
    commits=[],
)
FLIP_MERGES = 10  # the newest gated merges whose flips the page carries (a review each)


@dataclass(frozen=True, kw_only=True)
class ReportResult:
    """`harnessgit report`: the file written and what it shows."""

    output: str
    bytes: int
    commits: int  # of the base branch in the range
    gated_merges: int
    candidates: int  # nodes of the candidate tree that are candidates
    notes: list[str]


def build_report(
    store: Store, config: Config, rev_range: str | None = None, base: str | None = None
) -> Report:
    config = require(config)
    branch = base or config.harness.base
    log = accepted_log(store, config, base=branch)
    entries = _in_range(store, branch, log.entries, rev_range)
    notes: list[str] = []
    selection = _selection(store, config, notes)
    book = ScoreBook.load(store)
    points: list[ScorePoint] = []
    classes: list[ClassShares] = []
    for entry in reversed(entries):
        # No selection split, no score to look up: the harness's key is not worked out.
        key = eval_context(store.objects, config, entry.commit).key if selection else None
        summary = book.summary(key, SELECTION, selection) if key else _NO_SCORES
        point = score_point(entry, summary, log.test_peeks)
        points.append(point)
        shares = class_shares(point, summary) if point.gated or not classes else None
        if shares is not None:
            classes.append(shares)
    in_range = {entry.commit for entry in entries}
    history = harness_history(store, config, base=branch, judge=False)  # lengths only
    history = replace(history, entries=[e for e in history.entries if e.commit in in_range])
    return Report(
        base=branch,
        span=rev_range or branch,
        points=points,
        lengths=length_steps(history, config),
        nodes=candidate_tree(store, config, book, selection, [e for e in log.entries if e.kind == "merge"]),
        frontier=_frontier(store, config, branch, book, notes) if selection else [],
        merges=_flips(store, config, [e for e in entries if e.gate is not None and e.gate.passed])
        if selection
        else [],
        classes=classes,
        notes=notes,
    )


def _in_range(store: Store, branch: str, entries: list[LogEntry], rev_range: str | None) -> list[LogEntry]:
    """The base branch's entries REV-RANGE names (``A..B``, ``B``: B's first-parent chain)."""
    if not rev_range:
        return entries
    start, dots, end = rev_range.partition("..")
    tip = resolve(store.refs, end or branch).sha if dots else resolve(store.refs, start).sha
    stop = resolve(store.refs, start).sha if dots and start else None
    chain = store.history.first_parent_chain(tip, stop=stop)
    known = {entry.commit: entry for entry in entries}
    outside = [sha for sha in chain if sha not in known]
    if outside:
        raise HarnessgitError(
            f"{rev_range} reaches {short(outside[0])}, which is not on {branch}'s first-parent chain "
            f"({short(base_tip(store.refs, branch))}): the report draws the base branch's history"
        )
    return [known[sha] for sha in chain]


def _selection(store: Store, config: Config, notes: list[str]) -> list[str]:
    if not config.evaluator.configured:
        notes.append("no evaluator is configured: no scores, frontier or flips")
        return []
    try:
        return load_manifest(store.root, config.splits.manifest).ids(SELECTION)
    except ManifestError as exc:
        notes.append(f"no scores, frontier or flips: {exc}")
        return []


def _frontier(
    store: Store, config: Config, branch: str, book: ScoreBook, notes: list[str]
) -> list[FrontierRow]:
    try:
        return frontier_view(
            store, config, base=branch, known=Known(book, proposals_by_commit(store.notes), {})
        ).frontier.rows
    except HarnessgitError as exc:
        notes.append(f"no frontier: {exc}")
        return []


def _flips(store: Store, config: Config, merges: list[LogEntry]) -> list[MergeFlips]:
    found = []
    for entry in merges[:FLIP_MERGES]:
        reviewed = review(store, config, base=f"{entry.commit}^", head=entry.commit)
        found.append(
            MergeFlips(
                commit=entry.commit,
                subject=entry.subject,
                flips=reviewed.flips,
                shifts=reviewed.failure_shift,
            )
        )
    return found


def default_output(store: Store) -> Path:
    """Where the page goes unless told: in the git directory, where nothing is committed."""
    return store.git_dir / "harnessgit" / "report.html"


def check_output(store: Store, output: Path) -> None:
    """Refuse a FILE in the working tree that `git add -A` would commit (issue 27: a
    report.html written untracked in the repository root was easy to commit by mistake).
    A tracked file (a report kept on purpose) or an ignored one is fine."""
    where = output.absolute()
    root = store.root.absolute()
    if not where.is_relative_to(root) or where.is_relative_to(store.git_dir.absolute()):
        return
    inside = where.relative_to(root).as_posix()
    if store.worktree.would_be_untracked(inside):
        raise HarnessgitError(
            f"{output} is in the working tree and not ignored, so `git add -A` would commit it: "
            f"add it to .gitignore, or leave out --output (default: {default_output(store)})"
        )


def write_report(
    store: Store,
    config: Config,
    output: Path | None = None,
    rev_range: str | None = None,
    base: str | None = None,
) -> ReportResult:
    if output is None:
        output = default_output(store)
    else:
        check_output(store, output)
    report = build_report(store, config, rev_range, base)
    page = render_page(report).encode("utf-8")
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_bytes(page)
    except OSError as exc:
        raise HarnessgitError(f"cannot write {output}: {exc.strerror}") from None
    return ReportResult(
        output=str(output),
        bytes=len(page),
        commits=len(report.points),
        gated_merges=sum(p.gated for p in report.points),
        candidates=sum(node.state in ("live", "archived") for node in report.nodes),
        notes=report.notes,
    )
