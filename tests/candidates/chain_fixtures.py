"""A chain of four proposals, each on the one before, merged at once (issue 12,
finding 5): merge, log and review must each say what every one of them did."""

from __future__ import annotations

from pathlib import Path

from harnessgit.candidates.propose import Proposal, propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate, with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.store import Store
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller

# (SKILL.md, rationale, evaluated before the merge) per edit, oldest first. The gate
# evaluates main and the last; the second is never evaluated, so neither it nor the
# third has a measured effect. The chain gains 52.5 points (10 -> 31 of 40), and the
# last edit, the one a title used to credit, costs 2.5 of them.
EDITS = [
    (skill(30), "Raise the level to 30\n\nMost failures are past s-9.", True),
    (skill(30, "fix s-35"), "Fix s-35", False),
    (skill(30, "fix s-35", "fix s-36"), "Fix s-36", True),
    (skill(30, "fix s-35", "fix s-36", "break s-3"), "Break s-3\n\nA harmful rule, last of four.", False),
]


def merged_chain(repo: Path) -> tuple[list[Proposal], str]:
    """The four proposals, oldest first, and the merge commit that landed them."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        chain: list[Proposal] = []
        for text, rationale, evaluated in EDITS:
            parent = chain[-1].candidate if chain else None
            chain.append(propose(store, config, {"SKILL.md": text}, parent=parent, rationale=rationale))
            if evaluated:
                evaluate(store, config, chain[-1].candidate)
        landed = merge(
            store, config, GateRequest(chain[-1].candidate), execution=BATCHES, check=check_change
        ).merge
    assert landed is not None
    return chain, landed
