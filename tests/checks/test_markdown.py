from __future__ import annotations

import subprocess
import sys

import pytest

from harnessgit.checks.markdown import heading_key, parse


def test_fences_follow_commonmark_closing_rules() -> None:
    document = parse("````md\n```\ninner\n```\n````\nafter\n")
    [fence] = document.fences
    assert (fence.line, fence.end_line, fence.closed, fence.info) == (1, 5, True, "md")
    assert document.unterminated_fence() is None
    # A shorter or different closing fence does not close; an info string is not a closer.
    assert parse("```python\nx = 1\n``\n").unterminated_fence() is not None
    assert parse("~~~\n```\n").unterminated_fence() is not None
    unclosed = parse("text\n```python\nx\n```python\n").unterminated_fence()
    assert unclosed is not None and (unclosed.line, unclosed.end_line) == (2, 4)
    # Inline code with three backticks and a backtick in the info string is not a fence.
    assert parse("``` a ` b\n").fences == []
    assert [block.kind for block in parse("    ```\n").blocks] == ["code"]


def test_fences_in_list_items_and_blockquotes() -> None:
    text = "1. Install:\n2. ```sh\n   pip install x\n   ```\n\n> ```python\n> x = 1\n> ```\n"
    document = parse(text)
    listed, quoted = document.fences
    assert (listed.line, listed.end_line, listed.in_list, listed.closed) == (2, 4, True, True)
    assert (quoted.line, quoted.end_line, quoted.quoted, quoted.closed) == (6, 8, True, True)
    assert listed.opener == "2. ```sh" and listed.info == "sh"


def test_a_fence_its_container_ends_is_unclosed_but_not_unterminated() -> None:
    document = parse("- item\n  ```\n  code\n- next item\n")
    [fence] = document.fences
    assert not fence.closed and (fence.line, fence.end_line) == (2, 3)
    assert document.unterminated_fence() is None


def test_blocks_tables_html_and_paragraphs_with_lines() -> None:
    text = (
        "---\nname: x\ndescription: y\n---\n"  # frontmatter: lines 1-4, not Markdown
        "# Title\n\nFirst paragraph\nwraps here.\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n"
        "    indented code\n\n<style>\np { color: red; }\n</style>\n"
    )
    document = parse(text)
    assert [(b.kind, b.line, b.end_line) for b in document.blocks] == [
        ("paragraph", 7, 8),
        ("table", 10, 12),
        ("code", 14, 14),
        ("html", 16, 18),
    ]
    assert document.blocks[0].text == "First paragraph\nwraps here."
    assert [(h.level, h.text, h.line) for h in document.headings] == [(1, "Title", 5)]


def test_headings_skip_code_and_know_their_parent() -> None:
    text = "# Title\n```\n# not a heading\n```\n## Output  format ##\n#nospace\n\nSetext\n------\n### Deep\n"
    document = parse(text)
    assert [(h.level, h.text, h.parent) for h in document.headings] == [
        (1, "Title", None),
        (2, "Output  format", 0),
        (2, "Setext", 0),
        (3, "Deep", 2),
    ]
    assert heading_key("Output  format") == heading_key("output format")


def test_heading_keys_drop_numbering_and_emphasis() -> None:
    assert heading_key("1. Setup") == heading_key("Setup") == heading_key("Step 2: **Setup**")
    assert heading_key("12.3) `Setup`") == "setup"
    assert heading_key("2026 plans") == "2026 plans"  # a number that is a word stays


def test_sections_span_their_subsections() -> None:
    text = "# A\n\nintro\n\n## B\n\nb text\n\n\n## C\nc text\n"
    document = parse(text)
    assert [(s.line, s.end_line) for s in document.sections] == [(1, 11), (5, 7), (10, 11)]
    assert document.sections[1].body.strip() == "b text"


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_markdown_it_is_imported_only_when_markdown_is_parsed() -> None:
    code = (
        "import sys, harnessgit.checks, harnessgit.checks.markdown; "
        "before = 'markdown_it' in sys.modules; "
        "harnessgit.checks.markdown.parse('# x'); "
        "print(before, 'markdown_it' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.split() == ["False", "True"]


def test_blocks_know_the_list_items_they_are_in() -> None:
    # Sibling items of one list are parallel (the duplication rule's skeleton test).
    text = "---\nname: x\n---\n- one\n  - inner\n- two\n\nafter\n\n1. first\n"
    blocks = parse(text).blocks
    assert [(block.text, block.items) for block in blocks] == [
        ("one", ((4, 4),)),
        ("inner", ((4, 4), (5, 5))),
        ("two", ((4, 6),)),
        ("after", ()),
        ("first", ((10, 10),)),
    ]
    assert [block.in_list for block in blocks] == [True, True, True, False, True]
