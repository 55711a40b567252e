from __future__ import annotations

from harnessgit.checks.compare import compare
from harnessgit.checks.growth import check_collapse, check_growth
from harnessgit.config import Config, KindChecks

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
    assert finding.limit == 0.5 and finding.value < 0.1
    assert finding.details == [
        "section gone: ## Tools",
        "section gone: ## Output format",
        "section gone: ## Examples",
        "section gone: ## Edge cases",
    ]
    assert "4 of 5 sections disappeared" in finding.message


def test_collapse_by_lost_sections_at_equal_size() -> None:
    old = sections(["A", "B", "C", "D"])
    new = sections(["A"]) + "".join(f"- filler line {i} with new words in it\n" for i in range(28))
    [finding] = check_collapse("p.md", PROMPT, old, new, compare(old, new))
    assert finding.measure == "share of sections kept" and finding.value == 0.25


def test_collapse_by_lost_lines_in_a_full_rewrite() -> None:
    old = "".join(f"Rule {i}: always do thing {i} first.\n" for i in range(30))
    new = "".join(f"Guideline {i}: consider doing item {i} early.\n" for i in range(30))
    [finding] = check_collapse("p.md", PROMPT, old, new, compare(old, new))
    assert finding.measure == "share of lines kept" and finding.value == 0.0


def test_a_small_edit_is_not_collapse_and_collapse_can_be_off() -> None:
    old = sections(["A", "B", "C"])
    new = old.replace("- A rule 0", "- A rule zero")
    assert check_collapse("p.md", PROMPT, old, new, compare(old, new)) == []
    shrunk = sections(["A"])
    assert check_collapse("p.md", KindChecks(collapse=False), old, shrunk, compare(old, shrunk)) == []
