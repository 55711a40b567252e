"""Proposers: ask an LLM (or any command) for an edit to one harness component.

Public API (docs/proposers.md): `make_proposer` builds a `Proposer` from the
``[proposer]`` config section; `Proposer.propose(ProposalRequest)` returns a
`ProposedEdit` or a `RejectedProposal`; `edits` applies and checks edits.
"""

from __future__ import annotations

from harnessgit.config.proposer import (
    CommandProposerSection,
    OpenAIProposerSection,
    ProposerSection,
)
from harnessgit.proposers.edits import apply_operations, estimate_tokens, sanity_check, settle
from harnessgit.proposers.factory import Proposer, make_proposer
from harnessgit.proposers.protocol import (
    Append,
    Delete,
    InsertAfter,
    Limits,
    Operation,
    ProposalRequest,
    ProposedEdit,
    ReflectiveExample,
    RejectedProposal,
    RejectionCode,
    Replace,
    Usage,
)

__all__ = [
    "Append",
    "CommandProposerSection",
    "Delete",
    "InsertAfter",
    "Limits",
    "OpenAIProposerSection",
    "Operation",
    "ProposalRequest",
    "ProposedEdit",
    "Proposer",
    "ProposerSection",
    "ReflectiveExample",
    "RejectedProposal",
    "RejectionCode",
    "Replace",
    "Usage",
    "apply_operations",
    "estimate_tokens",
    "make_proposer",
    "sanity_check",
    "settle",
]
