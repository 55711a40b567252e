"""A selection pool larger than one gate's sample (issue 25, item 2).

With ``[gate] sample = N`` the gate reads the first N selection instances in the
e-process's reading order (`sequential.reading_order`: a hash of the seed and the
instance id) and decides on them with its policy, as it would on a split of N. When
that verdict is inconclusive and the selection split (the pool) holds more, it reads
the pool further, ``[gate] batch`` instances at a time (N when batch is 0), and after
each batch asks the anytime-valid paired e-process (`harnessgit.stats.eprocess`) over
every instance read: the gain e-value at 1 / level passes, the no-gain one at 1 / alpha
fails, and a pool read to its end without either is inconclusive, saying so.

The extension decides only with the e-process, whose chance of ever reaching 1 / a
under "no gain" is at most a however often it is read (Ville's inequality). Its level
is the policy's own for this comparison: alpha_t under elond, where the look at the
sample is the same e-process (one test: elond's promise is unchanged), and alpha_k
under strict and bayes, where it is a second way to pass beside the look at the
sample: strict's false-pass chance per attempt is then at most 2 alpha_k and per
selection set 2 alpha (docs/gate.md, "A selection pool").

Pure: `extend` and `recheck` take data (and the gate's own deciding function) and
return data; `verify` calls `recheck`. The reading order, the e-value paths and
evaluating both sides come from `sequential`, which `[gate] batch` shares.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from harnessgit.errors import ConfigError
from harnessgit.gate.outcome import GateOutcome
from harnessgit.gate.sequential import SELECTION, e_paths, prefix, reading_order
from harnessgit.records import GateRecord
from harnessgit.stats.decision import GateDecision, alpha_for_attempt
from harnessgit.stats.pairing import PairedScores, pair_scores

Verdict = Literal["pass", "fail", "inconclusive"]


@dataclass(frozen=True)
class PoolRead:
    """The e-process over the instances read from the pool, where it stopped."""

    verdict: Verdict
    read: int  # instances read, the sample included
    e_value: float  # the gain e-value there
    e_fail: float  # the no-gain e-value there
    level: float  # the gain e-value passes at 1 / level


def check_sample(sample: int | None, pool: int) -> None:
    """A sample larger than the selection split it is drawn from is a setting error."""
    if sample is not None and sample > pool:
        raise ConfigError(
            f"harnessgit.toml: gate.sample: {sample} is more than the {pool} instances of the "
            "selection split, the pool a gate's sample is drawn from"
        )


def pool_step(batch: int, sample: int) -> int:
    """How many more instances the gate reads from the pool at a time."""
    return batch if batch > 0 else sample


def extension_ends(sample: int, pool: int, step: int, min_instances: int) -> list[int]:
    """The numbers of instances read at which an extension may stop: every step past the
    sample (never before ``min_instances``), and the whole pool."""
    ends = [end for end in range(sample + step, pool, step) if end >= min_instances]
    return [*ends, pool] if pool > sample else []


def pass_level(decision: GateDecision) -> float:
    """The level the extension's gain e-value is tested at: elond's alpha_t, else alpha_k."""
    if decision.policy == "elond" and decision.level is not None:
        return decision.level
    return alpha_for_attempt(decision.alpha, decision.attempt)


def settle(
    paired: PairedScores, ends: Sequence[int], *, null: float, seed: int, level: float, alpha: float
) -> PoolRead:
    """The first of ``ends`` (no more than the instances in ``paired``) where either
    e-value settles, else the last instance read, inconclusive."""
    gain, no_gain = e_paths(paired, null=null, seed=seed)
    for end in [e for e in ends if e <= len(gain)]:
        if gain[end - 1] >= 1 / level:
            return PoolRead("pass", end, gain[end - 1], no_gain[end - 1], level)
        if no_gain[end - 1] >= 1 / alpha:
            return PoolRead("fail", end, gain[end - 1], no_gain[end - 1], level)
    last = len(gain)
    return PoolRead("inconclusive", last, gain[-1] if gain else 1.0, no_gain[-1] if no_gain else 1.0, level)


def extendable(outcome: GateOutcome) -> bool:
    """Only a statistical "not yet" extends: not a failure beside the statistics, nor
    missing scores (those say what to run)."""
    r = outcome.record
    return outcome.decision is not None and r.shown_verdict == "inconclusive" and not outcome.not_evaluated


def paired_of(outcome: GateOutcome) -> PairedScores | None:
    c = outcome.inputs
    return pair_scores(c.base_scores.scored(), c.candidate_scores.scored())


def extend(
    first: GateOutcome,
    *,
    decide_at: Callable[[list[str]], GateOutcome],
    read_more: Callable[[list[str]], None],
) -> GateOutcome:
    """The gate's outcome with a pool: ``first`` is its outcome on the sample. An
    inconclusive one reads the pool on (``read_more`` evaluates instances) until the
    e-process settles or the pool is spent, and is decided again on what was read
    (``decide_at``), its verdict the e-process's."""
    sides = first.inputs.sides
    gate = sides.settings.config.gate
    ordered = reading_order(sides.settings.manifest.ids(SELECTION), gate.seed)
    sample = gate.sample or len(ordered)
    step = pool_step(gate.batch, sample)
    ends = extension_ends(sample, len(ordered), step, gate.min_instances)
    if not extendable(first) or not ends or first.decision is None:
        return _marked(first, sample, first.record.shown_verdict, None, len(ordered))
    level = pass_level(first.decision)
    done, found = sample, None
    for end in ends:
        read_more(ordered[done:end])
        done = end
        outcome = decide_at(ordered[:end])
        paired = paired_of(outcome)
        if paired is None or outcome.not_evaluated:
            return _marked(outcome, sample, first.record.shown_verdict, None, len(ordered))
        found = settle(paired, ends, null=gate.min_effect, seed=gate.seed, level=level, alpha=gate.alpha)
        if found.verdict != "inconclusive" or end == ends[-1]:
            return _marked(outcome, sample, first.record.shown_verdict, (found, step), len(ordered))
    raise AssertionError("unreachable: the last end returns")  # pragma: no cover


def _marked(
    outcome: GateOutcome,
    sample: int,
    sample_verdict: Verdict,
    pooled: tuple[PoolRead, int] | None,
    pool: int,
) -> GateOutcome:
    """``outcome`` with the pool's fields on its record, and the extension's verdict."""
    update: dict[str, object] = {"sample": sample, "sample_verdict": sample_verdict, "selection_size": pool}
    update["batch"] = None  # the sample was read whole: not `sequential`'s early stop
    if pooled is not None:
        found, step = pooled
        r = outcome.record
        update |= {
            "pool_batch": step,
            "pool_level": found.level,
            "pool_e_value": found.e_value,
            "pool_e_fail": found.e_fail,
            "verdict": found.verdict,
            "passed": found.verdict == "pass",
            "reasons": pool_reasons(found, r.n, pool, r.alpha),
        }
    elif sample_verdict == "inconclusive" and outcome.decision is not None and sample >= pool:
        update["reasons"] = [*outcome.record.reasons, no_pool_left(pool)]
    record = outcome.record.model_copy(update=update)
    return dataclasses.replace(outcome, record=record, verdict=record.shown_verdict)


def no_pool_left(pool: int) -> str:
    return f"no pool left: the sample is the whole selection split ({pool} instances)"


def pool_reasons(found: PoolRead, read: int, pool: int, alpha: float) -> list[str]:
    """Why a pooled verdict is not a pass, in words (empty for a pass)."""
    if found.verdict == "pass":
        return []
    if found.verdict == "fail":
        return [
            f"read from the pool to {read} instances, the e-value against a gain reached "
            f"{found.e_fail:.3g} (fails at {1 / alpha:.3g})"
        ]
    return [
        f"the pool is spent: all {pool} selection instances read without settling (gain e-value "
        f"{found.e_value:.3g}, passes at {1 / found.level:.3g}; against a gain {found.e_fail:.3g}, "
        f"fails at {1 / alpha:.3g})"
    ]


def recheck(
    gate: GateRecord, paired: PairedScores, decide_on: Callable[[PairedScores], GateDecision]
) -> tuple[Verdict, list[str]]:
    """`verify` of a pooled record: the verdict its instances give, and what does not
    hold. ``paired``: the instances it read; ``decide_on``: the record's decision rule."""
    if gate.sample is None or gate.selection_size is None:
        raise ValueError("not a pooled gate record")
    order = reading_order(paired.instances, gate.seed)
    if len(order) < min(gate.sample, gate.selection_size):
        return gate.shown_verdict, [f"it read {len(order)} instances, fewer than its sample of {gate.sample}"]
    first = decide_on(prefix(paired, order[: gate.sample]))
    at_sample: Verdict = "fail" if gate.checks or any(m.loss for m in gate.models or []) else first.verdict
    problems = []
    if gate.sample_verdict is not None and at_sample != gate.sample_verdict:
        problems.append(f"its verdict on the sample recomputes as {at_sample}, not {gate.sample_verdict}")
    step = pool_step(gate.pool_batch or 0, gate.sample)
    ends = extension_ends(gate.sample, gate.selection_size, step, gate.min_instances)
    if at_sample != "inconclusive" or not ends:
        if len(order) != gate.sample:
            problems.append(f"it read {len(order)} instances, but its sample of {gate.sample} settled it")
        return at_sample, problems
    found = settle(
        paired, ends, null=gate.min_effect, seed=gate.seed, level=pass_level(first), alpha=gate.alpha
    )
    if found.read != len(order) or (found.verdict == "inconclusive" and found.read != gate.selection_size):
        problems.append(
            f"it read {len(order)} of the pool's {gate.selection_size} instances, but the e-process "
            f"settles after {found.read}" + ("" if found.verdict != "inconclusive" else " (it never settles)")
        )
    recorded = {"pool_e_value": found.e_value, "pool_e_fail": found.e_fail, "pool_level": found.level}
    off = [name for name, value in recorded.items() if not _close(getattr(gate, name), value)]
    if off:
        problems.append(f"its pool's e-process does not recompute from the stored scores: {', '.join(off)}")
    return found.verdict, problems


def read_in_order(pool: list[str], seed: int, read: list[str]) -> str:
    """`verify`: a pooled gate reads the first n of the pool's reading order, never
    instances of its choosing; "" when it did, else the problem."""
    if set(reading_order(pool, seed)[: len(read)]) == set(read):
        return ""
    return (
        f"the {len(read)} instances it compared are not the first {len(read)} of the selection "
        "split's reading order: a sample and its pool are read in that order"
    )


def _close(recorded: float | None, value: float) -> bool:
    return recorded is not None and abs(recorded - value) <= 1e-9 * max(1.0, abs(value))
