"""The triage example's evaluator, speaking harnessgit's evaluator protocol.

harnessgit runs it in a fresh checkout of the evaluated commit, with the instance
ids on standard input; it prints one JSON object per instance. The agent is
simulated (see agent.py): the scores are real computation on the harness text.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent import QUEUES, triage

here = Path(__file__).parent
tickets = {t["id"]: t for t in map(json.loads, (here / "tickets.jsonl").read_text().splitlines())}
skill = (here / "SKILL.md").read_text()

for instance in (line.strip() for line in sys.stdin):
    if not instance:
        continue
    ticket = tickets[instance]
    decision = triage(ticket["text"], skill)
    correct = decision.queue == ticket["queue"]
    if correct:
        failure, feedback = None, f"correct: routed to {decision.queue}"
    elif decision.queue not in QUEUES:
        failure, feedback = "no-route", f"no queue chosen; expected {ticket['queue']}"
    else:
        failure = "wrong-queue"
        feedback = f"routed to {decision.queue}, expected {ticket['queue']}"
    print(json.dumps({
        "instance": instance,
        "score": 1.0 if correct else 0.0,
        "feedback": feedback,
        "trajectory": {"inputs": {"ticket": ticket["text"]}, "outputs": {"queue": decision.queue},
                       "steps": decision.steps},
        "failure_class": failure,
        "cluster": ticket["family"],  # near-duplicate tickets share a phrase family
    }))
