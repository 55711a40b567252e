"""The candidate tree as SVG (top-down, parents above their children) and each node's
details as HTML; the page's script shows the details of the node clicked."""

from __future__ import annotations

from harnessgit.render import short
from harnessgit.report.svg import Frame, esc, legend, num
from harnessgit.report.tree import OUTCOMES, TreeNode

OUTCOME_COLOURS = {
    "merged": "#0072B2",
    "gate-passed": "#56B4E9",
    "gate-rejected": "#D55E00",
    "gate-failed": "#D55E00",
    "gate-inconclusive": "#E69F00",
    "accepted": "#009E73",
    "archived": "#999999",
    "not-gated": "#F0E442",
    "rejected-minibatch": "#E69F00",
    "rejected-checks": "#CC79A7",
    "rejected-proposal": "#FFFFFF",
    "base": "#000000",
}
SLOT, LEVEL, MARGIN = 26.0, 54.0, 24.0


def layout(nodes: list[TreeNode]) -> dict[str, tuple[float, int]]:
    """node id -> (slot, depth): leaves take the next slot in depth-first order, a
    parent sits over the middle of its children (by its first parent's edge)."""
    ids = {node.id for node in nodes}
    children: dict[str, list[str]] = {}
    roots: list[str] = []
    for node in nodes:  # creation order: children in the order they were proposed
        parent = next((p for p in node.parents if p in ids), None)
        (children.setdefault(parent, []) if parent else roots).append(node.id)
    placed: dict[str, tuple[float, int]] = {}
    next_slot = 0.0

    def place(node: str, depth: int) -> float:
        nonlocal next_slot
        stack = [(node, depth, False)]
        while stack:  # iterative: a chain of a thousand edits is a thousand levels deep
            current, level, done = stack.pop()
            kids = children.get(current, [])
            if done or not kids:
                slot = sum(placed[k][0] for k in kids) / len(kids) if kids else next_slot
                if not kids:
                    next_slot += 1
                placed[current] = (slot, level)
                continue
            stack.append((current, level, True))
            stack += [(kid, level + 1, False) for kid in reversed(kids)]
        return placed[node][0]

    for root in roots:
        place(root, 0)
    return placed


def tree_chart(nodes: list[TreeNode]) -> str:
    where = layout(nodes)
    slots = max([slot for slot, _depth in where.values()] + [0]) + 1
    depth = max([d for _slot, d in where.values()] + [0]) + 1
    frame = Frame(slots * SLOT + 2 * MARGIN, depth * LEVEL + 2 * MARGIN, 1)

    def at(node_id: str) -> tuple[str, str]:
        slot, level = where[node_id]
        return num(MARGIN + slot * SLOT + SLOT / 2), num(MARGIN + level * LEVEL)

    parts = [frame.open("the candidate tree", "chart tree")]
    for node in nodes:
        for rank, parent in enumerate(p for p in node.parents if p in where):
            (x1, y1), (x2, y2) = at(parent), at(node.id)
            css = "edge" if rank == 0 else "edge merge-edge"
            parts.append(f'<line class="{css}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}"/>')
    for index, node in enumerate(nodes):
        x, y = at(node.id)
        title = f"{node.id} ({OUTCOMES[node.outcome]})\n{node.subject}"
        if node.selection_mean is not None:
            title += f"\nselection {node.selection_mean * 100:.1f} (n={node.selection_n})"
        parts.append(
            f'<g class="node outcome-{esc(node.outcome)}" data-node="{index}" tabindex="0">'
            f"<title>{esc(title)}</title>"
            f'<circle cx="{x}" cy="{y}" r="8" fill="{OUTCOME_COLOURS[node.outcome]}"/></g>'
        )
        if node.outcome == "base":
            parts.append(
                f'<text class="label" x="{x}" y="{y}" dy="-12" text-anchor="middle">{esc(node.id[:7])}</text>'
            )
    parts.append("</svg>")
    used = [o for o in OUTCOMES if any(n.outcome == o for n in nodes)]
    return "".join(parts) + legend([(f"outcome-{o}", OUTCOME_COLOURS[o], OUTCOMES[o]) for o in used])


def node_details(nodes: list[TreeNode]) -> str:
    """One hidden panel per node; the script unhides the one clicked."""
    return "".join(_detail(index, node) for index, node in enumerate(nodes))


def _detail(index: int, node: TreeNode) -> str:
    facts = [
        ("outcome", OUTCOMES[node.outcome]),
        ("commit", short(node.commit) if node.commit else "-"),
        ("parents", ", ".join(node.parents) or "-"),
        ("created", node.created),
        ("proposer", node.proposer or "-"),
    ]
    if node.parent_score is not None or node.candidate_score is not None:
        facts.append(("minibatch", f"{_pts(node.parent_score)} → {_pts(node.candidate_score)}"))
    if node.selection_mean is not None:
        facts.append(("selection", f"{_pts(node.selection_mean)} on {node.selection_n} instances"))
    for gate in node.gates:
        verdict = gate.shown_verdict.upper()
        interval = (
            f" [{gate.ci_low * 100:+.1f}, {gate.ci_high * 100:+.1f}]"
            if gate.ci_low is not None and gate.ci_high is not None
            else ""
        )
        difference = (
            f"{gate.difference * 100:+.1f} points" if gate.difference is not None else "no difference"
        )
        corrected = (
            f", {gate.corrected * 100:+.1f} corrected for selection" if gate.corrected is not None else ""
        )
        facts.append((f"gate attempt {gate.attempt}", f"{verdict}, {difference}{interval}{corrected}"))
    if node.reason:
        facts.append(("why", node.reason))
    rows = "".join(f"<dt>{esc(k)}</dt><dd>{esc(v)}</dd>" for k, v in facts)
    rationale = f"<h4>Rationale</h4><blockquote>{esc(node.rationale)}</blockquote>" if node.rationale else ""
    diff = f'<h4>Diff</h4><pre class="diff">{esc(node.diff)}</pre>' if node.diff else ""
    return (
        f'<section class="node-detail" id="node-{index}" hidden><h3>{esc(node.id)}: {esc(node.subject)}</h3>'
        f"<dl>{rows}</dl>{rationale}{diff}</section>"
    )


def _pts(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}"
