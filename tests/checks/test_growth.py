from __future__ import annotations

from collections import Counter

from harnessgit.checks.compare import compare
from harnessgit.checks.growth import added_lines, check_collapse, check_growth
from harnessgit.config import Config, KindChecks
from tests.harness_text import STORY_SKILL, STORY_SLIM, detail_file

PROMPT = Config().checks.kinds["prompt"]


def sections(names: list[str], lines: int = 8) -> str:
    parts = []
    for name in names:
        parts.append(f"## {name}\n")
        parts += [f"- {name} rule {i}: check the input carefully before answering.\n" for i in range(lines)]
    return "".join(parts)


def test_growth_warns_above_1_5_and_fails_above_2() -> None:
    old = "x" * 1000
    assert check_growth("p.md", PROMPT, old, "x" * 1500) == []
    [warning] = check_growth("p.md", PROMPT, old, "x" * 1600)
    assert (warning.level, warning.value, warning.limit) == ("warning", 1.6, 1.5)
    [failure] = check_growth("p.md", PROMPT, old, "x" * 2500)
    assert (failure.rule, failure.level, failure.limit) == ("growth", "failure", 2.0)
    assert "1,000 -> 2,500" in failure.message


def test_small_files_are_exempt() -> None:
    assert check_growth("p.md", PROMPT, "short", "x" * 5000) == []
    assert check_collapse("p.md", PROMPT, "short prompt", "", compare("short prompt", "")) == []


def test_growth_thresholds_are_configurable() -> None:
    kind = KindChecks(growth_warn=None, growth_fail=1.2)
    [finding] = check_growth("p.md", kind, "x" * 1000, "x" * 1300)
    assert finding.level == "failure"


def test_collapse_lists_the_sections_that_disappeared() -> None:
    # ACE's shape: a long context rewritten into a short one.
    old = sections(["Inputs", "Tools", "Output format", "Examples", "Edge cases"])
    new = "## Inputs\nRead the input.\n"
    [finding] = check_collapse("p.md", PROMPT, old, new, compare(old, new))
    assert (finding.rule, finding.level, finding.measure) == ("collapse", "failure", "size / previous size")
    assert finding.limit == 0.5 and isinstance(finding.value, float) and finding.value < 0.1
    assert finding.details == [
        "section gone: ## Tools (line 10 before)",
        "section gone: ## Output format (line 19 before)",
        "section gone: ## Examples (line 28 before)",
        "section gone: ## Edge cases (line 37 before)",
    ]
    assert "4 of 5 sections disappeared" in finding.message


def test_lost_sections_count_once_half_the_characters_are_gone() -> None:
    # With a lower size limit, a shrink to 40% that drops three of four sections is
    # still a collapse: by the sections lost.
    old = sections(["A", "B", "C", "D"])
    new = sections(["A"]) + "".join(f"- filler line {i} with new words\n" for i in range(6))
    assert 0.3 < len(new) / len(old) < 0.5
    kind = KindChecks(collapse_min_size=0.3)
    [finding] = check_collapse("p.md", kind, old, new, compare(old, new))
    assert finding.measure == "share of sections kept" and finding.value == 0.25


def test_a_full_rewrite_at_equal_size_is_not_collapse() -> None:
    # Issue 14: collapse means lost content; a rewrite that keeps the size lost none.
    old = "".join(f"Rule {i}: always do thing {i} first.\n" for i in range(30))
    new = "".join(f"Guideline {i}: consider doing item {i} early.\n" for i in range(30))
    assert check_collapse("p.md", PROMPT, old, new, compare(old, new)) == []


def test_a_rewrite_that_grows_is_not_collapse() -> None:
    # A rewrite that grew 1.3x and renamed every section: growth may speak, collapse not.
    old = sections(["Inputs", "Tools", "Output format", "Examples"])
    new = sections(["What you receive", "What you may call", "What you return", "Worked cases"], lines=11)
    new = new.replace("check the input carefully", "read the request closely")
    assert len(new) > len(old)
    assert check_collapse("p.md", PROMPT, old, new, compare(old, new)) == []


def test_a_change_that_keeps_half_the_characters_never_collapses() -> None:
    old = sections(["A", "B", "C", "D", "E"])
    new = sections(["A", "B"]) + "".join(
        f"- note {i}: a longer remark that replaces a section\n" for i in range(10)
    )
    assert 0.5 <= len(new) / len(old) < 0.7
    kind = KindChecks(collapse_min_kept_sections=0.9, collapse_min_kept_lines=0.9)
    assert check_collapse("p.md", kind, old, new, compare(old, new)) == []


TITLES = [f"Topic {name}" for name in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"] + ["Topic AA", "Topic AB"]


def test_numbered_headings_are_the_same_sections() -> None:
    # Issue 14: "## X" -> "## 1. X" over 28 sections reported "27 of 28 sections disappeared".
    old = sections(TITLES, lines=3)
    renamed = "".join(
        f"## {number}. {title}\n"
        + "".join(f"- {title} rule {i}: check the input carefully before answering.\n" for i in range(3))
        for number, title in enumerate(TITLES, start=1)
    )
    assert check_collapse("p.md", PROMPT, old, renamed, compare(old, renamed)) == []
    new = "".join(
        f"## {number}. {title}\n- {title} rule 0: check the input carefully before answering.\n"
        for number, title in enumerate(TITLES, start=1)
    )
    assert len(new) / len(old) < 0.5  # half of every section cut: a collapse by size
    [finding] = check_collapse("p.md", PROMPT, old, new, compare(old, new))
    assert finding.measure == "size / previous size"
    assert "disappeared" not in finding.message and finding.details == []


def test_a_renamed_section_whose_text_survives_is_not_lost() -> None:
    old = sections(["Tools", "Inputs", "Output format", "Examples", "Edge cases"], lines=6)
    kept = sections(["Tools"], lines=6).replace("## Tools", "## Available tools and when to call them")
    new = kept + "## Summary\nAnswer briefly.\n"
    [finding] = check_collapse("p.md", PROMPT, old, new, compare(old, new))
    gone = [detail.split(" (")[0] for detail in finding.details]
    assert gone == [
        "section gone: ## Inputs",
        "section gone: ## Output format",
        "section gone: ## Examples",
        "section gone: ## Edge cases",
    ]
    assert "(line 8 before)" in finding.details[0]


def test_a_small_edit_is_not_collapse_and_collapse_can_be_off() -> None:
    old = sections(["A", "B", "C"])
    new = old.replace("- A rule 0", "- A rule zero")
    assert check_collapse("p.md", PROMPT, old, new, compare(old, new)) == []
    shrunk = sections(["A"])
    assert check_collapse("p.md", KindChecks(collapse=False), old, shrunk, compare(old, shrunk)) == []


def test_sections_moved_to_another_file_of_the_change_are_not_lost() -> None:
    assert len(STORY_SLIM) / len(STORY_SKILL) < 0.5
    details = detail_file(STORY_SKILL)
    [finding] = check_collapse("SKILL.md", PROMPT, STORY_SKILL, STORY_SLIM, compare(STORY_SKILL, STORY_SLIM))
    assert "section gone: ## Story Frameworks (line 16 before)" in finding.details

    def moved() -> dict[str, Counter[str]]:
        return {"references/details.md": added_lines(None, details)}

    comparison = compare(STORY_SKILL, STORY_SLIM)
    assert check_collapse("SKILL.md", PROMPT, STORY_SKILL, STORY_SLIM, comparison, moved) == []


def test_content_the_other_file_already_had_was_not_moved() -> None:
    # The same text in a file the change also touches, but that held it before: this
    # change did not move it there, so it is lost here (ACE's case with a bystander).
    details = detail_file(STORY_SKILL)
    bystander = {"references/details.md": added_lines(details, details + "\n## Changelog\n- typo fixed\n")}
    comparison = compare(STORY_SKILL, STORY_SLIM)
    [finding] = check_collapse("SKILL.md", PROMPT, STORY_SKILL, STORY_SLIM, comparison, lambda: bystander)
    assert finding.measure == "size / previous size"
    assert "section gone: ## Story Frameworks (line 16 before)" in finding.details
    assert not any(detail.startswith("moved to") for detail in finding.details)


def test_a_partial_move_still_collapses_and_says_where_the_rest_went() -> None:
    # Only the templates moved: the frameworks and techniques are lost.
    templates = "## Presentation Templates" + STORY_SKILL.split("## Presentation Templates", 1)[1]
    comparison = compare(STORY_SKILL, STORY_SLIM)
    moved = {"references/templates.md": added_lines(None, templates)}
    [finding] = check_collapse("SKILL.md", PROMPT, STORY_SKILL, STORY_SLIM, comparison, lambda: moved)
    assert not any("Presentation Templates" in detail for detail in finding.details)
    assert "section gone: ## Story Frameworks (line 16 before)" in finding.details
    assert "moved to references/templates.md: 3 of the removed lines" in finding.details


def test_moved_content_is_looked_up_only_when_the_file_shrank() -> None:
    def fail() -> dict[str, Counter[str]]:
        raise AssertionError("read the other files of the change for an ordinary edit")

    new = STORY_SKILL.replace("drive decisions", "drive better decisions")
    assert check_collapse("SKILL.md", PROMPT, STORY_SKILL, new, compare(STORY_SKILL, new), fail) == []


def test_fences_and_braces_found_elsewhere_were_not_moved() -> None:
    # On the benchmark, cuts that really lost their content found "```", "}," and
    # "```json" in other files of the commit: lines every Markdown file has.
    chart = '## Chart config\n\n```json\n{\n  "type": "slope",\n  "series": ["before", "after"]\n},\n```\n'
    old = STORY_SKILL + "\n" + chart
    other = "# Index\n\n```json\n{\n},\n```\n"
    comparison = compare(old, STORY_SLIM)
    moved = {"docs/index.md": added_lines(None, other)}
    [finding] = check_collapse("SKILL.md", PROMPT, old, STORY_SLIM, comparison, lambda: moved)
    assert not any(detail.startswith("moved to") for detail in finding.details)
    assert "section gone: ## Chart config (line 43 before)" in finding.details


def test_a_trimmed_frontmatter_description_is_not_a_collapse() -> None:
    # Held out (VoltAgent/awesome-claude-code-subagents 778d3c4cc4, "remove example
    # bloat"): an agent's description lost its embedded <example> blocks and the file
    # shrank to 33%, every body line intact. The body is what collapses.
    examples = " ".join(
        f"<example>Context: case {i}. user: 'help with {i}' assistant: 'on it'</example>" for i in range(60)
    )
    body = sections(["Role", "Workflow", "Checklist"], lines=6)
    old = f"---\nname: m365-admin\ndescription: Use for Microsoft 365 administration. {examples}\n---\n{body}"
    new = f"---\nname: m365-admin\ndescription: Use for Microsoft 365 administration.\n---\n{body}"
    assert len(new) / len(old) < 0.5
    assert check_collapse("agents/m365-admin.md", PROMPT, old, new, compare(old, new)) == []
    # The same trim with the body cut to one section is still a collapse.
    cut = "---\nname: m365-admin\ndescription: Use for Microsoft 365 administration.\n---\n## Role\nHelp.\n"
    [finding] = check_collapse("agents/m365-admin.md", PROMPT, old, cut, compare(old, cut))
    assert finding.rule == "collapse" and finding.level == "failure"
