"""docs/cli.md's JSON field lists are made from the result classes, and kept so.

Every ``--json`` (and ``review --format json``) prints `harnessgit.render.to_json` of a
frozen dataclass, so its fields are known without running anything. In docs/cli.md,
a line ``<!-- json-fields MODULE:CLASS -->`` is followed by the list `json_fields`
makes of that class; this test fails when the two drift apart, or when a command with
JSON output has no such list. To rewrite the lists after changing a result class:

    HARNESSGIT_UPDATE_DOCS=1 .venv/bin/python -m pytest tests/test_docs.py
"""

from __future__ import annotations

import importlib
import os
import re
from pathlib import Path
from typing import Any

import click

from harnessgit.cli import commands
from harnessgit.render import json_fields

CLI_DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
MARKER = re.compile(r"^<!-- json-fields (?P<target>[\w.]+:\w+) -->$")


def expected_line(target: str) -> str:
    module, name = target.split(":")
    cls: Any = getattr(importlib.import_module(module), name)
    return f"`--json`: `{{{json_fields(cls)}}}`"


def sections(text: str) -> dict[str, list[str]]:
    """Lines of each `## command` section of docs/cli.md."""
    found: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
            found[current] = []
        elif current is not None:
            found[current].append(line)
    return found


def test_json_field_lists_are_the_result_classes() -> None:
    lines = CLI_DOC.read_text().splitlines()
    stale = []
    for number, line in enumerate(lines):
        marker = MARKER.match(line)
        if marker is None:
            continue
        wanted = expected_line(marker["target"])
        if number + 1 >= len(lines) or lines[number + 1] != wanted:
            stale.append(marker["target"])
            if os.environ.get("HARNESSGIT_UPDATE_DOCS"):
                has_line = number + 1 < len(lines) and lines[number + 1].startswith("`--json`")
                lines[number + 1 : number + 1 + has_line] = [wanted]
    if stale and os.environ.get("HARNESSGIT_UPDATE_DOCS"):
        CLI_DOC.write_text("\n".join(lines) + "\n")
        stale = []
    assert not stale, f"docs/cli.md lists stale JSON fields for {stale}: rerun with HARNESSGIT_UPDATE_DOCS=1"


def test_every_command_with_json_output_lists_its_fields() -> None:
    by_section = sections(CLI_DOC.read_text())
    for name, command in commands().items():
        options = {opt for param in command.params if isinstance(param, click.Option) for opt in param.opts}
        formats = [p for p in command.params if p.name == "fmt" and isinstance(p.type, click.Choice)]
        prints_json = "--json" in options or any("json" in p.type.choices for p in formats)  # type: ignore[attr-defined]
        if prints_json:
            assert any(MARKER.match(line) for line in by_section.get(name, [])), f"{name}: no JSON field list"
