"""The local-model triage example's evaluator: a real LLM as the agent, under SKILL.md.

harnessgit runs it in a fresh checkout of the evaluated commit with the instance ids on
standard input (docs/evaluator.md). For each ticket it asks the model served by
templates/local_model/serve.py, with SKILL.md as the system prompt and the ticket as
the user message (temperature 0, a fixed seed, at most 8 tokens), takes the first queue
name in the reply, and prints one JSON object per ticket. Nothing is simulated here:
the score is what the model answered.

LOCAL_MODEL_URL (default http://127.0.0.1:8089/v1) names the server; harnessgit.toml
passes it through ``[evaluator] env``. A request that gets no answer within
LOCAL_MODEL_TIMEOUT seconds (default 120) is tried once more; then the batch fails
with one line on stderr and exit 1, so that harnessgit records nothing for it (a
re-run does only what is missing). A timeout is the server's trouble, not a wrong
answer, and is never scored 0. Progress goes to stderr, one line per ticket.
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

QUEUES = ("billing", "bug", "account", "other")
QUEUE = re.compile(r"\b(billing|bug|account|other)\b")
URL = os.environ.get("LOCAL_MODEL_URL", "http://127.0.0.1:8089/v1").rstrip("/")
TIMEOUT = float(os.environ.get("LOCAL_MODEL_TIMEOUT", "120"))

here = Path(__file__).parent
tickets = {t["id"]: t for t in map(json.loads, (here / "tickets.jsonl").read_text().splitlines())}
skill = (here / "SKILL.md").read_text()


def ask(ticket: str) -> dict:
    body = {
        "model": "local",
        "messages": [{"role": "system", "content": skill}, {"role": "user", "content": ticket}],
        "max_tokens": 8,
        "temperature": 0,
        "seed": 0,
    }
    request = urllib.request.Request(
        f"{URL}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    for attempt in (1, 2):
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as reply:
                return json.load(reply)
        except (TimeoutError, urllib.error.URLError, ConnectionError) as error:
            if attempt == 2:
                raise SystemExit(
                    f"eval.py: no answer from {URL} within {TIMEOUT:g} s, twice ({error}); "
                    "is templates/local_model/serve.py running?"
                ) from None
    raise AssertionError("unreachable")


def main() -> None:
    instances = [line.strip() for line in sys.stdin if line.strip()]
    for number, instance in enumerate(instances, 1):
        ticket = tickets[instance]
        started = time.monotonic()
        answer = ask(ticket["text"])
        seconds = time.monotonic() - started
        choice = answer["choices"][0]
        reply = choice["message"].get("content") or ""
        found = QUEUE.search(reply.lower())
        queue = found.group(1) if found else None
        correct = queue == ticket["queue"]
        if correct:
            failure, feedback = None, f"correct: routed to {queue}"
        elif queue is None:
            failure, feedback = (
                "no-route",
                f"no queue in the reply {reply[:60]!r}; expected {ticket['queue']}",
            )
        else:
            failure, feedback = "wrong-queue", f"routed to {queue}, expected {ticket['queue']}"
        usage = answer.get("usage") or {}
        print(f"eval.py: {number}/{len(instances)} {instance}: {queue} in {seconds:.1f} s", file=sys.stderr)
        print(
            json.dumps(
                {
                    "instance": instance,
                    "score": 1.0 if correct else 0.0,
                    "feedback": feedback,
                    "trajectory": {
                        "inputs": {"ticket": ticket["text"]},
                        "outputs": {"queue": queue, "reply": reply},
                        "steps": [f"asked {URL} ({choice.get('finish_reason')})"],
                    },
                    "failure_class": failure,
                    "cluster": ticket["family"],
                    "cost": {
                        "prompt_tokens": usage.get("prompt_tokens", 0),
                        "completion_tokens": usage.get("completion_tokens", 0),
                        "seconds": round(seconds, 3),
                    },
                }
            ),
            flush=True,
        )


main()
