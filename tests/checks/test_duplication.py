from __future__ import annotations

from harnessgit.checks.duplication import check_duplication, find_repeats


def test_exact_repeats_after_normalisation() -> None:
    text = (
        "- Always cite the source document.\n"
        "Some other guidance that is unrelated here.\n"
        "* always cite the SOURCE document\n"
        "1. Always cite the source document!\n"
    )
    repeats = find_repeats(text, 0.85)
    assert [(r.line, r.first, r.exact) for r in repeats] == [(3, 1, True), (4, 1, True)]


def test_near_duplicates_by_shared_words() -> None:
    text = (
        "- Check the totals against the source spreadsheet before you answer.\n"
        "- Before you answer, check the totals against the source spreadsheet.\n"
        "- Open the real workbook and locate the headers across sheets.\n"
    )
    [repeat] = find_repeats(text, 0.85)
    assert (repeat.line, repeat.first, repeat.exact) == (2, 1, False)
    assert find_repeats(text, 1.0) == []  # near-duplicate search off


def test_code_headings_and_short_lines_are_ignored() -> None:
    text = (
        "```\nprint('the same line of code')\nprint('the same line of code')\n```\n"
        "Example:\nExample:\n# Title here is long enough\n# Title here is long enough\n"
    )
    assert find_repeats(text, 0.85) == []


def test_finding_is_a_warning_with_details() -> None:
    text = "".join("- Always answer in JSON with the keys given.\n" for _ in range(13))
    [finding] = check_duplication("p.md", text, 0.85, 0)
    assert (finding.rule, finding.level, finding.value, finding.limit) == ("duplication", "warning", 12, 0)
    assert finding.details[0].startswith("line 2 repeats line 1: - Always answer in JSON")
    assert finding.details[-1] == "... and 2 more"
    assert check_duplication("p.md", text, 0.85, 12) == []
