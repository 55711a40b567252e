from __future__ import annotations

from harnessgit.fences import fence_for, fenced_blocks, has_unclosed_fence


def test_blocks_with_info_strings_and_line_numbers() -> None:
    text = "Intro\n```json\n{}\n```\nmiddle\n~~~ text title=x\nbody\n~~~\n"
    blocks = fenced_blocks(text)
    assert [(b.language, b.info, b.body, b.closed, b.line) for b in blocks] == [
        ("json", "json", "{}", True, 2),
        ("text", "text title=x", "body", True, 6),
    ]


def test_a_longer_fence_holds_shorter_ones() -> None:
    text = "````text\n# Skill\n```python\nprint(1)\n```\n````\n"
    (block,) = fenced_blocks(text)
    assert block.closed and block.body == "# Skill\n```python\nprint(1)\n```"


def test_closing_fence_must_be_as_long_and_bare() -> None:
    assert has_unclosed_fence("````\nx\n```\n")
    assert has_unclosed_fence("```\nx\n``` not a close\n")
    assert not has_unclosed_fence("```\nx\n`````  \n")
    # A tilde fence is not closed by backticks.
    assert has_unclosed_fence("~~~\nx\n```\n")


def test_unclosed_block_runs_to_the_end() -> None:
    blocks = fenced_blocks("```a\n1\n```\n```b\n2\n")
    assert [(b.language, b.closed, b.body) for b in blocks] == [("a", True, "1"), ("b", False, "2")]
    assert has_unclosed_fence("```b\n2\n")
    assert not has_unclosed_fence("no fences at all")


def test_what_is_not_a_fence() -> None:
    # Four spaces of indentation make an indented code block, and a backtick
    # fence's info string cannot hold a backtick (that is inline code).
    assert fenced_blocks("    ```\n") == []
    assert fenced_blocks("```a`b\n") == []
    assert fenced_blocks("``\n") == []


def test_indented_fence_removes_its_indentation_from_the_body() -> None:
    (block,) = fenced_blocks("  ```\n    x\n y\n  ```\n")
    assert block.body == "  x\ny"


def test_fence_for_outgrows_the_text() -> None:
    assert fence_for("plain") == "```"
    assert fence_for("a\n```python\nx\n```\n") == "````"
    assert fence_for("`````\n") == "``````"
    # A fence_for fence quoting the text is closed exactly where it should be.
    text = "a\n````\nb\n````\n"
    fence = fence_for(text)
    (block,) = fenced_blocks(f"{fence}text\n{text}{fence}\n")
    assert block.closed and block.body == text.rstrip("\n")
