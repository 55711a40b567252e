"""A recorded trajectory as a chat conversation, and the turn where it went wrong.

The co-evolution paper's fix for a student that got worse on the evolved harness was
"on-policy single-turn correction": take the student's own failing trajectories, locate
the failing turn, have a teacher rewrite only that turn (arXiv 2609.09134: 78.0 -> 79.7).
Pure: a trajectory (whatever JSON the evaluator recorded) in, messages and an index out.

The rule for the failing turn, first that applies:

1. the evaluator named it: the trajectory is an object with an integer ``failing_turn``,
   the index of an assistant message (rule ``evaluator``);
2. a planning failure (the failure class names planning, a loop or a repeat) with an
   assistant turn that repeats an earlier assistant turn word for word: the first such
   repeat, where the loop starts (rule ``repeat``; the paper's looping student ran the
   same view command 29 times);
3. otherwise the last assistant turn: the answer that was wrong or the turn that
   stopped early (rule ``last-assistant``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from harnessgit.canonical import dumps_canonical

ROLES = ("system", "user", "assistant", "tool")
# Keys under which a trajectory object keeps its turns, in the order they are tried.
_TURN_KEYS = ("messages", "turns", "steps")
_PLANNING = ("planning", "loop", "repeat")


@dataclass(frozen=True)
class FailingTurn:
    index: int  # into the conversation's messages
    rule: str  # "evaluator", "repeat" or "last-assistant"


def chat_messages(trajectory: Any) -> list[dict[str, str]] | None:
    """The trajectory's turns as chat messages ({role, content}), or None when it has
    no list of turns. A turn that is not a chat message (a tool call or an action as an
    object) is the agent's: an assistant message holding its compact JSON."""
    turns = trajectory if isinstance(trajectory, list) else None
    if isinstance(trajectory, dict):
        turns = next((trajectory[k] for k in _TURN_KEYS if isinstance(trajectory.get(k), list)), None)
    if not turns:
        return None
    messages = []
    for turn in turns:
        if isinstance(turn, dict) and turn.get("role") in ROLES:
            content = turn.get("content")
            messages.append(
                {
                    "role": str(turn["role"]),
                    "content": content if isinstance(content, str) else _text(content),
                }
            )
        else:
            messages.append({"role": "assistant", "content": turn if isinstance(turn, str) else _text(turn)})
    return messages


def failing_turn(
    messages: list[dict[str, str]], trajectory: Any, failure_class: str | None
) -> FailingTurn | None:
    """Where the conversation went wrong, by the rule in this module's docstring; None
    when it has no assistant turn."""
    assistant = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
    if not assistant:
        return None
    named = trajectory.get("failing_turn") if isinstance(trajectory, dict) else None
    if isinstance(named, int) and not isinstance(named, bool) and named in assistant:
        return FailingTurn(named, "evaluator")
    if failure_class and any(word in failure_class.lower() for word in _PLANNING):
        seen: set[str] = set()
        for i in assistant:
            if messages[i]["content"] in seen:
                return FailingTurn(i, "repeat")
            seen.add(messages[i]["content"])
    return FailingTurn(assistant[-1], "last-assistant")


def _text(value: Any) -> str:
    return dumps_canonical(value)
