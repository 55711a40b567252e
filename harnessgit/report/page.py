"""The report as one HTML page: styles and script inline, no request leaves it.

The Content-Security-Policy allows nothing but the page's own style and script, named
by their sha256: no font, image, frame or connection can load, and a script or style
that text from a record smuggled in would not run even if escaping ever failed.
"""

from __future__ import annotations

import base64
import hashlib

from harnessgit import __version__
from harnessgit.render import short
from harnessgit.report.charts import (
    class_bars,
    frontier_chart,
    length_chart,
    length_legend,
    score_chart,
    shift_bars,
)
from harnessgit.report.contents import MergeFlips, Report
from harnessgit.report.svg import esc
from harnessgit.report.treeview import node_details, tree_chart
from harnessgit.review.scores import FailureShift, Flip, Flips

STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;max-width:1100px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:18px;margin-top:32px;border-bottom:1px solid #ddd}
.scroll{overflow-x:auto}.note{color:#666}
.grid{stroke:#e4e4e4}.tick,.label,.axis-name{font-size:11px;fill:#555}
.score-line{fill:none;stroke:#0072B2;stroke-width:1.5;opacity:.5}
.ci{stroke:#0072B2;stroke-width:2;opacity:.6}
.merge-point{fill:#0072B2}.ungated-point{fill:#fff;stroke:#D55E00;stroke-width:2}
.unscored-mark{stroke:#999;stroke-width:2}.peek-point{fill:#009E73}
svg.chart:not(.tree){max-width:100%;height:auto}
.length-line{fill:none;stroke-width:2}.limit{stroke-dasharray:6 4;stroke-width:1.5}
.edge{stroke:#888}.merge-edge{stroke-dasharray:4 3}
.node{cursor:pointer}.node circle{stroke:#333;stroke-width:1}.node.selected circle{stroke-width:3}
.frontier-point{fill:#0072B2}
.legend{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12px}
.legend svg{vertical-align:middle;margin-right:4px}
.node-detail{border:1px solid #ddd;padding:8px 12px;margin-top:8px}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px}dd{margin:0}
pre{background:#f6f6f6;padding:8px;overflow-x:auto;font-size:12px}
table{border-collapse:collapse}td,th{border-bottom:1px solid #eee;padding:2px 8px;text-align:left}
td.num{text-align:right}
"""
SCRIPT = """
function show(index){
  for(const d of document.querySelectorAll('.node-detail')) d.hidden = d.id !== 'node-' + index;
  for(const n of document.querySelectorAll('.node')) n.classList.toggle('selected', n.dataset.node === index);
}
for(const n of document.querySelectorAll('.node')){
  n.addEventListener('click', () => show(n.dataset.node));
  n.addEventListener('keydown', e => { if(e.key === 'Enter') show(n.dataset.node); });
}
const first = [...document.querySelectorAll('.node.outcome-merged')].pop() || document.querySelector('.node');
if(first) show(first.dataset.node);
for(const pick of document.querySelectorAll('select.merge-pick')){
  const choose = () => {
    for(const s of document.querySelectorAll('.' + pick.dataset.panels)) s.hidden = s.id !== pick.value;
  };
  pick.addEventListener('change', choose); choose();
}
document.body.dataset.rendered = 'yes';
"""


def _hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode() + "'"


CSP = f"default-src 'none'; style-src {_hash(STYLE)}; script-src {_hash(SCRIPT)}; img-src data:"


def render_page(report: Report) -> str:
    title = f"harnessgit report: {report.span}"
    body = [
        f"<h1>{esc(title)}</h1>",
        f'<p class="note">Base branch {esc(report.base)}; written by harnessgit {esc(__version__)} from the '
        "record alone (git notes and refs). Hover a point for its numbers; click a node of the tree.</p>",
        *[f'<p class="note">{esc(note)}</p>' for note in report.notes],
        _section("scores", "Score over accepted edits", _scores(report)),
        _section("lengths", "Length over time per harness file", _lengths(report)),
        _section("tree", "The candidate tree", _tree(report)),
        _section("frontier", "The frontier", _frontier(report)),
        _section("flips", "Flips of a merge", _flips(report.merges)),
        _section("shifts", "Failure classes per model, before and after a merge", _shifts(report.merges)),
        _section("classes", "Failure classes over accepted edits", _classes(report)),
    ]
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f'<meta name="viewport" content="width=device-width"><title>{esc(title)}</title>'
        f"<style>{STYLE}</style></head><body>{''.join(body)}<script>{SCRIPT}</script></body></html>\n"
    )


def _section(anchor: str, title: str, content: str) -> str:
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>{content}</section>'


def _scores(report: Report) -> str:
    if not report.points:
        return '<p class="note">No commits in the range.</p>'
    return (
        '<p class="note">The selection mean of each commit of the base branch (oldest left) under today\'s '
        "evaluator and model, with a normal 95% interval.</p>"
        f'<div class="scroll">{score_chart(report.points)}</div>'
    )


def _lengths(report: Report) -> str:
    steps = report.lengths
    if not steps.files:
        return '<p class="note">No commit in the range changed a harness file.</p>'
    return (
        f'<p class="note">Each harness file after every commit that changed the harness; tokens by '
        f"{esc(steps.tokenizer)}; dashed: the limits of the file's kind ([checks.kinds]).</p>"
        + length_legend(steps)
        + "".join(
            f'<h3>{m}</h3><div class="scroll">{length_chart(steps, m)}</div>' for m in ("chars", "tokens")
        )
    )


def _tree(report: Report) -> str:
    if not report.nodes:
        return '<p class="note">No candidates on record.</p>'
    return (
        '<p class="note">Every proposal, parents above children (dashed: the second parent of a merge '
        "proposal), coloured by what became of it.</p>"
        f'<div class="scroll">{tree_chart(report.nodes)}</div>{node_details(report.nodes)}'
    )


def _frontier(report: Report) -> str:
    if not report.frontier:
        return '<p class="note">No frontier (see the notes above).</p>'
    rows = "".join(
        f"<tr><td>{esc(r.candidate)}</td><td>{esc(r.parent or '-')}</td>"
        f'<td class="num">{r.mean * 100:.1f}</td>'
        f'<td class="num">{r.instances_led}</td></tr>'
        for r in report.frontier
    )
    return (
        frontier_chart(report.frontier)
        + "<table><tr><th>candidate</th><th>parent</th><th>mean</th><th>instances led</th></tr>"
        + f"{rows}</table>"
    )


def _flips(merges: list[MergeFlips]) -> str:
    if not merges:
        return '<p class="note">No gated merge in the range.</p>'
    panels = "".join(
        f'<div class="flips" id="flips-{i}">'
        + ("".join(_flip_lists(f) for f in m.flips) or "<p>No instance flipped.</p>")
        + "</div>"
        for i, m in enumerate(merges)
    )
    return _merge_pick("flip-merge", "flips", merges) + panels


def _merge_pick(pick: str, panels: str, merges: list[MergeFlips]) -> str:
    """A menu of the merges; the page's script shows the panel (``{panels}-{i}``) picked."""
    options = "".join(
        f'<option value="{panels}-{i}">{esc(short(m.commit))} {esc(m.subject)}</option>'
        for i, m in enumerate(merges)
    )
    menu = f'<select id="{pick}" class="merge-pick" data-panels="{panels}">{options}</select>'
    return f"<label>Merge: {menu}</label>"


def _flip_lists(flips: Flips) -> str:
    parts = [f"<h3>{esc(flips.split)} split, {esc(flips.model)}</h3>"]
    for name, shown, count in (
        ("Fixed", flips.fixed, flips.fixed_count),
        ("Broken", flips.regressed, flips.regressed_count),
    ):
        parts.append(f"<h4>{name}: {count}</h4><ul>" + "".join(_flip(f) for f in shown) + "</ul>")
        if count > len(shown):
            parts.append(
                f'<p class="note">and {count - len(shown)} more (harnessgit scores lists them all)</p>'
            )
    return "".join(parts)


def _flip(flip: Flip) -> str:
    feedback = "".join(
        f"<br>{side}: {esc(text)}"
        for side, text in (("before", flip.base_feedback), ("after", flip.head_feedback))
        if text
    )
    return (
        f"<li><code>{esc(flip.instance)}</code> {flip.base_score:.2f} → {flip.head_score:.2f}{feedback}</li>"
    )


def _classes(report: Report) -> str:
    if not report.classes:
        return '<p class="note">The evaluator reported no failure classes.</p>'
    return (
        '<p class="note">The selection failures (instances scoring below 1) of the first commit and of '
        "each gated merge, by the evaluator's failure class.</p>" + class_bars(report.classes)
    )


def _shifts(merges: list[MergeFlips]) -> str:
    if not any(m.shifts for m in merges):
        return (
            '<p class="note">No gated merge in the range with failure classes on both sides '
            "(the evaluator reports them as failure_class).</p>"
        )
    panels = "".join(
        f'<div class="shifts" id="shifts-{i}">'
        + (
            shift_bars(m.shifts) + _shift_table(m.shifts)
            if m.shifts
            else "<p>No failure classes on both sides of this merge.</p>"
        )
        + "</div>"
        for i, m in enumerate(merges)
    )
    return (
        '<p class="note">How the failures (instances scoring below 1) divide into the evaluator\'s classes '
        "before a merge (its first parent) and after it, for every model scored on both sides under "
        "today's evaluator: one edit can move one model's failures into a class and leave another's "
        "alone.</p>" + _merge_pick("shift-merge", "shifts", merges) + panels
    )


def _shift_table(shifts: list[FailureShift]) -> str:
    rows = "".join(
        f"<tr><td>{esc(s.model)}</td><td>{esc(s.split)}</td><td>{esc(c.failure_class)}</td>"
        f'<td class="num">{_share(c.base_count, c.base_share)}</td>'
        f'<td class="num">{_share(c.head_count, c.head_share)}</td></tr>'
        for s in shifts
        for c in s.classes
    )
    return (
        "<table><tr><th>model</th><th>split</th><th>failure class</th><th>before</th><th>after</th></tr>"
        f"{rows}</table>"
    )


def _share(count: int, share: float | None) -> str:
    return f"{count}" if share is None else f"{count} ({share * 100:.1f}%)"
