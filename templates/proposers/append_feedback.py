#!/usr/bin/env python3
"""An example proposer command for harnessgit (docs/proposers.md). No LLM.

What it does, plainly: it reads the proposal request on stdin, collects the
evaluator's feedback on the examples that did not pass (score below 1), and
proposes ONE operation that appends those feedback lines, verbatim, under a
"Lessons from failed tasks" heading. It does not reason about the failures and
it cannot generalise; feedback already in the text is skipped. It exists to show
the protocol and to test a setup end to end without an API key. Replace its
`propose` function with a call to your own model.

Configure it in harnessgit.toml:

    [proposer]
    kind = "command"
    command = ["python3", "templates/proposers/append_feedback.py"]

Protocol: one JSON object in (the request: component, current_text, examples,
limits, form, instructions), one JSON object out: {"operations": [...]} or
{"text": "..."}, with an optional "rationale". Exit 0 unless something is broken.
"""

from __future__ import annotations

import json
import sys
from typing import Any

HEADING = "## Lessons from failed tasks"


def propose(request: dict[str, Any]) -> dict[str, Any]:
    text = request["current_text"]
    lessons: list[str] = []
    for example in request["examples"]:
        score = example.get("score")
        feedback = " ".join((example.get("feedback") or "").split())
        if (score is None or score < 1) and feedback and feedback not in text and feedback not in lessons:
            lessons.append(feedback)
    if not lessons:
        # No operations: harnessgit records this as a rejected proposal, not an error.
        return {"operations": [], "rationale": "no new feedback on a failed example"}
    lines = "\n".join(f"- {lesson}" for lesson in lessons)
    # The heading is added once; later lessons go at the end, below earlier ones.
    addition = lines if HEADING in text else f"\n{HEADING}\n\n{lines}"
    rationale = f"copies the feedback of {len(lessons)} failed example(s) into the text, verbatim"
    if request["form"] == "replace":
        # A command may answer in either form; this one follows the request.
        base = text if text.endswith("\n") or not text else text + "\n"
        return {"text": base + addition + "\n", "rationale": rationale}
    return {"operations": [{"op": "append", "text": addition}], "rationale": rationale}


def main() -> int:
    request = json.load(sys.stdin)
    json.dump(propose(request), sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
