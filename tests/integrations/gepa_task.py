"""A small deterministic GEPA task: an adapter and a reflection LM of our own.

An example is a word; a candidate scores 1 on it when its system prompt holds the word,
else 0. The reflection LM reads the feedback GEPA shows it and adds a rule for one word
it was told is missing; every third reply (by a hash of the prompt, so runs repeat) adds
a word nobody asked for instead, which the minibatch rejects. No randomness, no network.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from gepa.core.adapter import EvaluationBatch

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
    "uniform",
    "victor",
    "whiskey",
    "xray",
    "yankee",
]
TRAIN = [{"word": w} for w in WORDS]
VAL = [{"word": w} for w in WORDS[:20]]
SEED = {"system_prompt": "You are a careful assistant.\n", "style": "Be brief.\n"}


class WordAdapter:
    """GEPAAdapter: score = whether the example's component names its word."""

    propose_new_texts = None  # GEPA's own reflection, through reflection_lm

    def __init__(self, fail_after: int | None = None) -> None:
        self.calls = 0
        self.fail_after = fail_after

    def evaluate(
        self, batch: list[dict[str, str]], candidate: dict[str, str], capture_traces: bool = False
    ) -> EvaluationBatch[dict[str, Any], str]:
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise RuntimeError("the task model went away")
        scores = [1.0 if example["word"] in candidate[component(example)] else 0.0 for example in batch]
        outputs = [f"answer {example['word']}" for example in batch]
        trajectories = (
            [{"word": e["word"], "score": s} for e, s in zip(batch, scores, strict=True)]
            if capture_traces
            else None
        )
        return EvaluationBatch(outputs=outputs, scores=scores, trajectories=trajectories)

    def make_reflective_dataset(
        self,
        candidate: dict[str, str],
        eval_batch: EvaluationBatch[dict[str, Any], str],
        components_to_update: list[str],
    ) -> Mapping[str, Sequence[Mapping[str, Any]]]:
        rows = [
            {"Inputs": t["word"], "Feedback": "ok" if t["score"] else f"missing word {t['word']}"}
            for t in eval_batch.trajectories or []
        ]
        return {name: rows for name in components_to_update}


def component(example: dict[str, str]) -> str:
    """Where an example's word must be: every other word in the style, so that GEPA's
    branches improve different components and its merges have something to merge."""
    return "style" if WORDS.index(example["word"]) % 2 else "system_prompt"


def reflection_lm(prompt: str | list[dict[str, Any]]) -> str:
    text = prompt if isinstance(prompt, str) else "\n".join(str(m.get("content", "")) for m in prompt)
    current = text.split("```")[1].strip("\n") if text.count("```") >= 2 else ""
    missing = sorted(set(re.findall(r"missing word (\w+)", text)))
    digest = int(hashlib.sha256(text.encode()).hexdigest(), 16)
    # zulu...: a rule for no example, which the minibatch does not reward
    word = missing[digest % len(missing)] if missing and digest % 3 else f"zulu{digest % 97}"
    return f"```\n{current}\nAlways consider {word}.\n```"
