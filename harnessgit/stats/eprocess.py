"""Anytime-valid evidence for the gate: a paired betting e-process, and e-LOND.

Pure: numbers in, numbers out; no git, no I/O, no numpy.

**The e-process.** To test H0 "the mean paired difference is at most m" (m =
min_effect), bet on each instance's difference d_i in [-1, 1] in turn: wealth starts at
1 and is multiplied by 1 + lambda_i (d_i - m), with the stake lambda_i chosen from the
instances before i only (aGRAPA, Waudby-Smith & Ramdas 2023, "Estimating means of
bounded random variables by betting", clipped to [0, STAKE / (1 + m)]). Under H0 the
wealth is a nonnegative supermartingale, so by Ville's inequality the chance it ever
reaches 1 / a is at most a: the gate may look after every batch and stop as soon as
it does, at no cost in error (PACE, arXiv 2606.08106, bets this way on discordant
pairs: with 0/1 scores a tie multiplies the wealth by 1). The mirror process, betting
on m - d_i, is evidence the edit does *not* gain m: the fail test.

The instances are read in one canonical order (`canonical_order`: sorted by a hash of
the seed and the instance id), so `verify` recomputes the same wealth.

**e-LOND** (Xu & Ramdas 2024, "Online multiple testing with e-values"): the t-th
comparison on a selection set passes when its e-value is at least 1 / alpha_t with
alpha_t = q * gamma_t * (D + 1), D the comparisons that passed before it and gamma_t =
1 / (t (t + 1)) (they sum to 1). The expected share of false passes among passes
(the FDR) stays at most q over any stream, under arbitrary dependence between the
e-values (they share a selection set).
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

# The largest stake, as a share of what keeps the wealth positive: a cap below 1
# keeps one unlucky instance from wiping out what the others won.
STAKE = 0.5
# The variance guess before any instance is read (a difference of 0/1 scores has
# variance at most 1; a quarter is a mild prior).
START_VARIANCE = 0.25


@dataclass(frozen=True)
class Evidence:
    """The two e-values after reading ``read`` instances, and the largest each reached."""

    gain: float  # wealth against H0 "gain <= min_effect": large is evidence of a gain
    no_gain: float  # wealth against H0 "gain >= min_effect": large is evidence against one
    read: int


def canonical_order(instances: Sequence[str], seed: int) -> list[int]:
    """Indices of ``instances`` in the order the e-process reads them."""
    keys = [hashlib.sha256(f"{seed}:{name}".encode()).hexdigest() for name in instances]
    return sorted(range(len(instances)), key=lambda i: (keys[i], instances[i]))


def wealth(differences: Sequence[float], null: float, *, direction: int = 1) -> list[float]:
    """The wealth after each difference, betting that (d - null) * direction > 0."""
    bound = 1 + null if direction > 0 else 1 - null  # the largest loss per unit stake
    cap = STAKE / bound if bound > 0 else 0.0
    total, squares, count = 0.0, 0.0, 0
    current, path = 1.0, []
    for d in differences:
        x = (d - null) * direction
        mean = total / count if count else 0.0
        variance = (squares / count - mean * mean) if count else START_VARIANCE
        stake = mean / (max(variance, 1e-6) + mean * mean) if mean > 0 else 0.0
        stake = min(max(stake, 0.0), cap)
        current *= 1 + stake * x
        path.append(current)
        total, squares, count = total + x, squares + x * x, count + 1
    return path


def evidence(differences: Sequence[float], null: float) -> Evidence:
    """Both e-values after all of ``differences`` (read in the order given)."""
    gain = wealth(differences, null, direction=1)
    no_gain = wealth(differences, null, direction=-1)
    return Evidence(gain[-1] if gain else 1.0, no_gain[-1] if no_gain else 1.0, len(differences))


def elond_level(q: float, attempt: int, passed_before: int) -> float:
    """alpha_t of e-LOND for the ``attempt``-th comparison with ``passed_before``
    earlier passes on the selection set."""
    if attempt < 1 or passed_before < 0:
        raise ValueError("attempts count from 1 and passes from 0")
    return min(1.0, q * (passed_before + 1) / (attempt * (attempt + 1)))


def stopping_point(
    differences: Sequence[float], null: float, *, pass_level: float, fail_level: float, batch: int
) -> tuple[str, int]:
    """Read ``differences`` a batch at a time and stop as soon as the gain e-value
    reaches 1 / pass_level ("pass") or the no-gain one 1 / fail_level ("fail"); else
    ("inconclusive", all read). Returns the verdict and the instances read."""
    gain = wealth(differences, null, direction=1)
    no_gain = wealth(differences, null, direction=-1)
    for end in range(batch, len(differences) + batch, batch):
        read = min(end, len(differences))
        if gain[read - 1] >= 1 / pass_level:
            return "pass", read
        if no_gain[read - 1] >= 1 / fail_level:
            return "fail", read
    return "inconclusive", len(differences)
