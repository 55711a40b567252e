"""Sequential evaluation: the gate evaluates in batches and stops once the verdict is settled.

With ``[gate] batch = B`` (> 0) and ``policy = "elond"``, the gate evaluates both sides
on the selection instances in the e-process's reading order (`canonical_order`), B at
a time, and stops as soon as the gain e-value reaches 1 / alpha_t or the no-gain one
1 / alpha (never before ``min_instances``): by Ville's inequality, looking after every
batch costs nothing in error (docs/gate.md, "Policies"). It then decides on the
instances read, which the record lists; the record's ``batch`` says it stopped early
by design, and `verify` re-checks that it stopped at the first batch that settled
(`stopped_where_settled`).
"""

from __future__ import annotations

import dataclasses

from harnessgit.evaluation.execution import EvalRequest, Execution, evaluate
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.gate.outcome import Sides
from harnessgit.records import GateRecord
from harnessgit.stats.eprocess import canonical_order, elond_level, wealth
from harnessgit.stats.pairing import PairedScores, pair_scores
from harnessgit.store import Store

SELECTION = "selection"


def reading_order(ids: list[str], seed: int) -> list[str]:
    return [ids[i] for i in canonical_order(ids, seed)]


def boundaries(total: int, batch: int, min_instances: int) -> list[int]:
    """The numbers of instances read at which the gate may stop: every batch boundary
    from ``min_instances`` on, and the whole split."""
    ends = [end for end in range(batch, total, batch) if end >= min_instances]
    return [*ends, total]


def e_paths(paired: PairedScores, *, null: float, seed: int) -> tuple[list[float], list[float]]:
    """The gain and no-gain wealth after each instance, in the canonical reading order."""
    order = canonical_order(paired.instances, seed)
    diffs = [paired.differences[i] for i in order]
    return wealth(diffs, null, direction=1), wealth(diffs, null, direction=-1)


def settled(paired: PairedScores, *, null: float, pass_level: float, fail_level: float, seed: int) -> bool:
    """Whether either e-value over ``paired`` (read in canonical order) reaches its threshold."""
    gain, no_gain = e_paths(paired, null=null, seed=seed)
    return bool(gain) and (gain[-1] >= 1 / pass_level or no_gain[-1] >= 1 / fail_level)


def evaluate_instances(
    store: Store, sides: Sides, book: ScoreBook, execution: Execution, instances: list[str]
) -> None:
    """Evaluate both sides on ``instances`` of the selection split (through the cache)."""
    for context in (sides.base, sides.candidate):
        evaluate(
            store,
            sides.settings.config,
            context.commit,
            EvalRequest(split=SELECTION, instances=instances),
            execution=execution,
            book=book,
            manifest=sides.settings.manifest,
        )


def prefix(paired: PairedScores, names: list[str]) -> PairedScores:
    """``paired`` on ``names`` only, in that order."""
    index = {name: k for k, name in enumerate(paired.instances)}
    keep = [index[name] for name in names]
    return dataclasses.replace(
        paired,
        instances=[paired.instances[k] for k in keep],
        base=[paired.base[k] for k in keep],
        candidate=[paired.candidate[k] for k in keep],
        clusters=[paired.clusters[k] for k in keep] if paired.clusters is not None else None,
    )


def evaluate_in_batches(
    store: Store, sides: Sides, book: ScoreBook, execution: Execution, *, attempt: int, passed_before: int
) -> list[str]:
    """Evaluate both sides batch by batch until settled: the instances read."""
    gate, manifest = sides.settings.config.gate, sides.settings.manifest
    ordered = reading_order(manifest.ids(SELECTION), gate.seed)
    level = elond_level(gate.q, attempt, passed_before)
    done = 0
    for end in boundaries(len(ordered), gate.batch, gate.min_instances):
        evaluate_instances(store, sides, book, execution, ordered[done:end])
        done = end
        read = ordered[:end]
        base = book.summary(sides.base.key, SELECTION, read, for_decision=True).scored()
        cand = book.summary(sides.candidate.key, SELECTION, read, for_decision=True).scored()
        paired = pair_scores(base, cand)
        if paired is not None and settled(
            paired, null=gate.min_effect, pass_level=level, fail_level=gate.alpha, seed=gate.seed
        ):
            return read
    return ordered


def stopped_where_settled(record: GateRecord, paired: PairedScores, total: int) -> str:
    """`verify`: a sequential record must stop at the first batch boundary where the
    evidence settled, or read the whole split; "" when it did, else the problem."""
    if record.batch is None or record.level is None:
        return ""
    ordered = reading_order(paired.instances, record.seed)
    expected = total
    for end in boundaries(total, record.batch, record.min_instances):
        if end > len(ordered):
            break
        part = prefix(paired, ordered[:end])
        level, alpha = record.level, record.alpha
        if settled(part, null=record.min_effect, pass_level=level, fail_level=alpha, seed=record.seed):
            expected = end
            break
    if expected == len(ordered):
        return ""
    return (
        f"it read {len(ordered)} of {total} instances in batches of {record.batch}, but the evidence "
        f"settles after {expected}"
    )
