"""The evaluator's files, which its fingerprint hashes (docs/evaluator.md, "Fingerprint")."""

from __future__ import annotations

from pathlib import Path

from harnessgit.config import parse_config
from harnessgit.evaluation.fingerprint import evaluator_files, evaluator_fingerprint
from harnessgit.gate.changes import classify
from harnessgit.objects import TreeEntry
from harnessgit.store import Store
from tests.conftest import git, write
from tests.review.review_fixtures import edit_skills, skills_collection

HARNESS = '[harness]\npaths = ["skills/*/SKILL.md"]\n'
SHAS = {"skills/a/SKILL.md": "1" * 40, "skills/a/prompt.md": "2" * 40, "eval.py": "3" * 40}
FILES = {path: TreeEntry("100644", path.rpartition("/")[2], sha) for path, sha in SHAS.items()}


def test_no_evaluator_has_no_files() -> None:
    """Issue 20: with no command, everything outside the harness (a skill's prompts,
    the README) was counted as the evaluator's, and editing it was a regrade."""
    config = parse_config(HARNESS.encode())
    assert evaluator_files(FILES, config) == {}
    edited = {**FILES, "skills/a/prompt.md": TreeEntry("100644", "prompt.md", "4" * 40)}
    assert evaluator_fingerprint(edited, config) == evaluator_fingerprint(FILES, config)


def test_a_command_naming_no_file_still_takes_everything_outside_the_harness() -> None:
    config = parse_config((HARNESS + '[evaluator]\ncommand = ["make", "eval"]\n').encode())
    assert set(evaluator_files(FILES, config)) == {"skills/a/prompt.md", "eval.py"}
    with_files = parse_config((HARNESS + '[evaluator]\nfiles = ["eval.py"]\n').encode())
    assert set(evaluator_files(FILES, with_files)) == {"eval.py"}


def test_without_an_evaluator_a_prompt_beside_a_skill_is_no_regrade(tmp_path: Path) -> None:
    """`verify` asks a recorded override for a regrade: editing a prompt beside SKILL.md
    in a repository with no evaluator is infrastructure, listed as beside the harness."""
    repo = skills_collection(tmp_path / "skills", HARNESS + 'base = "main"\n')
    write(repo, "splits.json", '{"train": [], "selection": [], "test": []}\n')
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Splits")
    head = edit_skills(repo)
    with Store.discover(repo) as store:
        change = classify(store, head)
    prompt = "skills/subagent-driven-development/review-prompt.md"
    assert change.harness == ["skills/subagent-driven-development/SKILL.md"]
    assert change.evaluator == [] and change.kinds == ["harness"]
    assert change.other == ["README.md", prompt] and change.beside == [prompt]
