from __future__ import annotations

from harnessgit.checks.text import shorten, split_frontmatter


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


def test_shorten() -> None:
    assert shorten("a  b\nc") == "a b c"
    assert shorten("x" * 100, 10) == "xxxxxxx..."
