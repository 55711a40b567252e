"""What the reflection LM spent on one proposal, read from the LM object itself.

GEPA's events carry no cost or tokens (gepa #331). The LM objects keep them:

- ``gepa.lm.LM`` (what ``reflection_lm="provider/model"`` builds) adds up
  ``total_cost``, ``total_tokens_in`` and ``total_tokens_out`` over its calls;
- ``dspy.LM`` appends one entry per call to its ``history``: the messages sent, the
  outputs, litellm's ``usage`` and ``cost``. DSPy's GEPA proposes through its own
  adapter, so GEPA's ``on_proposal_end`` carries empty prompts and replies: the
  history's entries are what DSPy's proposer read and wrote.

`Meter.take` returns what was spent since the last take; the recorder takes once when
GEPA built the reflective dataset (before the LM is asked) and once at the proposal's
end, on GEPA's thread (a few attribute reads; for DSPy, the new history entries only).
A plain callable (``str -> str``) keeps nothing: no usage is recorded for it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Usage:
    calls: int = 0
    cost_usd: float | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    exchanges: list[dict[str, Any]] = field(default_factory=list)  # DSPy: messages and outputs

    def item(self) -> dict[str, Any]:
        """As an evidence item (the exchanges are items of their own)."""
        return {
            "kind": "reflection-usage",
            "calls": self.calls,
            "cost_usd": self.cost_usd,
            "tokens_in": self.tokens_in,
            "tokens_out": self.tokens_out,
        }


class Meter:
    """Reads a reflection LM's spending: a ``gepa.lm.LM``, a ``dspy.LM``, or nothing."""

    def __init__(self, lm: Any) -> None:
        self.lm = lm
        self.totals = hasattr(lm, "total_tokens_in") and hasattr(lm, "total_cost")
        self.history = not self.totals and isinstance(getattr(lm, "history", None), list)
        self._last = self._totals() if self.totals else None
        self._seen = self._newest() if self.history else None

    @property
    def active(self) -> bool:
        return self.totals or self.history

    def take(self) -> Usage | None:
        """What was spent since the last take; None when the LM keeps no account."""
        if self.totals:
            return self._take_totals()
        if self.history:
            return self._take_history()
        return None

    def _totals(self) -> tuple[float, int, int]:
        return (
            float(self.lm.total_cost or 0.0),
            int(self.lm.total_tokens_in or 0),
            int(self.lm.total_tokens_out or 0),
        )

    def _take_totals(self) -> Usage:
        now = self._totals()
        before = self._last or (0.0, 0, 0)
        self._last = now
        tokens_in, tokens_out = now[1] - before[1], now[2] - before[2]
        return Usage(
            calls=int(bool(tokens_in or tokens_out)),  # gepa's LM counts tokens, not calls
            cost_usd=round(now[0] - before[0], 8),
            tokens_in=tokens_in,
            tokens_out=tokens_out,
        )

    def _newest(self) -> str | None:
        entries = self.lm.history
        return str(entries[-1].get("uuid")) if entries else None

    def _take_history(self) -> Usage:
        """The entries after the last one seen (found by its uuid: DSPy drops the oldest
        entries once the history is full, so positions move)."""
        entries: list[dict[str, Any]] = list(self.lm.history)
        fresh: list[dict[str, Any]] = []
        for entry in reversed(entries):
            if self._seen is not None and str(entry.get("uuid")) == self._seen:
                break
            fresh.append(entry)
        fresh.reverse()
        if fresh:
            self._seen = str(fresh[-1].get("uuid"))
        usage = Usage(calls=len(fresh))
        costs = [entry.get("cost") for entry in fresh]
        if any(isinstance(cost, (int, float)) for cost in costs):
            usage.cost_usd = round(sum(c for c in costs if isinstance(c, (int, float))), 8)
        for entry in fresh:
            counts = entry.get("usage") or {}
            usage.tokens_in += int(counts.get("prompt_tokens") or 0)
            usage.tokens_out += int(counts.get("completion_tokens") or 0)
            usage.exchanges.append(
                {
                    "kind": "reflection-exchange",
                    "model": str(entry.get("model") or ""),
                    "messages": entry.get("messages") or entry.get("prompt"),
                    "outputs": entry.get("outputs"),
                }
            )
        return usage
