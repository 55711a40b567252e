"""A label is a revision in every command (issue 27 item 4): ``production`` and
``production~1`` resolve through the store's one resolver, git's own names win when a
branch or tag shares the label's name, and ``refs/harnessgit/labels/NAME`` always means
the label."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from harnessgit.errors import UnknownRevision
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git
from tests.history_fixtures import History, build_history, store_scores


@pytest.fixture
def history(review_repo: Path) -> History:
    found = build_history(review_repo, 16, breaks_one=5, breaks_many=11, override_at=11)
    store_scores(review_repo, [found.good, *found.chain])
    return found


def test_a_label_names_its_commit_in_show_bisect_review_and_report(history: History) -> None:
    labelled = run(history.repo, "label", "production", history.good)
    assert labelled.exit_code == 0, labelled.output
    shown = run(history.repo, "show", "production")
    assert shown.exit_code == 0, shown.output
    assert history.good[:12] in shown.stdout
    found = run(history.repo, "bisect", "--good", "production", "--bad", "main")
    assert found.exit_code == 0, found.output
    assert f"first bad edit: #11 {history.chain[10][:12]}" in found.stdout
    reviewed = run(history.repo, "review", "production", "main")
    assert reviewed.exit_code in (0, 1) and "unknown revision" not in reviewed.output, reviewed.output
    ranged = run(history.repo, "report", "production..main", "-o", str(history.repo / ".git" / "r.html"))
    assert ranged.exit_code == 0, ranged.output
    assert "16 commits" in ranged.stdout


def test_a_label_takes_git_revision_suffixes(history: History) -> None:
    git(history.repo, "update-ref", "refs/harnessgit/labels/staging", history.chain[3])
    with Store.discover(history.repo) as store:
        assert store.refs.resolve("staging") == history.chain[3]
        assert store.refs.resolve("staging~2") == history.chain[1]
        assert store.refs.resolve("refs/harnessgit/labels/staging^") == history.chain[2]
        with pytest.raises(UnknownRevision, match="unknown revision 'stagin'"):
            store.refs.resolve("stagin")


def test_a_branch_wins_over_a_label_of_its_name_and_says_how_to_mean_the_label(
    history: History, caplog: pytest.LogCaptureFixture
) -> None:
    git(history.repo, "update-ref", "refs/harnessgit/labels/release", history.chain[3])
    git(history.repo, "branch", "release", history.chain[7])
    with Store.discover(history.repo) as store, caplog.at_level(logging.WARNING, "harnessgit"):
        assert store.refs.resolve("release") == history.chain[7]
        assert "write refs/harnessgit/labels/release to mean the label" in caplog.text
        caplog.clear()
        assert store.refs.resolve("refs/harnessgit/labels/release") == history.chain[3]
        assert caplog.text == ""


def test_an_unknown_name_is_still_one_clear_error(history: History) -> None:
    line = one_error_line(run(history.repo, "show", "nowhere"))
    assert "unknown revision 'nowhere'" in line


def test_a_label_given_as_the_base_branch_is_named_as_a_label(history: History) -> None:
    git(history.repo, "update-ref", "refs/harnessgit/labels/production", history.good)
    line = one_error_line(run(history.repo, "frontier", "--base", "production"))
    assert "'production' is a label" in line
