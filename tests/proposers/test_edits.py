from __future__ import annotations

import pytest

from harnessgit.proposers.edits import (
    EditRejected,
    apply_operations,
    estimate_tokens,
    match_final_newline,
    sanity_check,
    settle,
)
from harnessgit.proposers.protocol import (
    Append,
    Delete,
    InsertAfter,
    Limits,
    Operation,
    ProposalRequest,
    ProposedEdit,
    RejectedProposal,
    Replace,
    Usage,
)

SKILL = "# Demo\n\n1. Read the task.\n2. Answer it.\n"


def rejection(text: str, operations: list[Operation]) -> EditRejected:
    with pytest.raises(EditRejected) as info:
        apply_operations(text, operations)
    return info.value


def test_append_adds_a_line_at_the_end() -> None:
    assert apply_operations(SKILL, [Append(text="3. Check it.")]) == SKILL + "3. Check it.\n"
    # A text without a final newline gets the addition on a new line, and stays without one.
    assert apply_operations("a", [Append(text="b")]) == "a\nb"


def test_insert_after_a_whole_line_goes_below_it() -> None:
    result = apply_operations(SKILL, [InsertAfter(anchor="1. Read the task.", text="   Note units.")])
    assert result == "# Demo\n\n1. Read the task.\n   Note units.\n2. Answer it.\n"


def test_insert_after_mid_line_is_inline() -> None:
    result = apply_operations(SKILL, [InsertAfter(anchor="Read the", text=" whole")])
    assert "1. Read the whole task.\n" in result


def test_insert_after_the_last_line() -> None:
    assert apply_operations("a\nb", [InsertAfter(anchor="b", text="c")]) == "a\nb\nc"
    assert apply_operations("a\nb\n", [InsertAfter(anchor="b\n", text="c")]) == "a\nb\nc\n"


def test_replace_and_delete() -> None:
    result = apply_operations(SKILL, [Replace(old="Answer it.", new="Answer it in one line.")])
    assert "2. Answer it in one line.\n" in result
    # Deleting a whole line takes its newline with it: no blank line left behind.
    assert apply_operations(SKILL, [Delete(old="1. Read the task.")]) == "# Demo\n\n2. Answer it.\n"
    assert apply_operations(SKILL, [Delete(old=" the task")]) == "# Demo\n\n1. Read.\n2. Answer it.\n"


def test_operations_apply_in_order_to_the_running_result() -> None:
    operations: list[Operation] = [
        Append(text="3. Check the answer."),
        InsertAfter(anchor="3. Check the answer.", text="4. Stop."),
        Replace(old="Stop", new="Say done"),
    ]
    assert apply_operations(SKILL, operations).endswith("3. Check the answer.\n4. Say done.\n")


def test_missing_anchor_names_the_operation() -> None:
    problem = rejection(SKILL, [Append(text="x"), Replace(old="Nowhere", new="y")])
    assert problem.code == "anchor_not_found"
    assert "operation 2 (replace)" in problem.reason and "'Nowhere'" in problem.reason


def test_ambiguous_anchor_is_rejected_with_its_count() -> None:
    problem = rejection(SKILL, [InsertAfter(anchor=".", text="x")])
    assert problem.code == "anchor_ambiguous"
    assert "occurs 4 times" in problem.reason and "operation 1 (insert_after)" in problem.reason
    # Overlapping occurrences count: "aa" is twice in "aaa".
    problem = rejection("aaa\n", [Delete(old="aa")])
    assert problem.code == "anchor_ambiguous" and "occurs 2 times" in problem.reason


@pytest.mark.parametrize(
    "operations",
    [[], [Append(text="  \n")], [InsertAfter(anchor="", text="x")], [Delete(old="")]],
)
def test_empty_operations_are_invalid(operations: list[Operation]) -> None:
    assert rejection(SKILL, operations).code == "invalid_operations"


def test_sanity_check_accepts_a_real_change() -> None:
    sanity_check(SKILL, SKILL + "3. Check.\n", Limits(max_chars=1000))


@pytest.mark.parametrize(
    ("new", "code"),
    [
        ("", "empty"),
        ("  \n\n", "empty"),
        (SKILL, "unchanged"),
        (SKILL.rstrip() + "  \n\n", "unchanged"),
        (SKILL + "```python\nprint(1)\n", "unclosed_fence"),
    ],
)
def test_sanity_check_rejects(new: str, code: str) -> None:
    with pytest.raises(EditRejected) as info:
        sanity_check(SKILL, new)
    assert info.value.code == code


def test_sanity_check_rejects_truncation_reported_by_the_model() -> None:
    with pytest.raises(EditRejected) as info:
        sanity_check(SKILL, SKILL + "3. Check.\n", truncated=True)
    assert info.value.code == "truncated"


def test_a_text_that_already_had_an_open_fence_stays_editable() -> None:
    broken = "Intro\n```\ncode\n"
    sanity_check(broken, broken + "more\n")


@pytest.mark.parametrize(
    ("limits", "unit"),
    [
        (Limits(max_chars=len(SKILL) + 5), "characters"),
        (Limits(max_lines=4), "lines"),
        (Limits(max_tokens=estimate_tokens(SKILL) + 1), "tokens"),
    ],
)
def test_limits(limits: Limits, unit: str) -> None:
    longer = SKILL + "3. Check the answer against the task.\n"
    with pytest.raises(EditRejected) as info:
        sanity_check(SKILL, longer, limits)
    assert info.value.code == "over_limit" and unit in info.value.reason


def test_a_component_over_its_limit_may_shrink_but_not_grow() -> None:
    limits = Limits(max_chars=10)
    sanity_check(SKILL, SKILL.replace("Answer it.", "Answer."), limits)
    with pytest.raises(EditRejected):
        sanity_check(SKILL, SKILL + "more\n", limits)


def test_estimate_tokens() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcde") == 2


def test_match_final_newline() -> None:
    assert match_final_newline("a\n", "b") == "b\n"
    assert match_final_newline("a", "b") == "b"
    assert match_final_newline("a\n", "b\n") == "b\n"


def request(**fields: object) -> ProposalRequest:
    return ProposalRequest.model_validate({"component": "SKILL.md", "current_text": SKILL, **fields})


def test_settle_applies_operations_and_keeps_them() -> None:
    usage = Usage(prompt_tokens=10, completion_tokens=5)
    outcome = settle(
        request(), proposer="test", operations=[Append(text="3. Check.")], rationale="why", usage=usage
    )
    assert isinstance(outcome, ProposedEdit)
    assert outcome.new_text == SKILL + "3. Check.\n"
    assert outcome.operations == [Append(text="3. Check.")]
    assert (outcome.component, outcome.rationale, outcome.usage, outcome.proposer) == (
        "SKILL.md",
        "why",
        usage,
        "test",
    )


def test_settle_gives_a_replacement_the_final_newline() -> None:
    outcome = settle(request(form="replace"), proposer="test", text="# Demo\n\nAnswer.")
    assert isinstance(outcome, ProposedEdit)
    assert outcome.new_text == "# Demo\n\nAnswer.\n" and outcome.operations is None


def test_settle_rejects_with_the_reason_and_keeps_the_raw_output() -> None:
    outcome = settle(
        request(), proposer="test", operations=[Delete(old="missing")], raw_output="RAW", rationale="r"
    )
    assert isinstance(outcome, RejectedProposal)
    assert outcome.code == "anchor_not_found" and "missing" in outcome.reason
    assert outcome.raw_output == "RAW" and outcome.rationale == "r" and outcome.component == "SKILL.md"
    assert isinstance(settle(request(), proposer="test"), RejectedProposal)


def test_settle_enforces_the_request_limits() -> None:
    outcome = settle(request(limits={"max_lines": 4}), proposer="test", operations=[Append(text="3.")])
    assert isinstance(outcome, RejectedProposal) and outcome.code == "over_limit"
