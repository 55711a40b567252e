"""Evolve's own default policy, and gating once at the end of a run (GEPA adopts its best).

Where proposals help, what an evolve run that gates each look as it comes leaves
unmerged is lineages of small edits (1-3 points each) that no single look on 36
selection instances can confirm when it is scored, while every early merge of a lucky
look raises the bar the later looks are measured against. GEPA keeps building on its
best candidates and adopts its best-scoring one at the end. With ``[evolve] adopt =
"end"`` (the default under bayes) evolve does the same and asks once: nothing is gated
during the run (every look is still screened, and joins the looks the prior is learned
from); when the run ends, the frontier member with the highest selection mean (the tip
of the lineage that accumulated most, all its edits measured together against the base)
is gated, or merged with ``--auto-merge``, under the policy. The posterior under the
prior learned from every screened look conditions on the data that selected the best,
so it corrects the winner's curse of taking the best of many (docs/gate.md, "Evolve's
default"); the gain the merge message states is that corrected one.

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
from harnessgit.evolve.gating import gate, gated_before, verdict_on
from harnessgit.evolve.record import Draw, Ending, write_record
from harnessgit.evolve.session import Session
from harnessgit.evolve.state import BudgetReached
from harnessgit.gate.frontier import FrontierView
from harnessgit.records import IterationRecord
from harnessgit.render import points

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


def best_member(session: Session) -> tuple[Proposal, float, float] | None:
    """The frontier member with the highest selection mean, if above the base's and
    descending from the base's tip (scored already: gating it reads no new rollout), not
    gated before against this base; with its mean and the base's."""
    view = session.frontier()
    base = session.evaluate(session.base_commit(), "selection", session.selection)
    best = best_on_frontier(view)
    if base is None or best is None:
        return None
    mean, cid = best
    commit, tip = view.members[cid].commit, session.base_commit()
    if mean <= base or not session.store.history.is_ancestor(tip, commit) or gated_before(session, commit):
        return None
    return (
        Proposal(candidate=cid, commit=commit, parent=tip, components=[], ref=layout.candidate_ref(cid)),
        mean,
        base,
    )


def best_on_frontier(view: FrontierView) -> tuple[float, str] | None:
    """The frontier's member (not the base) with the highest selection mean, and that
    mean. Ties: the first proposed (``view.members`` is in creation order), as GEPA's
    best is the first program with the best mean; not the candidate id, which is random,
    so that a run with one seed adopts the same candidate every time."""
    order = {cid: place for place, cid in enumerate(view.members)}
    rows = [(row.mean, row.candidate) for row in view.frontier.rows if row.candidate != view.base]
    return min(rows, key=lambda row: (-row[0], order[row[1]])) if rows else None


def adopt(session: Session) -> IterationRecord | None:
    """At the end of a run that gates at the end: gate (with ``auto_merge``: merge) the
    frontier's best member once, when the policy would pass it. Its iteration record
    (``move`` "adopt"; ``not-gated`` with the policy's numbers when it would not pass),
    or None when no member is above the base."""
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
    best, mean, base_mean = found
    verdict = verdict_on(session, tip, best.commit, count=False)
    note = (
        f"end of the run: {best.candidate}, the frontier's best on the selection split "
        f"({points(mean - base_mean)} points over {session.config.harness.base}); {verdict.reason} "
        f"({session.source})"
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
