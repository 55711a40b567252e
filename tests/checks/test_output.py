"""Where and how (issue 14): `path:line:` lines, GitHub annotations, named skips, and a
missing named file that is a finding while the other files are still checked."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pytest

from harnessgit.check_findings import Finding
from harnessgit.checks.render import annotation
from tests.cli.runner import run
from tests.conftest import git, write

FRONT = "---\nname: demo\ndescription: A demo skill.\n---\n"
LONG = FRONT + "".join(f"{i}. Step {i} of the long procedure.\n" for i in range(600))


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo()


def test_text_lines_start_with_path_and_line(repo: Path) -> None:
    write(repo, "skills/demo/SKILL.md", LONG)
    result = run(repo, "check")
    assert result.exit_code == 1
    # Body line 501 (the first over the limit) is line 505 of the file.
    assert "\nskills/demo/SKILL.md:505: length: body is 600 lines, over the skill limit of 500\n" in (
        "\n" + result.output
    )
    assert LONG.splitlines()[504] == "500. Step 500 of the long procedure."
    assert "  failure: 600 body lines, limit 500" in result.output
    # A finding about the whole file has no line: `path:` alone.
    tokens = [line for line in result.output.splitlines() if "tokens (estimated), over" in line]
    assert tokens and tokens[0].startswith("skills/demo/SKILL.md: length: body is ")


def test_github_annotations(repo: Path) -> None:
    write(repo, "skills/demo/SKILL.md", LONG)
    result = run(repo, "check", "--format", "github")
    assert result.exit_code == 1
    lines = result.output.splitlines()
    assert (
        "::error file=skills/demo/SKILL.md,line=505,title=harnessgit length::"
        "body is 600 lines, over the skill limit of 500%0Ahint: move detail into references/"
    ) in "\n".join(lines)
    assert lines[-1].startswith("checked 1 harness file: ")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "long")
    write(repo, "skills/demo/SKILL.md", LONG.replace("Step 3 of", "Step 3 in"))
    existing = run(repo, "check", "--format", "github")
    assert existing.exit_code == 0
    assert (
        "::notice file=skills/demo/SKILL.md,line=505,title=harnessgit length (existing)::" in existing.output
    )


def test_annotation_escaping_and_span() -> None:
    finding = Finding(
        "prompts/a,b:c.md",
        "format",
        "failure",
        "m",
        "v",
        None,
        "100% broken\nreally",
        "fix",
        line=3,
        end_line=9,
    )
    assert annotation(finding) == (
        "::error file=prompts/a%2Cb%3Ac.md,line=3,endLine=9,title=harnessgit format::"
        "100%25 broken%0Areally%0Ahint: fix"
    )
    # One line (a repeat, a YAML key: line == end_line) is no span.
    one_line = replace(finding, line=4, end_line=4)
    assert annotation(one_line).startswith("::error file=prompts/a%2Cb%3Ac.md,line=4,title=")
    change = Finding(None, "edit-size", "warning", "hunks", 30, 25, "30 hunks", "split it")
    assert annotation(change) == "::warning title=harnessgit edit-size::30 hunks%0Ahint: split it"


def test_a_missing_named_file_is_a_finding_and_the_rest_still_run(repo: Path) -> None:
    # On main: exit 3, "harnessgit: error: prompts/nope.md: no such file", nothing checked.
    write(repo, "skills/demo/SKILL.md", LONG)
    result = run(repo, "check", "prompts/nope.md", "skills/demo/SKILL.md")
    assert result.exit_code == 1
    assert "prompts/nope.md: format: no such file here" in result.output
    assert "skills/demo/SKILL.md:505: length:" in result.output
    commit = git(repo, "rev-parse", "HEAD").strip()
    at_rev = json.loads(run(repo, "check", "--rev", "HEAD", "prompts/nope.md", "SKILL.md", "--json").output)
    assert [f["message"] for f in at_rev["findings"]] == [f"no such file in {commit[:12]}"]
    assert [f["path"] for f in at_rev["files"]] == ["SKILL.md"] and at_rev["failed"] is True


def test_skipped_files_are_named_with_why(repo: Path) -> None:
    write(repo, "notes.txt", "not harness\n")
    result = run(repo, "check", "eval.py", "notes.txt", "SKILL.md")
    assert result.exit_code == 0
    assert "note: skipped 2 files outside the harness paths: eval.py, notes.txt" in result.output


def test_outside_git_a_missing_file_is_a_finding_too(tmp_path: Path) -> None:
    write(tmp_path, "prompts/a.md", "# A\n\nAnswer briefly.\n")
    result = run(tmp_path, "check", "prompts/a.md", "prompts/gone.md", "--format", "json")
    report = json.loads(result.output)
    assert result.exit_code == 1 and [f["path"] for f in report["files"]] == ["prompts/a.md"]
    assert [(f["path"], f["message"]) for f in report["findings"]] == [
        ("prompts/gone.md", "no such file here")
    ]
