"""What the read commands import (issue 17, item 3).

`show`, `scores`, `status` and `log` print what is stored; at 20,000 candidates their
time is mostly Python starting and importing. These tests guard what a command loads,
not how long it takes (a time would depend on the machine): each runs in a fresh
interpreter, which then lists its modules.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.store import Store
from tests.conftest import write
from tests.gating_fixtures import skill

# Loaded by what evaluates, checks or gates; a command that prints stored scores needs
# none of them: numpy is the bootstrap's, markdown_it the checks', git is GitPython (no longer a dependency).
NOT_FOR_READING = (
    "numpy",
    "markdown_it",
    "git",
    "harnessgit.checks",
    "harnessgit.evaluation.eval",
    "harnessgit.gate",
    "harnessgit.stats.bootstrap",
    "harnessgit.proposers",
    "harnessgit.evolve",
)
LIST_MODULES = """
import json, sys
from harnessgit.cli import main
code = main(sys.argv[1:])
print(json.dumps({"code": code, "modules": sorted(sys.modules)}))
"""


def loaded(repo: Path, *args: str) -> set[str]:
    """The modules a fresh interpreter holds after ``harnessgit -C repo ARGS...``."""
    argv = [sys.executable, "-c", LIST_MODULES, "-C", str(repo), *args]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["code"] == 0, out
    return set(result["modules"])


def under(modules: set[str], packages: tuple[str, ...]) -> list[str]:
    return sorted(m for m in modules if any(m == p or m.startswith(p + ".") for p in packages))


@pytest.fixture
def scored(gate_repo: Path) -> tuple[Path, str]:
    """A candidate proposed on main, both evaluated on the selection split."""
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        write(gate_repo, "SKILL.md", skill(20))
        cand = propose(store, config).candidate
        for rev in ("main", cand):
            evaluate(store, config, rev)
    return gate_repo, cand


@pytest.mark.slow  # four fresh interpreters: about 2 s idle, 9 s on a loaded 2-core machine
def test_reading_stored_scores_loads_no_evaluator_checks_or_statistics(scored: tuple[Path, str]) -> None:
    repo, cand = scored
    # status computes the frontier of its live candidates: in plain Python for a pool
    # this small (stats.frontier.SMALL_POOL), numpy only for pools of thousands.
    for args in (["show", cand], ["scores", cand], ["log"], ["status"]):
        assert under(loaded(repo, *args), NOT_FOR_READING) == [], args


@pytest.mark.slow
def test_gate_loads_what_it_decides_with_and_not_merge_or_verify(scored: tuple[Path, str]) -> None:
    """The gate runs the bootstrap (numpy: its work) and reads back the checks' verdict its
    proposal kept; with every score on record it loads no rule, no evaluator and no
    process code (issue 26), and its text comes without merge, verify and the frontier."""
    repo, cand = scored
    modules = loaded(repo, "gate", cand)
    assert {"numpy", "harnessgit.check_findings", "harnessgit.stats.bootstrap"} <= modules
    unused = ("git", "harnessgit.gate.merge", "harnessgit.gate.verify", "harnessgit.evolve")
    unused += ("harnessgit.checks", "harnessgit.evaluation.eval", "harnessgit.evaluation.batches")
    unused += ("harnessgit.evaluation.evaluators", "harnessgit.processes.pipes")
    assert under(modules, unused) == []


# What the pre-commit hook needs none of (issue 26, item 7): the store's write machinery
# (journal, recovery, locks, staging, notes, scratch worktrees: harnessgit.readstore
# reads), the configuration beyond [harness] and [checks] (harnessgit.checkconfig), the
# records, the proposers and the evaluators.
NOT_FOR_THE_HOOK = (
    "harnessgit.store",
    "harnessgit.config",
    "harnessgit.records",
    "harnessgit.processes.scratch",
    "harnessgit.proposers",
    "harnessgit.evaluation",
    "yaml",
    "numpy",
    "hashlib",  # loads OpenSSL's libcrypto: only what writes or fingerprints objects hashes
    "harnessgit.checks.trailers",  # commit messages: read with --rev or a message file only
    "harnessgit.checkconfig.detect",  # what `init` finds; the hook reads two names (checkconfig.folders)
)
# The dataclasses the hook may create (issue 26, item 7): each compiles its generated
# methods when its module is imported, 2.5-4 M instructions a class, so the records the
# hook builds are NamedTuples. These stay dataclasses: the configuration's sections (the
# reader reads their fields' metadata), the report and its parts (`--json` renders their
# fields), the tokenizers (a `count` method, which a tuple has), the history's file
# stats (`show --json` renders them), the collector's mutable gathering and the CLI's state.
HOOK_DATACLASSES = {
    "harnessgit.checkconfig.CheckConfig",
    "harnessgit.checkconfig.sections.HarnessSection",
    "harnessgit.checkconfig.sections.KindChecks",
    "harnessgit.checkconfig.sections.SeverityOverrides",
    "harnessgit.checkconfig.sections.CheckOverride",
    "harnessgit.checkconfig.sections.ChecksSection",
    "harnessgit.check_findings.Content",
    "harnessgit.check_findings.FileVersion",
    "harnessgit.check_findings.Finding",
    "harnessgit.check_findings.FileSummary",
    "harnessgit.check_findings.Unread",
    "harnessgit.check_findings.CheckReport",
    "harnessgit.checks.tokens.Estimate",
    "harnessgit.checks.tokens.Tiktoken",
    "harnessgit.readstore.history.FileStat",
    "harnessgit.checks.collect.Collected",
    "harnessgit.cli._base.State",
}
LIST_DATACLASSES = """
import dataclasses, json, sys
from harnessgit.cli import main
code = main(sys.argv[1:])
found = [
    f"{name}.{cls.__qualname__}"
    for name, module in sorted(sys.modules.items())
    if name.startswith("harnessgit")
    for cls in vars(module).values()
    if isinstance(cls, type) and cls.__module__ == name and dataclasses.is_dataclass(cls)
]
print(json.dumps({"code": code, "dataclasses": found}))
"""


def test_check_one_file_reads_without_the_store_or_the_whole_configuration(repo: Path) -> None:
    write(repo, "SKILL.md", skill(20) + "- One more step.\n")
    modules = loaded(repo, "check", "SKILL.md")
    assert {"harnessgit.readstore", "harnessgit.checkconfig", "harnessgit.checks.core"} <= modules
    assert under(modules, NOT_FOR_THE_HOOK) == []


def test_check_one_file_creates_only_the_dataclasses_it_must(repo: Path) -> None:
    write(repo, "SKILL.md", skill(20) + "- One more step.\n")
    argv = [sys.executable, "-c", LIST_DATACLASSES, "-C", str(repo), "check", "SKILL.md"]
    out = subprocess.run(argv, capture_output=True, text=True, check=True).stdout
    result = json.loads(out.splitlines()[-1])
    assert result["code"] == 0, out
    assert set(result["dataclasses"]) <= HOOK_DATACLASSES
    assert "harnessgit.check_findings.Finding" in result["dataclasses"]  # the listing sees them
