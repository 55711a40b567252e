"""Real harness files from public repositories that drew false alarms (issue 14).

tests/checks/corpus/ holds healthy files copied from public skill and prompt
repositories (their README names source, commit and licence). The precision benchmark
(tests/bench/bench_check_precision.py) judged a finding on each of them false. Each
folder is checked as a repository of its own with `harnessgit check --all`, as a team
adopting harnessgit would run it. A case a change gets wrong again fails here; a new
false alarm found by the benchmark and not fixed yet goes in as a strict xfail.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harnessgit.checkconfig.sections import ChecksSection
from harnessgit.checks import FileVersion, check_files
from tests.cli.runner import run
from tests.conftest import git, write

CORPUS = Path(__file__).with_name("corpus")

# Every harness file of the corpus: `--all` must report no failure on it.
HEALTHY = [
    "github-awesome-copilot/instructions/dotnet-upgrade.instructions.md",  # a fence closed in a list item
    "github-awesome-copilot/skills/csharp-docs/SKILL.md",
    "obra-superpowers/skills/using-git-worktrees/SKILL.md",
    "wshobson-agents/plugins/cloud-infrastructure/skills/multi-cloud-architecture/SKILL.md",
    "wshobson-agents/plugins/startup-business-analyst/commands/financial-projections.md",
    "wshobson-agents/plugins/tdd-workflows/commands/tdd-cycle.md",
    "K-Dense-AI-claude-scientific-skills/scientific-skills/paper-lookup/SKILL.md",
    "danielmiessler-fabric/data/patterns/analyze_claims/system.md",
]

# Files whose every duplication warning was judged false (the README says why).
NOT_DUPLICATED = [
    "obra-superpowers/skills/using-git-worktrees/SKILL.md",  # table rows
    "wshobson-agents/plugins/cloud-infrastructure/skills/multi-cloud-architecture/SKILL.md",
    "wshobson-agents/plugins/startup-business-analyst/commands/financial-projections.md",
    "wshobson-agents/plugins/tdd-workflows/commands/tdd-cycle.md",
    "K-Dense-AI-claude-scientific-skills/scientific-skills/paper-lookup/SKILL.md",
    "github-awesome-copilot/skills/csharp-docs/SKILL.md",  # per-tag documentation
    "danielmiessler-fabric/data/patterns/analyze_claims/system.md",  # true vs false claims
]

Reports = dict[str, dict[str, Any]]


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> Reports:
    """`harnessgit check --all --json` on each corpus folder, checked as a repository of
    its own (once per module: five repositories). The function-scoped hermetic seal
    does not reach a module fixture, so the same settings are made here."""
    out: Reports = {}
    with pytest.MonkeyPatch.context() as env:
        env.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        env.setenv("GIT_CONFIG_NOSYSTEM", "1")
        env.delenv("GIT_CONFIG_GLOBAL", raising=False)
        for who in ("AUTHOR", "COMMITTER"):
            env.setenv(f"GIT_{who}_NAME", "Test Author")
            env.setenv(f"GIT_{who}_EMAIL", "test@example.com")
        for folder in sorted(path for path in CORPUS.iterdir() if path.is_dir()):
            repo = tmp_path_factory.mktemp(folder.name) / "repo"
            shutil.copytree(folder, repo)
            git(repo, "init", "-q", "-b", "main")
            git(repo, "add", "-A")
            git(repo, "commit", "-qm", "corpus")
            result = run(repo, "check", "--all", "--json")
            assert result.exit_code in (0, 1), result.output
            out[folder.name] = json.loads(result.stdout)
    return out


def findings_for(corpus_path: str, reports: Reports) -> list[dict[str, Any]]:
    """The findings on one corpus file (FOLDER/PATH)."""
    folder, path = corpus_path.split("/", 1)
    report = reports[folder]
    assert path in {file["path"] for file in report["files"]}, f"{path} is not a harness file of its folder"
    return [finding for finding in report["findings"] if finding["path"] == path]


@pytest.mark.parametrize("corpus_path", HEALTHY)
def test_a_healthy_real_file_has_no_failure(corpus_path: str, reports: Reports) -> None:
    failures = [f for f in findings_for(corpus_path, reports) if f["level"] == "failure"]
    assert failures == []


@pytest.mark.parametrize("corpus_path", NOT_DUPLICATED)
def test_structure_is_not_reported_as_duplication(corpus_path: str, reports: Reports) -> None:
    repeats = [f["message"] for f in findings_for(corpus_path, reports) if f["rule"] == "duplication"]
    assert repeats == []


def test_a_rewrite_that_keeps_two_thirds_of_the_characters_is_not_collapse() -> None:
    history = CORPUS / "danielmiessler-fabric" / "history"
    before = (history / "analyze_paper.before.md").read_text()
    after = (history / "analyze_paper.after.md").read_text()
    assert len(after) / len(before) > 0.66  # 7,244 -> 4,806 characters
    version = FileVersion.from_text("data/patterns/analyze_paper/system.md", before, after)
    report = check_files([version], ChecksSection(), rules={"collapse"})
    assert report.findings == []


def test_detail_moved_to_references_in_the_same_commit_is_not_collapse(
    make_repo: Callable[..., Path],
) -> None:
    """wshobson/agents be57c0b2e3 moved the detail of 70 long skills into
    references/details.md (the length rule's own hint): 85 of the 95 false collapse
    failures of the benchmark's baseline. Nothing was lost."""
    history = CORPUS / "wshobson-agents" / "history" / "wcag-audit-patterns"
    skill = "skills/wcag-audit-patterns/SKILL.md"
    repo = make_repo({skill: (history / "SKILL.before.md").read_text()})
    write(repo, skill, (history / "SKILL.after.md").read_text())
    write(
        repo,
        "skills/wcag-audit-patterns/references/details.md",
        (history / "references-details.md").read_text(),
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "progressive disclosure: move the detail to references/")
    result = run(repo, "check", "--rev", "HEAD", "--rule", "collapse", "--json")
    assert json.loads(result.stdout)["findings"] == []
