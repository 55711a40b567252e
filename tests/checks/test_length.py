from __future__ import annotations

from harnessgit.checks.length import check_length, measure, too_large
from harnessgit.checks.tokens import Estimate
from harnessgit.config import Config

KINDS = Config().checks.kinds
TOKENS = Estimate(4.0)


def skill(body_lines: int) -> str:
    return "---\nname: demo\ndescription: A demo.\n---\n" + "".join(f"step {i}\n" for i in range(body_lines))


def test_skill_body_is_measured_without_frontmatter() -> None:
    size = measure(skill(500), KINDS["skill"], TOKENS)
    assert size.lines == 500 and size.scope == "body "
    assert check_length("SKILL.md", "skill", KINDS["skill"], size, TOKENS) == []


def test_skill_over_500_body_lines_is_a_failure() -> None:
    size = measure(skill(501), KINDS["skill"], TOKENS)
    [finding] = check_length("SKILL.md", "skill", KINDS["skill"], size, TOKENS)
    assert (finding.rule, finding.level, finding.measure) == ("length", "failure", "body lines")
    assert (finding.value, finding.limit) == (501, 500)
    assert "references/" in finding.hint


def test_skill_tokens_are_labelled_as_estimates() -> None:
    text = "---\nname: demo\ndescription: d\n---\n" + "x" * 20_004 + "\n"
    [finding] = check_length(
        "SKILL.md", "skill", KINDS["skill"], measure(text, KINDS["skill"], TOKENS), TOKENS
    )
    assert finding.measure == "body tokens (estimated)"
    assert (finding.value, finding.limit) == (5002, 5000)


def test_prompt_character_cap() -> None:
    text = "a" * 5001
    [finding] = check_length(
        "prompts/x.md", "prompt", KINDS["prompt"], measure(text, KINDS["prompt"], TOKENS), TOKENS
    )
    assert (finding.measure, finding.value, finding.limit) == ("characters", 5001, 5000)
    assert "Decagon" in finding.hint


def test_agents_line_cap_and_custom_kind_hint() -> None:
    text = "rule\n" * 301
    size = measure(text, KINDS["agents"], TOKENS)
    assert size.scope == "" and size.lines == 301
    assert check_length("AGENTS.md", "agents", KINDS["agents"], size, TOKENS)[0].limit == 300
    [custom] = check_length("x.md", "runbook", KINDS["agents"], size, TOKENS)
    assert "[checks.kinds.runbook]" in custom.hint


def test_too_large() -> None:
    finding = too_large("SKILL.md", 100 * 1024 * 1024, 1024 * 1024)
    assert (finding.rule, finding.level, finding.measure) == ("length", "failure", "bytes")
