from __future__ import annotations

import sys
from pathlib import Path

import pytest

from harnessgit.config import parse_config
from harnessgit.errors import ConfigError
from harnessgit.proposers import ProposalRequest, ProposedEdit, Proposer, make_proposer
from harnessgit.proposers.command import CommandProposer
from harnessgit.proposers.openai_chat import OpenAIProposer


def test_command_runs_in_the_given_directory(tmp_path: Path) -> None:
    (tmp_path / "mine.py").write_text('import json, sys\njson.dump({"text": "new\\n"}, sys.stdout)\n')
    config = parse_config(
        f'[proposer]\ncommand = ["{Path(sys.executable).as_posix()}", "mine.py"]\n'.encode()
    )
    proposer: Proposer = make_proposer(config.proposer, cwd=tmp_path)
    assert isinstance(proposer, CommandProposer)
    outcome = proposer.propose(ProposalRequest(component="p.md", current_text="old\n"))
    assert isinstance(outcome, ProposedEdit) and outcome.new_text == "new\n"
    assert proposer.name.startswith("command:")


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_openai_reads_the_key_from_the_named_variable() -> None:
    config = parse_config(b'[proposer]\nkind = "openai"\nmodel = "gpt-4.1-mini"\napi_key_env = "MY_KEY"\n')
    proposer = make_proposer(config.proposer, environ={"MY_KEY": "sk-abc"})
    assert isinstance(proposer, OpenAIProposer) and proposer.name == "openai:gpt-4.1-mini"
    with pytest.raises(ConfigError, match="MY_KEY"):
        make_proposer(config.proposer, environ={})


def test_an_unconfigured_proposer_is_refused_clearly() -> None:
    with pytest.raises(ConfigError, match=r"no proposer configured: set \[proposer\] command"):
        make_proposer(parse_config(b"").proposer)
