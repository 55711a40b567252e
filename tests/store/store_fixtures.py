"""A record to write in the store tests: small, valid, told apart by a number."""

from __future__ import annotations

from datetime import datetime, timezone

from harnessgit.records import ProposalRecord

TS = datetime(2026, 1, 1, tzinfo=timezone.utc)


def record(n: int = 0) -> ProposalRecord:
    return ProposalRecord(
        ts=TS, candidate=f"c{n}", parent="0" * 40, components=["SKILL.md"], rationale=f"r{n}", source="api"
    )
