"""The triage example's proposer: a simulated reflection step, honest about it. No LLM.

harnessgit's command-proposer protocol (docs/proposers.md): a JSON request on
stdin (the component's text and a reflective dataset of evaluated tickets), a
JSON answer on stdout. An LLM would read the failures and write a better rule;
this program does something much simpler, in plain sight: for each misrouted
ticket it picks one word of that ticket (the word most shared by the misrouted
tickets of the same expected queue, least seen in tickets routed correctly) and
proposes the rule ``If the ticket mentions "WORD", route to QUEUE.``, inserted
after the last rule. Up to three rules per edit. It generalises only by luck:
"refund" is a good word, "urgent" or "sam" are not, and the gate must tell them
apart on instances the proposer never saw.
"""

from __future__ import annotations

import json
import re
import sys
from collections import Counter
from typing import Any

from agent import FALLBACK, RULE

STOPWORD_TEXT = """
a an the and or but if of to in on at by for with from into over after before since when
what which who how why where there this that these those it its is are was were be been
being do does did have has had i im me my we our you your they them their he she his her
not no yes can cannot could would should will just also very too any all every some each
"""
STOPWORDS = set(STOPWORD_TEXT.split())
WORD = re.compile(r"[a-z][a-z0-9'-]{2,}")
MAX_RULES = 3


def expected_queue(feedback: str) -> str | None:
    found = re.search(r"expected (\w+)", feedback)
    return found.group(1) if found else None


def ticket_of(example: dict[str, Any]) -> str:
    inputs = example.get("inputs")
    return inputs.get("ticket", "") if isinstance(inputs, dict) else ""


def propose(request: dict[str, Any]) -> dict[str, Any]:
    text = request["current_text"]
    lines = text.splitlines()
    known = {m.group(1).lower() for line in lines if (m := RULE.match(line))}
    failing: dict[str, list[set[str]]] = {}
    passing: Counter[str] = Counter()
    for example in request["examples"]:
        words = {w for w in WORD.findall(ticket_of(example).lower()) if w not in STOPWORDS}
        queue = expected_queue(example.get("feedback") or "")
        if (example.get("score") or 0) >= 1 or queue is None:
            passing.update(words)
        else:
            failing.setdefault(queue, []).append(words)
    rules, chosen = [], []
    for queue, tickets in sorted(failing.items()):
        for words in tickets:
            shared = Counter(w for t in tickets for w in t)
            options = sorted(words - known, key=lambda w: (-shared[w], passing[w], -len(w), w))
            if options and len(rules) < MAX_RULES:
                known.add(options[0])
                chosen.append(f'"{options[0]}" -> {queue}')
                rules.append(f'- If the ticket mentions "{options[0]}", route to {queue}.')
    if not rules:
        return {"operations": [], "rationale": "no misrouted ticket in the minibatch"}
    rule_lines = [line for line in lines if RULE.match(line)]
    anchor = rule_lines[-1] if rule_lines else None
    addition = "\n".join(rules)
    misrouted = sum(len(t) for t in failing.values())
    rationale = (f"Route {', '.join(chosen)}\n\n{misrouted} ticket(s) of the minibatch were misrouted; "
                 "each new rule names a word of a misrouted ticket and the queue it expected.")
    if anchor is not None and lines.count(anchor) == 1:
        operation = {"op": "insert_after", "anchor": anchor, "text": addition}
    elif any(FALLBACK.match(line) for line in lines):
        fallback = next(line for line in lines if FALLBACK.match(line))
        operation = {"op": "replace", "old": fallback, "new": addition + "\n" + fallback}
    else:
        operation = {"op": "append", "text": addition}
    return {"operations": [operation], "rationale": rationale}


if __name__ == "__main__":
    json.dump(propose(json.load(sys.stdin)), sys.stdout)
