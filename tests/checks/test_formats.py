from __future__ import annotations

import json

import pytest

from harnessgit.checks.formats import check_encoding, check_fences, check_skill, check_tool_json
from harnessgit.checks.models import Content


def skill(frontmatter: str, body: str = "# Skill\n") -> str:
    return f"---\n{frontmatter}---\n{body}"


def test_valid_skill_in_its_folder_and_at_the_root() -> None:
    text = skill("name: pdf-tools\ndescription: Read and fill PDF forms.\n")
    assert check_skill("skills/pdf-tools/SKILL.md", text) == []
    assert check_skill("SKILL.md", text) == []  # the repository root is no folder name


@pytest.mark.parametrize(
    ("frontmatter", "message"),
    [
        ("name: PDF Tools\ndescription: d\n", "name 'PDF Tools' is not a valid skill name"),
        ("name: pdf--tools\ndescription: d\n", "is not a valid skill name"),
        ("name: -pdf\ndescription: d\n", "is not a valid skill name"),
        (f"name: {'a' * 65}\ndescription: d\n", "is not a valid skill name"),
        ("name: 42\ndescription: d\n", "name must be a string, not int"),
        ("description: d\n", "frontmatter has no name"),
        ("name: pdf\n", "frontmatter has no description"),
        ("name: pdf\ndescription: ''\n", "description is empty"),
        (f"name: pdf\ndescription: {'d' * 1025}\n", "description is 1,025 characters, over 1,024"),
        ("name: pdf\ndescription: [1, 2]\n", "description must be a string"),
        ("- a list\n", "frontmatter is not a mapping"),
    ],
)
def test_invalid_frontmatter(frontmatter: str, message: str) -> None:
    [finding] = check_skill("SKILL.md", skill(frontmatter))
    assert finding.rule == "format" and finding.level == "failure"
    assert message in finding.message


def test_name_must_equal_its_folder() -> None:
    [finding] = check_skill("skills/pdf/SKILL.md", skill("name: pdf-tools\ndescription: d\n"))
    assert finding.message == "name 'pdf-tools' differs from its folder 'pdf'"
    assert finding.limit == "folder name 'pdf'"


def test_malformed_yaml_is_a_finding_with_a_line() -> None:
    [finding] = check_skill("SKILL.md", skill("name: pdf\ndescription: Use when: a colon\n"))
    assert finding.message.startswith("frontmatter is not valid YAML: ")
    assert finding.message.endswith("at line 3")
    [unterminated] = check_skill("SKILL.md", "---\nname: pdf\ndescription: cut")
    assert unterminated.message == "frontmatter is never closed with ---"
    [missing] = check_skill("SKILL.md", "# Skill without frontmatter\n")
    assert missing.message == "has no YAML frontmatter"


def test_unterminated_fence() -> None:
    [finding] = check_fences("p.md", 'Intro\n```json\n{"answer": \n')
    assert finding.value == "line 2"
    assert "gepa #390" in finding.hint
    assert check_fences("p.md", "```json\n{}\n```\n") == []


def test_encoding() -> None:
    [binary] = check_encoding("p.md", Content.from_bytes(b"\x89PNG\r\n\x1a\n\0\0"))
    assert binary.value == "binary"
    [latin] = check_encoding("p.md", Content.from_bytes("caf\xe9 ol\xe9".encode("latin-1")))
    assert latin.message == "is not UTF-8 text (invalid byte at offset 3)"
    assert check_encoding("p.md", Content.from_bytes("café".encode())) == []


OPENAI = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather for a city.",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
    },
}
ANTHROPIC = {"name": "get_weather", "description": "Current weather.", "input_schema": {"type": "object"}}


def test_tool_shapes_accepted() -> None:
    assert check_tool_json("tools/w.json", json.dumps(OPENAI)) == []
    assert check_tool_json("tools/w.json", json.dumps(ANTHROPIC)) == []
    assert check_tool_json("tools/w.json", json.dumps([OPENAI["function"], ANTHROPIC])) == []


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"description": "d", "input_schema": {"type": "object"}}, "no name"),
        ({"name": "get weather", "description": "d", "input_schema": {"type": "object"}}, "is not 1-64 of"),
        ({"name": "w", "input_schema": {"type": "object"}}, "w: no description"),
        ({"name": "w", "description": "d"}, "w: no parameters or input_schema"),
        (
            {"name": "w", "description": "d", "parameters": {"type": "string"}},
            "parameters is not a JSON schema",
        ),
        ([], "lists no tools"),
        ([ANTHROPIC, "x"], "tool 2: a str, not an object"),
    ],
)
def test_tool_shape_problems(data: object, message: str) -> None:
    [finding] = check_tool_json("tools/w.json", json.dumps(data))
    assert message in finding.message


def test_tool_json_that_does_not_parse() -> None:
    [finding] = check_tool_json("tools/w.json", '{"name": "w",\n "description": ')
    assert finding.message.startswith("is not valid JSON: ") and finding.value == "line 2"


def test_tool_json_with_a_byte_order_mark() -> None:
    assert check_tool_json("tools/w.json", "\ufeff" + json.dumps(ANTHROPIC)) == []
