"""Harness text for the checks' tests: prompts whose lines do not repeat each other."""

from __future__ import annotations

import random

WORDS = ["answer", "cite", "check", "source", "format", "json", "table", "count"]
WORDS += ["verify", "input", "output", "tool", "call", "retry", "plan"]


def prompt(sections: int, seed: int = 0) -> str:
    """A Markdown prompt of ``sections`` sections of six distinct bullets each."""
    rng = random.Random(seed * 1000 + sections)
    return "".join(
        f"## Part {i}\n" + "".join(f"- {' '.join(rng.sample(WORDS, 6))}\n" for _ in range(6))
        for i in range(sections)
    )
