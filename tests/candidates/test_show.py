"""`harnessgit show`: a commit, the proposal and evidence on it, and its scores on record."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.candidates.render import show_text
from harnessgit.candidates.show import show
from harnessgit.config import load_config
from harnessgit.render import to_json
from harnessgit.store import Store
from tests.conftest import git, write
from tests.history_fixtures import build_history


def test_a_merged_candidate_shows_its_proposal(review_repo: Path) -> None:
    history = build_history(review_repo, 5, direct=2, override_at=None)
    candidate = git(review_repo, "rev-parse", f"{history.chain[-1]}^2").strip()
    with Store.discover(review_repo) as store:
        result = show(store, load_config(review_repo), candidate)
    assert result.candidate == f"{5:012x}" and result.state is None  # no branch: only the trailer names it
    assert result.proposal is not None and result.proposal.source == "api"
    assert result.rationale == "Edit 5\n\nThe trajectories asked for revision 5."
    assert [(f.path, f.status) for f in result.files] == [("SKILL.md", "M")]
    data = json.loads(to_json(result))
    assert data["proposal"]["ts"].endswith("Z") and data["evidence"] == [] and data["evaluations"] == []
    text = show_text(result, diff=False)
    assert f"proposed via api on parent {history.chain[-2][:12]}" in text
    assert "rationale:" in text and "evidence: none" in text and "@@" not in text
    assert "@@" in show_text(result)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_show_json_is_utf8_when_the_harness_is_not(make_repo: Callable[..., Path]) -> None:
    # Issue 15 (defect 14): a file whose content and name are not UTF-8 made `show --json`
    # print the raw bytes (invalid UTF-8 at byte 509 of 985), or, on a strict stdout, die
    # with UnicodeEncodeError. Such bytes are now U+FFFD in every JSON output.
    repo = make_repo()
    write(repo, "SKILL.md", (repo / "SKILL.md").read_bytes() + b"bad \xff\xfe bytes\n")
    write(repo, os.fsdecode(b"prompts/n\xe9.md"), "x\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Bytes that are not UTF-8")
    with Store.discover(repo) as store:
        result = show(store, load_config(repo), "HEAD")
    data = json.loads(to_json(result).encode("utf-8"))
    assert [f["path"] for f in data["files"]] == ["SKILL.md", "prompts/n\ufffd.md"]
    assert "+bad \ufffd\ufffd bytes" in data["diff"]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2]), "PYTHONIOENCODING": "utf-8"}
    printed = subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), "show", "--json", "HEAD"],
        capture_output=True,
        env=env,
        check=False,
    )
    assert printed.returncode == 0, printed.stderr
    assert json.loads(printed.stdout.decode("utf-8"))["files"] == data["files"]
