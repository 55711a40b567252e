"""Simulation benchmark of the gate's statistics (issue 4, "Evidence that it works").

Run:  .venv/bin/python tests/bench/bench_gate_sim.py            (about 2 minutes)
      .venv/bin/python tests/bench/bench_gate_sim.py --quick    (a smoke run)

Prints Markdown tables (docs/benchmarks.md, "Gate", is a copy of one run):
(a) false accepts at true effect 0 for n = 35, 100, 300; (b) the same for the
"strictly higher mean" rule of GEPA and SkillOpt; (c) family-wise false accepts over
30 successive null candidates on one selection set of 35 (SkillOpt's math case);
(d) power at true effects of 5 and 10 points; (e) clustered instances; and the time
of one gate decision with n = 1,000 and 10,000 resamples.

The outcome model, chosen to look like LLM evaluations: each selection instance has
a difficulty p_i ~ Beta(0.6, 0.2) (mean 0.75, near SkillOpt's 0.765 start; most
instances are nearly always or nearly never solved, a few are coin flips), and base
and candidate outcomes are independent 0/1 draws. A candidate with true effect d
fixes a share f = d / 0.25 of the base's failures, p_i' = p_i + f (1 - p_i), so its
expected score is exactly d higher. Each decision draws a fresh selection set,
except in (c), which keeps one set and one base evaluation throughout.

Work is split into seeded chunks run on all cores; the figures do not depend on
the number of cores. Not a test: tests never assert figures or times (docs/design.md, "How the code reads"),
and pytest does not collect bench_*.py.
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from harnessgit.config import GateSection
from harnessgit.stats.bootstrap import bootstrap_bound, bootstrap_means
from harnessgit.stats.decision import alpha_for_attempt, decide
from harnessgit.stats.distributions import student_t_quantile
from harnessgit.stats.pairing import PairedScores
from harnessgit.stats.signtest import sign_bound

ALPHA = 0.05
MEAN_DIFFICULTY = 0.75  # of Beta(0.6, 0.2)
CHUNK = 250  # decisions per parallel task
Array = np.ndarray
Rng = np.random.Generator


def difficulties(rng: Rng, n: int) -> Array:
    return rng.beta(0.6, 0.2, n)


def outcomes(rng: Rng, p: Array, effect: float) -> Array:
    shifted = p + effect / (1 - MEAN_DIFFICULTY) * (1 - p)
    return (rng.random(len(p)) < shifted).astype(float)


def binary_pair(rng: Rng, n: int, effect: float) -> tuple[Array, Array]:
    p = difficulties(rng, n)
    return outcomes(rng, p, 0.0), outcomes(rng, p, effect)


def skewed_pair(rng: Rng, n: int, effect: float) -> tuple[Array, Array]:
    """Partial credit. The candidate polishes nine answers in ten a little (+5
    points) and breaks one in ten badly (-45 points): no change on average."""
    quality = rng.uniform(0.5, 0.85, n)
    change = np.where(rng.random(n) < 0.1, -0.45, 0.05) + effect
    base = quality + rng.normal(0, 0.02, n)
    return np.clip(base, 0, 1), np.clip(quality + change + rng.normal(0, 0.02, n), 0, 1)


SCENARIOS = {"binary": binary_pair, "skewed": skewed_pair}


# --- the rules compared -------------------------------------------------------------


def _bound(diffs: list[float], seed: int, resamples: int, alpha: float, floor: bool = True) -> bool:
    return bootstrap_bound(
        diffs, [1] * len(diffs), alpha=alpha, null=0.0, resamples=resamples, seed=seed, student_floor=floor
    ).passed


def verdicts(base: Array, cand: Array, seed: int, resamples: int, rules: list[str]) -> dict[str, bool]:
    diffs = (cand - base).tolist()
    out: dict[str, bool] = {}
    for rule in rules:
        if rule == "gate":  # the product as configured: attempt 1 of alpha = 0.05
            out[rule] = _bound(diffs, seed, resamples, alpha_for_attempt(ALPHA, 1))
        elif rule == "test":  # the same test at level 0.05
            out[rule] = _bound(diffs, seed, resamples, ALPHA)
        elif rule == "plain-t":
            out[rule] = _bound(diffs, seed, resamples, ALPHA, floor=False)
        elif rule == "percentile":
            means = bootstrap_means(diffs, [1] * len(diffs), resamples=resamples, seed=seed)
            out[rule] = bool(np.quantile(means, ALPHA) > 0)
        elif rule == "student":
            d = cand - base
            se = float(d.std(ddof=1)) / math.sqrt(len(d))
            out[rule] = bool(d.mean() > (student_t_quantile(ALPHA, len(d) - 1) * se if se > 0 else 0.0))
        elif rule == "sign":
            is_binary = bool(np.all(np.isin(base, (0.0, 1.0))) and np.all(np.isin(cand, (0.0, 1.0))))
            out[rule] = sign_bound(diffs, alpha=ALPHA, null=0.0, binary=is_binary, clustered=False).passed
        elif rule == "higher":  # GEPA's and SkillOpt's acceptance rule
            out[rule] = bool(cand.mean() > base.mean())
    return out


HEADINGS = {
    "gate": "gate, attempt 1 (alpha_1 = 0.030)",
    "test": "gate's test at 0.05",
    "plain-t": "plain bootstrap-t at 0.05",
    "percentile": "percentile bootstrap at 0.05",
    "student": "Student t at 0.05",
    "sign": "exact sign / McNemar at 0.05",
    "higher": "(b) strictly higher mean",
}


def acceptance_chunk(task: tuple[str, float, int, int, int, int, list[str], int]) -> Counter[str]:
    scenario, effect, n, chunk, count, resamples, rules, seed = task
    rng = np.random.default_rng([seed, n, round(effect * 1000), chunk, len(scenario)])
    hits: Counter[str] = Counter()
    for r in range(count):
        base, cand = SCENARIOS[scenario](rng, n, effect)
        results = verdicts(base, cand, chunk * CHUNK + r, resamples, rules)
        hits.update(rule for rule, ok in results.items() if ok)
    return hits


def acceptance(
    pool: ProcessPoolExecutor,
    scenario: str,
    effect: float,
    sizes: list[int],
    rules: list[str],
    decisions: int,
    resamples: int,
    seed: int,
) -> list[list[str]]:
    rows = []
    for n in sizes:
        tasks = [
            (scenario, effect, n, c, min(CHUNK, decisions - c * CHUNK), resamples, rules, seed)
            for c in range(math.ceil(decisions / CHUNK))
        ]
        total: Counter[str] = sum(pool.map(acceptance_chunk, tasks), Counter())
        rows.append([str(n)] + [f"{total[rule] / decisions:.3f}" for rule in rules])
    return rows


def student_exact(sets: int, seed: int) -> list[str]:
    """Student's t alone on many more selection sets (vectorised): the gate passes
    only when Student's t passes, so this bounds the gate's false-accept rate."""
    rng = np.random.default_rng([seed, 7])
    cells = []
    for n in (35, 100, 300):
        hits = 0
        for _ in range(sets // 10_000):
            p = rng.beta(0.6, 0.2, (10_000, n))
            d = (rng.random(p.shape) < p).astype(float) - (rng.random(p.shape) < p)
            se = d.std(axis=1, ddof=1) / math.sqrt(n)
            hits += int(np.sum(d.mean(axis=1) > student_t_quantile(ALPHA, n - 1) * se))
        cells.append(f"{hits / sets:.4f}")
    return cells


# --- (c) SkillOpt's case: many candidates on one selection set ------------------------

POLICIES = ["naive: strictly higher mean", "gate without spending (0.05 every attempt)", "gate with spending"]


Tally = tuple[Counter[str], Counter[str], dict[str, float]]


def repeated_chunk(task: tuple[int, int, int, int, int, int]) -> Tally:
    chunk, runs, attempts, n, resamples, seed = task
    rng = np.random.default_rng([seed, 30, chunk])
    gate = GateSection(resamples=resamples)
    flat = gate.model_copy(update={"alpha": ALPHA * math.pi**2 / 6})  # alpha_1 = 0.05
    instances = [str(i) for i in range(n)]
    any_false: Counter[str] = Counter()
    accepted: Counter[str] = Counter()
    inflation = dict.fromkeys(POLICIES, 0.0)
    for run in range(runs):
        p = difficulties(rng, n)
        base = outcomes(rng, p, 0.0)
        candidates = [outcomes(rng, p, 0.0) for _ in range(attempts)]  # the same for every policy
        for policy in POLICIES:
            current, count = base, 0
            for k, cand in enumerate(candidates, start=1):
                if policy.startswith("naive"):
                    ok = bool(cand.mean() > current.mean())
                else:
                    scores = PairedScores(instances=instances, base=current.tolist(), candidate=cand.tolist())
                    seed_k = (chunk * CHUNK + run) * attempts + k
                    if policy.startswith("gate without"):
                        ok = decide(scores, flat.model_copy(update={"seed": seed_k})).passed
                    else:
                        ok = decide(scores, gate.model_copy(update={"seed": seed_k}), attempt=k).passed
                if ok:  # the accepted candidate becomes the new base, as in SkillOpt's loop
                    current, count = cand, count + 1
            any_false[policy] += count > 0
            accepted[policy] += count
            inflation[policy] += float(current.mean() - p.mean())
    return any_false, accepted, inflation


def repeated_gating(pool: ProcessPoolExecutor, runs: int, resamples: int, seed: int) -> list[list[str]]:
    chunks = math.ceil(runs / CHUNK)
    tasks = [(c, min(CHUNK, runs - c * CHUNK), 30, 35, resamples, seed) for c in range(chunks)]
    any_false: Counter[str] = Counter()
    accepted: Counter[str] = Counter()
    inflation = dict.fromkeys(POLICIES, 0.0)
    for part_any, part_accepted, part_inflation in pool.map(repeated_chunk, tasks):
        any_false.update(part_any)
        accepted.update(part_accepted)
        for policy, value in part_inflation.items():
            inflation[policy] += value
    return [
        [
            policy,
            f"{any_false[policy] / runs:.3f}",
            f"{accepted[policy] / runs:.2f}",
            f"{inflation[policy] / runs * 100:+.1f}",
        ]
        for policy in POLICIES
    ]


# --- (e) clustered instances ----------------------------------------------------------


def clustered_chunk(task: tuple[int, int, int, int]) -> Counter[str]:
    """300 instances in 30 task families of 10. The candidate helps half the
    families (+10 points) and hurts the others (-10 points): no effect overall."""
    chunk, count, resamples, seed = task
    families, size = 30, 10
    n = families * size
    rng = np.random.default_rng([seed, 99, chunk])
    ids = [f"family{i // size}" for i in range(n)]
    instances = [str(i) for i in range(n)]
    gate = GateSection(resamples=resamples, alpha=ALPHA * math.pi**2 / 6)  # alpha_1 = 0.05
    hits: Counter[str] = Counter()
    for r in range(count):
        p = difficulties(rng, n)
        helps = np.repeat(rng.random(families) < 0.5, size)
        shifted = np.where(helps, p + 0.4 * (1 - p), p * (1 - 0.1 / MEAN_DIFFICULTY))
        base = (rng.random(n) < p).astype(float)
        cand = (rng.random(n) < shifted).astype(float)
        plain = PairedScores(instances=instances, base=base.tolist(), candidate=cand.tolist())
        seeded = gate.model_copy(update={"seed": chunk * CHUNK + r})
        hits["instance bootstrap (clusters ignored)"] += decide(plain, seeded).passed
        hits["cluster bootstrap"] += decide(plain.model_copy(update={"clusters": ids}), seeded).passed
    return hits


def clustered(pool: ProcessPoolExecutor, decisions: int, resamples: int, seed: int) -> list[list[str]]:
    chunks = math.ceil(decisions / CHUNK)
    tasks = [(c, min(CHUNK, decisions - c * CHUNK), resamples, seed) for c in range(chunks)]
    total: Counter[str] = sum(pool.map(clustered_chunk, tasks), Counter())
    names = ["instance bootstrap (clusters ignored)", "cluster bootstrap"]
    return [[name, f"{total[name] / decisions:.3f}"] for name in names]


# --- timing ----------------------------------------------------------------------------


def timing(repeats: int) -> list[list[str]]:
    rng = np.random.default_rng(2026)
    n, resamples = 1000, 10_000
    instances = [str(i) for i in range(n)]
    quality = rng.uniform(0.2, 0.9, n)
    cont = PairedScores(
        instances=instances,
        base=np.clip(quality + rng.normal(0, 0.1, n), 0, 1).tolist(),
        candidate=np.clip(quality + 0.02 + rng.normal(0, 0.1, n), 0, 1).tolist(),
    )
    p = difficulties(rng, n)
    binary = PairedScores(
        instances=instances, base=outcomes(rng, p, 0.0).tolist(), candidate=outcomes(rng, p, 0.03).tolist()
    )
    gate = GateSection(resamples=resamples)
    diffs = np.array(cont.differences)

    def baseline() -> None:
        # The least any bootstrap of this size does: draw 10,000 x 1,000 indices,
        # gather the differences, take row means (in chunks, as the gate does).
        g = np.random.Generator(np.random.PCG64(0))
        for _ in range(0, resamples, 2000):
            diffs[g.integers(0, n, size=(2000, n))].mean(axis=1)

    def median_ms(fn: Callable[[], object]) -> float:
        fn()  # warm up: imports, first-touch allocations
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            times.append(time.perf_counter() - start)
        return statistics.median(times) * 1000

    base_ms = median_ms(baseline)
    cont_ms = median_ms(lambda: decide(cont, gate))
    binary_ms = median_ms(lambda: decide(binary, gate))
    rows = [
        ("baseline: plain numpy bootstrap of the mean (indices, gather, row means)", base_ms),
        ("gate decision, partial-credit scores (index resampling)", cont_ms),
        ("gate decision, 0/1 scores (multinomial shortcut)", binary_ms),
    ]
    return [[what, f"{ms:.0f}", f"{ms / base_ms:.2f}"] for what, ms in rows]


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    return "\n".join(lines + ["| " + " | ".join(row) + " |" for row in rows])


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--decisions", type=int, default=4000, help="simulated decisions per cell of (a)")
    parser.add_argument("--runs", type=int, default=1000, help="simulated selection sets in (c)")
    parser.add_argument("--resamples", type=int, default=2000, help="resamples per simulated decision")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a smoke run: 10x fewer of everything")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    d, runs, b, seed = args.decisions // scale, args.runs // scale, args.resamples, args.seed
    skewed_d, power_d, cluster_d = d // 4, d // 4, d // 4
    started = time.perf_counter()
    print(
        f"resamples per simulated decision: {b} (the gate's default: 10,000); seed {seed}; {args.jobs} jobs"
    )

    with ProcessPoolExecutor(args.jobs) as pool:
        rules = ["gate", "test", "plain-t", "percentile", "student", "sign", "higher"]
        header = ["n", *(HEADINGS[rule] for rule in rules)]
        se = math.sqrt(ALPHA * (1 - ALPHA) / d)
        print(f"\n(a, b) False-accept rate at true effect 0, 0/1 scores; {d} decisions per cell, ")
        print(f"Monte Carlo standard error {se:.4f} near 0.05\n")
        print(table(header, acceptance(pool, "binary", 0.0, [35, 100, 300], rules, d, b, seed)))
        sets = 200_000 // scale
        print(f"\nStudent t alone on {sets:,} selection sets per n (n = 35, 100, 300): ", end="")
        print(", ".join(student_exact(sets, seed)))

        se = math.sqrt(ALPHA * (1 - ALPHA) / skewed_d)
        print("\n(a') The same for partial credit, +5 points on 90% of instances and -45 on 10% ")
        print(f"(no change on average); {skewed_d} decisions per cell, standard error {se:.4f}\n")
        print(table(header, acceptance(pool, "skewed", 0.0, [35, 100, 300], rules, skewed_d, b, seed)))

        print(f"\n(c) {runs} selection sets of 35 (SkillOpt's math case), 30 null candidates in a row\n")
        c_header = [
            "rule",
            "sets with >= 1 false accept",
            "false accepts per set",
            "selection-score inflation",
        ]
        print(table(c_header, repeated_gating(pool, runs, b, seed)))

        power_rules = ["gate", "test", "sign", "higher"]
        print(f"\n(d) Power: share of better candidates accepted, 0/1 scores; {power_d} decisions per cell\n")
        for effect in (0.05, 0.10):
            print(f"true effect {effect * 100:.0f} points\n")
            rows = acceptance(pool, "binary", effect, [100, 300], power_rules, power_d, b, seed)
            print(table(["n", *(HEADINGS[rule] for rule in power_rules)], rows) + "\n")

        print("(e) Clustered: 300 instances in 30 families, each family +10 or -10 points, no effect")
        print(f"overall; test at level 0.05; {cluster_d} decisions\n")
        print(table(["test", "false-accept rate"], clustered(pool, cluster_d, b, seed)))

    print("\nTiming: one gate decision, n = 1,000, 10,000 resamples, median of 15 runs\n")
    print(table(["what", "ms", "ratio to baseline"], timing(15)))
    print(f"\ntotal benchmark time: {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
