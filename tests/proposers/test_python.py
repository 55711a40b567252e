"""The python proposer: the command proposer's request and reply, as a function's dicts."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.config import load_config
from harnessgit.config.proposer import PythonProposerSection
from harnessgit.demo import prepare
from harnessgit.errors import ProposerFailed
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.proposers import Proposer, make_proposer
from harnessgit.proposers.protocol import ProposedEdit, RejectedProposal
from harnessgit.records import ProposalRecord
from harnessgit.store import Store
from tests.conftest import git
from tests.evolve.evolve_fixtures import records
from tests.proposers.test_command import REQUEST, SKILL

TUNER = """\
def append(request):
    return {"operations": [{"op": "append", "text": "3. " + request["examples"][0]["feedback"]}],
            "rationale": "from " + request["component"], "usage": {"model": "m", "cost_usd": 0.5}}

def replace(request):
    return {"text": "new text\\n"}

def missing_anchor(request):
    return {"operations": [{"op": "replace", "old": "not there", "new": "x"}]}

def broken(request):
    raise KeyError("examples")

def not_a_dict(request):
    return ["text"]

def both(request):
    return {"text": "a", "operations": []}
"""


@pytest.fixture(autouse=True)
def forget_modules() -> Iterator[None]:
    """The repositories' modules (tuner, and the demo's propose and agent) per test."""
    path = list(sys.path)
    yield
    for name in ("tuner", "propose", "agent"):
        sys.modules.pop(name, None)
    sys.path[:] = path


def tuner(tmp_path: Path, function: str) -> Proposer:
    (tmp_path / "tuner.py").write_text(TUNER)
    return make_proposer(PythonProposerSection(function=f"tuner:{function}"), cwd=tmp_path)


def test_operations_and_text_are_settled_like_a_commands(tmp_path: Path) -> None:
    proposer = tuner(tmp_path, "append")
    assert proposer.name == "python:tuner:append"
    edit = proposer.propose(REQUEST)
    assert isinstance(edit, ProposedEdit)
    assert edit.new_text == SKILL + "3. Check arithmetic.\n"
    assert edit.rationale == "from SKILL.md" and edit.usage.cost_usd == 0.5
    assert '"op": "append"' in edit.raw_output
    replaced = tuner(tmp_path, "replace").propose(REQUEST)
    assert isinstance(replaced, ProposedEdit) and replaced.new_text == "new text\n"


def test_an_edit_that_does_not_apply_is_a_rejected_proposal(tmp_path: Path) -> None:
    answer = tuner(tmp_path, "missing_anchor").propose(REQUEST)
    assert isinstance(answer, RejectedProposal) and answer.code == "anchor_not_found"


@pytest.mark.parametrize(
    ("function", "message"),
    [
        ("broken", "the proposer function tuner:broken raised KeyError: 'examples'"),
        ("not_a_dict", "the proposer function tuner:not_a_dict returned list, not a dict"),
        (
            "both",
            'the proposer function tuner:both must return either "text" or "operations" '
            "(exactly one of them)",
        ),
        ("absent", "proposer tuner:absent: tuner has no function 'absent'"),
    ],
)
def test_a_broken_function_fails_in_one_line(tmp_path: Path, function: str, message: str) -> None:
    with pytest.raises(ProposerFailed) as caught:
        tuner(tmp_path, function).propose(REQUEST)
    assert str(caught.value) == message


@pytest.mark.slow
def test_evolve_with_the_python_proposer_makes_the_commands_history(tmp_path: Path) -> None:
    """The demo's propose.py has a ``propose(request)`` function: called in process, the
    run is the same as with the script run per proposal."""
    histories = []
    for kind in ("command", "python"):
        repo = tmp_path / kind
        prepare(repo, lambda _line: None)
        if kind == "python":
            toml = (repo / "harnessgit.toml").read_text()
            toml = toml.replace(
                'kind = "command"\ncommand = ["python3", "propose.py"]',
                'kind = "python"\nfunction = "propose:propose"',
            )
            assert 'function = "propose:propose"' in toml
            (repo / "harnessgit.toml").write_text(toml)
            git(repo, "commit", "-qam", "python proposer")
        with Store.discover(repo) as store:
            report = evolve(store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=3), seed=1))
            done = records(store)
            texts = [
                store.objects.file_at(store.objects.commit_info(r.commit).tree, "SKILL.md")
                if r.commit
                else None
                for r in done
            ]
            proposers = {
                r.proposer
                for rs in store.notes.records(layout.NOTES_EVIDENCE).values()
                for r in rs
                if isinstance(r, ProposalRecord) and r.source == "evolve"
            }
        assert report.spend.proposals == 3
        histories.append(([(r.outcome, r.minibatch, r.candidate_score) for r in done], texts, proposers))
    (by_command, command_texts, _), (by_function, function_texts, proposers) = histories
    assert by_function == by_command and function_texts == command_texts
    assert proposers == {"python:propose:propose"}
