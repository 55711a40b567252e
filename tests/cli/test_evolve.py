from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import run
from tests.evolve.evolve_fixtures import triage

__all__ = ["triage"]  # a fixture, used by name


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_evolve_cli_needs_a_budget_and_prints_one_line_per_iteration(triage: Path) -> None:
    assert run(triage, "evolve").exit_code == 2
    result = run(triage, "evolve", "--max-proposals", "2", "--seed", "3", "--json")
    assert result.exit_code == 0, result.output
    # stdout is the JSON alone (a program parses it whole); the lines went to stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("evolve ")]
    report = json.loads(result.stdout)
    assert len(lines) == len(report["iterations"]) and report["proposals"] == 2
    assert list(report) == [
        "run",
        "seed",
        "stopped",
        "rollouts",
        "proposals",
        "cost_usd",
        "merged",
        "iterations",
    ]
    assert {r["kind"] for r in report["iterations"]} == {"evolve-iteration"}
    assert all(r["run"] == report["run"] and r["seed"] == 3 for r in report["iterations"])


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_evolve_cli_prints_the_report_as_text(triage: Path) -> None:
    result = run(triage, "evolve", "--max-proposals", "1", "--seed", "3")
    assert result.exit_code == 0, result.output
    *progress, head, spent, stopped = result.stdout.strip().splitlines()
    assert all(line.startswith("evolve ") for line in progress) and progress
    assert head.startswith("evolve run ") and "(seed 3)" in head
    assert spent.startswith("  spent ") and "1 proposals" in spent
    assert stopped == "  stopped: max proposals (1)"
