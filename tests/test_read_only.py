"""Commands that only read write nothing at all: no ref, no note, no object (issue 11).

`review` (the gate's verdict from stored scores), `verify`, `status` and a `bisect` whose
every commit has stored scores must leave the object database exactly as it was:
the same set of objects, loose or packed, not merely the same refs. An object written
by a reader is garbage at best and, on a shared remote, noise in every clone.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from harnessgit.cli import cli
from harnessgit.cli._base import State
from tests.conftest import git, snapshot
from tests.history_fixtures import History, build_history, store_scores


def objects(repo: Path) -> set[str]:
    listing = git(repo, "cat-file", "--batch-all-objects", "--batch-check=%(objectname)")
    return set(listing.split())


def run(repo: Path, *args: str) -> int:
    result = CliRunner().invoke(cli, ["-C", str(repo), *args], obj=State(), catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.exit_code


def scored_history(review_repo: Path) -> History:
    history = build_history(review_repo, 12, breaks_one=5, breaks_many=8, override_at=None)
    store_scores(review_repo, [history.good, *history.chain])
    return history


def test_review_verify_status_and_bisect_on_stored_scores_write_no_object(review_repo: Path) -> None:
    history = scored_history(review_repo)
    repo = history.repo
    before, refs = objects(repo), snapshot(repo)
    for args in (
        ["review", history.chain[6], history.chain[7]],  # the edit that broke instances: a REJECT
        ["review", history.chain[3], history.chain[4], "--format", "md"],
        ["review", history.chain[3], history.chain[4], "--format", "json"],
        ["verify"],
        ["status"],
        ["status", "--json"],
        ["bisect", "--good", history.good, "--bad", history.chain[-1], "--drop", "0.05"],
        ["bisect", "--good", history.good, "--bad", history.chain[-1], "--instance", "s-9"],
    ):
        run(repo, *args)
        assert objects(repo) == before, args
        assert snapshot(repo) == refs, args


def test_the_check_catches_a_written_object(review_repo: Path) -> None:
    # The measure itself: writing one object shows in it.
    history = scored_history(review_repo)
    repo = history.repo
    before = objects(repo)
    git(repo, "hash-object", "-w", "--stdin", input="a new object\n")
    assert objects(repo) != before
