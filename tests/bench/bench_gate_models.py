"""Simulation of the gate's "no significant loss on other models" rule (issue 19).

Run:  PYTHONPATH=. .venv/bin/python tests/bench/bench_gate_models.py    (about 15 s)

Three other models, 40 selection instances, 0/1 outcomes; each instance's solve
probability is drawn from {0.05, 0.5, 0.95} (most LLM instances are nearly always or
nearly never solved). On model 0 the candidate lowers every probability by `shift`
(clamped at 0): a true loss of about 8 points for 0.1 and 15 points for 0.2; on the
others it changes nothing. Prints how often Holm at alpha_1 = 0.0304 (alpha 0.05)
declares a loss on some model: at shift 0 that is the family-wise false-refusal rate,
otherwise the power to see the loss. docs/coevolution.md quotes one run.
"""

from __future__ import annotations

import random
import time

from harnessgit.stats.decision import alpha_for_attempt
from harnessgit.stats.holm import model_losses
from harnessgit.stats.pairing import PairedScores, pair_scores

RUNS = 1000
MODELS = 3
INSTANCES = 40


def refused(shift: float, runs: int = RUNS, seed: int = 1) -> float:
    rng = random.Random(seed)
    alpha_k = alpha_for_attempt(0.05, 1)
    count = 0
    for _ in range(runs):
        flipped: dict[str, PairedScores] = {}
        for model in range(MODELS):
            ps = [rng.choice([0.05, 0.5, 0.95]) for _ in range(INSTANCES)]
            base = {f"i{i}": (float(rng.random() < p), None) for i, p in enumerate(ps)}
            moved = [max(p - shift, 0.0) if model == 0 else p for p in ps]
            cand = {f"i{i}": (float(rng.random() < p), None) for i, p in enumerate(moved)}
            paired = pair_scores(cand, base)  # the candidate as base: a loss is positive
            assert paired is not None
            flipped[f"m{model}"] = paired
        losses = model_losses(flipped, alpha_k, method="bootstrap", resamples=2000, seed=0)
        count += any(loss.loss for loss in losses)
    return count / runs


def main() -> None:
    started = time.monotonic()
    print("| shift on model 0 | refused (some model declared a loss) |")
    print("|---|--:|")
    for shift in (0.0, 0.1, 0.2):
        print(f"| {shift:.1f} | {refused(shift):.3f} |")
    print(
        f"\n{RUNS} runs each, alpha_1 = {alpha_for_attempt(0.05, 1):.4f}, {time.monotonic() - started:.0f} s"
    )


if __name__ == "__main__":
    main()
