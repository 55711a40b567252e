from __future__ import annotations

from harnessgit.proposers.prompt import MAX_FIELD_CHARS, SYSTEM_PROMPT, excerpt, render_messages
from harnessgit.proposers.protocol import Limits, ProposalRequest, ReflectiveExample
from harnessgit.proposers.reply import parse_reply

SKILL = "# Demo\n\nRun:\n\n```bash\nmake test\n```\n"
SECRET = "sk-proj-ABCDEFGHIJKLMNOPQRSTUVWX"


def request(**fields: object) -> ProposalRequest:
    base: dict[str, object] = {
        "component": "skills/demo/SKILL.md",
        "current_text": SKILL,
        "examples": [
            ReflectiveExample(
                instance="case-7",
                inputs={"task": "fix the build"},
                outputs="done",
                trajectory="ran make; exit 2",
                feedback="The tests were never run.",
                score=0.25,
            )
        ],
    }
    return ProposalRequest.model_validate({**base, **fields})


def user_message(req: ProposalRequest) -> str:
    (system_role, system), (user_role, user) = render_messages(req)
    assert (system_role, system, user_role) == ("system", SYSTEM_PROMPT, "user")
    return user


def test_shows_the_component_inside_a_fence_its_own_fences_cannot_close() -> None:
    user = user_message(request())
    assert "## The file: skills/demo/SKILL.md" in user
    assert f"````text\n{SKILL}````" in user
    assert f"{len(SKILL)} characters, 7 lines" in user


def test_shows_each_example_with_score_and_feedback() -> None:
    user = user_message(request())
    assert "### Task 1: case-7 (score 0.25)" in user
    assert '"task": "fix the build"' in user
    assert "Output:\ndone" in user and "Trajectory excerpt:\nran make; exit 2" in user
    assert "Feedback from the evaluator:\nThe tests were never run." in user


def test_states_the_limits_and_asks_for_the_smallest_edit() -> None:
    user = user_message(request(limits=Limits(max_chars=1500, max_lines=40, max_tokens=400)))
    assert "at most 1500 characters, at most 40 lines, at most 400 tokens" in user
    assert "5,000 characters" in user and "smallest edit" in user
    assert "No hard limit" in user_message(request())


def test_answer_format_follows_the_form() -> None:
    delta = user_message(request(form="delta"))
    assert '"op": "insert_after"' in delta and "exactly once" in delta and "line ```json" in delta
    replace = user_message(request(form="replace"))
    assert "COMPLETE new text" in replace and "line ````text" in replace and '"op"' not in replace


def test_extra_instructions_come_last() -> None:
    user = user_message(request(instructions="Write in British English."))
    assert user.endswith("## Further instructions\n\nWrite in British English.")


def test_no_examples() -> None:
    assert "(no examples were given)" in user_message(request(examples=[]))


def test_long_values_are_excerpted_head_and_tail() -> None:
    trajectory = "START " + "x" * 20_000 + " THE END"
    user = user_message(
        request(examples=[ReflectiveExample(instance="long", trajectory=trajectory, feedback="f")])
    )
    assert "START" in user and "THE END" in user
    assert f"[... {len(trajectory) - MAX_FIELD_CHARS} characters omitted ...]" in user
    assert len(user) < 10_000
    assert excerpt("short") == "short"


def test_secrets_are_scrubbed_from_examples_but_not_from_the_component() -> None:
    component = SKILL + f"Never print {SECRET}.\n"
    example = ReflectiveExample(instance="leak", outputs=f"key={SECRET}", feedback="leaked")
    user = user_message(request(current_text=component, examples=[example]))
    assert user.count(SECRET) == 1  # the component, which the proposer must quote exactly
    assert "key=[REDACTED]" in user


def test_a_reply_in_the_requested_format_parses_back() -> None:
    # The fence the prompt asks for holds a component with its own ``` blocks.
    new = SKILL + "Then run `make lint`.\n"
    reply = f"Lint too.\n\n````text\n{new}````\n"
    assert user_message(request(form="replace")).count("````text") == 2
    assert parse_reply(reply, "replace").text == new.rstrip("\n")
