"""The policies' promises on simulated streams of candidates (tests/bench/policy_sim.py;
the full figures: tests/bench/bench_policies.py and docs/benchmarks.md)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from tests.bench.policy_sim import REGIMES, policies, run_stream, summarise


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_elond_keeps_false_merges_among_merges_under_q() -> None:
    """e-LOND's promise, on 150 instances (where it merges): across both regimes the
    share of merges that are not really better stays under q = 0.1."""
    rules = replace(policies(resamples=200)["elond"], q=0.1)
    streams = [
        run_stream(rules, regime, candidates=15, n=150, seed=seed)
        for regime in REGIMES.values()
        for seed in range(6)
    ]
    summary = summarise(streams)
    assert summary.merges >= 5  # it does merge: the promise is not kept by never merging
    assert summary.false_share <= 0.1


def test_strict_never_merges_a_stream_of_null_edits() -> None:
    rules = policies(resamples=200)["strict"]
    streams = [run_stream(rules, lambda rng: 0.0, candidates=20, n=36, seed=seed) for seed in range(5)]
    assert summarise(streams).merges == 0
