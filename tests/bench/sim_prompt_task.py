"""A SIMULATED prompt-optimisation task and a SIMULATED reflection LM, shared by
GEPA and harnessgit in tests/bench/bench_vs_gepa.py. No model is called anywhere:
both "the agent" and "the LM" are a few lines of seeded arithmetic below.

The task: the system prompt of a code-review agent, built from rules. The rule
catalogue has 24 useful rules (each tells the agent to look for one kind of defect:
the topics below), 12 distracting rules (style advice: each costs about 1 point
everywhere) and 8 harmful rules (each sounds reasonable but costs 12 points on the
pull requests of a third of the topics, 1 point elsewhere: about -5 on average).

An instance is one pull request with one defect of a topic; topics are Zipf-
distributed (topic k has weight 1 / (k + 1): a few are common). The seed prompt holds
the first useful rule and two distracting ones. The agent finds the defect with
probability (difficulty uniform in [0.15, 0.75])

    p = clip(difficulty + 0.45 * [the topic's useful rule is in the prompt]
             - 0.01 * distracting rules - sum of the harmful rules' costs, 0.02, 0.98)

and the 0/1 outcome is seeded per instance: with probability 0.7 it reuses the
instance's own uniform draw (the same pull request tends to go the same way under a
similar prompt, as with an LLM), otherwise a fresh draw keyed by the prompt's rule
set. So an outcome is a deterministic function of (seed, instance, rule set): a
cache may keep it, and two tools evaluating the same prompt get the same scores.

The reflection LM reads a prompt text (its rules: lines "- [U07] ...") and
feedback (failed instances say "(topic t07)"), seeds a generator with a hash of
(seed, regime, the rule set, the failed topics) and proposes ONE rule edit, drawn
per regime: "right" adds the useful rule of a failed topic that lacks it (or
removes a harmful rule), "distracting" adds a distracting rule, "harmful" adds a
harmful rule or drops a useful one. Its answer depends only on that canonical
input, so GEPA's prompt and harnessgit's proposal request, carrying the same
prompt and the same failures, get the same edit.

Standard library only: the harnessgit wiring runs it inside evaluator and
proposer commands.
"""

from __future__ import annotations

import hashlib
import math
import random
import re
from dataclasses import dataclass

USEFUL, DISTRACTING, HARMFUL = 24, 12, 8
LIFT = 0.45  # what the topic's rule adds to the chance of finding the defect
DISTRACTION = 0.01
HARM_HIT, HARM_MISS = 0.12, 0.01
STICKY = 0.7  # chance an outcome reuses the instance's own draw
SPLITS = {"train": 150, "selection": 36, "test": 300}
REGIMES = {  # (right, distracting, harmful) shares of the LM's proposals
    "helpful": (0.55, 0.30, 0.15),
    "hard": (0.15, 0.35, 0.50),
}
TOPICS = [
    "SQL built by string concatenation",
    "unchecked null return",
    "resource not closed",
    "off-by-one loop bound",
    "race on shared state",
    "secret in source",
    "missing input validation",
    "swallowed exception",
    "integer overflow",
    "path traversal",
    "wrong time zone handling",
    "unbounded retry",
    "mutable default argument",
    "float compared for equality",
    "missing test for the change",
    "dead code left behind",
    "N+1 database queries",
    "unsafe deserialisation",
    "missing authorisation check",
    "log of personal data",
    "blocking call in async code",
    "cache never invalidated",
    "breaking API change unversioned",
    "locale-dependent parsing",
]
STYLE = [
    "Prefer single quotes.",
    "Mention the author by name.",
    "Praise the change first.",
    "Keep comments under 80 characters.",
    "Suggest renaming short variables.",
    "Ask for a changelog entry.",
    "Recommend type hints everywhere.",
    "Point out trailing whitespace.",
    "Suggest splitting long files.",
    "Ask about performance benchmarks.",
    "Recommend more docstrings.",
    "Note the commit message style.",
]
RISKY = [
    "Approve changes under 20 lines without reading them.",
    "Ignore test files.",
    "Trust comments that say code is safe.",
    "Skip generated and vendored code, including migrations.",
    "Report at most one issue per review.",
    "Assume inputs were validated upstream.",
    "Do not comment on code the change did not touch.",
    "Treat warnings from linters as noise.",
]
RULE = re.compile(r"^- \[([UDH]\d\d)\]", re.MULTILINE)
TOPIC = re.compile(r"\(topic t(\d\d)\)")
HEADER = "# Code review\n\nYou review pull requests. Follow these rules:\n\n"
SEED_RULES = ("U00", "D00", "D01")


def rule_text(rule: str) -> str:
    kind, k = rule[0], int(rule[1:])
    if kind == "U":
        return f"Look for {TOPICS[k].lower()}."
    return STYLE[k] if kind == "D" else RISKY[k]


def render(rules: frozenset[str]) -> str:
    """The prompt: a header and one line per rule, in a canonical order."""
    return HEADER + "".join(f"- [{r}] {rule_text(r)}\n" for r in sorted(rules))


def rules_of(text: str) -> frozenset[str]:
    return frozenset(RULE.findall(text))


def seed_prompt() -> str:
    return render(frozenset(SEED_RULES))


def _unit(*parts: object) -> float:
    """A uniform draw in [0, 1), a pure function of ``parts``."""
    digest = hashlib.blake2b(repr(parts).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64


@dataclass(frozen=True)
class Instance:
    id: str
    topic: int
    difficulty: float


@dataclass(frozen=True)
class World:
    """One seed's pull requests and harmful rules' reach."""

    seed: int
    instances: dict[str, Instance]
    splits: dict[str, list[str]]
    harm_topics: dict[str, frozenset[int]]  # harmful rule -> the topics it hurts

    def p(self, instance: str, rules: frozenset[str]) -> float:
        inst = self.instances[instance]
        p = inst.difficulty + (LIFT if f"U{inst.topic:02d}" in rules else 0.0)
        for rule in rules:
            if rule[0] == "D":
                p -= DISTRACTION
            elif rule[0] == "H":
                p -= HARM_HIT if inst.topic in self.harm_topics[rule] else HARM_MISS
        return min(0.98, max(0.02, p))

    def outcome(self, instance: str, rules: frozenset[str]) -> float:
        key = ",".join(sorted(rules))
        sticky = _unit(self.seed, "sticky", instance, key) < STICKY
        u = _unit(self.seed, "u", instance) if sticky else _unit(self.seed, "fresh", instance, key)
        return 1.0 if u < self.p(instance, rules) else 0.0

    def feedback(self, instance: str, rules: frozenset[str], score: float) -> str:
        if score >= 1.0:
            return "found the defect"
        topic = self.instances[instance].topic
        if f"U{topic:02d}" in rules:
            return f"missed {TOPICS[topic].lower()} although a rule covers it (topic t{topic:02d})"
        return f"missed {TOPICS[topic].lower()} (topic t{topic:02d})"

    def expected(self, text: str, split: str = "test") -> float:
        """The true mean score of a prompt on a split: no outcome noise."""
        rules = rules_of(text)
        ids = self.splits[split]
        return math.fsum(self.p(i, rules) for i in ids) / len(ids)


def world(seed: int) -> World:
    rng = random.Random(f"world:{seed}")
    weights = [1 / (k + 1) for k in range(USEFUL)]
    instances: dict[str, Instance] = {}
    splits: dict[str, list[str]] = {}
    for split, count in SPLITS.items():
        ids = [f"{split[:2]}{n:03d}" for n in range(count)]
        for iid in ids:
            topic = rng.choices(range(USEFUL), weights)[0]
            instances[iid] = Instance(iid, topic, rng.uniform(0.15, 0.75))
        splits[split] = ids
    harm = {f"H{k:02d}": frozenset(rng.sample(range(USEFUL), USEFUL // 3)) for k in range(HARMFUL)}
    return World(seed, instances, splits, harm)


def reflect(prompt: str, *, seed: int, regime: str) -> str:
    """The simulated LM: one rule edit to the prompt found in ``prompt``, as the new
    prompt text. ``prompt`` is whatever the tool sends (GEPA's reflection prompt or
    harnessgit's request rendered as text); only its rules and failed topics count."""
    rules = rules_of(prompt)
    failed = sorted(set(TOPIC.findall(prompt)))
    rng = random.Random(f"lm:{seed}:{regime}:{','.join(sorted(rules))}:{','.join(failed)}")
    right, distracting, _harmful = REGIMES[regime]
    draw = rng.random()
    kind = "right" if draw < right else "distracting" if draw < right + distracting else "harmful"
    return render(_edit(rules, failed, kind, rng))


def _edit(rules: frozenset[str], failed: list[str], kind: str, rng: random.Random) -> frozenset[str]:
    def absent(prefix: str, count: int) -> list[str]:
        return [r for r in (f"{prefix}{k:02d}" for k in range(count)) if r not in rules]

    present = sorted(rules)
    if kind == "right":
        missing = [f"U{t}" for t in failed if f"U{t}" not in rules]
        harmful = [r for r in present if r[0] == "H"]
        if missing:
            return rules | {rng.choice(missing)}
        if harmful:
            return rules - {rng.choice(harmful)}
        options = absent("U", USEFUL)
        return rules | {rng.choice(options)} if options else rules
    if kind == "distracting":
        options = absent("D", DISTRACTING)
        if options:
            return rules | {rng.choice(options)}
        kind = "harmful"
    useful = [r for r in present if r[0] == "U"]
    if useful and rng.random() < 0.3:
        return rules - {rng.choice(useful)}
    options = absent("H", HARMFUL)
    return rules | {rng.choice(options)} if options else rules
