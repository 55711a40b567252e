"""`propose`, `show`, `log` and `label` through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.runner import run
from tests.conftest import git, snapshot, write


def test_propose_show_log(repo: Path) -> None:
    write(repo, "SKILL.md", (repo / "SKILL.md").read_text() + "3. Check the answer.\n")
    write(repo, "ev.jsonl", '{"kind": "critique", "text": "answers were unchecked"}\n')
    result = run(repo, "propose", "-m", "Add a check step", "--evidence", "ev.jsonl")
    assert result.exit_code == 0, result.output
    candidate = result.stdout.strip()
    assert git(repo, "rev-parse", "--verify", f"harnessgit/cand/{candidate}")

    shown = run(repo, "show", candidate)
    assert shown.exit_code == 0
    assert f"candidate {candidate}, live" in shown.stdout and "+3. Check the answer." in shown.stdout
    assert "critique: 1" in shown.stdout

    data = json.loads(run(repo, "show", candidate, "--json").stdout)
    assert data["candidate"] == candidate and data["state"] == "live"
    assert data["files"] == [{"path": "SKILL.md", "status": "M", "added": 1, "removed": 0, "old_path": None}]
    assert data["proposal"]["source"] == "worktree" and data["evidence"][0]["items"] == 1
    assert data["rationale"] == "Add a check step"

    log = json.loads(run(repo, "log", "--json").stdout)
    assert log["base"] == "main" and log["test_peeks"] == []
    assert [e["subject"] for e in log["entries"]] == ["Initial harness"]
    assert log["entries"][0]["kind"] == "direct"


def test_propose_from_stdin_patch_and_files(repo: Path) -> None:
    patch = (
        "--- a/prompts/system.md\n+++ b/prompts/system.md\n@@ -1 +1 @@\n"
        "-You are a careful assistant.\n+You are terse.\n"
    )
    result = run(repo, "propose", "--patch", "-", "--json", input=patch)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["components"] == ["prompts/system.md"]
    write(repo, "new.md", "file content\n")
    result = run(repo, "propose", "--file", "prompts/other.md=new.md", "--parent", data["candidate"])
    assert result.exit_code == 0, result.output
    assert (
        git(repo, "show", f"harnessgit/cand/{result.stdout.strip()}:prompts/system.md") == "You are terse.\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["show", "no-such-rev"], "unknown revision"),
        (["show", "--", "--output=/tmp/x"], "looks like an option"),
        (["show", "main..HEAD"], "not a range"),
        (["show", "a b"], "space"),
        (["show", "@{"], "unknown revision"),
        (["show", "x\x01y"], "control character"),
        (["log", "--base", "no-such-branch"], "does not exist"),
        (["log", "--base", "a..b"], "invalid base branch"),
        (["propose", "--parent", "--output=/tmp/x"], "looks like an option"),
        (["propose", "--file", "eval.py=eval.py"], "not a harness file"),
        (["propose", "--file", "SKILL.md=missing.md"], "cannot read file"),
        (["propose", "--evidence", "bad.jsonl", "--file", "SKILL.md=eval.py"], "line 2 is not JSON"),
        (["propose", "--patch", "garbage.patch"], "does not apply"),
        (["propose"], "no uncommitted changes"),
    ],
)
def test_bad_input_exits_3_and_changes_nothing(repo: Path, args: list[str], message: str) -> None:
    write(repo, "bad.jsonl", '{"ok": 1}\n{not json\n')
    write(repo, "garbage.patch", "not a diff\n")
    before = snapshot(repo)
    result = run(repo, *args)
    assert result.exit_code == 3, result.output
    assert message in result.stderr
    assert result.stderr.count("\n") == 1  # one line, no traceback
    assert snapshot(repo) == before
    assert not Path("/tmp/x").exists()


def test_propose_json_names_the_files_it_left_out(repo: Path) -> None:
    write(repo, "SKILL.md", (repo / "SKILL.md").read_text() + "3. Check the answer.\n")
    write(repo, "notes.txt", "not a harness file\n")
    result = run(repo, "propose", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert list(data) == ["candidate", "commit", "parent", "components", "ref", "ignored"]
    assert data["components"] == ["SKILL.md"] and data["ignored"] == ["notes.txt"]
    assert data["ref"] == f"refs/heads/harnessgit/cand/{data['candidate']}"
    text = run(repo, "propose", "--file", "SKILL.md=notes.txt")
    assert text.exit_code == 0, text.output
    assert text.stderr.endswith(f" on {data['parent'][:12]}: SKILL.md\n") and "left out" not in text.stderr


def test_label_moves_lists_and_keeps_history(repo: Path) -> None:
    head = git(repo, "rev-parse", "main").strip()
    assert run(repo, "label").stdout == "no labels\n"
    assert run(repo, "label", "--history").stdout == "no recorded moves\n"
    assert run(repo, "label", "production").exit_code == 2  # a move needs a REV
    moved = run(repo, "label", "production", "main", "--reason", "first release", "--json")
    assert moved.exit_code == 0, moved.output
    record = json.loads(moved.stdout)
    assert record["kind"] == "label" and record["commit"] == head and record["previous"] is None
    (listed,) = json.loads(run(repo, "label", "--list", "--json").stdout)["labels"]
    assert listed["name"] == "production" and listed["last_move"]["reason"] == "first release"
    assert "first release" in run(repo, "label", "--list").stdout
    assert run(repo, "label", "--history", "production").stdout == (
        f"label production -> {head[:12]}  note: this commit has no passing gate record  first release\n"
    )
    moves = json.loads(run(repo, "label", "--history", "production", "--json").stdout)
    assert [m["reason"] for m in moves] == ["first release"]
    assert json.loads(run(repo, "label", "--history", "staging", "--json").stdout) == []


def test_propose_names_the_files_it_leaves_out_and_the_harness_globs(repo: Path) -> None:
    for name in ("a.txt", "b.txt", "c.txt", "d.txt", "e.txt"):
        write(repo, name, "not a harness file\n")
    refused = run(repo, "propose")
    assert refused.exit_code == 3
    assert "5 changed files left out: a.txt, b.txt, c.txt and 2 more" in refused.stderr
    assert "[harness] paths = SKILL.md, prompts/*.md, skills/**/SKILL.md" in refused.stderr
    write(repo, "SKILL.md", (repo / "SKILL.md").read_text() + "3. Check the answer.\n")
    result = run(repo, "propose")
    assert result.exit_code == 0, result.output
    assert (
        "left out 5 changed files outside [harness] paths (SKILL.md, prompts/*.md, skills/**/SKILL.md): "
        "a.txt, b.txt, c.txt and 2 more\n"
    ) in result.stderr
    git(repo, "clean", "-q", "-f")
    write(repo, "a.txt", "one file\n")
    write(repo, "SKILL.md", (repo / "SKILL.md").read_text() + "4. Answer.\n")
    result = run(repo, "propose")
    assert "left out 1 changed file outside [harness] paths (SKILL.md, " in result.stderr
    assert result.stderr.endswith("): a.txt\n")


def test_a_candidate_id_prefix_names_the_candidate(repo: Path) -> None:
    write(repo, "SKILL.md", (repo / "SKILL.md").read_text() + "3. Check the answer.\n")
    candidate = run(repo, "propose", "-m", "Add a check step").stdout.strip()
    shown = run(repo, "show", candidate[:7], "--no-diff")
    assert shown.exit_code == 0, shown.output
    assert f"candidate {candidate}, live" in shown.stdout


def test_status_lists_the_live_candidates(repo: Path) -> None:
    write(repo, "SKILL.md", (repo / "SKILL.md").read_text() + "3. Check the answer.\n")
    candidate = run(repo, "propose", "-m", "Add a check step").stdout.strip()
    before = snapshot(repo)
    text = run(repo, "status")
    assert text.exit_code == 0, text.output
    assert "no selection numbers: split manifest splits.json not found" in text.stdout
    (row,) = [line for line in text.stdout.splitlines() if line.startswith(candidate)]
    assert row.split()[1] == "main" and row.endswith("Add a check step")
    data = json.loads(run(repo, "status", "--json").stdout)
    assert [c["candidate"] for c in data["candidates"]] == [candidate] and data["base"]["branch"] == "main"
    assert "does not exist" in run(repo, "status", "--base", "nope").stderr
    assert snapshot(repo) == before
