from __future__ import annotations

import pytest

from harnessgit.proposers.edits import EditRejected
from harnessgit.proposers.protocol import Append, InsertAfter
from harnessgit.proposers.reply import parse_operations, parse_reply, validate_operations


def rejected(reply: str, form: str = "replace") -> EditRejected:
    with pytest.raises(EditRejected) as info:
        parse_reply(reply, form)  # type: ignore[arg-type]
    return info.value


def test_replacement_from_the_text_block_with_the_prose_as_rationale() -> None:
    parsed = parse_reply("Add a check step.\n\n```text\n# Skill\n1. Check.\n```\n", "replace")
    assert parsed.text == "# Skill\n1. Check." and parsed.operations is None
    assert parsed.rationale == "Add a check step."


def test_the_requested_language_wins_and_the_last_of_them() -> None:
    reply = "Old:\n```text\nold draft\n```\nBetter:\n```text\nfinal\n```\nSee also:\n```python\nx = 1\n```\n"
    assert parse_reply(reply, "replace").text == "final"


def test_without_the_requested_language_the_last_block() -> None:
    reply = "Before:\n```markdown\nold\n```\nAfter:\n```markdown\nnew\n```\n"
    assert parse_reply(reply, "replace").text == "new"


def test_a_longer_fence_keeps_inner_code_blocks() -> None:
    reply = "Why.\n````text\n# Skill\n```bash\nls\n```\n````\n"
    assert parse_reply(reply, "replace").text == "# Skill\n```bash\nls\n```"


def test_no_fence_is_rejected() -> None:
    problem = rejected("# Skill\n1. Check.\n")
    assert problem.code == "no_fence"


def test_an_unclosed_last_block_is_rejected_even_after_a_complete_one() -> None:
    # gepa #390: the reply was cut off while writing the block that mattered.
    problem = rejected("Draft:\n```text\nv1\n```\nFinal:\n```text\n# Skill\n1. Check the")
    assert problem.code == "unclosed_fence" and "line 6" in problem.reason


def test_operations_from_the_json_block() -> None:
    reply = (
        "Insert a check.\n```json\n"
        '{"operations": [{"op": "insert_after", "anchor": "2. Answer it.", "text": "3. Check."}]}\n```\n'
    )
    parsed = parse_reply(reply, "delta")
    assert parsed.text is None
    assert parsed.operations == [InsertAfter(anchor="2. Answer it.", text="3. Check.")]
    assert parsed.rationale == "Insert a check."


def test_json_rationale_wins_over_prose() -> None:
    reply = '```json\n{"rationale": "units", "operations": [{"op": "append", "text": "x"}]}\n```'
    assert parse_reply(reply, "delta").rationale == "units"


@pytest.mark.parametrize(
    ("body", "fragment"),
    [
        ("{not json", "not valid JSON"),
        ('{"ops": []}', '{"operations": [...]}'),
        ('"append"', '{"operations": [...]}'),
        ('[{"op": "insert_after", "text": "x"}]', "operation 1 (insert_after): anchor: Field required"),
        ('[{"op": "append", "text": "x"}, {"op": "prepend", "text": "y"}]', "operation 2"),
    ],
)
def test_invalid_operations_are_rejected(body: str, fragment: str) -> None:
    problem = rejected(f"```json\n{body}\n```\n", "delta")
    assert problem.code == "invalid_operations" and fragment in problem.reason


def test_parse_and_validate_operations() -> None:
    assert parse_operations('[{"op": "append", "text": "x"}]') == ([Append(text="x")], "")
    assert validate_operations([{"op": "append", "text": "x"}]) == [Append(text="x")]
