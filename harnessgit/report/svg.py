"""Plain SVG, written as text: the frame every chart shares, axes, escaping.

Why no charting library: docs/design.md (a library inlined would be most of the page,
and every picture here is a handful of lines, circles and rectangles). Every string
that reaches the page passes through `esc`; numbers are formatted here.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

# Okabe and Ito's palette: told apart with the common colour-vision deficiencies.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999")


def esc(text: object) -> str:
    """Text for HTML or SVG, quotes included: nothing from a record becomes markup."""
    return html.escape(str(text), quote=True)


def num(value: float) -> str:
    """A coordinate: two decimals are a hundredth of a pixel."""
    return f"{value:.2f}".rstrip("0").rstrip(".")


def colour(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclass(frozen=True)
class Frame:
    """A plot area inside an SVG of ``width`` x ``height``: x counts steps 0..steps-1,
    y runs from ``low`` (bottom) to ``high`` (top)."""

    width: float
    height: float
    steps: int
    low: float = 0.0
    high: float = 1.0
    left: float = 56.0
    right: float = 16.0
    top: float = 16.0
    bottom: float = 40.0

    def x(self, step: float) -> float:
        inner = self.width - self.left - self.right
        if self.steps <= 1:
            return self.left + inner / 2
        return self.left + inner * step / (self.steps - 1)

    def spacing(self) -> float:
        """Pixels between two steps."""
        return (self.width - self.left - self.right) / max(1, self.steps - 1)

    def y(self, value: float) -> float:
        inner = self.height - self.top - self.bottom
        span = (self.high - self.low) or 1.0
        return self.top + inner * (1 - (value - self.low) / span)

    def open(self, label: str, css: str) -> str:
        return (
            f'<svg class="{css}" role="img" aria-label="{esc(label)}" '
            f'width="{num(self.width)}" height="{num(self.height)}" viewBox="0 0 {num(self.width)} '
            f'{num(self.height)}">'
        )

    def y_axis(self, ticks: list[float], text: list[str]) -> str:
        parts = []
        for value, label in zip(ticks, text, strict=True):
            y = num(self.y(value))
            parts.append(
                f'<line class="grid" x1="{num(self.left)}" x2="{num(self.width - self.right)}" '
                f'y1="{y}" y2="{y}"/>'
                f'<text class="tick" x="{num(self.left - 6)}" y="{y}" text-anchor="end" '
                f'dominant-baseline="middle">{esc(label)}</text>'
            )
        return "".join(parts)

    def x_labels(self, labels: list[str], room: float = 64.0) -> str:
        """Every label, or every k-th when they would come closer than ``room`` pixels;
        the last (the newest) always, in place of the k-th before it when that is too close."""
        most = max(2, int((self.width - self.left - self.right) // room))
        every = max(1, -(-len(labels) // most))
        shown = list(range(0, len(labels), every))
        last = len(labels) - 1
        if shown and shown[-1] != last:
            if len(shown) > 1 and last - shown[-1] < every * 3 // 4:
                shown[-1] = last
            else:
                shown.append(last)
        y = num(self.height - self.bottom + 14)
        return "".join(
            f'<text class="tick" x="{num(self.x(i))}" y="{y}" text-anchor="middle">{esc(labels[i])}</text>'
            for i in shown
        )


def nice_ticks(high: float, count: int = 4) -> list[float]:
    """Round tick values from 0 to at least ``high``."""
    if high <= 0:
        return [0.0]
    raw = high / count
    magnitude = 10 ** len(str(int(raw))) / 10 if raw >= 1 else 1.0
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    return [step * i for i in range(count + 2) if step * (i - 1) < high]


def legend(items: list[tuple[str, str, str]]) -> str:
    """An HTML legend: (css class of the swatch, colour, label) each."""
    return (
        '<ul class="legend">'
        + "".join(
            f'<li><svg width="14" height="14" aria-hidden="true"><rect class="{esc(css)}" width="12" '
            f'height="12" x="1" y="1" fill="{esc(fill)}"/></svg>{esc(label)}</li>'
            for css, fill, label in items
        )
        + "</ul>"
    )
