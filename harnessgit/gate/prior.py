"""The prior of true gains, learned from the gains the repository's gate records measured.

Every comparison gated in this repository (by hand, by CI or by an evolve run) left a
gate record with its observed gain and standard error. The first record of each
comparison, other than the one being decided and recorded before it, is one recorded
gain; `harnessgit.stats.verdict.learn_prior` turns them into the prior (empirical Bayes).
`verify` recomputes a record's prior from the records older than it (`prior_before`).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from harnessgit import layout
from harnessgit.records import GateRecord
from harnessgit.stats.verdict import PRIOR_ALGORITHM, Prior, learn_prior
from harnessgit.store import Notes

# A record from before `se` was kept: its 95% interval is about +-1.96 se wide.
_CI_WIDTH_IN_SE = 2 * 1.959963984540054


def all_gate_records(notes: Notes) -> list[GateRecord]:
    found = notes.records(layout.NOTES_GATE)
    return [r for rs in found.values() for r in rs if isinstance(r, GateRecord)]


def prior_before(
    records: Iterable[GateRecord],
    pair: tuple[str, str],
    ts: datetime | None = None,
    algorithm: int = PRIOR_ALGORITHM,
) -> Prior:
    """The prior from the first record of each comparison other than ``pair`` (base
    harness, candidate harness), recorded before ``ts`` (None: all of them), learned by
    ``algorithm`` (`verify` passes the one a record names)."""
    return learn_prior(gains_before(records, pair, ts), algorithm=algorithm)


def gains_before(
    records: Iterable[GateRecord], pair: tuple[str, str], ts: datetime | None = None
) -> list[tuple[float, float]]:
    """The (gain, standard error) of the first record of each comparison other than
    ``pair``, recorded before ``ts`` (None: all of them)."""
    first: dict[tuple[str, str, str], GateRecord] = {}
    for record in sorted(records, key=lambda r: (r.ts, r.id)):
        if ts is not None and record.ts >= ts:
            continue
        if (record.base_harness, record.harness) == pair:
            continue
        first.setdefault((record.split_hash, record.base_harness, record.harness), record)
    return [gain for record in first.values() if (gain := recorded_gain(record)) is not None]


def passes_before(
    records: Iterable[GateRecord], split_hash: str, pair: tuple[str, str], ts: datetime | None = None
) -> int:
    """Policy elond's D: the comparisons other than ``pair`` that passed on the
    selection set before ``ts`` (None: all on record)."""
    return len(
        {
            (r.base_harness, r.harness)
            for r in records
            if r.passed
            and r.split_hash == split_hash
            and (r.base_harness, r.harness) != pair
            and (ts is None or r.ts < ts)
        }
    )


def recorded_gain(record: GateRecord) -> tuple[float, float] | None:
    """(gain, standard error) a gate record measured; None when it measured none."""
    if record.difference is None:
        return None
    if record.se is not None:
        return record.difference, record.se
    if record.ci_low is None or record.ci_high is None:
        return None
    return record.difference, (record.ci_high - record.ci_low) / _CI_WIDTH_IN_SE
