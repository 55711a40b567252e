"""A simulated triage agent: a deterministic stand-in for an LLM, honest about it.

It follows the routing rules written in SKILL.md literally: rules of the form
``- If the ticket mentions "WORD", route to QUEUE.`` are tried in order and the
first whose WORD appears in the ticket (case-insensitive) decides; a line
``- Otherwise route to QUEUE.`` gives the fallback. Nothing else in SKILL.md
changes its behaviour. So a score depends on the harness text through real
computation, with no LLM and no network, which is what an offline demo needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

QUEUES = ("billing", "bug", "account", "other")
RULE = re.compile(r'^\s*[-*]\s*if the ticket mentions "([^"]+)",\s*route (?:it )?to (\w+)\.?\s*$', re.I)
FALLBACK = re.compile(r"^\s*[-*]\s*otherwise,?\s*route (?:it )?to (\w+)\.?\s*$", re.I)


@dataclass
class Decision:
    queue: str | None
    steps: list[str] = field(default_factory=list)


def parse_rules(skill: str) -> tuple[list[tuple[str, str]], str | None]:
    rules, fallback = [], None
    for line in skill.splitlines():
        if match := RULE.match(line):
            rules.append((match.group(1).lower(), match.group(2).lower()))
        elif match := FALLBACK.match(line):
            fallback = match.group(1).lower()
    return rules, fallback


def triage(text: str, skill: str) -> Decision:
    rules, fallback = parse_rules(skill)
    decision = Decision(None, [f"read SKILL.md: {len(rules)} routing rules"])
    lowered = text.lower()
    for word, queue in rules:
        if word in lowered:
            decision.steps.append(f'rule "{word}" matched: route to {queue}')
            decision.queue = queue
            return decision
    decision.steps.append("no rule matched" + (f": fallback {fallback}" if fallback else ", and no fallback"))
    decision.queue = fallback
    return decision
