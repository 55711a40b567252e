"""Harness-Allow trailers (issue 27): a commit says a finding is deliberate, with why."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.candidates.history import harness_history
from harnessgit.checks import CheckReport, check_change
from harnessgit.checks.trailers import allowances, with_trailers
from harnessgit.config import load_config
from harnessgit.store import Store
from tests.cli.runner import run
from tests.conftest import git, write
from tests.harness_text import prompt

CUT = "## Part 0\nThe rest moved into workflows/triage.js.\n"


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def harness(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"prompts/long.md": prompt(8)})


def test_a_trailer_names_rules_and_a_reason() -> None:
    message = (
        "Rework the triage prompt\n\nWhy.\n\n"
        "Harness-Allow: collapse -- moved into workflows/\n"
        "harness-allow: edit-size, growth -- upstream sync\n"
    )
    found, notes = allowances(message, "a" * 40)
    assert [(a.rules, a.reason) for a in found] == [
        (("collapse",), "moved into workflows/"),
        (("growth", "edit-size"), "upstream sync"),
    ]
    assert notes == []


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ("Harness-Allow: collapse", "gives no reason"),
        ("Harness-Allow: collapse --  ", "gives no reason"),
        ("Harness-Allow: colapse -- typo", "names colapse"),
        ("Harness-Allow: -- no rule", "names no rule"),
    ],
)
def test_a_malformed_trailer_allows_nothing_and_says_so(line: str, why: str) -> None:
    found, notes = allowances(f"subject\n\n{line}\n", None)
    assert found == [] and len(notes) == 1 and why in notes[0] and "ignored" in notes[0]


def checked(repo: Path, base: str) -> CheckReport:
    with Store.discover(repo) as store:
        report = check_change(store, load_config(repo), base, head(repo))
        return with_trailers(store, report, base, head(repo))


def test_the_commit_message_allows_what_it_names_and_nothing_else(harness: Path) -> None:
    base = head(harness)
    write(harness, "prompts/long.md", CUT)
    git(
        harness,
        "commit",
        "-qam",
        "Cut the prompt\n\nHarness-Allow: collapse -- moved into workflows/triage.js",
    )
    with Store.discover(harness) as store:
        # what the gate calls: a proposer writes its commits' messages, so none allows
        assert check_change(store, load_config(harness), base, head(harness)).failed
    report = checked(harness, base)
    (finding,) = [f for f in report.findings if f.rule == "collapse"]
    assert not report.failed and finding.state == "suppressed"
    assert f"allowed by Harness-Allow in commit {head(harness)[:12]}: moved into workflows/triage.js" in (
        finding.details
    )
    # the same change without the trailer (or allowing another rule) still blocks
    git(harness, "commit", "-q", "--amend", "-m", "Cut the prompt\n\nHarness-Allow: growth -- not this one")
    report = checked(harness, base)
    assert report.failed and [f.state for f in report.findings if f.rule == "collapse"] == ["new"]


def test_review_and_ci_show_it_allowed_with_the_reason(harness: Path) -> None:
    base = head(harness)
    write(harness, "prompts/long.md", CUT)
    git(harness, "commit", "-qam", "Cut\n\nHarness-Allow: collapse -- moved into workflows/")
    ci = run(harness, "check", "--against", base, "--rev", "HEAD")
    assert ci.exit_code == 0, ci.output
    assert "allowed by Harness-Allow in commit" in ci.output and "moved into workflows/" in ci.output
    review = run(harness, "review", base, "HEAD")
    assert review.exit_code == 0 and "moved into workflows/" in review.output


def test_the_commit_msg_hook_reads_the_message_being_written(harness: Path, tmp_path: Path) -> None:
    write(harness, "prompts/long.md", CUT)
    git(harness, "add", "-A")
    message = tmp_path / "COMMIT_EDITMSG"
    message.write_text(
        "Cut\n\nHarness-Allow: collapse -- moved into workflows/\n# Please enter the message\n"
    )
    allowed = run(harness, "check", "--staged", "--message-file", str(message))
    assert allowed.exit_code == 0 and "moved into workflows/" in allowed.output
    message.write_text("Cut\n\n# Harness-Allow: collapse -- a comment line allows nothing\n")
    assert run(harness, "check", "--staged", "--message-file", str(message)).exit_code == 1
    missing = run(harness, "check", "--staged", "--message-file", str(tmp_path / "nope"))
    assert missing.exit_code == 3 and "cannot read the commit message" in missing.stderr


def test_the_history_audit_counts_allowed_findings_apart(harness: Path) -> None:
    write(harness, "prompts/long.md", CUT)
    git(harness, "commit", "-qam", "Cut\n\nHarness-Allow: collapse -- moved into workflows/")
    write(harness, "prompts/other.md", prompt(8))
    git(harness, "add", "-A")
    git(harness, "commit", "-qm", "Another prompt")
    write(harness, "prompts/other.md", CUT)
    git(harness, "commit", "-qam", "Cut the other one without saying why")
    with Store.discover(harness) as store:
        audit = harness_history(store, load_config(harness))
    (collapse,) = [count for count in audit.findings_by_rule if count.rule == "collapse"]
    assert (collapse.failures, collapse.allowed) == (1, 1)


@pytest.mark.slow  # a real pre-commit run at the commit-msg stage
def test_the_commit_msg_hook_through_pre_commit(harness: Path) -> None:
    root = Path(__file__).resolve().parents[2]
    write(harness, "prompts/long.md", CUT)
    git(harness, "add", "-A")
    message = harness / ".git" / "COMMIT_EDITMSG"

    def hook(text: str) -> subprocess.CompletedProcess[str]:
        message.write_text(text)
        return subprocess.run(
            [
                sys.executable,
                "-m",
                "pre_commit",
                "try-repo",
                str(root),
                "harnessgit-check-commit-msg",
                "--hook-stage",
                "commit-msg",
                "--commit-msg-filename",
                str(message),
            ],
            cwd=harness,
            capture_output=True,
            text=True,
            check=False,
        )

    allowed = hook("Cut\n\nHarness-Allow: collapse -- moved into workflows/\n")
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert hook("Cut\n").returncode == 1
