"""The rule registry (harnessgit.check_rules): one table, read by the CLI, the
configuration and the engine; each rule's module loaded when the rule first runs."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import get_args

import click
import pytest

from harnessgit.check_rules import BY_NAME, RULES, SPECS, Rule
from harnessgit.checks import FileVersion, check_files
from harnessgit.checks.rules import Judge, judge
from harnessgit.cli import commands
from harnessgit.config import ChecksSection, parse_config
from harnessgit.errors import ConfigError


def test_the_table_names_the_rules_of_the_type_in_its_order() -> None:
    assert get_args(Rule) == RULES
    assert len(set(RULES)) == len(RULES) == len(SPECS)


@pytest.mark.parametrize("name", RULES)
def test_each_rule_module_judges_the_stages_its_entry_names(name: Rule) -> None:
    spec = BY_NAME[name]
    found = judge(name)
    assert type(found).__module__ == spec.module
    # A stage the entry names is implemented; one it does not name finds nothing.
    own = {
        stage
        for stage in ("state", "change", "whole")
        if getattr(type(found), stage) is not getattr(Judge, stage)
    }
    assert own == {stage for stage in ("state", "change", "whole") if getattr(spec, stage)}
    assert not spec.cached or spec.state  # only a verdict on a state is kept


def test_the_command_line_offers_the_rules_of_the_table() -> None:
    (option,) = [param for param in commands()["check"].params if param.name == "rules"]
    assert isinstance(option.type, click.Choice)
    assert tuple(option.type.choices) == RULES


def test_the_configuration_reads_a_severity_for_each_rule_and_no_other() -> None:
    table = "".join(f'"{name}" = "warning"\n' for name in RULES)
    severity = parse_config(f"[checks.severity]\n{table}".encode()).checks.severity
    assert all(severity.of(name) == "warning" for name in RULES)
    assert severity.edit_size == "warning"  # the Python spelling still reads one
    assert ChecksSection().severity.of("length") is None
    with pytest.raises(ConfigError, match=r"checks\.severity\.spelling: unknown key"):
        parse_config(b'[checks.severity]\nspelling = "off"\n')
    with pytest.raises(ConfigError, match=r"checks.overrides\[0\].allow: 'spelling' is not a rule"):
        parse_config(b'[[checks.overrides]]\npaths = ["a.md"]\nallow = ["spelling"]\n')


def test_a_rule_turned_off_in_the_configuration_does_not_run() -> None:
    config = parse_config(b'[checks.severity]\nlength = "off"\n').checks
    long = "x\n" * 400
    assert [
        f.rule
        for f in check_files([FileVersion.from_text("AGENTS.md", None, long)], ChecksSection()).findings
    ] == ["length"]
    assert check_files([FileVersion.from_text("AGENTS.md", None, long)], config).findings == []


# A fresh interpreter runs the checks with some rules and lists what it imported.
RUN = """
import json, sys
from harnessgit.checks import FileVersion, check_files
from harnessgit.config import ChecksSection
text = "---\\nname: demo\\ndescription: A demo skill.\\n---\\n# Demo\\n\\n1. Read the task.\\n"
rules = sys.argv[1:] or None
check_files([FileVersion.from_text("SKILL.md", text, text + "2. Act.\\n")], ChecksSection(), rules=rules)
print(json.dumps(sorted(m for m in sys.modules if m.startswith(("harnessgit.checks", "yaml")))))
"""


def loaded(*rules: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", RUN, *rules], capture_output=True, text=True, check=True
    ).stdout
    return set(json.loads(out))


def test_a_rule_module_loads_when_its_rule_runs_and_not_before() -> None:
    only_length = loaded("length")
    assert "harnessgit.checks.rules.length" in only_length
    others = {BY_NAME[name].module for name in RULES if name != "length"}
    # Their tables and regular expressions too: the duplication rule's prose analysis,
    # the format rule's frontmatter and JSON checks.
    others |= {
        "harnessgit.checks.duplication",
        "harnessgit.checks.prose",
        "harnessgit.checks.formats",
        "harnessgit.checks.skill_format",
    }
    assert only_length.isdisjoint(others)
    assert {BY_NAME[name].module for name in RULES} <= loaded()


def test_plain_frontmatter_is_judged_without_pyyaml() -> None:
    assert "harnessgit.checks.rules.format" in loaded("format")
    assert not any(module.startswith("yaml") for module in loaded("format"))
