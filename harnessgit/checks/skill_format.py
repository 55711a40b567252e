"""The format rule on a SKILL.md: YAML frontmatter with ``name`` and ``description`` as
the Agent Skills specification requires, each finding on the line of its key. Plain
``key: value`` frontmatter (most files) is read without loading PyYAML."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from harnessgit.check_findings import Finding, failure
from harnessgit.checks.text import shorten, split_frontmatter

# Agent Skills specification: name is 1-64 characters of lowercase letters, digits
# and single hyphens (no leading, trailing or doubled hyphen); description 1-1,024.
SKILL_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
SKILL_NAME_MAX = 64
SKILL_DESCRIPTION_MAX = 1024
_NAME_RULE = "1-64 of a-z 0-9 and single -"


def check_skill(path: str, text: str) -> list[Finding]:
    hint = "SKILL.md starts with ---, then name: and description: (Agent Skills specification), then ---"
    parts = split_frontmatter(text)
    if parts.unterminated:
        return [
            replace(
                failure(
                    path,
                    "format",
                    "frontmatter",
                    "unterminated",
                    "--- ... ---",
                    "frontmatter is never closed with ---",
                    hint,
                ),
                line=1,  # the opening ---
            )
        ]
    if parts.yaml is None:
        return [
            failure(path, "format", "frontmatter", "missing", "--- ... ---", "has no YAML frontmatter", hint)
        ]
    data = plain_mapping(parts.yaml)
    if data is None:
        import yaml

        try:
            # yaml.safe_load, with libyaml's loader when PyYAML was built with it (faster).
            data = yaml.load(parts.yaml, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
        except yaml.YAMLError as exc:
            return [_yaml_error(path, parts.yaml, exc)]
    if not isinstance(data, dict):
        return [
            failure(
                path,
                "format",
                "frontmatter",
                type(data).__name__,
                "YAML mapping",
                "frontmatter is not a mapping of keys",
                hint,
            )
        ]
    findings = _skill_name(path, data.get("name")) + _skill_description(path, data.get("description"))
    # Frontmatter line n is line n + 1 of the file (line 1 is the opening ---).
    return [replace(finding, line=_key_line(parts.yaml, finding.measure)) for finding in findings]


# A line of frontmatter in the plainest YAML: ``key: value``, ASCII, the value a plain
# scalar that starts with a letter and holds no character YAML gives a meaning to.
_PLAIN_LINE = re.compile(r"([A-Za-z][\w-]*): +([A-Za-z](?:[\w ,.'()/-]*[\w,.'()/-])?)", re.ASCII)
# Words PyYAML reads as booleans or null, not strings (its resolver, YAML 1.1), and y/n.
_NOT_STRINGS = frozenset(["y", "n", "yes", "no", "true", "false", "on", "off", "null"])


def plain_mapping(yaml_text: str) -> dict[str, str] | None:
    """The mapping of frontmatter written only as ``key: value`` lines of plain words
    (most SKILL.md files), read without loading PyYAML (about 10 ms of the hook's start);
    None for anything else, which PyYAML reads. For the lines it takes, the result is
    what ``yaml.safe_load`` returns (tests/checks/test_formats.py compares the two)."""
    found: dict[str, str] = {}
    for line in yaml_text.split("\n"):
        if not line:
            continue
        match = _PLAIN_LINE.fullmatch(line)
        if match is None or match[1].lower() in _NOT_STRINGS or match[2].lower() in _NOT_STRINGS:
            return None
        found[match[1]] = match[2]
    return found or None


def _key_line(yaml_text: str, measure: str) -> int | None:
    key = measure.split()[0]  # "name", "description", "description characters"
    for number, line in enumerate(yaml_text.splitlines(), start=2):
        if re.match(rf"{key}[ \t]*:", line):
            return number
    return None


def _yaml_error(path: str, yaml_text: str, exc: Exception) -> Finding:
    where = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
    line = where.line + 2 if where is not None else None
    bad = (
        yaml_text.splitlines()[where.line]
        if where is not None and where.line < len(yaml_text.splitlines())
        else ""
    )
    if "\t" in bad[: len(bad) - len(bad.lstrip())] or "tab" in problem:
        # libyaml says only "found character that cannot start any token" for a tab.
        hint = "YAML does not allow tabs in indentation: indent with spaces"
    else:
        hint = (
            "quote a value that holds ': ' or ' #' or starts with [ { * & ! |, e.g. "
            'description: "Use when: ..."'
        )
    return replace(
        failure(
            path,
            "format",
            "frontmatter",
            "invalid YAML",
            "YAML mapping",
            f"frontmatter is not valid YAML: {problem}{f' at line {line}' if line else ''}",
            hint,
        ),
        line=line,
    )


def _folder(path: str) -> str | None:
    """The name of the folder holding the file, None at the repository root."""
    parts = path.split("/")
    return parts[-2] if len(parts) > 1 else None


def _name_hint(path: str) -> str:
    folder = _folder(path)
    rule = "lowercase letters, digits and single hyphens"
    if folder is None or _valid_name(folder):
        return f"name the skill like its folder{f' ({folder!r})' if folder else ''}: {rule}"
    return f"use {rule}; the folder {folder!r} is not a valid skill name either: rename it to match the name"


def _valid_name(name: str) -> bool:
    return 1 <= len(name) <= SKILL_NAME_MAX and SKILL_NAME.fullmatch(name) is not None


def _skill_name(path: str, name: Any) -> list[Finding]:
    hint = _name_hint(path)
    if name is None:
        return [failure(path, "format", "name", "missing", _NAME_RULE, "frontmatter has no name", hint)]
    if not isinstance(name, str):
        return [
            failure(
                path,
                "format",
                "name",
                repr(name),
                _NAME_RULE,
                f"name must be a string, not {type(name).__name__}",
                hint,
            )
        ]
    if not _valid_name(name):
        return [
            failure(
                path,
                "format",
                "name",
                shorten(name, 70),
                _NAME_RULE,
                f"name {shorten(name, 40)!r} is not a valid skill name",
                hint,
            )
        ]
    folder = _folder(path)
    if folder is not None and folder != name:
        return [
            failure(
                path,
                "format",
                "name",
                name,
                f"folder name {folder!r}",
                f"name {name!r} differs from its folder {folder!r}",
                "rename the folder or the skill so that they match"
                if _valid_name(folder)
                else f"rename the folder to {name!r}: {folder!r} is not a valid skill name",
            )
        ]
    return []


def _skill_description(path: str, description: Any) -> list[Finding]:
    hint = "say what the skill does and when to use it, in at most 1,024 characters"
    limit = f"1-{SKILL_DESCRIPTION_MAX:,} characters"
    if description is None:
        return [
            failure(path, "format", "description", "missing", limit, "frontmatter has no description", hint)
        ]
    if not isinstance(description, str):
        return [
            failure(
                path,
                "format",
                "description",
                type(description).__name__,
                limit,
                "description must be a string",
                hint,
            )
        ]
    if not description.strip():
        return [failure(path, "format", "description", 0, limit, "description is empty", hint)]
    if len(description) > SKILL_DESCRIPTION_MAX:
        return [
            failure(
                path,
                "format",
                "description characters",
                len(description),
                SKILL_DESCRIPTION_MAX,
                f"description is {len(description):,} characters, over {SKILL_DESCRIPTION_MAX:,}",
                hint,
            )
        ]
    return []
