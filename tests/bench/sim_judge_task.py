"""A second SIMULATED task for tests/bench/bench_vs_gepa.py (``--task judge``), of
another shape than sim_prompt_task's 0/1 outcomes on independent instances: partial
credit from a NOISY JUDGE, on CLUSTERED instances. No model and no judge is called:
both are seeded arithmetic below, like sim_prompt_task.

Same prompt, same rules, same simulated reflection LM as sim_prompt_task (imported
from it); what differs is how a review is scored and how instances hang together:

- Clustered instances. Pull requests come from repositories of ``CLUSTER_SIZE``;
  the pull requests of one repository share a difficulty offset (uniform in
  [-0.15, 0.15]) and, with probability ``SAME_TOPIC``, the repository's usual defect
  topic. The evaluator reports each instance's repository as its ``cluster``, so the
  gate resamples whole repositories.
- Partial credit. The judge checks ``RUBRIC`` items of a review; each is met with
  the chance p of sim_prompt_task (same stickiness per instance as there), and the
  score is the share met: 0, 0.25, 0.5, 0.75 or 1.
- A noisy judge. With probability ``SLIP`` the judge ignores the review and gives a
  grade drawn uniformly from those five, a pure function of (seed, instance, rule
  set) like every score here, so a cache may keep it.

The true expected score of a prompt on an instance is (1 - SLIP) * p + SLIP * 0.5,
which `expected` averages over a split (no outcome noise).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from sim_prompt_task import (  # noqa: F401  (re-exported: the bench reads them from this module)
    HARMFUL,
    SEED_RULES,
    SPLITS,
    STICKY,
    TOPICS,
    USEFUL,
    Instance,
    World,
    _unit,
    reflect,
    render,
    rules_of,
    seed_prompt,
)

CLUSTER_SIZE = 3  # pull requests per repository: 12 repositories on the 36-instance selection split
SAME_TOPIC = 0.6  # chance a pull request has its repository's usual defect topic
RUBRIC = 4  # items the judge checks; the score is the share met
SLIP = 0.2  # chance the judge grades at random
GRADES = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class JudgedWorld(World):
    """sim_prompt_task's world, scored by a noisy partial-credit judge, in clusters."""

    clusters: dict[str, str]  # instance -> its repository

    def cluster(self, instance: str) -> str:
        return self.clusters[instance]

    def outcome(self, instance: str, rules: frozenset[str]) -> float:
        key = ",".join(sorted(rules))
        if _unit(self.seed, "slip", instance, key) < SLIP:
            return GRADES[int(_unit(self.seed, "grade", instance, key) * len(GRADES))]
        p = self.p(instance, rules)
        met = 0
        for item in range(RUBRIC):
            sticky = _unit(self.seed, "sticky", instance, item, key) < STICKY
            u = (
                _unit(self.seed, "u", instance, item)
                if sticky
                else _unit(self.seed, "fresh", instance, item, key)
            )
            met += u < p
        return met / RUBRIC

    def feedback(self, instance: str, rules: frozenset[str], score: float) -> str:
        if score >= 1.0:
            return "found the defect"
        return super().feedback(instance, rules, 0.0) + f" (judge: {score:.2f})"

    def expected(self, text: str, split: str = "test") -> float:
        rules = rules_of(text)
        ids = self.splits[split]
        return math.fsum((1 - SLIP) * self.p(i, rules) + SLIP * 0.5 for i in ids) / len(ids)


def world(seed: int) -> JudgedWorld:
    rng = random.Random(f"judge-world:{seed}")
    weights = [1 / (k + 1) for k in range(USEFUL)]
    instances: dict[str, Instance] = {}
    splits: dict[str, list[str]] = {}
    clusters: dict[str, str] = {}
    for split, count in SPLITS.items():
        ids = [f"{split[:2]}{n:03d}" for n in range(count)]
        for start in range(0, count, CLUSTER_SIZE):
            repository = f"{split[:2]}-repo{start // CLUSTER_SIZE:02d}"
            usual = rng.choices(range(USEFUL), weights)[0]
            offset = rng.uniform(-0.15, 0.15)
            for iid in ids[start : start + CLUSTER_SIZE]:
                topic = usual if rng.random() < SAME_TOPIC else rng.choices(range(USEFUL), weights)[0]
                difficulty = min(0.9, max(0.05, rng.uniform(0.15, 0.75) + offset))
                instances[iid] = Instance(iid, topic, difficulty)
                clusters[iid] = repository
        splits[split] = ids
    harm = {f"H{k:02d}": frozenset(rng.sample(range(USEFUL), USEFUL // 3)) for k in range(HARMFUL)}
    return JudgedWorld(seed, instances, splits, harm, clusters)
