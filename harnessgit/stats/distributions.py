"""Exact tails of the binomial and Student-t distributions, without scipy.

Pure standard library. The normal distribution comes from `statistics.NormalDist`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from statistics import NormalDist

_BISECTIONS = 64  # halvings of [0, 1]: below double precision
# Above this many degrees of freedom the exact series (df / 2 terms per call) is
# replaced by the Cornish-Fisher expansion, whose error is O(df^-5) there.
_SERIES_MAX_DF = 1000


def binomial_upper_tail(k: int, n: int, p: float) -> float:
    """P(X >= k) for X ~ Binomial(n, p); exact rational arithmetic when p = 1/2."""
    if n < 0 or not 0 <= k <= n + 1:
        raise ValueError(f"need 0 <= k <= n + 1, got k={k}, n={n}")
    if k == 0:
        return 1.0
    if k > n:
        return 0.0
    if p == 0.5:
        # Python integers are exact and int / int rounds correctly, at any n.
        return sum(math.comb(n, j) for j in range(k, n + 1)) / (1 << n)
    return _binomial_tail(k, n)(p)


def clopper_pearson_lower(successes: int, trials: int, alpha: float) -> float:
    """Exact one-sided (1 - alpha) lower confidence bound for a binomial proportion:
    the theta at which P(X >= successes) = alpha (Clopper & Pearson 1934)."""
    if successes == 0:
        return 0.0
    k, n = successes, trials
    tail = _binomial_tail(k, n)
    # d/dtheta P(X >= k) = n C(n-1, k-1) theta^(k-1) (1-theta)^(n-k): a Beta density.
    log_scale = math.log(n) + math.lgamma(n) - math.lgamma(k) - math.lgamma(n - k + 1)

    def slope(theta: float) -> float:
        return math.exp(log_scale + (k - 1) * math.log(theta) + (n - k) * math.log1p(-theta))

    guess = k / n - NormalDist().inv_cdf(1 - alpha) * math.sqrt(k * (n - k) / n) / n
    return _newton(lambda theta: tail(theta) - alpha, slope, 0.0, 1.0, guess)


def clopper_pearson_upper(successes: int, trials: int, alpha: float) -> float:
    """Exact one-sided (1 - alpha) upper bound: one minus the lower bound for the failures."""
    return 1.0 - clopper_pearson_lower(trials - successes, trials, alpha)


def student_t_sf(t: float, df: int) -> float:
    """P(T >= t) for Student's t with integer df, from the exact finite series of
    Abramowitz & Stegun 26.7.3-4 (below _SERIES_MAX_DF)."""
    if df < 1:
        raise ValueError(f"df must be >= 1, got {df}")
    if math.isinf(t):
        return 0.0 if t > 0 else 1.0
    if df > _SERIES_MAX_DF:
        return _normal_sf_cornish_fisher(t, df)
    central = _central_probability(abs(t), df)  # P(|T| <= |t|)
    return (1 - central) / 2 if t >= 0 else (1 + central) / 2


def student_t_quantile(alpha: float, df: int) -> float:
    """The t with P(T >= t) = alpha: the one-sided critical value."""
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if df > _SERIES_MAX_DF:
        return _cornish_fisher(NormalDist().inv_cdf(1 - alpha), df)
    if alpha > 0.5:
        return -student_t_quantile(1 - alpha, df)
    lo, hi = 0.0, 1.0
    while student_t_sf(hi, df) > alpha:
        lo, hi = hi, hi * 2
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)

    def density(t: float) -> float:
        return math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))

    guess = _cornish_fisher(NormalDist().inv_cdf(1 - alpha), df)
    return _newton(lambda t: alpha - student_t_sf(t, df), density, lo, hi, guess)


def _central_probability(t: float, df: int) -> float:
    """A(t | df) = P(|T| <= t), t >= 0 (A&S 26.7.3 for odd df, 26.7.4 for even)."""
    theta = math.atan(t / math.sqrt(df))
    sin, cos2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 0:
        term = total = 1.0
        for j in range(1, df // 2):
            term *= (2 * j - 1) / (2 * j) * cos2
            total += term
        return min(1.0, sin * total)
    if df == 1:
        return 2 * theta / math.pi
    term = total = 1.0
    for j in range(1, (df - 1) // 2):
        term *= (2 * j) / (2 * j + 1) * cos2
        total += term
    return min(1.0, 2 / math.pi * (theta + sin * math.cos(theta) * total))


def _cornish_fisher(z: float, df: int) -> float:
    """Student-t quantile from the normal one (A&S 26.7.5), accurate for large df."""
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _normal_sf_cornish_fisher(t: float, df: int) -> float:
    # Invert the expansion: find the z whose t-quantile is t, then take its normal tail.
    z = _bisect(lambda z: _cornish_fisher(z, df) - t, -40.0, 40.0)
    return 1 - NormalDist().cdf(z) if z < 0 else NormalDist().cdf(-z)


def _binomial_tail(k: int, n: int) -> Callable[[float], float]:
    """theta -> P(X >= k) for X ~ Binomial(n, theta), 1 <= k <= n, summed in log
    space (math.comb(n, j) * theta**j overflows a float beyond n ~ 1,000)."""
    log_comb = [math.lgamma(n + 1) - math.lgamma(j + 1) - math.lgamma(n - j + 1) for j in range(k, n + 1)]

    def tail(theta: float) -> float:
        if theta <= 0:
            return 0.0
        if theta >= 1:
            return 1.0
        log_p, log_q = math.log(theta), math.log1p(-theta)
        logs = [c + j * log_p + (n - j) * log_q for j, c in enumerate(log_comb, start=k)]
        top = max(logs)
        return min(1.0, math.exp(top) * math.fsum(math.exp(x - top) for x in logs))

    return tail


def _bisect(increasing: Callable[[float], float], lo: float, hi: float) -> float:
    """The root in [lo, hi] of an increasing function."""
    for _ in range(_BISECTIONS):
        mid = (lo + hi) / 2
        if increasing(mid) < 0:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def _newton(
    increasing: Callable[[float], float], slope: Callable[[float], float], lo: float, hi: float, guess: float
) -> float:
    """The root in [lo, hi] of an increasing function with the given derivative:
    Newton steps inside a shrinking bracket, bisecting whenever a step would leave
    it. A handful of evaluations where plain bisection needs 64."""
    x = guess if lo < guess < hi else (lo + hi) / 2
    for _ in range(_BISECTIONS):
        value = increasing(x)
        if value < 0:
            lo = x
        else:
            hi = x
        gradient = slope(x)
        step = x - value / gradient if gradient > 0 else (lo + hi) / 2
        if not lo < step < hi:
            step = (lo + hi) / 2
        if abs(step - x) <= 1e-15 * max(1.0, abs(x)) or hi - lo <= 1e-15 * max(1.0, abs(x)):
            return step
        x = step
    return x
