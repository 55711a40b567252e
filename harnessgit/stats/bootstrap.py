"""The gate's studentized paired bootstrap (bootstrap-t), over instances or clusters.

Pure: numbers in, a frozen model out; no git, no I/O. numpy is imported inside the
functions so that importing this module (or `harnessgit.stats.decision`) stays cheap.

What is resampled are *units*: the instances, or the clusters when the evaluator
reports them. A unit is summarised by the sum of its paired differences and its
number of instances, and the statistic is the ratio estimator
``mean difference = sum of resampled unit sums / total resampled instances``
(the cluster bootstrap of Davison & Hinkley 1997, sec. 3.8; with one instance per
unit it is the ordinary paired bootstrap of the mean).

Why studentized, and why with a Student-t floor. The percentile interval of a
mean is too narrow at small n (its spread is sqrt((n-1)/n) of the standard error
and it uses normal rather than t quantiles) and ignores skew: with many small gains
and rare large losses it accepted 11% of null candidates at n = 35. The bootstrap-t
resamples the studentized statistic t* = (m* - m) / se*, which is second-order
accurate and corrects for skewed differences (Efron & Tibshirani 1993, ch. 12;
Hall 1992, sec. 3.5); with clusters it uses the cluster-robust standard error. But
it can be fooled by a sample that merely looks skewed: 3 wins, 0 losses and 32 ties
at n = 35 make its upper tail light, and on realistic 0/1 scores it accepted 7.3%
of null candidates. So the critical value is the larger of the bootstrap-t quantile
and Student's t quantile with units - 1 degrees of freedom (nearly exact for
symmetric differences, which is what 0/1 differences are under H0). Each guards the
other's failure; docs/benchmarks.md ("Gate") has the measurements.

Decision rule, with B resamples, T = floor(alpha * (B + 1)), t_obs = (m - null) / se
and q = max(the T-th largest t*, t_{units-1, 1-alpha}):
``passed  <=>  lower bound m - q * se > null
          <=>  t_obs > q
          <=>  p = max(p_boot, p_t) <= alpha`` (up to ties at the boundary),
with p_boot = (1 + #{t* >= t_obs}) / (B + 1) (Davison & Hinkley's (B + 1) alpha
rule) and p_t Student's tail, so the bound, the p-value and the verdict agree.

Alpha spending makes alpha small on later attempts (attempt 10: 0.0003), and a
bootstrap with B draws cannot resolve a tail thinner than 1/(B + 1). The engine
therefore draws at least MIN_TAIL / alpha resamples, in growing blocks, and stops
as soon as the verdict is settled: when t_obs does not clear Student's quantile,
or T resamples have already reached t_obs. The early stop changes the cost, never
the verdict.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from harnessgit.stats.distributions import student_t_quantile, student_t_sf

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

    FloatArray = NDArray[np.float64]

# At least this many resamples in the tail that decides, so that the Monte Carlo
# error of the verdict stays small (relative error of the tail count ~ 1/sqrt(20)).
MIN_TAIL = 20
# A cap, or an evolve loop's thousandth attempt (alpha_k ~ 3e-8) would ask for a
# billion resamples. 2 million take ~13 s at n = 1,000 with partial credit.
MAX_RESAMPLES = 2_000_000
# Below this level no resample count within the cap can ever pass a candidate.
SMALLEST_ALPHA = 1 / (MAX_RESAMPLES + 1)
# The two-sided interval shown to people, from the first `resamples` draws.
CI_LEVEL = 0.95
# Elements per drawn array: bounds memory (16 MB of float64) at any n and B.
_CHUNK_ELEMENTS = 1 << 21
# Multinomial draws over distinct units beat index draws when units repeat a lot
# (binary scores: three distinct differences); measured break-even ~ 1 in 6.
_CLASS_RATIO = 6
# Differences of scores in [0, 1] below this are rounding noise, not variation.
_EPS = 1e-12
# A resampled spread below this fraction of the terms it is computed from is rounding.
_CANCELLATION = 1e-12


@dataclass(frozen=True, kw_only=True)
class BootstrapBound:
    """The outcome of one studentized bootstrap test of H0: mean difference <= null."""

    method: Literal["bootstrap"] = "bootstrap"
    units: int  # resampling units: instances, or clusters when clustered
    clustered: bool
    alpha: float  # level of the one-sided bound (alpha_k of the attempt)
    null: float  # the min_effect that the bound must clear
    estimate: float  # observed mean paired difference
    se: float  # its (cluster-robust) standard error
    lower_bound: float  # one-sided (1 - alpha) lower confidence bound
    ci_low: float  # two-sided CI_LEVEL interval, for display
    ci_high: float
    ci_level: float = CI_LEVEL
    p_value: float
    df: int  # units - 1, for the Student-t floor
    critical: float  # q: the larger of the bootstrap-t and Student-t critical values
    resamples: int  # asked for
    resamples_used: int  # drawn: more for a small alpha, fewer after an early stop
    passed: bool


def required_resamples(alpha: float, resamples: int) -> int:
    """Resamples needed so that at least MIN_TAIL of them fall in an alpha tail
    (at most MAX_RESAMPLES)."""
    return max(resamples, min(math.ceil(MIN_TAIL / alpha) - 1, MAX_RESAMPLES))


@dataclass(frozen=True)
class _Units:
    """The resampling units in canonical order (the verdict must not depend on how
    instances were listed): centred sums, sizes, the estimate and its standard error."""

    resid: FloatArray  # unit sum minus estimate * unit size: better numerics below
    sizes: FloatArray
    estimate: float
    se: float

    @property
    def count(self) -> int:
        return len(self.resid)


def _units(sums: Sequence[float], sizes: Sequence[int]) -> _Units:
    import numpy as np

    units = sorted(zip(sums, sizes, strict=True))
    sum_arr = np.array([s for s, _ in units], dtype=np.float64)
    size_arr = np.array([k for _, k in units], dtype=np.float64)
    count, total = len(units), float(size_arr.sum())
    estimate = math.fsum(sum_arr.tolist()) / total
    resid = sum_arr - estimate * size_arr
    se = math.sqrt(count / (count - 1) * math.fsum((resid * resid).tolist())) / total if count > 1 else 0.0
    return _Units(resid, size_arr, estimate, 0.0 if se <= _EPS else se)


def bootstrap_bound(
    sums: Sequence[float],
    sizes: Sequence[int],
    *,
    alpha: float,
    null: float,
    resamples: int,
    seed: int,
    support: tuple[float, float] = (-1.0, 1.0),
    student_floor: bool = True,
) -> BootstrapBound:
    """Test H0: mean difference <= null with a studentized bootstrap over units,
    its critical value floored at Student's t.

    ``sums[g]`` is the sum of the paired differences in unit g and ``sizes[g]`` its
    number of instances. The result depends only on the multiset of units and the
    seed (not on their order). Bounds are clipped to ``support``, the range a mean
    difference of scores in [0, 1] can take.
    """
    import numpy as np

    if len(sums) != len(sizes) or len(sums) < 2:
        raise ValueError("the bootstrap needs at least two units, each with a sum and a size")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    units = _units(sums, sizes)
    estimate, se, df = units.estimate, units.se, units.count - 1
    t_obs = _t_observed(estimate, null, se)
    t_critical = student_t_quantile(alpha, df) if student_floor else -math.inf
    # Below Student's quantile the verdict is "not passed" already: draw only what
    # the displayed interval needs.
    planned = required_resamples(alpha, resamples) if t_obs > t_critical else resamples
    threshold = math.floor(alpha * (planned + 1))  # T: the verdict's tail count
    rng = np.random.Generator(np.random.PCG64(seed))
    t_all, reached = _draw_until_settled(rng, units, t_obs, resamples, planned, threshold)
    drawn = len(t_all)
    # threshold 0: alpha is below SMALLEST_ALPHA, and no candidate can pass.
    passed = t_obs > t_critical and drawn == planned and reached < threshold
    p_value = max((1 + reached) / (drawn + 1), student_t_sf(t_obs, df) if student_floor else 0.0)
    # After an early stop, the quantile of the draws made: the bound it gives is
    # still not above the null, so it agrees with the verdict.
    q = max(_kth_largest(t_all, max(1, math.floor(alpha * (drawn + 1)))), t_critical)
    q_low, q_high = _interval_quantiles(t_all[:resamples], df, student_floor)
    lo, hi = support
    # No bound at a level the resamples cannot resolve: report the trivial one.
    lower = lo if threshold == 0 else _clip(estimate - _scaled(q, se), lo, hi)
    return BootstrapBound(
        units=units.count,
        clustered=bool(np.any(units.sizes != 1)),
        alpha=alpha,
        null=null,
        estimate=estimate,
        se=se,
        lower_bound=lower,
        ci_low=_clip(estimate - _scaled(q_high, se), lo, hi),
        ci_high=_clip(estimate - _scaled(q_low, se), lo, hi),
        p_value=min(1.0, p_value),
        df=df,
        critical=q,
        resamples=resamples,
        resamples_used=drawn,
        passed=passed,
    )


def _draw_until_settled(
    rng: np.random.Generator, units: _Units, t_obs: float, resamples: int, planned: int, threshold: int
) -> tuple[FloatArray, int]:
    """Studentized resamples in growing blocks, stopping once T of them reach t_obs
    (the verdict is then "not passed" whatever follows): the draws, and how many
    reached t_obs."""
    import numpy as np

    blocks: list[FloatArray] = []
    reached = 0  # resamples with t* >= t_obs
    for size in _block_sizes(resamples, planned):
        t_star = _draw_t(rng, units.resid, units.sizes, size, units.se)
        blocks.append(t_star)
        reached += int(np.count_nonzero(t_star >= t_obs))
        if reached >= threshold:
            break
    return np.concatenate(blocks), reached


def _interval_quantiles(first: FloatArray, df: int, student_floor: bool) -> tuple[float, float]:
    """The studentized quantiles of the two-sided CI_LEVEL interval shown to people,
    from the first `resamples` draws, each floored at Student's."""
    ci_tail = max(1, math.floor((1 - CI_LEVEL) / 2 * (len(first) + 1)))
    ci_critical = student_t_quantile((1 - CI_LEVEL) / 2, df) if student_floor else -math.inf
    q_high = max(_kth_largest(first, ci_tail), ci_critical)
    q_low = min(-_kth_largest(-first, ci_tail), -ci_critical)
    return q_low, q_high


def bootstrap_means(sums: Sequence[float], sizes: Sequence[int], *, resamples: int, seed: int) -> FloatArray:
    """The resampled mean differences m* (for comparisons such as the percentile
    bootstrap in the simulation benchmark; the gate itself uses `bootstrap_bound`)."""
    import numpy as np

    units = _units(sums, sizes)
    rng = np.random.Generator(np.random.PCG64(seed))
    parts = [
        units.estimate + agg[0] / agg[1] for agg in _draw_aggregates(rng, units.resid, units.sizes, resamples)
    ]
    return np.concatenate(parts)


def _t_observed(estimate: float, null: float, se: float) -> float:
    if se > 0:
        return (estimate - null) / se
    # No variation at all: every resample equals the data, so t* = 0 throughout and
    # the verdict is simply whether the observed mean clears the null.
    return math.inf if estimate > null else -math.inf if estimate < null else 0.0


def _block_sizes(resamples: int, planned: int) -> Iterator[int]:
    """First the configured number (the displayed interval uses exactly those), then
    doubling blocks up to `planned`, checking for an early stop between blocks."""
    drawn, size = 0, resamples
    while drawn < planned:
        size = min(size, planned - drawn)
        yield size
        drawn += size
        size = drawn


def _draw_t(
    rng: np.random.Generator, resid: FloatArray, sizes: FloatArray, count: int, se: float
) -> FloatArray:
    """`count` studentized resampled statistics t* = (m* - m) / se*."""
    import numpy as np

    units = len(resid)
    parts = []
    for sum_e, sum_n, sum_ee, sum_en, sum_nn in _draw_aggregates(rng, resid, sizes, count):
        delta = sum_e / sum_n  # m* - m
        # sum over resampled units of (S* - m* n*)^2, from centred sums
        spread = sum_ee - 2 * delta * sum_en + delta * delta * sum_nn
        # The expansion cancels: a resample of identical units leaves ~1e-16 of its
        # terms instead of 0, which would make se* tiny and t* ~ 1e9.
        spread = np.where(spread <= _CANCELLATION * (sum_ee + delta * delta * sum_nn), 0.0, spread)
        se_star = np.sqrt(units / (units - 1) * spread) / sum_n
        # A resample whose units are all alike (all wins, say) has se* = 0 and would
        # give t* = +-inf. With 35 wins and 5 ties of 40 that is 0.5% of resamples,
        # and infinite t* there would forbid any pass below alpha = 0.005 (attempt 3
        # on), however overwhelming the evidence. Such a resample says nothing about
        # the spread, so it is studentized by the observed se instead. (se = 0: all
        # units are alike, every delta is 0, and t* = 0.)
        se_used = np.where(se_star > 0, se_star, se)
        parts.append(np.where(se_used > 0, delta / np.where(se_used > 0, se_used, 1.0), 0.0))
    return np.concatenate(parts)


def _draw_aggregates(
    rng: np.random.Generator, resid: FloatArray, sizes: FloatArray, count: int
) -> Iterator[tuple[FloatArray, FloatArray, FloatArray, FloatArray, FloatArray]]:
    """Per resample: sums of e, n, e*e, e*n, n*n over `units` units drawn with
    replacement, where e is a unit's centred sum and n its size."""
    import numpy as np

    units = len(resid)
    keys, counts = np.unique(np.stack([resid, sizes]), axis=1, return_counts=True)
    if len(counts) * _CLASS_RATIO <= units:
        # Few distinct units (binary scores): draw how often each distinct unit is
        # picked. Same distribution as drawing indices, at a cost independent of n.
        e, n = keys[0], keys[1]
        features = np.stack([e, n, e * e, e * n, n * n], axis=1)
        pvals = counts / units
        rows = max(1, _CHUNK_ELEMENTS // len(counts))
        for start in range(0, count, rows):
            picks = rng.multinomial(units, pvals, size=min(rows, count - start)).astype(np.float64)
            agg = picks @ features
            yield agg[:, 0], agg[:, 1], agg[:, 2], agg[:, 3], agg[:, 4]
        return
    single = bool(np.all(sizes == 1))
    rows = max(1, _CHUNK_ELEMENTS // units)
    for start in range(0, count, rows):
        index = rng.integers(0, units, size=(min(rows, count - start), units))
        e_star = resid[index]
        sum_e = e_star.sum(axis=1)
        sum_ee = np.einsum("ij,ij->i", e_star, e_star)
        if single:  # one instance per unit: n* = 1 everywhere
            ones = np.full(len(sum_e), float(units))
            yield sum_e, ones, sum_ee, sum_e, ones
            continue
        n_star = sizes[index]
        yield (
            sum_e,
            n_star.sum(axis=1),
            sum_ee,
            np.einsum("ij,ij->i", e_star, n_star),
            np.einsum("ij,ij->i", n_star, n_star),
        )


def _kth_largest(values: FloatArray, k: int) -> float:
    import numpy as np

    k = min(k, len(values))
    return float(np.partition(values, len(values) - k)[len(values) - k])


def _scaled(q: float, se: float) -> float:
    # se = 0 means no variation: the bound is the estimate itself (avoid inf * 0).
    return 0.0 if se == 0 else q * se


def _clip(value: float, lo: float, hi: float) -> float:
    return min(hi, max(lo, value))
