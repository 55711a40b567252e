"""What each edit of a chain did on its own, from the scores on record.

A merge lands every proposal from the base up to the candidate
(`harnessgit.targets.proposal_chain`), and the gate measures them together. Crediting
that gain to the last edit misleads: in one run a "+30.6 pts" merge was titled with
a harmful rule, the last of 7 edits (issue 12). An edit's own effect is its
selection scores against those of the commit it was proposed on, paired on the
instances both have, under one evaluator and model. Nothing is evaluated here: an
edit whose side has no stored scores has no effect to show ("not evaluated").
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessgit.config import Config
from harnessgit.evaluation.context import Key
from harnessgit.evaluation.fingerprint import harness_tree_id
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.stats.decision import compare
from harnessgit.stats.pairing import Scored, pair_scores
from harnessgit.store import Store
from harnessgit.targets import Provenance, proposed_on


@dataclass(frozen=True, kw_only=True)
class Effect:
    """One edit's own measured effect on the selection split."""

    n: int  # instances scored on both the edit and the commit it was proposed on
    parent_mean: float  # over those instances
    mean: float
    difference: float  # mean - parent_mean


@dataclass(frozen=True)
class Measure:
    """Where effects are read: the scores on record under one evaluator and model
    (the gate's), on the selection instances, harness files named by ``config``."""

    store: Store
    config: Config
    book: ScoreBook
    fingerprint: str
    model: str
    instances: list[str]

    def scored(self, commit: str) -> Scored:
        harness = harness_tree_id(self.store.objects.files_at(commit), self.config)
        return self.book.scored(Key(harness, self.fingerprint, self.model), self.instances)


def own_effects(measure: Measure, chain: list[Provenance]) -> list[Effect | None]:
    """Each edit's effect against the commit it was proposed on; None where fewer than
    two selection instances are scored on both."""
    scored: dict[str, Scored] = {}

    def scores_of(commit: str) -> Scored:
        if commit not in scored:
            scored[commit] = measure.scored(commit)
        return scored[commit]

    effects: list[Effect | None] = []
    for origin in chain:
        parent = proposed_on(measure.store, origin)
        paired = None if parent is None else pair_scores(scores_of(parent), scores_of(origin.commit))
        if paired is None:
            effects.append(None)
            continue
        c = compare(paired)
        effects.append(
            Effect(n=c.n, parent_mean=c.base.mean, mean=c.candidate.mean, difference=c.difference.mean)
        )
    return effects
