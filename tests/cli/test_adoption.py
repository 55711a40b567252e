"""Adopting harnessgit in one step (issue 20): `init` on a repository laid out like a
public skills collection, checks on a skill's other files, and what the commands that
need an evaluator say when there is none."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.config import load_config
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot, write
from tests.harness_text import prompt

SKILL = """---
name: {name}
description: Use when {name} is asked for; it says how.
---

# {name}

Dispatch the reviewer with ./re-review-prompt.md and read references/api.md first.
"""

# Laid out like obra/superpowers: skill folders with the prompts and references their
# SKILL.md loads, agent instruction files, docs and tests that are not harness text.
COLLECTION: dict[str, str | bytes] = {
    "README.md": "# A skills collection\n",
    "AGENTS.md": "Read the skill before you act.\n",
    "skills/review/SKILL.md": SKILL.format(name="review"),
    "skills/review/re-review-prompt.md": prompt(4, seed=1),
    "skills/review/references/api.md": prompt(5, seed=2),
    "skills/review/scripts/check.py": "# ---\nprint('ok')\n# ---\nprint('ok')\n",
    "skills/review/assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00binary",
    "skills/plan/SKILL.md": SKILL.format(name="plan"),
    "docs/guide.md": "How to use the collection.\n",
    "tests/prompts/ask.txt": "Please plan my week.\n",
}


@pytest.fixture
def collection(make_repo: Callable[..., Path]) -> Path:
    repo = make_repo(COLLECTION, config=None)
    for path in ("SKILL.md", "prompts/system.md", "eval.py"):  # make_repo's own files
        git(repo, "rm", "-q", path)
    git(repo, "commit", "-q", "-m", "Only the collection")
    return repo


def test_init_finds_the_skill_folders_and_lists_what_it_wrote(collection: Path) -> None:
    result = run(collection, "init")
    assert result.exit_code == 0, result.output
    # Prose only (issue 27): the skill's script and its image are not harness text.
    assert (
        "found skills (2 folders holding a SKILL.md): 4 files -> skills/*/**/*.md, **/SKILL.md"
        in result.output
    )
    assert "found agent instruction files: 1 file -> **/AGENTS.md" in result.output
    assert "Scores, the gate and bisect need an evaluator: docs/evaluator.md" in result.output
    config = load_config(collection)
    assert config.harness.paths == ["skills/*/**/*.md", "**/SKILL.md", "**/AGENTS.md"]
    assert config.evaluator.command is None


def test_init_with_globs_given_detects_nothing(collection: Path) -> None:
    result = run(collection, "init", "--harness", "skills/**/SKILL.md")
    assert result.exit_code == 0 and "found" not in result.output
    assert load_config(collection).harness.paths == ["skills/**/SKILL.md"]


def test_init_on_a_repository_with_no_known_layout_warns_and_writes_the_defaults(
    make_repo: Callable[..., Path],
) -> None:
    repo = make_repo({"src/app.py": "print(1)\n"}, config=None)
    for path in ("SKILL.md", "prompts/system.md"):
        git(repo, "rm", "-q", path)
    git(repo, "commit", "-q", "-m", "No harness yet")
    result = run(repo, "init")
    assert result.exit_code == 0
    assert "found no skill folders" in result.stderr
    assert "**/skills/*/**" in load_config(repo).harness.paths


def test_a_skills_prompt_is_checked_and_its_scripts_and_assets_are_not(collection: Path) -> None:
    run(collection, "init")
    git(collection, "add", "harnessgit.toml")
    git(collection, "commit", "-q", "-m", "Set up harnessgit")
    # The prompt the skill loads doubles: detail moved out of SKILL.md is the point of
    # such files, so growth warns; a folder no skill claims would fail at 2x.
    write(collection, "skills/review/re-review-prompt.md", prompt(9, seed=3))
    write(collection, "skills/review/scripts/check.py", "# ---\nprint('ok')\n" * 40)
    write(collection, "skills/review/assets/logo.png", b"\x89PNG\x00" * 300)
    result = run(collection, "check", "--format", "json")
    report = json.loads(result.output)
    kinds = {f["path"]: f["kind"] for f in report["files"]}
    assert kinds["skills/review/re-review-prompt.md"] == "skill-resource"
    findings = [(f["path"], f["rule"], f["level"]) for f in report["findings"]]
    assert findings == [("skills/review/re-review-prompt.md", "growth", "warning")]
    assert result.exit_code == 0


def test_a_file_no_kind_claims_outside_a_skill_still_fails_growth(make_repo: Callable[..., Path]) -> None:
    config = '[harness]\npaths = ["notes/**", "**/SKILL.md"]\n'
    repo = make_repo({"notes/guide.md": prompt(4, seed=2)}, config=config)
    git(repo, "rm", "-q", "SKILL.md")  # a SKILL.md at the root would make the repository one skill
    git(repo, "commit", "-q", "-m", "No skill")
    write(repo, "notes/guide.md", prompt(9, seed=4))
    result = run(repo, "check", "--format", "json")
    assert result.exit_code == 1, result.output
    assert '"kind": "other"' in result.output and '"rule": "growth"' in result.output


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["eval", "HEAD"], "`harnessgit eval` (and `test`)"),
        (["test", "HEAD"], "`harnessgit eval` (and `test`)"),
        (["gate", "CANDIDATE"], "`harnessgit gate`"),
        (["merge", "CANDIDATE"], "`harnessgit merge`"),
        (["bisect", "--good", "HEAD~1"], "`harnessgit bisect`"),
        (["scores", "HEAD"], "`harnessgit scores`"),
        (["frontier"], "`harnessgit frontier`"),
        (["evolve", "--max-proposals", "1"], "`harnessgit evolve`"),
    ],
)
def test_commands_that_need_an_evaluator_say_so_and_change_nothing(
    collection: Path, args: list[str], command: str
) -> None:
    run(collection, "init")
    git(collection, "add", "harnessgit.toml")
    git(collection, "commit", "-q", "-m", "Set up harnessgit")
    write(collection, "skills/plan/SKILL.md", SKILL.format(name="plan") + "\nPlan in small steps.\n")
    if "CANDIDATE" in args:
        proposed = run(collection, "propose", "-m", "Plan in small steps", "--json")
        assert proposed.exit_code == 0, proposed.output
        candidate = json.loads(proposed.output)["candidate"]
        args = [candidate if arg == "CANDIDATE" else arg for arg in args]
    before = snapshot(collection)
    line = one_error_line(run(collection, *args))
    assert line.startswith(f"harnessgit: error: {command}") and "needs an evaluator" in line
    assert "docs/evaluator.md" in line
    assert snapshot(collection) == before


def test_status_at_level_two_says_there_is_no_evaluator(collection: Path) -> None:
    run(collection, "init")
    result = run(collection, "status")
    assert result.exit_code == 0
    first, second = result.output.splitlines()[:2]
    assert first.endswith(
        "no selection numbers: no evaluator is configured ([evaluator] command in "
        "harnessgit.toml; docs/evaluator.md)"
    )
    assert not second.startswith("  evaluator ")
