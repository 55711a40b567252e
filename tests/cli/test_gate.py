"""The gate's commands from the command line: gate, merge, verify and their exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.store import Store
from tests.conftest import snapshot
from tests.gating_fixtures import skill


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_cli_exit_codes(gate_repo: Path) -> None:
    from click.testing import CliRunner

    from harnessgit.cli import cli
    from harnessgit.cli._base import State

    def run(*args: str) -> tuple[int, str, str]:
        result = CliRunner(catch_exceptions=False).invoke(cli, ["-C", str(gate_repo), *args], obj=State())
        return result.exit_code, result.stdout, result.stderr

    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        good = propose(store, config, {"SKILL.md": skill(30)}).candidate
        noop = propose(store, config, {"SKILL.md": skill(10, "# cosmetic")}).candidate
        worse = propose(store, config, {"SKILL.md": skill(0)}).candidate
        small = propose(store, config, {"SKILL.md": skill(10, "fix s-30")}).candidate
    # +2.5 points on 40 instances: too little to tell. Gated first, under the default prior:
    # once gate records exist, bayes' prior is learned from them (prior algorithm 3), and
    # after the harmful edit below it would (rightly) doubt a small gain.
    code, out, _ = run("gate", small, "--json")
    record = json.loads(out)
    assert code == 4 and record["verdict"] == "inconclusive" and record["needed"] > 40
    assert record["prior_looks"] == 0 and 0.5 < record["chance_better"] < 1 and record["expected_loss"] < 0.01
    # Three verdicts, three exit codes (docs/gate.md): an edit that changes nothing is
    # not evidence of harm, so it is inconclusive (4), not a fail.
    code, out, _ = run("gate", noop)
    assert code == 4 and out.startswith("gate: INCONCLUSIVE") and "what would decide:" in out
    code, out, _ = run("gate", worse)
    assert (
        code == 1 and out.startswith("gate: FAIL") and "the 95% upper bound of the difference, -13.3" in out
    )
    chance = out.split("chance the edit is better than main: ")[1].split("%")[0]
    assert chance in ("under 1", "1", "2") and "expected loss if merged anyway: " in out
    code, out, _ = run("gate", good, "--json")
    assert code == 0 and '"verdict": "pass"' in out
    assert isinstance(json.loads(out)["check_findings"], list)
    before = snapshot(gate_repo)
    code, _, _ = run("merge", "no-such-candidate")
    assert code == 3 and snapshot(gate_repo) == before
    code, out, _ = run("merge", good)
    assert code == 0 and "merged into main" in out
    code, out, _ = run("verify")
    assert code == 0 and "verify: OK" in out
    code, out, _ = run("label", "production", "main", "--reason", "ship")
    assert code == 0
    code, out, _ = run("label", "--list")
    assert "production" in out and "ship" in out
    code, out, _ = run("log")
    assert good in out


def test_a_bad_policy_setting_is_one_line_and_writes_nothing(gate_repo: Path) -> None:
    """Issue 25: an unknown policy, or q outside (0, 1), names the setting, exits 3 and
    leaves the repository as it was."""
    from click.testing import CliRunner

    from harnessgit.cli import cli
    from harnessgit.cli._base import State

    with Store.discover(gate_repo) as store:
        good = propose(store, load_config(gate_repo), {"SKILL.md": skill(30)}).candidate
    toml = gate_repo / "harnessgit.toml"
    original = toml.read_text()
    for setting, message in (
        ('policy = "fdr"', "gate.policy: must be one of 'strict', 'bayes', 'elond', not 'fdr'"),
        ("q = 1.0", "gate.q: must be less than 1, not 1.0"),
        ("q = 0", "gate.q: must be greater than 0, not 0"),
    ):
        toml.write_text(original + f"\n[gate]\n{setting}\n")
        before = snapshot(gate_repo)
        result = CliRunner().invoke(cli, ["-C", str(gate_repo), "gate", good], obj=State())
        assert result.exit_code == 3 and message in result.stderr
        assert len(result.stderr.strip().splitlines()) == 1 and snapshot(gate_repo) == before
