"""Inline and per-file control (issue 14): a file's allow comment and [[checks.overrides]]
suppress a rule for some files, keep the kind's other limits, and hide nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.runner import run
from tests.conftest import CONFIG, git, write

FRONT = "---\nname: demo\ndescription: A demo skill.\n---\n"
LONG_BODY = "".join(f"{i}. Step {i} of the long procedure.\n" for i in range(600))
REPEATS = (
    "\nAlways cite the source document and the page number for every figure you quote in the answer.\n" * 3
)


def findings(repo: Path, *args: str) -> tuple[int, list[dict[str, Any]]]:
    result = run(repo, "check", *args, "--format", "json")
    return result.exit_code, json.loads(result.output)["findings"]


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo()


def test_an_allow_comment_suppresses_its_rules_and_all_shows_them(repo: Path) -> None:
    # On main: exit 1, a length failure (and a duplication warning) on a new skill.
    allow = "<!-- harnessgit: allow length, duplication -->\n"
    write(repo, "skills/demo/SKILL.md", FRONT + allow + LONG_BODY + REPEATS)
    code, found = findings(repo, "--all")
    assert code == 0
    states = {(f["rule"], f["state"]) for f in found if f["path"] == "skills/demo/SKILL.md"}
    assert states == {("length", "suppressed"), ("duplication", "suppressed")}
    detail = next(f for f in found if f["rule"] == "length")["details"][-1]
    assert detail == "allowed by <!-- harnessgit: allow length --> at line 5"
    text = run(repo, "check", "--all").output
    assert "suppressed" in text and "not blocking: " in text


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_comment_covers_only_what_it_names_and_only_outside_code(repo: Path) -> None:
    example = "```markdown\n<!-- harnessgit: allow length -->\n```\n"
    write(repo, "skills/demo/SKILL.md", FRONT + example + LONG_BODY)
    code, found = findings(repo, "--all")
    assert code == 1 and {f["state"] for f in found if f["rule"] == "length"} == {"new"}
    write(repo, "skills/demo/SKILL.md", FRONT + "<!-- harnessgit: allow duplication -->\n" + LONG_BODY)
    assert findings(repo, "--all")[0] == 1


@pytest.mark.parametrize(
    "example",
    [
        "1. An example of the comment:\n\n   ```markdown\n   <!-- harnessgit: allow length -->\n   ```\n",
        "> ```markdown\n> <!-- harnessgit: allow length -->\n> ```\n",
        "An indented example:\n\n    <!-- harnessgit: allow length -->\n",
    ],
    ids=["list-item fence", "blockquote fence", "indented code"],
)
def test_a_comment_in_code_as_commonmark_reads_it_allows_nothing(repo: Path, example: str) -> None:
    write(repo, "skills/demo/SKILL.md", FRONT + example + "\n" + LONG_BODY)
    code, found = findings(repo, "--all")
    assert code == 1 and {f["state"] for f in found if f["rule"] == "length"} == {"new"}


def test_an_unknown_rule_in_the_comment_is_a_failure_at_its_line(repo: Path) -> None:
    write(repo, "skills/demo/SKILL.md", FRONT + "# Demo\n\n<!-- harnessgit: allow lenght, format -->\n")
    code, found = findings(repo, "--all")
    assert code == 1
    [error] = [f for f in found if f["measure"] == "harnessgit comment"]
    assert error["line"] == 7 and error["value"] == "'lenght'" and error["state"] == "new"
    text = run(repo, "check", "--all").output
    assert (
        "skills/demo/SKILL.md:7: format: harnessgit comment at line 7 allows no known rule: 'lenght'" in text
    )


def test_overrides_change_limits_for_some_files_and_keep_the_kinds_other_defaults(
    make_repo: Callable[..., Path],
) -> None:
    config = CONFIG + '\n[[checks.overrides]]\npaths = ["skills/big/**"]\nmax_lines = 700\n'
    config += '\n[[checks.overrides]]\npaths = ["skills/big/**"]\nallow = ["duplication"]\n'
    repo = make_repo(config=config)
    big = "---\nname: big\ndescription: A big skill.\n---\n" + LONG_BODY
    write(repo, "skills/big/SKILL.md", big + REPEATS)
    write(repo, "skills/demo/SKILL.md", FRONT + LONG_BODY)  # no override: the skill limit holds
    code, found = findings(repo, "--all")
    by = {(f["path"], f["rule"], f["measure"]): f for f in found}
    assert by[("skills/demo/SKILL.md", "length", "body lines")]["state"] == "new" and code == 1
    raised = by[("skills/big/SKILL.md", "length", "body lines")]
    assert raised["state"] == "suppressed" and raised["limit"] == 500  # what the kind would say
    assert "[[checks.overrides]]" in raised["details"][-1]
    assert by[("skills/big/SKILL.md", "duplication", "repeated passage")]["state"] == "suppressed"
    # The kind's other limits still hold: its 5,000-token limit was not overridden.
    tokens = by[("skills/big/SKILL.md", "length", "body tokens (estimated)")]
    assert tokens["state"] == "new" and tokens["limit"] == 5000
    # Over the raised limit, the file fails against it.
    write(repo, "skills/big/SKILL.md", big + "".join(f"{i}. One more step.\n" for i in range(150)))
    _code, found = findings(repo, "--all", "skills/big/SKILL.md")
    [lines] = [f for f in found if f["measure"] == "body lines"]
    assert lines["state"] == "new" and lines["limit"] == 700


def test_an_override_severity_off_is_a_suppression_and_a_level_changes_the_level(
    make_repo: Callable[..., Path],
) -> None:
    config = CONFIG + '\n[[checks.overrides]]\npaths = ["skills/demo/*"]\nseverity = {length = "warning"}\n'
    repo = make_repo(config=config)
    write(repo, "skills/demo/SKILL.md", FRONT + LONG_BODY)
    code, found = findings(repo, "--all")
    assert code == 0 and {(f["level"], f["state"]) for f in found} == {("warning", "new")}
    off = CONFIG + '\n[[checks.overrides]]\npaths = ["skills/demo/*"]\nseverity = {length = "off"}\n'
    write(repo, "harnessgit.toml", off)
    code, found = findings(repo, "--all")
    assert code == 0 and {f["state"] for f in found} == {"suppressed"}


def test_a_bad_override_is_a_one_line_config_error(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(config=CONFIG + '\n[[checks.overrides]]\npaths = ["a.md"]\nallow = ["lenght"]\n')
    result = run(repo, "check")
    assert result.exit_code == 3
    assert "checks.overrides[0].allow: 'lenght' is not a rule" in result.output
    git(repo, "status")  # the repository is untouched and still usable


def test_an_override_that_turns_near_repeats_off_still_shows_them_as_suppressed(
    make_repo: Callable[..., Path],
) -> None:
    # One finding per repeat: the kind's near repeat must be listed as suppressed even
    # when the file has another repeat of the same measure that the override still reports.
    config = CONFIG + '\n[[checks.overrides]]\npaths = ["prompts/*.md"]\nnear_duplicate = 1.0\n'
    repo = make_repo(config=config)
    cite = "Always cite the source document and the page number for every figure you quote in the answer."
    check = "Check the totals against the source spreadsheet before you answer, and say which sheet you used."
    near = "Before you answer, check the totals against the source spreadsheet and say which sheet you used."
    write(repo, "prompts/system.md", "\n\n".join(["# P", cite, check, "Middle.", cite, "More.", near]) + "\n")
    _code, found = findings(repo, "--all")
    assert sorted((f["value"][:12], f["state"]) for f in found if f["rule"] == "duplication") == [
        ("Always cite ", "new"),
        ("Before you a", "suppressed"),
    ]
