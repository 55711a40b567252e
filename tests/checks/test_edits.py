from __future__ import annotations

from harnessgit.checks.compare import compare
from harnessgit.checks.edits import check_change_edit, check_file_edit

OLD = "".join(f"line {i}\n" for i in range(200))


def scattered(every: int, lines: int = 200) -> str:
    return "".join(f"LINE {i}\n" if i % every == 0 else f"line {i}\n" for i in range(lines))


def test_file_budget_counts_hunks_and_changed_lines() -> None:
    comparison = compare(OLD, scattered(10))  # 20 places, 40 changed lines
    assert comparison.hunks == 20
    findings = check_file_edit("p.md", comparison, 10, 30)
    assert [(f.measure, f.value, f.limit) for f in findings] == [("hunks", 20, 10), ("changed lines", 40, 30)]
    assert all(f.rule == "edit-size" and f.level == "failure" and f.path == "p.md" for f in findings)
    assert check_file_edit("p.md", comparison, None, None) == []


def test_change_budget_adds_files_up() -> None:
    one = compare(OLD, scattered(20))  # 10 hunks each
    findings = check_change_edit([(one, 10, 150), (one, 10, 150), (one, 10, 150)], 25, 400)
    [finding] = findings
    assert finding.path is None and (finding.value, finding.limit) == (30, 25)
    assert "3 files" in finding.message


def test_single_file_change_is_not_reported_twice() -> None:
    old = "".join(f"line {i}\n" for i in range(400))
    big = compare(old, scattered(8, 400))  # 50 hunks: 7 unchanged lines keep hunks apart
    assert big.hunks == 50
    assert check_change_edit([(big, 10, 150)], 25, 400) == []
    # ...unless the file has no budget of its own.
    assert len(check_change_edit([(big, None, None)], 25, 400)) == 1
    assert check_change_edit([], 25, 400) == []
