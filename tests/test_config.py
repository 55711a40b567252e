from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.config import Config, load_config, parse_config, require
from harnessgit.errors import ConfigError


def test_defaults_when_missing(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config == Config() and not config.present
    with pytest.raises(ConfigError, match="harnessgit init"):
        require(config)


def test_full_schema() -> None:
    config = parse_config(b"""
[harness]
paths = ["SKILL.md", "prompts/*.md"]
[evaluator]
command = ["python3", "eval.py"]
model = "sim-1"
[splits]
manifest = "splits.json"
[gate]
alpha = 0.05
min_effect = 0.0
min_instances = 30
""")
    assert config.present
    assert config.harness.paths == ["SKILL.md", "prompts/*.md"]
    assert config.evaluator.command == ["python3", "eval.py"]
    assert config.gate.min_instances == 30


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"[gate]\nalpha = 2\n", "gate.alpha"),
        (b"[gate]\nalpah = 0.1\n", "gate.alpah: unknown key"),
        (b'[evaluator]\ncommand = "python3 eval.py"\n', "evaluator.command: must be a list"),
        (b"[evaluator]\ncommand = []\n", "evaluator.command"),
        (b"[harness]\npaths = []\n", "harness.paths"),
        (b'[harness]\npaths = ["../x"]\n', "harness.paths"),
        (b"[nonsense]\n", "nonsense: unknown key"),
        (b"[gate\n", "not valid TOML"),
        (b"\xff\xfe", "not UTF-8"),
        (b"present = true\n", "present"),
    ],
)
def test_invalid_config_names_the_key(text: bytes, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")) as info:
        parse_config(text)
    assert "\n" not in str(info.value)
