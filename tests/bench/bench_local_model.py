"""The real local model's speed: rollouts per minute and tokens per second (issue 29).

    python tests/bench/bench_local_model.py [--tickets 12] [--url URL]

Starts the pinned model (templates/local_model/serve.py; the weights must be fetched)
on a free port on 127.0.0.1, or uses the server at --url, then answers --tickets
triage tickets one at a time as the local-model example's evaluator does (SKILL.md as
the system prompt, at most 8 tokens, temperature 0), and prints:

- rollouts per minute (one rollout = one ticket answered),
- prompt tokens per second and generated tokens per second, from the server's own
  timings (llama.cpp reports them per request),
- the same rollouts through the simulated rule agent (templates/triage/agent.py) in this
  run, as the baseline, and the ratio.

The machine's load average is printed too: on a shared 2-core machine the figures move
with it.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LOCAL = ROOT / "templates" / "local_model"
sys.path.insert(0, str(LOCAL))
sys.path.insert(0, str(ROOT / "templates" / "triage"))

from agent import triage  # noqa: E402  (the simulated baseline)
from serve import start  # noqa: E402


def ask(url: str, skill: str, ticket: str) -> dict:
    body = {
        "model": "local",
        "messages": [{"role": "system", "content": skill}, {"role": "user", "content": ticket}],
        "max_tokens": 8,
        "temperature": 0,
        "seed": 0,
    }
    request = urllib.request.Request(
        f"{url}/chat/completions", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=600) as reply:
        return json.load(reply)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tickets", type=int, default=12)
    parser.add_argument("--url", help="use this server instead of starting one")
    args = parser.parse_args()
    tickets = [
        json.loads(line)
        for line in (ROOT / "templates" / "triage" / "tickets.jsonl").read_text().splitlines()
    ]
    tickets = tickets[: args.tickets]
    skill = (LOCAL / "triage" / "SKILL.md").read_text()
    server = None
    url = args.url
    if url is None:
        began = time.monotonic()
        server, url = start(free_port())
        print(f"server up in {time.monotonic() - began:.1f} s")
    print(f"load average at start: {os.getloadavg()[0]:.1f} (2 cores)")
    prompt_n = prompt_ms = predicted_n = predicted_ms = 0.0
    began = time.monotonic()
    for ticket in tickets:
        timings = ask(url, skill, ticket["text"]).get("timings", {})
        prompt_n += timings.get("prompt_n", 0)
        prompt_ms += timings.get("prompt_ms", 0)
        predicted_n += timings.get("predicted_n", 0)
        predicted_ms += timings.get("predicted_ms", 0)
    real = time.monotonic() - began
    began = time.monotonic()
    rule_skill = (ROOT / "templates" / "triage" / "SKILL.md").read_text()
    for ticket in tickets:
        triage(ticket["text"], rule_skill)
    simulated = max(time.monotonic() - began, 1e-9)
    per_minute = len(tickets) / real * 60
    print(f"load average at end: {os.getloadavg()[0]:.1f}")
    print("| rollouts | wall | rollouts/min | prompt tokens/s | generated tokens/s |")
    print("|---|---|---|---|---|")
    print(
        f"| {len(tickets)} real | {real:.1f} s | {per_minute:.1f} | "
        f"{prompt_n / max(prompt_ms, 1e-9) * 1000:.1f} ({prompt_n:.0f} tokens) | "
        f"{predicted_n / max(predicted_ms, 1e-9) * 1000:.1f} ({predicted_n:.0f} tokens) |"
    )
    print(
        f"| {len(tickets)} simulated (baseline) | {simulated * 1000:.2f} ms "
        f"| {len(tickets) / simulated * 60:,.0f} | - | - |"
    )
    print(f"ratio: the real model is {real / simulated:,.0f}x slower per rollout than the simulated agent")
    del server


if __name__ == "__main__":
    main()
