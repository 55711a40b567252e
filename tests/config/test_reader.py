"""The one reader of harnessgit.toml (harnessgit.checkconfig.reader).

`harnessgit check` reads [harness] and [checks] with `load_check_config`; every other
command reads the whole file with `load_config`. Both go through `read_table`, so they
must accept and refuse the same files, with the same messages.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.checkconfig import OTHER_SECTIONS
from harnessgit.checkconfig.reader import SettingError, read_table
from harnessgit.config import (
    SECTION_NAMES,
    CheckConfig,
    ChecksSection,
    Config,
    HarnessSection,
    KindChecks,
    load_check_config,
    parse_config,
)
from harnessgit.errors import ConfigError
from tests.conftest import write


def light(text: bytes, tmp_path: Path) -> CheckConfig:
    (tmp_path / "harnessgit.toml").write_bytes(text)
    return load_check_config(tmp_path)


def test_no_file_means_defaults(tmp_path: Path) -> None:
    config = load_check_config(tmp_path)
    assert config == CheckConfig() and not config.present
    assert config.checks == Config().checks and config.harness == Config().harness


GOOD = b"""
[harness]
paths = ["skills/**/SKILL.md", "prompts/*.md"]
base = "trunk"
[gate]
alpha = 0.1
[checks]
chars_per_token = 3
change_max_hunks = 5
[checks.severity]
edit-size = "warning"
[checks.kinds.skill]
max_tokens = 4000
growth_fail = 3
[checks.kinds.runbook]
paths = ["runbooks/*.md"]
collapse = false
"""


def test_both_readers_agree(tmp_path: Path) -> None:
    config = light(GOOD, tmp_path)
    full = parse_config(GOOD)
    assert config.present and (config.harness, config.checks) == (full.harness, full.checks)
    assert config.harness.base == "trunk"
    assert config.checks.chars_per_token == 3.0 and isinstance(config.checks.chars_per_token, float)
    assert config.checks.kinds["skill"].growth_fail == 3.0
    assert config.checks.severity.edit_size == "warning"
    assert list(config.checks.kinds)[:2] == ["runbook", "skill"]
    assert not config.checks.kinds["runbook"].collapse


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (b"[nonsense]\n", "harnessgit.toml: nonsense: unknown key"),
        (b"present = true\n", "harnessgit.toml: present: unknown key"),
        (b"harness = 3\n", "harnessgit.toml: harness: must be a table"),
        (b'[harness]\npaths = "SKILL.md"\n', "harness.paths: must be a list, not a string"),
        (b"[harness]\npaths = [3]\n", "harness.paths[0]: must be a string, not 3"),
        (b"[harness]\npaths = []\n", "harness.paths: must not be empty"),
        (b'[harness]\npaths = ["a/../b"]\n', "harness.paths: 'a/../b' is not a repository-relative glob"),
        (b"[checks]\nmax_file_bytes = 1.5\n", "checks.max_file_bytes: must be an integer, not 1.5"),
        (b"[checks]\nmax_file_bytes = true\n", "checks.max_file_bytes: must be an integer, not True"),
        (b"[checks]\nmax_file_bytes = 0\n", "checks.max_file_bytes: must be at least 1, not 0"),
        (b"[checks]\nchars_per_token = 0\n", "checks.chars_per_token: must be greater than 0, not 0.0"),
        (b"[checks]\nchars_per_token = 'x'\n", "checks.chars_per_token: must be a number, not 'x'"),
        (b"[checks]\ntokenizer = 'bpe'\n", "checks.tokenizer: must be one of 'auto', 'estimate', 'tiktoken'"),
        (b"[checks]\nseverity = 'off'\n", "checks.severity: must be a table"),
        (b"[checks.severity]\nedit_size = 'off'\n", "checks.severity.edit_size: unknown key"),
        (b"[checks]\nkinds = 1\n", "checks.kinds: must be a table"),
        (b"[checks.kinds]\nskill = 1\n", "checks.kinds.skill: must be a table"),
        (
            b"[checks.kinds.skill]\ncollapse = 1\n",
            "kinds.skill.collapse: must be true or false, not 1",
        ),
        (b"[checks.kinds.skill]\ncollapse_min_size = 2\n", "collapse_min_size: must be at most 1, not 2.0"),
        (b"[checks.kinds.skill]\ngrowth_warn = 1\n", "growth_warn: must be greater than 1, not 1.0"),
        (b"[checks.kinds.new-kind]\nmax_lines = 3\n", "checks.kinds: new-kind: a new kind needs paths"),
        (b"[checks.kinds.a_b]\npaths = ['x']\n", "checks.kinds: 'a_b': kind names use lowercase"),
    ],
)
def test_both_readers_refuse_with_the_same_message(tmp_path: Path, text: bytes, message: str) -> None:
    with pytest.raises(ConfigError) as light_error:
        light(text, tmp_path)
    with pytest.raises(ConfigError) as full_error:
        parse_config(text)
    assert message in str(light_error.value)
    assert str(light_error.value) == str(full_error.value)
    assert "\n" not in str(light_error.value)


def test_check_reads_only_its_own_sections(tmp_path: Path) -> None:
    # A bad [gate] is for the gate to refuse; the pre-commit hook checks harness text.
    text = b"[gate]\nalpha = 2\n"
    assert light(text, tmp_path).present
    with pytest.raises(ConfigError, match=r"gate\.alpha"):
        parse_config(text)


def test_read_table_reads_nested_sections_and_keeps_instances() -> None:
    assert read_table(Config, {"harness": {"paths": ["a.md"]}}, "").harness == HarnessSection(paths=["a.md"])
    with pytest.raises(SettingError, match=r"harness\.paths: must not be empty"):
        read_table(Config, {"harness": {"paths": []}}, "")
    checks = ChecksSection(kinds={"skill": KindChecks(max_lines=3)})
    assert read_table(Config, {"checks": checks}, "").checks is checks


def test_a_required_key_is_named() -> None:
    with pytest.raises(ConfigError, match=r"proposer\.model: is required"):
        parse_config(b'[proposer]\nkind = "openai"\n')


def test_read_table_names_the_key() -> None:
    with pytest.raises(SettingError) as info:
        read_table(KindChecks, {"max_lines": -1}, "x")
    assert (info.value.key, info.value.message) == ("x.max_lines", "must be at least 1, not -1")


@pytest.mark.parametrize("in_git", [True, False])
def test_check_does_not_import_pydantic(make_repo: Callable[..., Path], tmp_path: Path, in_git: bool) -> None:
    # What keeps one-file `harnessgit check` fast (docs/benchmarks.md); a timed test would be flaky.
    files: dict[str, str | bytes] = {"harnessgit.toml": GOOD, "prompts/a.md": "# A\n\nBe brief.\n"}
    where = make_repo(files, config=None) if in_git else tmp_path
    if in_git:
        write(where, "prompts/a.md", "# A\n\nBe brief, and polite.\n")
    else:
        for path, text in files.items():
            write(where, path, text)
    code = (
        "import sys; from harnessgit.cli import main; code = main(['check', 'prompts/a.md']); "
        "heavy = ('pydantic', 'git', 'numpy', 'tabulate'); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy)); "
        "sys.exit(code)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=where, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[-1] == "[]"


def test_check_knows_every_section_the_full_reader_reads(tmp_path: Path) -> None:
    """`harnessgit.checkconfig` names the sections it does not read (it is below
    `harnessgit.config` and cannot ask `Config`): the same tables, so a misspelt
    ``[gaet]`` fails the hook as it fails every other command."""
    assert sorted(("harness", "checks", *OTHER_SECTIONS)) == sorted(SECTION_NAMES)
    with pytest.raises(ConfigError, match="gaet: unknown key"):
        light(b"[gaet]\nalpha = 0.1\n", tmp_path)
