"""Evolve's own default policy, and gating once at the end of a run (GEPA adopts its best).

Where proposals help, what an evolve run that gates each look as it comes leaves
unmerged is lineages of small edits (1-3 points each) that no single look on 36
selection instances can confirm when it is scored, while every early merge of a lucky
look raises the bar the later looks are measured against. GEPA keeps building on its
best candidates and adopts its best-scoring one at the end. With ``[evolve] adopt =
"end"`` (the default under bayes) evolve does the same and asks once: nothing is gated
during the run (every look is still screened, and joins the looks the prior is learned
from); when the run ends, the frontier member most likely to gain under the prior
learned from every screened look (`most_likely`: mostly the tip of the lineage that
accumulated most, all its edits measured together against the base) is gated, or merged
with ``--auto-merge``, under the policy. The posterior under that prior conditions on
the data that selected the member, so it corrects the winner's curse of taking the best
of many (docs/gate.md, "Evolve's default"); the gain the merge message states is that
corrected one.

`evolve_rules` says which policy decides: ``[gate] policy`` when harnessgit.toml sets
it, else evolve's own default (`EVOLVE_POLICY`, q `EVOLVE_Q` unless ``[gate] q`` is
set). The gate record holds the policy and q it decided with; the iteration record's
reason says where they came from.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from harnessgit import layout
from harnessgit.candidates.propose import Proposal
from harnessgit.config import Config
from harnessgit.errors import ConfigError
from harnessgit.evolve.gating import gate, gated_before, screened_gains, verdict_on
from harnessgit.evolve.record import Draw, Ending, write_record
from harnessgit.evolve.session import Session
from harnessgit.evolve.state import BudgetReached
from harnessgit.gate.prior import all_gate_records
from harnessgit.records import GateRecord, IterationRecord
from harnessgit.render import points
from harnessgit.stats.decision import compare
from harnessgit.stats.pairing import Scored, pair_scores
from harnessgit.stats.verdict import Prior, chance_above, posterior, screened_prior

# Evolve's default where harnessgit.toml's [gate] sets no policy (docs/gate.md says why).
EVOLVE_POLICY: Literal["bayes"] = "bayes"
EVOLVE_Q = 0.5


@dataclass(frozen=True)
class Rules:
    """How an evolve run gates: the configuration with the [gate] rules that decide,
    where they came from, whether it gates once at the end, and the (policy, q) the
    gate must decide with instead of the base's committed ones (None: the committed)."""

    config: Config
    source: str  # "[gate] policy" or "evolve's default ([gate] policy not set)"
    at_end: bool
    override: tuple[Literal["strict", "bayes", "elond"], float] | None


def evolve_rules(config: Config) -> Rules:
    """The rules an evolve run gates with (module docstring). ``[evolve] adopt = "end"``
    under a policy other than bayes is one line naming the setting (ConfigError)."""
    rules = config.gate
    if "policy" in rules.given:
        source, override = "[gate] policy", None
    else:
        q = rules.q if "q" in rules.given else EVOLVE_Q
        rules = replace(rules, policy=EVOLVE_POLICY, q=q)
        source, override = "evolve's default ([gate] policy not set)", (rules.policy, rules.q)
    adopt = config.evolve.adopt
    if adopt == "end" and rules.policy != "bayes":
        raise ConfigError(
            f'harnessgit.toml: evolve.adopt: "end" needs [gate] policy "bayes" (the posterior corrects '
            f'for choosing the best of the run), not "{rules.policy}"'
        )
    at_end = adopt == "end" or (adopt == "auto" and rules.policy == "bayes")
    return Rules(replace(config, gate=rules), source, at_end, override)


@dataclass(frozen=True)
class Choice:
    """The frontier member the end of the run gates (`best_member`): the candidate, its
    selection mean and the base's, its chance of gaining more than min_effect under the
    prior it is gated with, and what the choice considered (for the record)."""

    candidate: Proposal
    mean: float
    base_mean: float
    chance: float
    considered: str


def best_member(session: Session) -> Choice | None:
    """Of the frontier members above the base's selection mean that descend from the
    base's tip (scored already: gating one reads no new rollout) and were not gated
    before against this base, the one most likely to gain more than min_effect under the
    prior the gate decides with (`most_likely`); None when there is none."""
    view = session.frontier()
    tip = session.base_commit()
    base = session.evaluate(tip, "selection", session.selection)
    if base is None:
        return None
    order = {cid: place for place, cid in enumerate(view.members)}
    rows = sorted(
        (row for row in view.frontier.rows if row.candidate != view.base and row.mean > base),
        key=lambda row: order[row.candidate],
    )
    means: dict[str, float] = {}
    chances: dict[str, float] = {}
    gates = all_gate_records(session.store.notes)
    priors: dict[tuple[tuple[float, float], ...], Prior] = {}  # one prior for all, mostly
    for row in rows:
        commit = view.members[row.candidate].commit
        if not session.store.history.is_ancestor(tip, commit) or gated_before(session, commit):
            continue
        chance = chance_of_gain(session, tip, commit, gates, priors)
        if chance is not None:
            means[row.candidate], chances[row.candidate] = row.mean, chance
    if not chances:
        return None
    cid = most_likely(chances)
    considered = ", ".join(
        f"{other} {points(means[other] - base)} points, chance {chances[other]:.0%}" for other in chances
    )
    commit = view.members[cid].commit
    proposal = Proposal(
        candidate=cid, commit=commit, parent=tip, components=[], ref=layout.candidate_ref(cid)
    )
    return Choice(proposal, means[cid], base, chances[cid], considered)


def chance_of_gain(
    session: Session,
    tip: str,
    commit: str,
    gates: list[GateRecord],
    priors: dict[tuple[tuple[float, float], ...], Prior],
) -> float | None:
    """The chance that ``commit`` gains more than min_effect over ``tip`` on the selection
    split, under the prior the gate would decide it with (the gains of the gate records
    from before the run and every look this run screened: `screened_gains`); ``priors``
    keeps the priors learned so far, by the gains they were learned from."""
    base_key, cand_key = session.context(tip).key, session.context(commit).key
    gains = tuple(screened_gains(session, gates, (base_key.harness, cand_key.harness)))
    prior = priors.get(gains) or priors.setdefault(gains, screened_prior(gains))
    return chance_on(
        session.book.scored(base_key, session.selection),
        session.book.scored(cand_key, session.selection),
        prior,
        session.config.gate.min_effect,
    )


def chance_on(base: Scored, candidate: Scored, prior: Prior, min_effect: float) -> float | None:
    """The chance the bayes policy states on these scores: that the candidate gains more
    than ``min_effect`` under ``prior``; None when fewer than two instances are scored on
    both sides."""
    paired = pair_scores(base, candidate)
    if paired is None:
        return None
    difference = compare(paired).difference
    return chance_above(posterior(prior, difference.mean, difference.se), min_effect)


def most_likely(chances: dict[str, float]) -> str:
    """The candidate of ``chances`` (in the order proposed) most likely to gain: the
    highest chance, ties to the first proposed, as GEPA's best is the first program with
    the best mean (not the candidate id, which is random: a run with one seed adopts the
    same candidate every time).

    Why the chance rather than the selection mean: of two members with the same mean on
    the selection split, one winning 4 instances and losing none is likelier a gain than
    one winning 7 and losing 3, and the chance is the quantity the gate then decides
    on; choosing the member with the highest posterior chance is the Bayes choice under
    the prior (it needs no further correction for choosing among the members). Chosen on
    seeds 100-119 of tests/bench/bench_vs_gepa.py (not the reported 0-19), on the same
    search paths (docs/benchmarks.md, "ev7")."""
    return max(chances, key=lambda cid: chances[cid])


def adopt(session: Session) -> IterationRecord | None:
    """At the end of a run that gates at the end: gate (with ``auto_merge``: merge) the
    frontier member most likely to gain (`best_member`) once, when the policy would pass
    it. Its iteration record (``move`` "adopt"; ``not-gated`` with the policy's numbers
    when it would not pass), or None when no member is above the base."""
    if not session.at_end or not session.written:  # a run that looked at nothing gates nothing
        return None
    number, mark = session.begin()
    try:
        found = best_member(session)
    except BudgetReached:  # the base was never scored: the budget ended the run before
        found = None
    if found is None:
        session.unbegin()
        return None
    tip = session.base_commit()
    best, mean = found.candidate, found.mean
    verdict = verdict_on(session, tip, best.commit, count=False)
    note = (
        f"end of the run: {best.candidate}, the frontier member most likely to gain "
        f"({points(mean - found.base_mean)} points over {session.config.harness.base} on the selection "
        f"split; of {found.considered}); {verdict.reason} ({session.source})"
    )
    # Not passed: on record as not gated, with the chance that decided (no gate attempt).
    outcome, reason = gate(session, best, best, note=note) if verdict.gate else ("not-gated", "")
    draw = Draw(
        number=number,
        tip=tip,
        parent=best.commit,
        parent_name=best.candidate,
        component="",
        batch=[],
        current="",
        examples=[],
        parent_score=None,
        adopt=True,
    )
    end = Ending(draw=draw, outcome=outcome, reason="; ".join(filter(None, [note, reason])), candidate=best)
    return write_record(session, replace(end, selection_mean=mean, judged=True), mark)
