from __future__ import annotations

from harnessgit.bisect.bisect import BisectResult, FirstBad
from harnessgit.bisect.explain import OwnEffect
from harnessgit.bisect.judge import Criterion, Step
from harnessgit.bisect.render import bisect_text, step_line
from harnessgit.candidates.show import FileChange
from tests.bisect.test_explain import gate

GOOD = Step(commit="a" * 40, position=0, state="good", source="stored", mean=0.5)
BAD = Step(commit="b" * 40, position=3, state="bad", source="evaluated", mean=0.375)


def test_a_step_line_says_where_what_and_from_where() -> None:
    assert step_line(GOOD) == f" good  {'a' * 12}  good  stored     mean 50.0"
    assert step_line(BAD).startswith(f"   #3  {'b' * 12}  bad   evaluated  mean 37.5")
    skipped = Step(commit="c" * 40, position=-1, state="skip", source="failed", reason="it crashed")
    assert step_line(skipped).endswith("judged  cccccccccccc  skip  failed     not judged: it crashed")
    one = Step(
        commit="d" * 40, position=2, state="bad", source="stored", scores={"s-9": 0.0}, failing=["s-9"]
    )
    assert step_line(one).endswith("s-9 0.00; failing: s-9")


def result(first: FirstBad | None) -> BisectResult:
    return BisectResult(
        good=GOOD.commit,
        bad=BAD.commit,
        criterion=Criterion.build("selection", None, None, None),
        description="the selection mean falls more than 5.0 points below good's",
        model="sim-1",
        edits=3,
        evaluations=1,
        bound=4,
        outcome="found" if first else "ambiguous",
        message="the message",
        steps=[GOOD, BAD],
        first_bad=first,
        suspects=[] if first else ["e" * 40, BAD.commit],
        notes=[],
        model_change=None,
    )


def test_the_search_then_the_suspects() -> None:
    text = bisect_text(result(None))
    assert text.splitlines()[:3] == [
        f"bisect: 3 commits on the first-parent chain from good {'a' * 12} to bad {'b' * 12}",
        "  bad means: the selection mean falls more than 5.0 points below good's, every commit judged "
        "for model sim-1",
        "  judged 2 commits; evaluated 1 (at most ceil(log2 3) + 2 = 4), the rest from stored scores",
    ]
    assert text.endswith(f"the message\n  suspect {'e' * 12}\n  suspect {'b' * 12}")


def test_a_gated_first_bad_edit_shows_its_effect_and_the_gates_numbers() -> None:
    own = OwnEffect(
        n=40, before=0.5, after=0.375, difference=-0.125, se=0.05, losses=11, ties=29, regressed=["s-1"]
    )
    first = FirstBad(
        commit=BAD.commit,
        position=3,
        subject="Route politely",
        author="A <a@b>",
        date="2026-01-01T00:00:00+00:00",
        kind="gated merge",
        candidate="c" * 12,
        merged="f" * 40,
        before=GOOD,
        after=BAD,
        own=own,
        files=[FileChange(path="SKILL.md", status="M", added=2, removed=1)],
        diff="",
        gate=gate(reasons=["a reason on record"]),
        override=None,
        proposal=None,
        evidence=[],
        accepted_on="the gate passed it",
        why=["it slipped through"],
    )
    lines = bisect_text(result(first)).split("\nthe message\n", 1)[1].splitlines()
    assert lines == [
        "",
        f"first bad edit: #3 {'b' * 12} Route politely",
        f"  gated merge of candidate {'c' * 12}, by A <a@b>, 2026-01-01T00:00:00+00:00",
        f"  before it ({'a' * 12}): mean 50.0; after: mean 37.5",
        "  its own effect: -12.5 points on 40 instances (wins/losses/ties 0/11/29); lower on s-1",
        "  how it got through:",
        "  - it slipped through",
        "  accepted on: the gate passed it",
        "    gate reason: a reason on record",
        "  files: SKILL.md +2 -1",
    ]
