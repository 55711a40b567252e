from __future__ import annotations

import pytest

from harnessgit.errors import InvalidName
from harnessgit.names import check_candidate_id, check_ref_name, check_revision, new_candidate_id


def test_new_candidate_ids_are_valid_and_distinct() -> None:
    ids = {new_candidate_id() for _ in range(1000)}
    assert len(ids) == 1000
    for value in ids:
        assert check_candidate_id(value) == value


@pytest.mark.parametrize("bad", ["", "A", "a_b", "a--b", "-a", "a-", "x" * 65, "a b", "a/b"])
def test_bad_candidate_ids(bad: str) -> None:
    with pytest.raises(InvalidName):
        check_candidate_id(bad)


@pytest.mark.parametrize("good", ["main", "release/2026", "prod-1", "v1.2"])
def test_good_ref_names(good: str) -> None:
    assert check_ref_name(good) == good


@pytest.mark.parametrize(
    "bad",
    [
        "",
        "--output=/tmp/x",
        "a..b",
        "a b",
        "a@{1}",
        "@",
        "a\x01b",
        "a:b",
        "a~1",
        "a^",
        "a*",
        "a/",
        "/a",
        "a//b",
        ".a",
        "a/.b",
        "a.lock",
        "a.",
        "a\\b",
        "a?",
    ],
)
def test_bad_ref_names(bad: str) -> None:
    with pytest.raises(InvalidName):
        check_ref_name(bad)


@pytest.mark.parametrize("good", ["HEAD", "HEAD~2", "main^", "abc123", "v1@{1}", "harnessgit/cand/x"])
def test_good_revisions(good: str) -> None:
    assert check_revision(good) == good


@pytest.mark.parametrize("bad", ["", "--output=/tmp/x", "-n", "a..b", "a...b", "a b", "a\nb", "a\x00"])
def test_bad_revisions(bad: str) -> None:
    with pytest.raises(InvalidName):
        check_revision(bad)
