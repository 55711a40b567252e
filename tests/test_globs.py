from __future__ import annotations

import pytest

from harnessgit.globs import escape, matches


@pytest.mark.parametrize(
    ("path", "pattern", "expected"),
    [
        ("SKILL.md", "SKILL.md", True),
        ("a/SKILL.md", "SKILL.md", False),  # whole-path match, not a suffix match
        ("SKILL.md", "**/SKILL.md", True),
        ("a/b/SKILL.md", "**/SKILL.md", True),
        ("prompts/a.md", "prompts/*.md", True),
        ("prompts/x/a.md", "prompts/*.md", False),
        ("prompts/x/a.md", "prompts/**", True),
        ("prompts/x/a.md", "prompts/**/*.md", True),
        ("prompts/a.md", "prompts/**/*.md", True),
        ("tools/t1.json", "tools/t?.json", True),
        ("tools/t10.json", "tools/t?.json", False),
        ("tools/a.json", "tools/[ab].json", True),
        ("tools/c.json", "tools/[!ab].json", True),
        ("a.md", "*.md", True),
        ("dir/a.md", "*.md", False),
        ("a+b(c).md", "a+b(c).md", True),
    ],
)
def test_matches(path: str, pattern: str, expected: bool) -> None:
    assert matches(path, [pattern]) is expected


@pytest.mark.parametrize("path", ["eval.py", "my eval.py", "a[1].py", "x*.py", "q?.py", "[!x].py"])
def test_escape_matches_exactly_the_path(path: str) -> None:
    pattern = escape(path)
    assert matches(path, [pattern])
    for other in ["a1.py", "xx.py", "qq.py", "y.py", "eval_py"]:
        assert not matches(other, [pattern])
