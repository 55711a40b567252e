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


# A SKILL.md in the style of the ones issue 14's benchmark replayed: 85 of 89 collapse
# findings were skills slimmed down with their detail moved to references/ in the same
# commit (progressive disclosure, what the length hint asks for).
STORY_SKILL = """---
name: data-storytelling
description: Transform data into compelling narratives for executive presentations.
---

# Data Storytelling

Transform raw data into narratives that drive decisions.

## When to Use This Skill

- Presenting analytics to executives
- Creating quarterly business reviews
- Building investor presentations

## Story Frameworks

### Framework 1: The Problem-Solution Story

- Open with the hook: "We're losing $2.4M annually to preventable churn."
- Give the context: current churn rate is 8.5% against an industry average of 5%.
- State the problem: 73% of churned customers left within their first 90 days.
- Show the insight with the engagement curve visualization.
- End with the recommendation and its expected impact on retention.

### Framework 2: The Trend Story

- Describe where the metric was a year ago and where it is today.
- Explain the inflection point and what caused it.
- Project the trend forward with a clearly labelled confidence band.

## Visualization Techniques

- Use progressive reveal: build the chart one series at a time.
- Annotate the single data point the audience must remember.
- Prefer a slope chart over a table for before-and-after comparisons.

## Presentation Templates

- The one-page executive summary: headline, three supporting numbers, one ask.
- The dashboard narrative: what changed, why it changed, what we do next.
"""

STORY_SLIM = """---
name: data-storytelling
description: Transform data into compelling narratives for executive presentations.
---

# Data Storytelling

Transform raw data into narratives that drive decisions.

## Detailed patterns

See [references/details.md](references/details.md) for the story frameworks,
visualization techniques and presentation templates.
"""


def detail_file(skill: str) -> str:
    """references/details.md as the refactor wrote it: the moved sections, one level up."""
    body = skill.split("## Story Frameworks", 1)[1]
    return "# data-storytelling: detailed patterns\n\n## Story Frameworks" + body
