"""`harnessgit show`: a commit, the proposal and evidence on it, and its scores on record."""

from __future__ import annotations

import json
from pathlib import Path

from harnessgit.candidates.render import show_text
from harnessgit.candidates.show import show
from harnessgit.config import load_config
from harnessgit.render import to_json
from harnessgit.store import Store
from tests.conftest import git
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
