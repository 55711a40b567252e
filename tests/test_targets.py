"""What a name means: candidate ids, their prefixes, and git revisions (`harnessgit.targets.resolve`)."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.errors import UnknownRevision
from harnessgit.store import Store
from harnessgit.targets import Target, proposal_chain, resolve
from tests.conftest import git, write


def commit(repo: Path, text: str) -> str:
    """A new commit on a side branch, leaving main where it is."""
    write(repo, "SKILL.md", text)
    git(repo, "add", "SKILL.md")
    sha = git(repo, "commit-tree", git(repo, "write-tree").strip(), "-p", "main", "-m", text).strip()
    git(repo, "reset", "-q", "--hard", "main")
    return sha


@pytest.fixture
def named(repo: Path) -> dict[str, str]:
    """Two live candidates and one archived whose ids share their first seven characters
    (``ca11ab1``), and one more, each on its own commit."""
    shas = {}
    for cid, ref in [
        ("ca11ab1e0001", layout.candidate_ref("ca11ab1e0001")),
        ("ca11ab1e0002", layout.candidate_ref("ca11ab1e0002")),
        ("ca11ab1f0003", layout.archive_ref("ca11ab1f0003")),
        ("f00dfeed0004", layout.candidate_ref("f00dfeed0004")),
    ]:
        shas[cid] = commit(repo, f"text of {cid}\n")
        git(repo, "update-ref", ref, shas[cid])
    return shas


def resolved(repo: Path, name: str) -> Target:
    with Store.discover(repo) as store:
        return resolve(store.refs, name)


def error(repo: Path, name: str) -> str:
    with Store.discover(repo) as store, pytest.raises(UnknownRevision) as raised:
        resolve(store.refs, name)
    return str(raised.value)


def test_a_unique_prefix_of_seven_or_more_names_its_candidate(repo: Path, named: dict[str, str]) -> None:
    assert resolved(repo, "f00dfee") == Target(named["f00dfeed0004"], "f00dfeed0004", "live")
    assert resolved(repo, "ca11ab1e0002") == Target(named["ca11ab1e0002"], "ca11ab1e0002", "live")
    assert resolved(repo, "ca11ab1f") == Target(named["ca11ab1f0003"], "ca11ab1f0003", "archived")


def test_an_ambiguous_prefix_lists_the_candidates_it_matches(repo: Path, named: dict[str, str]) -> None:
    message = error(repo, "ca11ab1")
    assert "\n" not in message and "ambiguous" in message
    assert "ca11ab1e0001, ca11ab1e0002, ca11ab1f0003" in message
    assert "ca11ab1e0001, ca11ab1e0002" in error(repo, "ca11ab1e")


def test_an_unknown_id_suggests_the_closest_candidate(repo: Path, named: dict[str, str]) -> None:
    assert error(repo, "f00dfaed0004").endswith("did you mean f00dfeed0004?")  # one character off
    assert error(repo, "f00dfaed").endswith("did you mean f00dfeed0004?")  # a prefix, one character off
    short = error(repo, "f00d")  # too short to stand for an id, but only one id starts so
    assert "did you mean f00dfeed0004?" in short and "7 characters" in short
    assert error(repo, "nope") == "unknown revision 'nope'"  # nothing close: git's word only


def test_git_revisions_resolve_as_before(repo: Path, named: dict[str, str]) -> None:
    main = git(repo, "rev-parse", "main").strip()
    assert resolved(repo, main) == Target(main)
    assert resolved(repo, main[:7]) == Target(main)
    assert resolved(repo, "main") == Target(main)
    side = named["ca11ab1e0001"]
    assert resolved(repo, side[:10]) == Target(side)  # a commit prefix, even of a candidate's tip


def test_a_commit_prefix_wins_over_a_candidate_prefix(
    repo: Path, named: dict[str, str], caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A candidate whose id starts like main's commit id: the full id names the candidate
    # (candidate ids come first), an abbreviation names the commit, as git reads it.
    main = git(repo, "rev-parse", "main").strip()
    git(repo, "update-ref", layout.candidate_ref(main[:12]), named["f00dfeed0004"])
    monkeypatch.setattr(logging.getLogger("harnessgit"), "propagate", True)  # the CLI turns it off
    caplog.set_level(logging.WARNING, logger="harnessgit")
    assert resolved(repo, main[:12]) == Target(named["f00dfeed0004"], main[:12], "live")
    assert resolved(repo, main[:8]) == Target(main)
    (warning,) = {r.getMessage() for r in caplog.records}  # a record may reach caplog twice
    assert main[:8] in warning and f"candidate {main[:12]}" in warning


def test_a_proposal_chain_runs_back_to_what_the_base_holds(repo: Path) -> None:
    """A candidate proposed on candidates brings all of them (`proposal_chain`, oldest
    first); a commit without a proposal record counts as an edit too, and what the
    base already holds does not."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        first = propose(store, config, {"SKILL.md": "one\n"}, rationale="One")
        second = propose(store, config, {"SKILL.md": "two\n"}, parent=first.candidate, rationale="Two")
        third = propose(store, config, {"SKILL.md": "three\n"}, parent=second.candidate, rationale="Three")

        def chain(tip: str, base: str) -> list[str]:
            return [origin.commit for origin in proposal_chain(store, tip, base)]

        main = git(repo, "rev-parse", "main").strip()
        assert chain(third.commit, main) == [first.commit, second.commit, third.commit]
        assert [o.candidate for o in proposal_chain(store, third.commit, main)][-1] == third.candidate
        assert chain(third.commit, first.commit) == [second.commit, third.commit]
        assert chain(third.commit, third.commit) == []
        by_hand = git(repo, "commit-tree", f"{third.commit}^{{tree}}", "-p", third.commit, "-m", "x").strip()
        assert chain(by_hand, main) == [first.commit, second.commit, third.commit, by_hand]
        git(repo, "merge", "-q", "--no-ff", "-m", "first by hand", first.commit)
        merged = git(repo, "rev-parse", "main").strip()
        assert chain(third.commit, merged) == [second.commit, third.commit]  # main holds the first
