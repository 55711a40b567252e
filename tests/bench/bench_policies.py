"""The gate's policies on simulated streams of candidates, and sequential stopping (issue 25).

Run:  PYTHONPATH=. .venv/bin/python tests/bench/bench_policies.py           (about 6 minutes)
      PYTHONPATH=. .venv/bin/python tests/bench/bench_policies.py --n 150   ((a), (b) on 150 instances)
      PYTHONPATH=. .venv/bin/python tests/bench/bench_policies.py --quick   (a smoke run)
      PYTHONPATH=. .venv/bin/python tests/bench/bench_policies.py --calibration   ((d) only)
      PYTHONPATH=. .venv/bin/python tests/bench/bench_policies.py --decisions     ((e) only)

SIMULATED (tests/bench/policy_sim.py): no evaluator runs; 0/1 scores on n selection
instances, true gains drawn from a regime. Prints Markdown tables (docs/benchmarks.md,
"Gate policies (issue 25)", is a copy of one run):

(a) per regime and policy, over streams of 40 candidates gated on one selection set of
    36: merges, the share of merges that are not really better (false merges / merges;
    the FDR promise is about its expectation), fails, inconclusive verdicts and the true
    points merged;
(b) calibration of the stated chance that the edit is better, per decile (policy-free:
    every verdict states it);
(c) sequential stopping: rollouts the e-process reads, stopping after every batch of 10
    instances, against a fixed-n test of the same e-value (the same error promise) on a
    selection pool of 300, per true gain.

(d) (--calibration) the stated chance that an edit is better against the share truly
    better, per decile, before (prior algorithm 2; algorithm 1's figures are in
    docs/benchmarks.md, "calib") and after (algorithm 3, and algorithm 3 without its Student-t
    likelihood, which shows what each of its two changes does), on runs of 40 looks whose true
    gains come from regimes it was not tuned on (tests/bench/calib_sim.py), 0/1 and
    partial-credit clustered scores; and the looks a bayes policy passes (stated chance
    >= 1 - q) with the share of them not really better (false merges / merges).

Not a test: tests never assert figures (docs/design.md, "How the code reads");
tests/stats/test_policies.py checks the promises on a smaller run.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path
from statistics import NormalDist

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from harnessgit.stats.eprocess import stopping_point
from tests.bench import calib_sim
from tests.bench.policy_sim import REGIMES, policies, run_stream, scores, summarise


def table_e(streams: int, candidates: int, n: int) -> None:
    """(a)'s bayes rows through `decide`, prior algorithm 2 against 3 in one run."""
    print(f"(e) bayes, {streams} streams of {candidates} candidates on {n} instances, q = 0.1\n")
    print(
        "| regime | prior algorithm | merges | false merges / merges | fail | inconclusive "
        "| true points merged |"
    )
    print("|---|---|---|---|---|---|---|")
    for rname, regime in REGIMES.items():
        for algorithm in (2, 3):
            rules = policies()["bayes"]
            runs = [
                run_stream(rules, regime, candidates=candidates, n=n, seed=k, algorithm=algorithm)
                for k in range(streams)
            ]
            s = summarise(runs)
            print(
                f"| {rname} | {algorithm} | {s.merges} | {s.false_share:.3f} ({s.false_merges}) "
                f"| {s.fails} | {s.inconclusive} | {100 * s.merged_gain:+.1f} |"
            )


def table_a(streams: int, candidates: int, n: int) -> None:
    print(
        f"(a) {streams} streams of {candidates} candidates on {n} selection instances, "
        "q = 0.1, alpha = 0.05\n"
    )
    print(
        "| regime | policy | merges | false merges / merges | fail | inconclusive | true points merged "
        "| per merge: observed / corrected / true gain |"
    )
    print("|---|---|---|---|---|---|---|---|")
    calibration = {}
    for rname, regime in REGIMES.items():
        for pname, rules in policies().items():
            runs = [run_stream(rules, regime, candidates=candidates, n=n, seed=k) for k in range(streams)]
            s = summarise(runs)
            per = "-"
            if s.merges:
                per = " / ".join(
                    f"{100 * x / s.merges:+.1f}"
                    for x in (s.merged_observed, s.merged_corrected, s.merged_gain)
                )
            print(
                f"| {rname} | {pname} | {s.merges} | {s.false_share:.3f} ({s.false_merges}) | {s.fails} | "
                f"{s.inconclusive} | {100 * s.merged_gain:+.1f} | {per} |"
            )
            calibration[rname] = s.deciles
    print("\n(b) stated chance better vs share truly better, per decile (cells with >= 30 verdicts)\n")
    print("| regime | " + " | ".join(f"{10 * d}-{10 * d + 10}%" for d in range(10)) + " |")
    print("|---|" + "---|" * 10)
    for rname, deciles in calibration.items():
        cells = []
        for stated, truth in deciles:
            if len(stated) < 30:
                cells.append("-")
            else:
                cells.append(f"{100 * statistics.fmean(stated):.0f} / {100 * sum(truth) / len(truth):.0f}")
        print(f"| {rname} | " + " | ".join(cells) + " |")


def table_c(runs: int, pool: int, batch: int) -> None:
    print(
        f"\n(c) sequential stopping on a pool of {pool}, batches of {batch}, both levels 0.05 ({runs} runs)\n"
    )
    print(
        "| true gain | sequential: mean rollouts | pass / fail / inconclusive "
        "| fixed n (z-test): rollouts | pass / fail / inconclusive | saved |"
    )
    print("|---|---|---|---|---|---|")
    rng = random.Random(2026)
    for gain in (-0.1, -0.05, 0.0, 0.05, 0.1):
        seq_read, seq, fixed = (
            [],
            {"pass": 0, "fail": 0, "inconclusive": 0},
            {"pass": 0, "fail": 0, "inconclusive": 0},
        )
        for _ in range(runs):
            diffs = scores(rng, pool, gain).differences
            verdict, read = stopping_point(diffs, 0.0, pass_level=0.05, fail_level=0.05, batch=batch)
            seq[verdict] += 1
            seq_read.append(read)
            # fixed n: the same e-values, looked at once, after the whole pool
            fixed[_fixed_n(diffs)] += 1
        mean_read = statistics.fmean(seq_read)
        print(
            f"| {100 * gain:+.0f} points | {mean_read:.0f} | {_counts(seq)} | {pool} | {_counts(fixed)} "
            f"| {100 * (1 - mean_read / pool):.0f}% |"
        )


CALIBRATION_METHODS = {  # name -> (prior algorithm, pseudo-looks, Student-t likelihood)
    "before: algorithm 2": (2, 0, False),
    "algorithm 3 without its t likelihood": (3, 0, False),
    "after: algorithm 3": (3, 0, True),
}


def table_d(runs: int, looks: int, shapes: tuple[str, ...], groups: tuple[str, ...]) -> None:
    """Calibration per decile, before and after, per group of regimes and shape."""
    print(f"\n(d) calibration: {runs} runs of {looks} looks per regime, 36 instances a look\n")
    for shape in shapes:
        for group in groups:
            regimes = calib_sim.REGIMES[group]
            drawn = {
                name: [calib_sim.draw_run(regime, shape, looks, seed=1000 * k + 7) for k in range(runs)]
                for name, regime in regimes.items()
            }
            print(f"{shape} scores, {group} regimes ({', '.join(regimes)}):\n")
            print(
                "| method | "
                + " | ".join(f"{10 * d}-{10 * d + 10}%" for d in range(10))
                + " | deciles within 5 |"
            )
            print("|---|" + "---|" * 11)
            per_regime = []
            false_merges = []
            for method, (algorithm, pseudo, student) in CALIBRATION_METHODS.items():
                said = {
                    name: [pair for run in rs for pair in calib_sim.stated(run, algorithm, pseudo, student)]
                    for name, rs in drawn.items()
                }
                pooled = [pair for pairs in said.values() for pair in pairs]
                cells, met, total = _deciles(pooled)
                print(f"| {method} | " + " | ".join(cells) + f" | {met} of {total} |")
                false_merges.append(f"| {method} | {_pooled_passes(said)} | {_top_by_look(said, looks)} |")
                per_regime += [(name, method, pairs) for name, pairs in said.items()]
            print(
                "\npasses pooled (q = 0.1: n, false merges / merges | q = 0.3: the same), and the top"
                " decile (stated >= 90%) split by the look's place in its run (n, stated, truly better):\n"
            )
            print(
                "| method | q = 0.1 | q = 0.3 | top decile, looks 1-5 | top decile, looks 6-40 |\n"
                "|---|---|---|---|---|\n" + "\n".join(false_merges)
            )
            print(
                "\n| regime | method | deciles within 5 | worst decile (stated / true) "
                "| q = 0.1 passes: n, stated, truly better | q = 0.3 passes: n, stated, truly better |"
            )
            print("|---|---|---|---|---|---|")
            for name, method, pairs in per_regime:
                _, met, total = _deciles(pairs)
                print(
                    f"| {name} | {_short(method)} | {met} of {total} | {_worst(pairs)} "
                    f"| {_passes(pairs, 0.9)} | {_passes(pairs, 0.7)} |"
                )
            print()


def _short(method: str) -> str:
    algorithm, pseudo, student = CALIBRATION_METHODS[method]
    if algorithm == 1:
        return f"algorithm 1 ({pseudo} pseudo-looks)"
    return f"algorithm {algorithm}" + (" without t" if algorithm == 3 and not student else "")


def _bins(pairs: list[tuple[float, bool]]) -> list[list[tuple[float, bool]]]:
    bins: list[list[tuple[float, bool]]] = [[] for _ in range(10)]
    for chance, better in pairs:
        bins[min(9, int(chance * 10))].append((chance, better))
    return bins


def _deciles(pairs: list[tuple[float, bool]], least: int = 30) -> tuple[list[str], int, int]:
    """Cells "stated / true (count)" per decile (with >= ``least`` looks; a * marks one
    more than 5 points off), and how many deciles with data are within 5 points."""
    cells, met, total = [], 0, 0
    for found in _bins(pairs):
        if len(found) < least:
            cells.append("-")
            continue
        stated = statistics.fmean(c for c, _ in found)
        true = statistics.fmean(float(b) for _, b in found)
        total += 1
        met += abs(stated - true) <= 0.05
        mark = "" if abs(stated - true) <= 0.05 else "*"
        cells.append(f"{100 * stated:.0f} / {100 * true:.0f}{mark} ({len(found)})")
    return cells, met, total


def _worst(pairs: list[tuple[float, bool]], least: int = 30) -> str:
    gaps = []
    for found in _bins(pairs):
        if len(found) >= least:
            stated = statistics.fmean(c for c, _ in found)
            true = statistics.fmean(float(b) for _, b in found)
            gaps.append((abs(stated - true), f"{100 * stated:.0f} / {100 * true:.0f}"))
    return max(gaps)[1] if gaps else "-"


def _passes(pairs: list[tuple[float, bool]], level: float) -> str:
    chosen = [(c, b) for c, b in pairs if c >= level]
    if not chosen:
        return "0"
    stated = statistics.fmean(c for c, _ in chosen)
    true = statistics.fmean(float(b) for _, b in chosen)
    return f"{len(chosen)}, {100 * stated:.0f}%, {100 * true:.0f}%"


def _top_by_look(said: dict[str, list[tuple[float, bool]]], looks: int) -> str:
    """The top decile split by the look's place in its run: the first five (algorithm
    2 read them under the default prior) and the rest. `calib_sim.stated` lists a run's
    looks in order, runs one after another."""
    early = [pair for pairs in said.values() for k, pair in enumerate(pairs) if k % looks < 5]
    late = [pair for pairs in said.values() for k, pair in enumerate(pairs) if k % looks >= 5]
    return f"{_passes(early, 0.9)} | {_passes(late, 0.9)}"


def _pooled_passes(said: dict[str, list[tuple[float, bool]]]) -> str:
    """The pooled passes at q = 0.1 and 0.3: n, share not really better."""
    pooled = [pair for pairs in said.values() for pair in pairs]
    cells = []
    for level in (0.9, 0.7):
        chosen = [b for c, b in pooled if c >= level]
        false = 1 - statistics.fmean(float(b) for b in chosen) if chosen else 0.0
        cells.append(f"{len(chosen)}, {false:.3f}")
    return " | ".join(cells)


def _counts(verdicts: dict[str, int]) -> str:
    return f"{verdicts['pass']} / {verdicts['fail']} / {verdicts['inconclusive']}"


def _fixed_n(diffs: list[float]) -> str:
    """A classical one-sided test each way at level 0.05 after the whole pool (normal
    approximation): the fixed-n design at the same error rate."""
    mean = statistics.fmean(diffs)
    se = statistics.stdev(diffs) / len(diffs) ** 0.5
    z = NormalDist().inv_cdf(0.95)
    if se > 0 and mean / se > z:
        return "pass"
    if se > 0 and mean / se < -z:
        return "fail"
    return "inconclusive"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--n", type=int, help="only (a) and (b): this many selection instances")
    parser.add_argument("--calibration", action="store_true", help="only (d): calibration before and after")
    parser.add_argument("--decisions", action="store_true", help="only (e): bayes, prior algorithm 2 and 3")
    parser.add_argument("--runs", type=int, default=25, help="(d): runs per regime")
    parser.add_argument("--shape", choices=sorted(calib_sim.SHAPES), help="(d): only this shape of scores")
    parser.add_argument("--groups", default=",".join(calib_sim.REGIMES), help="(d): groups of regimes")
    args = parser.parse_args()
    start = time.perf_counter()
    if args.calibration:
        shapes = ("binary",) if args.quick else ("binary", "judge")
        shapes = (args.shape,) if args.shape else shapes
        groups = tuple(args.groups.split(","))
        table_d(runs=3 if args.quick else args.runs, looks=40, shapes=shapes, groups=groups)
    elif args.decisions:
        table_e(streams=25, candidates=40, n=36)
    elif args.n:
        table_a(streams=10, candidates=20, n=args.n)
    elif args.quick:
        table_a(streams=3, candidates=20, n=36)
        table_c(runs=50, pool=300, batch=10)
    else:
        table_a(streams=25, candidates=40, n=36)
        table_c(runs=400, pool=300, batch=10)
    print(f"\n{time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
