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


def test_checks_defaults_per_kind() -> None:
    checks = Config().checks
    assert list(checks.kinds) == ["skill", "agents", "tool", "prompt", "skill-resource", "other"]
    skill = checks.kinds["skill"]
    assert (skill.max_lines, skill.max_tokens, skill.measure, skill.format) == (500, 5000, "body", "skill")
    assert checks.kinds["prompt"].max_chars == 5000
    assert checks.kinds["agents"].max_lines == 300
    assert checks.kinds["tool"].format == "tool-json" and not checks.kinds["tool"].duplication
    # Prose of the catch-all kinds is read as Markdown (issue 27).
    assert checks.kinds["other"].paths == [] and checks.kinds["other"].format == "markdown"
    assert checks.kinds["skill-resource"].format == "markdown"


def test_checks_tables_change_only_the_keys_they_name() -> None:
    checks = parse_config(b"""
[checks]
tokenizer = "estimate"
change_max_hunks = 5
[checks.severity]
edit-size = "warning"
duplication = "off"
[checks.kinds.skill]
max_tokens = 4000
[checks.kinds.runbook]
paths = ["runbooks/*.md"]
max_lines = 200
""").checks
    assert checks.tokenizer == "estimate" and checks.change_max_hunks == 5
    assert checks.severity.edit_size == "warning" and checks.severity.duplication == "off"
    assert checks.kinds["skill"].max_tokens == 4000
    assert checks.kinds["skill"].max_lines == 500 and checks.kinds["skill"].paths == ["**/SKILL.md"]
    assert next(iter(checks.kinds)) == "runbook"  # matched before the built-in kinds
    assert checks.kinds["runbook"].max_lines == 200 and checks.kinds["runbook"].growth_fail == 2.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"[checks]\nfoo = 1\n", "checks.foo: unknown key"),
        (b"[checks.kinds.skill]\nmax_tokenz = 1\n", "checks.kinds.skill.max_tokenz: unknown key"),
        (b"[checks.severity]\nlengthh = 'off'\n", "checks.severity.lengthh: unknown key"),
        (b"[checks.severity]\nlength = 'fatal'\n", "checks.severity.length"),
        (b"[checks.kinds.runbook]\nmax_lines = 3\n", "checks.kinds: runbook: a new kind needs paths"),
        (b"[checks.kinds.Run_Book]\npaths = ['x']\n", "kind names use lowercase letters"),
        (b"[checks.kinds.skill]\npaths = ['/abs']\n", "checks.kinds.skill.paths"),
        (b"[checks.kinds.skill]\nmax_lines = 0\n", "checks.kinds.skill.max_lines"),
        (b"[checks]\ntokenizer = 'bpe'\n", "checks.tokenizer"),
    ],
)
def test_invalid_checks_config_names_the_key(text: bytes, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace(".", r"\.")) as info:
        parse_config(text)
    assert "\n" not in str(info.value)
