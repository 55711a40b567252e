"""`harnessgit log`: the base branch's accepted edits, each with how it landed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessgit.candidates.log import accepted_log
from harnessgit.candidates.render import log_text
from harnessgit.config import load_config
from harnessgit.render import to_json
from harnessgit.store import Store
from tests.candidates.chain_fixtures import merged_chain
from tests.history_fixtures import build_history


def test_each_entry_says_how_it_landed(review_repo: Path) -> None:
    # Edits 1-3 by hand (3 adds harnessgit.toml), 4 and 6 gated merges, 5 an override.
    history = build_history(review_repo, 6, direct=2, override_at=5)
    with Store.discover(review_repo) as store:
        result = accepted_log(store, load_config(review_repo))
    assert result.base == "main"
    assert [e.commit for e in result.entries[:7]] == [*reversed(history.chain), history.good]
    by_hand, gated, overridden = (result.entries[i] for i in (3, 0, 1))
    assert by_hand.kind == "direct" and by_hand.gate is None and by_hand.candidate is None
    assert overridden.kind == "merge" and overridden.gate is None and overridden.candidate == f"{5:012x}"
    assert overridden.override is not None and overridden.override.reason == "production incident"
    assert gated.candidate == f"{6:012x}" and gated.override is None
    assert gated.gate is not None and gated.gate.passed and gated.gate.difference == 0.05
    assert [f.path for f in gated.files] == ["SKILL.md"]
    assert [(p.candidate, p.subject) for p in gated.proposals] == [(f"{6:012x}", "Edit 6")]
    assert by_hand.proposals == []
    (spend,) = result.selection_sets
    # Edits 4 and 6 passed, both recorded as attempt 1 (the fixture writes them so): two
    # comparisons, each tested at alpha_1, so both levels count (issue 17).
    assert (spend.attempts, spend.passed, spend.alpha) == (2, 2, 0.05)
    assert result.test_peeks == []
    text = log_text(result)
    assert "override (hotfix): production incident" in text and "ungated" in text
    assert "pass +5.0 pts (n=40, attempt 1)" in text
    assert "2 gate attempts, 2 passed, alpha spent 0.0608 of 0.05" in text


def test_limit_keeps_the_newest(review_repo: Path) -> None:
    history = build_history(review_repo, 6, direct=2, override_at=5)
    with Store.discover(review_repo) as store:
        result = accepted_log(store, load_config(review_repo), limit=2)
    assert [e.commit for e in result.entries] == history.chain[:-3:-1]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_merge_lists_every_proposal_it_landed(gate_repo: Path) -> None:
    """Issue 12, finding 5: a merge of a candidate proposed on three others landed four
    proposals; the log counts them and its JSON lists them, oldest first."""
    chain, landed = merged_chain(gate_repo)
    with Store.discover(gate_repo) as store:
        result = accepted_log(store, load_config(gate_repo))
    merged = result.entries[0]
    assert merged.commit == landed and merged.candidate == chain[-1].candidate
    assert [(p.candidate, p.commit) for p in merged.proposals] == [(c.candidate, c.commit) for c in chain]
    assert [p.subject for p in merged.proposals] == [
        "Raise the level to 30",
        "Fix s-35",
        "Fix s-36",
        "Break s-3",
    ]
    data = json.loads(to_json(result))["entries"][0]["proposals"]
    assert data[0] == {
        "candidate": chain[0].candidate,
        "commit": chain[0].commit,
        "subject": "Raise the level to 30",
    }
    header, _rule, row, *_ = log_text(result).splitlines()
    assert header.split()[:4] == ["commit", "date", "kind", "edits"]
    assert row.split()[2:4] == ["merge", "4"]
