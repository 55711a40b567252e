from __future__ import annotations

from harnessgit.checks.compare import compare


def test_identical_texts() -> None:
    result = compare("a\nb\nc\n", "a\nb\nc\n")
    assert (result.kept_lines, result.added, result.removed, result.hunks) == (3, 0, 0, 0)
    assert result.kept_share == 1.0


def test_blank_lines_and_trailing_space_are_not_edits() -> None:
    result = compare("a\nb\n", "a  \n\n\nb\n")
    assert result.changed_lines == 0 and result.hunks == 0


def test_hunks_merge_like_git_within_six_lines() -> None:
    old = "\n".join(f"line {i}" for i in range(40))
    near = old.replace("line 10", "LINE 10").replace("line 14", "LINE 14")
    far = old.replace("line 5", "LINE 5").replace("line 30", "LINE 30")
    assert compare(old, near).hunks == 1
    assert compare(old, far).hunks == 2
    assert compare(old, far).changed_lines == 4


def test_kept_share_counts_surviving_previous_lines() -> None:
    old = "\n".join(f"rule {i}" for i in range(10))
    new = "\n".join(f"rule {i}" for i in range(3)) + "\nsomething else"
    result = compare(old, new)
    assert result.old_lines == 10 and result.kept_lines == 3
    assert result.kept_share == 0.3


def test_empty_previous_text() -> None:
    assert compare("", "new\n").kept_share == 1.0
