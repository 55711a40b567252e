"""`Proposer`, the one interface the evolve loop sees, and `make_proposer`.

A proposer takes a `ProposalRequest` and returns a `ProposedEdit` (applied and
sanity-checked) or a `RejectedProposal` (recorded, never adopted). It raises
`harnessgit.errors.ProposerFailed` when it cannot answer at all, and
`ConfigError` from `make_proposer` when its configuration cannot work, so a run
fails before its first evaluation rather than at its first proposal.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Protocol

from harnessgit.config.proposer import (
    CommandProposerSection,
    OpenAIProposerSection,
    ProposerSection,
    PythonProposerSection,
)
from harnessgit.errors import ConfigError
from harnessgit.proposers.command import CommandProposer
from harnessgit.proposers.openai_chat import OpenAIProposer
from harnessgit.proposers.protocol import ProposalRequest, ProposedEdit, RejectedProposal
from harnessgit.proposers.python import PythonProposer


class Proposer(Protocol):
    @property
    def name(self) -> str:
        """Who proposed, for ProposalRecord.proposer: "openai:<model>", "command:<argv>"."""
        ...

    def propose(self, request: ProposalRequest) -> ProposedEdit | RejectedProposal: ...


def make_proposer(
    section: ProposerSection,
    *,
    cwd: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Proposer:
    """The proposer ``[proposer]`` describes.

    ``cwd`` is where a command proposer runs and a python proposer is imported from
    (the repository root, so that relative paths in its argv work); ``environ`` is where the openai proposer
    looks up ``api_key_env`` (default: os.environ).
    """
    if isinstance(section, CommandProposerSection):
        return CommandProposer(section, cwd=cwd)
    if isinstance(section, OpenAIProposerSection):
        return OpenAIProposer(section, environ=environ)
    if isinstance(section, PythonProposerSection):
        # Imported from the repository root, like a command proposer's relative argv.
        return PythonProposer(section, root=cwd or Path.cwd())
    raise ConfigError(f"unknown proposer kind {section!r}")  # pragma: no cover - the section is validated
