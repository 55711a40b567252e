"""`markdown_edit.parse_edit` gives the Document `parse` gives (issue 27: a history audit
parses an edit from the first top-level block it may have changed): random edits of
texts built from every block CommonMark has, where a block's end depends on the lines
after it (indented code over blank lines, lazy continuation, tables, setext headings,
loose lists, HTML blocks, unclosed fences), each compared with a whole parse."""

from __future__ import annotations

import random

import pytest

from harnessgit.checks import markdown
from harnessgit.checks.markdown import _parse, parse
from harnessgit.checks.markdown_edit import parse_edit

PIECES = [
    "# Title",
    "## Part {n}",
    "Setext heading {n}",
    "===",
    "---",
    "A paragraph line {n} that goes on.",
    "lazy continuation {n}",
    "- item {n}",
    "  - nested item {n}",
    "1. step {n}",
    "2) other step {n}",
    "    indented code {n}",
    "        deeper code {n}",
    "",
    "",
    "",
    "```python",
    "print({n})",
    "```",
    "~~~",
    "> quoted {n}",
    "> - quoted item",
    "| a | b |",
    "|---|---|",
    "| {n} | x |",
    "a | b",
    "--- | ---",
    "<!-- comment {n}",
    "-->",
    "<div>",
    "</div>",
    "[ref{n}]: https://example.com/{n}",
    "   ```",
    "\tTabbed {n}",
    "***",
    "+ plus item",
    "   - three spaces",
    "<details>",
]


def text(rng: random.Random, lines: int) -> str:
    return "".join(rng.choice(PIECES).format(n=rng.randint(1, 9)) + "\n" for _ in range(lines))


def edited(rng: random.Random, before: str) -> str:
    lines = before.splitlines(keepends=True)
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(lines))
        action = rng.choice(["insert", "delete", "replace", "append"])
        piece = rng.choice(PIECES).format(n=rng.randint(1, 9)) + "\n"
        if action == "insert":
            lines.insert(at, piece)
        elif action == "append":
            lines.append(piece)
        elif lines and at < len(lines):
            lines[at : at + 1] = [] if action == "delete" else [piece]
    return "".join(lines)


@pytest.mark.parametrize("seed", range(8))
def test_an_edit_parses_as_a_whole_parse_does(seed: int) -> None:
    rng = random.Random(seed)
    front = "---\nname: x\ndescription: y\n---\n"
    for case in range(250):
        old = (front if case % 3 == 0 else "") + text(rng, rng.randint(5, 60))
        new = edited(rng, old)
        markdown._PARSED.clear()
        parse(old)
        incremental = parse_edit(old, new)
        whole = _parse(new)
        assert incremental == whole, (old, new)
        assert incremental.tops == whole.tops, (old, new)


def test_an_edit_takes_the_blocks_before_it() -> None:
    """Not a whole parse in disguise: the blocks before the edit are the old Document's."""
    old = "# A\n\nOne.\n\n## B\n\nTwo.\n\n## C\n\nThree.\n"
    markdown._PARSED.clear()
    before = parse(old)
    after = parse_edit(old, old.replace("Three.", "Three, and four."))
    assert after.blocks[0] is before.blocks[0] and after.headings[1] is before.headings[1]
    assert after.blocks[-1].text == "Three, and four."


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # An indented code block reads on over blank lines: code there joins it.
        ("    code\n\n\n\n\nText.\n", "    code\n\n\n    more code\n\nText.\n"),
        ("- item\n\n      code\n\n\n\nText.\n", "- item\n\n      code\n\n\n      more\n\nText.\n"),
        # A paragraph ends where a table starts: its delimiter row is the line after.
        ("Intro.\nSome text\n| a | b |\nmore\n", "Intro.\nSome text\n| a | b |\n|---|---|\n"),
        # A setext underline and a lazy line belong to the paragraph before them.
        ("# T\n\nTitle\nline\n", "# T\n\nTitle\n===\n"),
        ("# T\n\n> quote\n\nnext\n", "# T\n\n> quote\nlazy\n"),
        # A loose list goes on after a blank line.
        ("- one\n\n\nText\n", "- one\n\n\n- two\n"),
    ],
)
def test_edits_after_a_block_that_reads_ahead(old: str, new: str) -> None:
    markdown._PARSED.clear()
    parse(old)
    incremental = parse_edit(old, new)
    whole = _parse(new)
    assert incremental == whole and incremental.tops == whole.tops


def test_an_edit_at_the_top_takes_the_blocks_after_it() -> None:
    """A release sync changes a version line in a comment at the top of each prompt:
    the blocks after it are the old Document's, moved by the lines the edit added."""
    old = "<!--\nname: x\nccVersion: 2.1.3\n-->\n# A\n\nOne.\n\n## B\n\n- two\n- three\n"
    new = old.replace("ccVersion: 2.1.3\n", "ccVersion: 2.1.4\nextra: 1\n")
    markdown._PARSED.clear()
    before = parse(old)
    after = parse_edit(old, new)
    assert after == _parse(new) and after.tops == _parse(new).tops
    assert after.headings[1].line == before.headings[1].line + 1
    assert after.blocks[-1].items == tuple((a + 1, b + 1) for a, b in before.blocks[-1].items)
