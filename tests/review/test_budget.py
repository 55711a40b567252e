from __future__ import annotations

from harnessgit.review.budget import COMMENT_LIMIT, Section, assemble, fit, size


def test_size_counts_utf8_bytes_and_newlines() -> None:
    assert size(["ab", "é"]) == 3 + 3


def test_fit_keeps_head_and_tail_and_says_what_it_cut() -> None:
    section = Section(
        ["<details>", "```diff"],
        [f"+line {i}" for i in range(1000)],
        ["```", "</details>"],
        what="diff lines",
    )
    fitted = fit(section, 500)
    assert fitted is not None and size(fitted) <= 500
    assert fitted[:2] == ["<details>", "```diff"] and fitted[-4:-2] == ["```", "</details>"]
    assert "more diff lines not shown" in fitted[-1]
    kept = len(fitted) - 6
    assert f"{1000 - kept:,} more diff lines" in fitted[-1]
    assert fit(section, 10) is None  # not even the head and the tail fit
    small = Section(["# title"], ["one"])
    assert fit(small, 100) == ["# title", "one"]


def test_assemble_gives_room_by_priority_and_stays_under_the_limit() -> None:
    verdict = Section(["**Gate: PASS.**"], [f"- reason {i}" for i in range(10)], priority=0)
    evidence = Section(["#### Why"], ["x" * 100 for _ in range(100)], priority=5, what="evidence lines")
    diff = Section(
        ["```diff"], ["+" + "y" * 100 for _ in range(5000)], ["```"], priority=9, what="diff lines"
    )
    text = assemble([verdict, diff, evidence], limit=20_000)
    assert len(text.encode()) <= 20_000
    # The verdict and the evidence are whole; the diff, least important, gave way.
    assert "- reason 9" in text and text.count("x" * 100) == 100
    assert "more diff lines not shown" in text and text.count("```") == 2
    # Document order is kept: the diff still comes before the evidence.
    assert text.index("```diff") < text.index("#### Why")
    whole = assemble([verdict])
    assert whole == "\n".join(verdict.full()) + "\n"


def test_assemble_drops_whole_sections_when_even_their_heads_do_not_fit() -> None:
    many = [Section([f"## section {i}", "z" * 300], priority=i) for i in range(400)]
    text = assemble(many, limit=COMMENT_LIMIT)
    assert len(text.encode()) <= COMMENT_LIMIT
    assert "## section 0\n" in text and "## section 399\n" not in text
    assert "section(s) left out" in text
