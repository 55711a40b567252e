"""The report's pictures, each a function of its data: SVG text out."""

from __future__ import annotations

from harnessgit.render import short
from harnessgit.report.lengths import FileLength, LengthSteps
from harnessgit.report.scores import ClassShares, ScorePoint
from harnessgit.report.svg import Frame, colour, esc, legend, nice_ticks, num
from harnessgit.review.scores import FailureShift
from harnessgit.stats.frontier_types import FrontierRow

POINT_TICKS = [0.0, 0.25, 0.5, 0.75, 1.0]
SELECTION = "selection"
SCORE_COLOURS = {"merge": "#0072B2", "ungated": "#D55E00", "peek": "#009E73", "unscored": "#999999"}
# The widest a chart is drawn: the page's column (page.STYLE: max-width 1100px less 2 x 16px
# of padding). A chart also shrinks with a narrower window (svg.chart's max-width), never
# running off the page's right edge (issue 27: a gated merge was cut off at 1400 px).
WIDTH = 1068.0
# A file's line gets a mark (with its numbers on hover) at each change up to this many
# changes; past it, the line alone (500 marks per file would be most of the page).
MARKED_POINTS = 60


def score_chart(points: list[ScorePoint]) -> str:
    """The selection mean at every commit of the base branch, oldest left: a filled
    circle for a gated merge, a hollow one for a commit that skipped the gate, a diamond
    for each held-out test peek. A commit with no score is a grey tick in a band of its
    own under the axis, labelled "not scored", never a mark on the 0 line (issue 27: on
    a real repository most commits are unscored, and there they read as zeros).

    The chart is at most `WIDTH` wide whatever the number of commits (points shrink as
    they crowd), so that it fits the page at common widths instead of running off it."""
    # left: room for the "not scored" band's label; right: for the newest commit's test peek
    frame = Frame(chart_width(len(points), 48.0), 344.0, len(points), bottom=64.0, left=80.0, right=28.0)
    radius = max(2.0, min(6.0, frame.spacing() / 2.5))
    parts = [frame.open("selection mean over the accepted edits", "chart scores")]
    parts.append(frame.y_axis(POINT_TICKS, [f"{t * 100:.0f}" for t in POINT_TICKS]))
    scored = [(i, p) for i, p in enumerate(points) if p.mean is not None]
    if len(scored) > 1:
        line = " ".join(f"{num(frame.x(i))},{num(frame.y(p.mean or 0))}" for i, p in scored)
        parts.append(f'<polyline class="score-line" points="{line}"/>')
    band = frame.height - frame.bottom + 34  # the "not scored" band, under the x labels' row
    if len(scored) < len(points):
        parts.append(
            f'<text class="tick" x="{num(frame.left - 6)}" y="{num(band)}" text-anchor="end" '
            'dominant-baseline="middle">not scored</text>'
        )
    for i, point in enumerate(points):
        x = num(frame.x(i))
        title = f"<title>{esc(_point_title(point))}</title>"
        if point.mean is None:
            parts.append(
                f'<line class="unscored-mark" data-commit="{esc(point.commit)}" x1="{x}" x2="{x}" '
                f'y1="{num(band - 6)}" y2="{num(band + 6)}">{title}</line>'
            )
            continue
        if point.ci_low is not None and point.ci_high is not None:
            parts.append(
                f'<line class="ci" x1="{x}" x2="{x}" y1="{num(frame.y(point.ci_low))}" '
                f'y2="{num(frame.y(point.ci_high))}"/>'
            )
        css = "merge-point" if point.gated else "ungated-point"
        parts.append(
            f'<circle class="{css}" data-commit="{esc(point.commit)}" cx="{x}" '
            f'cy="{num(frame.y(point.mean))}" r="{num(radius)}">{title}</circle>'
        )
    for i, point in enumerate(points):
        for peek in point.peeks:
            cx, cy = frame.x(i) + 10, frame.y(peek.mean)
            parts.append(
                f'<path class="peek-point" d="M{num(cx)},{num(cy - 7)}l7,7l-7,7l-7,-7z"><title>'
                f"{esc(f'held-out test peek at {short(point.commit)}: {peek.mean * 100:.1f} (n={peek.n})')}"
                "</title></path>"
            )
    parts.append(frame.x_labels([short(p.commit, 7) for p in points]))
    parts.append("</svg>")
    return "".join(parts) + legend(
        [
            ("merge-point", SCORE_COLOURS["merge"], "gated merge: selection mean, 95% interval"),
            ("ungated-point", SCORE_COLOURS["ungated"], "commit that skipped the gate"),
            ("unscored-mark", SCORE_COLOURS["unscored"], "not scored on the selection split (not a zero)"),
            ("peek-point", SCORE_COLOURS["peek"], "held-out test peek (never decides)"),
        ]
    )


def chart_width(steps: int, per_step: float) -> float:
    """``per_step`` pixels a step, at least 480 and at most `WIDTH`: the page's column."""
    return min(WIDTH, max(480.0, per_step * steps + 72))


def _point_title(point: ScorePoint) -> str:
    how = "gated merge" if point.gated else "skipped the gate"
    text = f"{short(point.commit)} {point.subject} ({how})"
    if point.mean is not None:
        text += f"\nselection {point.mean * 100:.1f} on {point.n} instances"
        if point.ci_low is not None and point.ci_high is not None:
            text += f", 95% interval [{point.ci_low * 100:.1f}, {point.ci_high * 100:.1f}]"
    else:
        text += "\nnot scored on the selection split"
    if point.difference is not None:
        text += f"\ngate: {point.difference * 100:+.1f} points"
    return text


def length_chart(steps: LengthSteps, measure: str) -> str:
    """One line per harness file, ``measure`` "chars" or "tokens", with each file's
    configured limit dashed in its colour."""
    files = [f for f in steps.files if any(_value(p, measure) is not None for p in f.points)]
    limits = [_limit(f, measure) for f in files]
    values = [v for f in files for p in f.points if (v := _value(p, measure)) is not None]
    top = max([*values, *[limit for limit in limits if limit is not None], 1])
    ticks = nice_ticks(top * 1.05)
    frame = Frame(chart_width(len(steps.commits), 40.0), 260.0, len(steps.commits), high=ticks[-1])
    parts = [frame.open(f"harness file length in {measure}", f"chart lengths lengths-{measure}")]
    parts.append(frame.y_axis(ticks, [f"{t:,.0f}" for t in ticks]))
    for index, (file, limit) in enumerate(zip(files, limits, strict=True)):
        fill = colour(index)
        if limit is not None:
            y, title = num(frame.y(limit)), f"{file.path}: limit {limit:,} {measure}"
            parts.append(
                f'<line class="limit" stroke="{fill}" x1="{num(frame.left)}" '
                f'x2="{num(frame.width - frame.right)}" y1="{y}" y2="{y}"><title>{esc(title)}</title></line>'
            )
        known = [(p.step, v) for p in file.points if (v := _value(p, measure)) is not None]
        line = " ".join(f"{num(frame.x(s))},{num(frame.y(v))}" for s, v in known)
        parts.append(
            f'<polyline class="length-line" stroke="{fill}" points="{line}"><title>{esc(file.path)}</title>'
            "</polyline>"
        )
        if len(known) > MARKED_POINTS:
            continue  # a line only: a mark and a title per point would be most of the page
        for step, value in known:
            title = f"{file.path} at {_step_name(steps, step)}: {value:,} {measure}"
            parts.append(
                f'<circle class="length-point" fill="{fill}" cx="{num(frame.x(step))}" '
                f'cy="{num(frame.y(value))}" r="3.5"><title>{esc(title)}</title></circle>'
            )
    parts.append(frame.x_labels([short(c, 7) if i else "before" for i, c in enumerate(steps.commits)]))
    parts.append("</svg>")
    return "".join(parts)


def length_legend(steps: LengthSteps) -> str:
    shown = legend(
        [
            ("length-swatch", colour(i), f"{f.path} ({f.kind}; limits: {_limits_text(f)})")
            for i, f in enumerate(steps.files)
        ]
    )
    if not steps.left_out:
        return shown
    more = f"{steps.left_out} more" + (" file" if steps.left_out == 1 else " files")
    return shown + (
        f'<p class="note legend-more">and {more} the range changed, smaller than these '
        "(harnessgit log --all-history lists every file)</p>"
    )


def _limits_text(file: FileLength) -> str:
    found = [f"{v:,} {name}" for v, name in ((file.max_chars, "chars"), (file.max_tokens, "tokens")) if v]
    return ", ".join(found) or "none"


def _value(point: object, measure: str) -> int | None:
    value = getattr(point, measure)
    return value if isinstance(value, int) else None


def _limit(file: FileLength, measure: str) -> int | None:
    return file.max_chars if measure == "chars" else file.max_tokens


def _step_name(steps: LengthSteps, step: int) -> str:
    return (
        "before the first change shown"
        if step == 0
        else f"{short(steps.commits[step])} {steps.subjects[step]}"
    )


def frontier_chart(rows: list[FrontierRow]) -> str:
    """Each frontier candidate by its selection mean (up) and the instances it leads (right)."""
    most = max([r.instances_led for r in rows] + [1])
    ticks = nice_ticks(most * 1.05)
    frame = Frame(560.0, 300.0, 2, left=56.0, right=120.0)
    parts = [frame.open("the frontier: mean by instances led", "chart frontier")]
    parts.append(frame.y_axis(POINT_TICKS, [f"{t * 100:.0f}" for t in POINT_TICKS]))
    for tick in ticks:
        parts.append(
            f'<text class="tick" x="{num(frame.x(tick / ticks[-1]))}" y="{num(frame.height - 24)}" '
            f'text-anchor="middle">{tick:,.0f}</text>'
        )
    for row in rows:
        cx, cy = num(frame.x(row.instances_led / ticks[-1])), num(frame.y(row.mean))
        title = f"{row.candidate}: mean {row.mean * 100:.1f}, leads {row.instances_led} instances"
        parts.append(
            f'<circle class="frontier-point" cx="{cx}" cy="{cy}" r="6"><title>{esc(title)}</title></circle>'
            f'<text class="label" x="{cx}" y="{cy}" dx="9" dy="4">{esc(short(row.candidate))}</text>'
        )
    parts.append(
        f'<text class="axis-name" x="{num(frame.width / 2)}" y="{num(frame.height - 6)}" '
        'text-anchor="middle">instances led</text></svg>'
    )
    return "".join(parts)


def class_bars(shares: list[ClassShares]) -> str:
    """Per commit, its selection failures split by class: one 100% bar each."""
    names = sorted({name for s in shares for name in s.classes})
    rows = [(f"{short(s.commit, 7)} {s.subject}", s.failures, s.classes) for s in shares]
    return _stacked_bars(rows, names, "failure classes per accepted edit")


def shift_bars(shifts: list[FailureShift]) -> str:
    """Per model (and split) of one merge, its failures split by class before and after:
    two 100% bars each, the classes in one order so that a share's change lines up."""
    names = sorted({c.failure_class for s in shifts for c in s.classes})
    rows: list[tuple[str, int, dict[str, int]]] = []
    for shift in shifts:
        who = shift.model if shift.split == SELECTION else f"{shift.model}, {shift.split}"
        for side, failures, counts in (
            ("before", shift.base_failures, {c.failure_class: c.base_count for c in shift.classes}),
            ("after", shift.head_failures, {c.failure_class: c.head_count for c in shift.classes}),
        ):
            rows.append((f"{who}: {side}", failures, {n: counts[n] for n in names if counts.get(n)}))
    return _stacked_bars(rows, names, "failure classes per model before and after the merge")


def _stacked_bars(rows: list[tuple[str, int, dict[str, int]]], names: list[str], label: str) -> str:
    """One 100% bar per (label, failures, class -> count) row, then the legend."""
    fills = {name: colour(i) for i, name in enumerate(names)}
    width, left, row_height = 760.0, 250.0, 26.0
    height = row_height * len(rows) + 8
    parts = [Frame(width, height, 1).open(label, "chart classes")]
    for row, (text, failures, classes) in enumerate(rows):
        y = 4 + row * row_height
        text = text if len(text) <= 36 else text[:35] + "…"
        parts.append(
            f'<text class="tick" x="{num(left - 8)}" y="{num(y + 13)}" text-anchor="end">{esc(text)}</text>'
        )
        x = left
        for name, count in classes.items():
            w = (width - left - 110) * count / failures if failures else 0
            title = f"{name}: {count} of {failures} failures ({100 * count / failures:.0f}%)"
            parts.append(
                f'<rect class="class-bar" fill="{fills[name]}" x="{num(x)}" y="{num(y)}" width="{num(w)}" '
                f'height="18"><title>{esc(title)}</title></rect>'
            )
            x += w
        parts.append(f'<text class="tick" x="{num(x + 6)}" y="{num(y + 13)}">{failures} failures</text>')
    parts.append("</svg>")
    return "".join(parts) + legend([("class-swatch", fills[name], name) for name in names])
