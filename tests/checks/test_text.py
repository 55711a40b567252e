from __future__ import annotations

from harnessgit.checks.text import code_fences, heading_key, headings, shorten, split_frontmatter


def test_frontmatter_split_and_body_line() -> None:
    parts = split_frontmatter("---\nname: a\n---\n# Body\ntext\n")
    assert parts.yaml == "name: a\n"
    assert parts.body == "# Body\ntext\n"
    assert parts.body_line == 4
    assert not parts.unterminated


def test_frontmatter_absent_or_unterminated() -> None:
    assert split_frontmatter("# Title\n").yaml is None
    assert split_frontmatter("").yaml is None
    open_only = split_frontmatter("---\nname: a\ndescription: cut off")
    assert open_only.yaml is None and open_only.unterminated
    assert split_frontmatter("\ufeff---\nname: a\n---\n").yaml == "name: a\n"


def test_code_fences_follow_commonmark_closing_rules() -> None:
    closed = ["````md", "```", "inner", "```", "````", "after"]
    fences = code_fences(closed)
    assert fences.unterminated_at is None
    assert fences.inside == [True, True, True, True, True, False]
    # A shorter or different closing fence does not close; an info string is not a closer.
    assert code_fences(["```python", "x = 1", "``"]).unterminated_at == 1
    assert code_fences(["~~~", "```"]).unterminated_at == 1
    assert code_fences(["text", "```python", "x", "```python"]).unterminated_at == 2
    # Inline code with three backticks and a backtick in the info string is not a fence.
    assert code_fences(["``` a ` b"]).unterminated_at is None
    assert code_fences(["    ```"]).unterminated_at is None  # indented code, not a fence


def test_headings_skip_code_and_normalise() -> None:
    text = "# Title\n```\n# not a heading\n```\n## Output  format ##\n#nospace\n"
    assert headings(text) == ["# Title", "## Output  format"]
    assert heading_key("## Output  format") == heading_key("### output format")


def test_shorten() -> None:
    assert shorten("a  b\nc") == "a b c"
    assert shorten("x" * 100, 10) == "xxxxxxx..."
