from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from harnessgit.config import Config, parse_config
from harnessgit.config.proposer import (
    CommandProposerSection,
    OpenAIProposerSection,
)
from harnessgit.errors import ConfigError


def test_default_is_a_command_proposer_without_a_command() -> None:
    assert Config().proposer == CommandProposerSection(command=None)
    assert parse_config(b"").proposer == CommandProposerSection(command=None)


def test_command_kind_is_the_default_kind() -> None:
    section = parse_config(b'[proposer]\ncommand = ["python3", "p.py"]\ntimeout = 30\n').proposer
    assert section == CommandProposerSection(command=["python3", "p.py"], timeout=30)


def test_openai_keys() -> None:
    section = parse_config(b"""
[proposer]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
model = "qwen3:8b"
api_key_env = "OLLAMA_KEY"
timeout = 60
max_retries = 2
max_retry_wait = 30
temperature = 0.7
price_per_1k_input = 0.0
price_per_1k_output = 0.0
""").proposer
    assert isinstance(section, OpenAIProposerSection)
    assert (section.model, section.base_url, section.api_key_env) == (
        "qwen3:8b",
        "http://127.0.0.1:11434/v1",
        "OLLAMA_KEY",
    )
    assert (section.timeout, section.max_retries, section.max_retry_wait, section.temperature) == (
        60,
        2,
        30,
        0.7,
    )
    assert section.price_per_1k_input == 0.0


def test_openai_defaults() -> None:
    section = parse_config(b'[proposer]\nkind = "openai"\nmodel = "gpt-4.1-mini"\n').proposer
    assert isinstance(section, OpenAIProposerSection)
    assert section.base_url == "https://api.openai.com/v1" and section.api_key_env == "OPENAI_API_KEY"
    assert section.temperature is None and section.price_per_1k_input is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            b'[proposer]\nkind = "openai"\nmodel = "m"\nmodle = "x"\n',
            'proposer.modle: unknown key for kind = "openai"',
        ),
        (b'[proposer]\nmodel = "m"\n', 'proposer.model: unknown key for kind = "command" (no kind given'),
        (
            b'[proposer]\nkind = "command"\ncommand = ["x"]\nmodel = "m"\n',
            'model: unknown key for kind = "command"',
        ),
        (b'[proposer]\nkind = "anthropic"\n', 'proposer.kind: must be one of "command", "openai"'),
        (b'[proposer]\nkind = "offline"\n', 'proposer.kind: must be one of "command", "openai"'),
        (b'[proposer]\nkind = "openai"\n', "proposer.model: is required"),
        (b'[proposer]\nkind = "openai"\nmodel = ""\n', "proposer.model: must not be empty"),
        (b'[proposer]\nkind = "openai"\nmodel = "m"\nbase_url = "localhost:8000"\n', "not an http(s) URL"),
        (
            b'[proposer]\nkind = "openai"\nmodel = "m"\ntimeout = 0\n',
            "proposer.timeout: must be greater than 0",
        ),
        (
            b'[proposer]\nkind = "openai"\nmodel = "m"\nmax_retries = -1\n',
            "proposer.max_retries: must be at least 0",
        ),
        (b'[proposer]\ncommand = "python3 p.py"\n', "proposer.command: must be a list of arguments"),
        (b"[proposer]\ncommand = []\n", "proposer.command: must not be empty"),
        (b"proposer = 3\n", "harnessgit.toml: proposer: must be a table"),
    ],
)
def test_invalid_sections_name_the_key(text: bytes, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_sections_are_frozen() -> None:
    section = CommandProposerSection(command=["x"])
    with pytest.raises(FrozenInstanceError):
        section.timeout = 1  # type: ignore[misc]
