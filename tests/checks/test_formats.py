from __future__ import annotations

import json
import random

import pytest
import yaml

from harnessgit.check_findings import Content
from harnessgit.checks.formats import check_encoding, check_fences, check_tool_json
from harnessgit.checks.skill_format import check_skill, plain_mapping


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


# Issue 14: structure as CommonMark reads it, and hints that say what the text looks like.

LIST_ITEM_FENCE = """\
## Set up the worktree

1. Create it beside the repository:
2. ```sh
   git worktree add ../feature -b feature
   ```
3. Run the project's setup in it.

> Quote a command the user ran:
> ```text
> $ git status
> ```

Done.
"""


def test_a_fence_opened_on_a_list_item_line_or_in_a_blockquote_is_closed() -> None:
    assert check_fences("skills/wt/SKILL.md", LIST_ITEM_FENCE) == []


def test_a_fence_its_container_ends_is_not_truncation() -> None:
    # CommonMark ends the fence with its list item; the text goes on after it.
    text = "- Run:\n  ```sh\n  make test\n- Then commit.\n\nAll done, and the file goes on.\n"
    assert check_fences("p.md", text) == []


def test_an_unclosed_fence_in_a_list_item_at_the_end_still_fails_with_its_line() -> None:
    text = '## Steps\n\n1. Call the tool:\n   ```json\n   {"query": "open the\n'
    [finding] = check_fences("p.md", text)
    assert (finding.line, finding.end_line) == (4, 5)
    assert "at line 4 is never closed" in finding.message
    assert "gepa #390" in finding.hint


def test_the_truncation_finding_has_a_line() -> None:
    [finding] = check_fences("p.md", 'Intro\n```json\n{"answer": \n')
    assert (finding.line, finding.end_line) == (2, 3)


NESTED = """\
## Example output

```markdown
# Report
```python
print("hello")
```
```

## Next steps

Write the summary.
"""


def test_nested_fences_are_not_called_truncated() -> None:
    [finding] = check_fences("p.md", NESTED)
    assert finding.line == 8
    assert "looks truncated" not in finding.hint and "nested" in finding.hint
    assert "line 3" in finding.hint and "````" in finding.hint
    # obra/superpowers writing-plans: closed blocks between the misnested one and the end.
    between = NESTED.replace(
        'print("hello")\n```\n', 'print("hello")\n```\nRun it:\n```bash\npytest -q\n```\n'
    )
    [finding] = check_fences("p.md", between)
    assert "block at line 3" in finding.hint


def test_a_bare_fence_that_swallows_the_rest_of_the_file_is_not_called_truncated() -> None:
    text = "## A\n\n```\ncode\n```\n```\n\n## B\n\nMore prose here.\n"
    [finding] = check_fences("p.md", text)
    assert finding.line == 6
    assert "truncated" not in finding.hint and "do not pair up" in finding.hint


def test_a_tab_in_yaml_indentation_gets_a_tab_hint() -> None:
    text = skill("name: pdf\ndescription: d\nmetadata:\n  a: 1\n\tb: 2\n")
    [finding] = check_skill("SKILL.md", text)
    assert "tab" in finding.hint and "quote" not in finding.hint
    assert finding.line == 6


def test_a_tab_at_the_start_of_a_key_gets_a_tab_hint() -> None:
    [finding] = check_skill("SKILL.md", skill("name: pdf\n\tdescription: d\n"))
    assert "tab" in finding.hint and "quote" not in finding.hint


def test_a_colon_in_a_value_still_gets_the_quoting_hint() -> None:
    [finding] = check_skill("SKILL.md", skill("name: pdf\ndescription: Use when: a colon\n"))
    assert "quote" in finding.hint
    assert finding.line == 3


def test_an_invalid_folder_name_is_not_offered_as_the_skill_name() -> None:
    [finding] = check_skill("skills/PDF_Tools/SKILL.md", skill("name: PDF Tools\ndescription: d\n"))
    assert "name the skill like its folder" not in finding.hint
    assert "'PDF_Tools' is not a valid skill name" in finding.hint
    assert finding.line == 2
    [differs] = check_skill("skills/PDF_Tools/SKILL.md", skill("name: pdf-tools\ndescription: d\n"))
    assert "rename the folder to 'pdf-tools'" in differs.hint


def test_a_valid_folder_name_is_still_offered() -> None:
    [finding] = check_skill("skills/pdf-tools/SKILL.md", skill("name: PDF Tools\ndescription: d\n"))
    assert "'pdf-tools'" in finding.hint


def test_description_findings_point_at_the_description_line() -> None:
    [finding] = check_skill("SKILL.md", skill(f"name: pdf\ndescription: {'d' * 1025}\n"))
    assert finding.line == 3


def test_frontmatter_and_json_findings_have_lines() -> None:
    [unterminated] = check_skill("SKILL.md", "---\nname: pdf\ndescription: cut")
    assert unterminated.line == 1
    [bad_json] = check_tool_json("tools/t.json", '{\n  "name": "x",\n  "description": \n}\n')
    assert bad_json.line == 4


def test_plain_frontmatter_reads_as_yaml_does() -> None:
    """`plain_mapping` (the hook's way round PyYAML) returns what yaml.safe_load does, or
    None; random frontmatter built from the characters and words where they could differ."""
    rng = random.Random(26)
    words = ["name", "demo", "yes", "No", "on", "null", "Null", "e1", "x", "y", "N", "true", "a-b", "a_b"]
    pieces = [
        *words,
        " ",
        "  ",
        ":",
        ": ",
        "#",
        " #",
        "'",
        '"',
        ",",
        ".",
        "(",
        ")",
        "/",
        "-",
        "- ",
        "\t",
        "1",
        "é",
    ]
    taken = 0
    for _ in range(4000):
        lines = []
        for _line in range(rng.randint(1, 4)):
            key = rng.choice(words) + "".join(rng.choices(pieces, k=rng.randint(0, 1)))
            value = "".join(rng.choices(pieces, k=rng.randint(0, 5)))
            lines.append(rng.choice([f"{key}: {value}", f"{key}:{value}", "", f"{key}: {rng.choice(words)}"]))
        text = "\n".join(lines) + rng.choice(["", "\n", "\r\n"])
        fast = plain_mapping(text)
        if fast is not None:
            taken += 1
            assert fast == yaml.safe_load(text), text
    assert taken > 50  # the comparison above ran on frontmatter it takes, not only on what it refuses
    assert plain_mapping("name: pdf\ndescription: Fill PDF forms, extract text (with pypdf).\n") == {
        "name": "pdf",
        "description": "Fill PDF forms, extract text (with pypdf).",
    }
    assert plain_mapping("name: pdf\ndescription: Use when: a form\n") is None  # ": " is YAML's
