"""`harnessgit verify`: does the base branch's history hold up?

Re-checks, from the record alone: every first-parent commit after the one that
added harnessgit.toml is a gated merge or a recorded override; each gate record
compared what was merged (its base is the merge's first parent, its tree the
merged tree); the scores were made with the recorded evaluator fingerprint; each
recorded decision recomputes from the stored scores, and so do its loss tests on
other models (`harnessgit.gate.verify_models`); and every test-split peek is listed.
CI runs it on pull requests: any finding exits 1.

A shared attempt (two comparisons on one selection set that took the same k, gated
on two clones that had not synced their gate notes) is not a finding: each merge was
gated correctly with what its clone knew, and no commit can be fixed. It is listed,
naming both records, their machines and times, and the alpha the selection set has
really spent, because the family-wise guarantee was weakened.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial

from harnessgit import layout
from harnessgit.candidates.log import landing, landing_mismatch
from harnessgit.config import CONFIG_FILE, Config, parse_config
from harnessgit.errors import ConfigError, HarnessgitError
from harnessgit.evaluation.context import Key
from harnessgit.evaluation.fingerprint import evaluator_fingerprint
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import ManifestError
from harnessgit.gate.changes import Change, classify
from harnessgit.gate.prior import passes_before, prior_before
from harnessgit.gate.selection_pool import read_in_order
from harnessgit.gate.selection_pool import recheck as recheck_pool
from harnessgit.gate.sequential import stopped_where_settled
from harnessgit.gate.settings import committed_settings
from harnessgit.gate.used import UsedRecords, scored, used_records
from harnessgit.gate.verify_models import model_problems
from harnessgit.records import GateRecord, OverrideRecord, TestPeekRecord
from harnessgit.render import listing, short
from harnessgit.stats.decision import GateDecision, alpha_for_attempt, decide
from harnessgit.stats.pairing import PairedScores, Scored, pair_scores
from harnessgit.stats.verdict import DEFAULT_PRIOR, PRIOR_ALGORITHMS, legacy_verdict, screened_prior
from harnessgit.store import Objects, Store
from harnessgit.targets import base_tip


@dataclass(frozen=True)
class Finding:
    commit: str
    problem: str


@dataclass(frozen=True)
class Infrastructure:
    """A commit that changes nothing the gate reads: listed, not a problem."""

    commit: str
    files: list[str]
    beside: list[str]  # of those, files in a folder that holds a harness file (`changes.Change.beside`)


@dataclass(frozen=True)
class SharedAttempt:
    """Comparisons on one selection set that took the same attempt number k, each gated
    without the other's record (two clones that synced their gate notes afterwards):
    all were tested at alpha_k, so the set spent more of its alpha than the gate allows."""

    split_hash: str  # the selection set
    attempt: int  # the k they share
    records: list[GateRecord]  # the first record of each comparison that took k, oldest first
    merges: list[str]  # gated merges of the branch that were decided on this selection set
    spent: float  # alpha spent on the selection set: each distinct comparison's alpha_k, summed
    alpha: float  # its budget
    explanation: str


@dataclass(frozen=True)
class VerifyReport:
    branch: str
    start: str | None  # the commit that added harnessgit.toml
    checked: list[str]  # commits after it, oldest first
    gated: int  # gated merges whose gate record holds (one that does not is a finding)
    ok: bool  # no findings
    findings: list[Finding]
    overrides: list[OverrideRecord]
    infrastructure: list[Infrastructure]  # commits that change nothing the gate reads (docs, CI)
    test_peeks: list[TestPeekRecord]
    shared_attempts: list[SharedAttempt]  # listed, not findings: the guarantee they weakened


def verify(store: Store, config: Config, *, base: str | None = None) -> VerifyReport:
    branch = base or config.harness.base
    chain = list(reversed(store.history.first_parent_chain(base_tip(store.refs, branch))))
    start = next(
        (sha for sha in chain if store.objects.file_at(store.objects.commit_info(sha).tree, CONFIG_FILE)),
        None,
    )
    if start is None:
        raise ConfigError(
            f"no commit on {branch} holds {CONFIG_FILE}: harnessgit is not set up there, so nothing "
            "guards it (run `harnessgit init` and commit harnessgit.toml)"
        )
    book = ScoreBook.load(store)
    checked = chain[chain.index(start) + 1 :]
    gates = store.notes.records(layout.NOTES_GATE)
    all_gates = sorted(
        (r for rs in gates.values() for r in rs if isinstance(r, GateRecord)), key=lambda r: r.ts
    )
    findings: list[Finding] = []
    overrides: list[OverrideRecord] = []
    infrastructure: list[Infrastructure] = []
    merged: dict[str, list[str]] = {}  # selection set -> the gated merges decided on it
    verified = 0  # gated merges whose record holds (a forged one is a finding, not a gated merge)
    for sha in checked:
        landed = landing(gates.get(sha, []), sha)
        if landed.overrides:
            overrides.extend(landed.overrides)
        elif landed.gates:
            gate = landed.gates[-1]
            merged.setdefault(gate.split_hash, []).append(sha)
            problems = _check_gate(store.objects, book, sha, gate, all_gates)
            # The per-model tests read exactly the eval records the gate named, as the
            # main decision does (`gate.used`).
            # A list that cannot be read is one problem already, said by `_check_gate`.
            used = used_records(store.objects, book, gate)
            if used is None or not used.problem:
                problems += model_problems(
                    store.objects, gate, partial(_rows, book, until=gate.ts, used=used)
                )
            findings += [Finding(sha, problem) for problem in problems]
            verified += not problems
        else:
            change = classify(store, sha)
            if change.infrastructure:
                infrastructure.append(Infrastructure(sha, change.other, change.beside))
            else:
                findings.append(Finding(sha, _ungated(change)))
    shared = [found for split, shas in merged.items() for found in _shared_attempts(split, shas, all_gates)]
    ok = not findings
    return VerifyReport(
        branch, start, checked, verified, ok, findings, overrides, infrastructure, book.peeks, shared
    )


def _ungated(change: Change) -> str:
    """What an ungated commit changed that needs the gate or a recorded override."""
    parts = []
    if change.harness:
        parts.append(f"the harness ({', '.join(change.harness[:3])}) without the gate")
    if change.evaluator:
        parts.append(f"the evaluator ({', '.join(change.evaluator[:3])}): a regrade")
    if change.settings:
        parts.append(f"the gate's settings ({', '.join(change.settings[:3])})")
    return (
        "moved the base branch changing " + "; ".join(parts) + ", with no gate record or override "
        f"on this commit (record one: harnessgit override {change.commit[:12]} --reason TEXT)"
    )


def _check_gate(
    objects: Objects, book: ScoreBook, sha: str, gate: GateRecord, all_gates: list[GateRecord]
) -> list[str]:
    problems = []
    info = objects.commit_info(sha)
    if not gate.passed:
        problems.append("its gate record says the gate rejected it")
    problems += landing_mismatch(gate, info)
    problems += _settings_used(objects, info.parents[0], gate)
    try:
        config = parse_config(objects.file_at(objects.commit_info(gate.commit).tree, CONFIG_FILE) or b"")
    except ConfigError as exc:
        problems.append(f"its harnessgit.toml does not parse: {exc}")
        return problems
    fingerprint = evaluator_fingerprint(objects.files_at(gate.commit), config)
    if fingerprint != gate.fingerprint:
        problems.append("the candidate's evaluator files do not match the recorded evaluator fingerprint")
    if not math.isclose(gate.alpha_k, alpha_for_attempt(gate.alpha, gate.attempt), rel_tol=1e-9):
        problems.append(f"alpha_k {gate.alpha_k:.3g} is not the level of attempt {gate.attempt}")
    problems += _attempt_counted(gate, all_gates)
    if gate.instances is None:
        problems.append("the gate record does not name the instances it compared")
        return problems
    try:
        ids = objects.read_blob(gate.instances).decode("utf-8").split("\n")[:-1]
    except (HarnessgitError, UnicodeDecodeError):
        problems.append(
            f"the list of instances it compared (blob {gate.instances[:12]}) is not in this "
            "repository: fetch it with the evidence store (harnessgit sync)"
        )
        return problems
    if gate.sample is not None:
        problems += _pool_order(objects, info.parents[0], gate, ids)
    used = used_records(objects, book, gate)
    if used is not None and used.problem:
        problems.append(used.problem)
        return problems
    base_rows = _rows(book, Key(gate.base_harness, gate.fingerprint, gate.model), gate.ts, used)
    cand_rows = _rows(book, Key(gate.harness, gate.fingerprint, gate.model), gate.ts, used)
    missing = [i for i in ids if i not in base_rows or i not in cand_rows]
    if missing or len(ids) != gate.n:
        problems.append(
            f"the stored scores lack {len(missing)} of the {len(ids)} instances the gate compared"
        )
        return problems
    paired = pair_scores(base_rows, cand_rows, ids)
    if paired is None:
        problems.append("fewer than two instances to recompute the decision from")
        return problems
    # The record holds the gate's settings as they were: decide again with them.
    return problems + _recomputed(gate, paired, all_gates)


def _recomputed(gate: GateRecord, paired: PairedScores, all_gates: list[GateRecord]) -> list[str]:
    """The decision again from the stored scores, with the record's policy and prior;
    and the prior again from the gate records older than it. A record from before
    three verdicts (no prior on record) is re-checked as it was: the bound and pass."""
    problems: list[str] = []
    prior = DEFAULT_PRIOR
    known = _known_to(gate, all_gates)
    if gate.prior_looks is not None and gate.prior_mean is not None and gate.prior_sd is not None:
        # The algorithm that decided: a record from before names none, and was algorithm 1's.
        algorithm = gate.prior_algorithm or 1
        if algorithm not in PRIOR_ALGORITHMS:
            return [*problems, f"its prior algorithm {algorithm} is not one this version knows"]
        prior = (
            prior_before(known, (gate.base_harness, gate.harness), gate.ts, algorithm=algorithm)
            if gate.prior_gains is None
            else screened_prior(gate.prior_gains, algorithm=algorithm)
        )
        if prior.looks != gate.prior_looks or not (
            math.isclose(prior.mean, gate.prior_mean, abs_tol=1e-9)
            and math.isclose(prior.sd, gate.prior_sd, abs_tol=1e-9)
        ):
            problems.append(
                f"its prior (mean {gate.prior_mean:+.4f}, sd {gate.prior_sd:.4f} from {gate.prior_looks} "
                "gate "
                f"records) does not recompute from {_prior_source(gate)}: mean {prior.mean:+.4f}, sd "
                f"{prior.sd:.4f} from {prior.looks}"
            )
    if gate.batch is not None and gate.selection_size is not None:
        stop = stopped_where_settled(gate, paired, gate.selection_size)
        problems += [stop] if stop else []
    pair = (gate.base_harness, gate.harness)
    before = passes_before(known, gate.split_hash, pair, gate.ts)
    if gate.passed_before is not None and gate.passed_before != before:
        problems.append(
            f"it counts {gate.passed_before} comparisons that passed on its selection set before it; "
            f"the record holds {before}"
        )
    decide_on = partial(
        decide,
        gate=gate,
        attempt=gate.attempt,
        allow_small=gate.allow_small,
        prior=prior,
        passed_before=before,
    )
    again = decide_on(paired)
    recorded_bound = gate.lower_bound if gate.lower_bound is not None else math.nan
    verdict = gate.shown_verdict if gate.verdict is not None else legacy_verdict(again.passed)
    expected, should_pass = again.verdict, again.passed
    if gate.checks or any(m.loss for m in gate.models or []):  # failures beside the statistics
        expected = "fail"
    if gate.sample is not None:  # a selection pool: the verdict is the sample's or the e-process's
        expected, found = recheck_pool(gate, paired, decide_on)
        problems += found
        should_pass = expected == "pass"
    if (
        should_pass != gate.passed
        or expected != verdict
        or not math.isclose(again.bound.lower_bound, recorded_bound, abs_tol=1e-9)
    ):
        problems.append(
            f"the decision does not recompute from the stored scores: recorded lower bound "
            f"{recorded_bound:+.4f} ({gate.shown_verdict}), recomputed "
            f"{again.bound.lower_bound:+.4f} ({expected})"
        )
    return problems + _stated(gate, again)


def _known_to(gate: GateRecord, all_gates: list[GateRecord]) -> list[GateRecord]:
    """The gate records ``gate``'s prior and pass count could have read: not those of
    another comparison that took its attempt on its selection set, which a clone gated
    before the two synced their gate notes (a shared attempt, `_attempt_counted`), so
    that neither knew the other."""
    pair = (gate.base_harness, gate.harness)
    return [
        r
        for r in all_gates
        if r.split_hash != gate.split_hash or r.attempt != gate.attempt or (r.base_harness, r.harness) == pair
    ]


def _prior_source(gate: GateRecord) -> str:
    return "the gate records before it" if gate.prior_gains is None else "the gains it lists"


def _stated(gate: GateRecord, again: GateDecision) -> list[str]:
    """The numbers a verdict states, recomputed (records from before have none)."""
    said = again.numbers
    recomputed = {
        "chance_better": said.chance_better if said else None,
        "expected_loss": said.expected_loss if said else None,
        "corrected": said.corrected if said else None,
        "e_value": again.e_value,
        "level": again.level,
    }
    off = [
        name
        for name, value in recomputed.items()
        if (recorded := getattr(gate, name)) is not None
        and (value is None or not math.isclose(recorded, value, rel_tol=1e-9, abs_tol=1e-12))
    ]
    if not off:
        return []
    return [f"what it states does not recompute from the stored scores: {', '.join(off)}"]


def _attempt_counted(gate: GateRecord, all_gates: list[GateRecord]) -> list[str]:
    """Did attempt k count every comparison gated on the selection set before it?

    Within one repository k is taken atomically (`gate.attempts`), so two comparisons
    never share a k there. Two clones that gate before syncing their gate notes both
    take the next k; once the notes are merged, the later record counts too few. When
    two comparisons hold one k, that is what happened: a shared attempt, listed by
    `_shared_attempts`, not a problem of this merge. A count too low without one is.
    """
    same_set = [r for r in all_gates if r.split_hash == gate.split_hash]
    pair = (gate.base_harness, gate.harness)
    # Counted when the comparison was first gated (`merge` after `gate` keeps its k).
    since = min((r.ts for r in same_set if (r.base_harness, r.harness) == pair), default=gate.ts)
    earlier = {(r.base_harness, r.harness) for r in same_set if r.ts < since}
    if gate.attempt > len(earlier):
        return []
    if _collisions([r for r in same_set if r.ts <= gate.ts]):
        return []
    return [
        f"recorded as attempt {gate.attempt}, but {len(earlier)} other comparisons were "
        "gated on this selection set before it: it spent too little of alpha"
    ]


def _shared_attempts(split_hash: str, merges: list[str], all_gates: list[GateRecord]) -> list[SharedAttempt]:
    """Every k that two comparisons took on a selection set the branch's merges were gated on."""
    same_set = [r for r in all_gates if r.split_hash == split_hash]
    collisions = _collisions(same_set)
    if not collisions:
        return []
    spent = sum(record.alpha_k for record in _first_of_each_comparison(same_set))
    alpha = same_set[-1].alpha
    return [
        SharedAttempt(split_hash, k, found, merges, spent, alpha, _shared_text(k, found, spent, alpha))
        for k, found in collisions.items()
    ]


def _collisions(records: list[GateRecord]) -> dict[int, list[GateRecord]]:
    """k -> the comparisons (the first record of each) that took it, where more than one did."""
    by_k: dict[int, list[GateRecord]] = {}
    for record in _first_of_each_comparison(records):
        by_k.setdefault(record.attempt, []).append(record)
    return {k: found for k, found in sorted(by_k.items()) if len(found) > 1}


def _first_of_each_comparison(records: list[GateRecord]) -> list[GateRecord]:
    """The first record of each (base harness, candidate harness) pair, oldest first."""
    first: dict[tuple[str, str], GateRecord] = {}
    for record in sorted(records, key=lambda r: r.ts):
        first.setdefault((record.base_harness, record.harness), record)
    return list(first.values())


def _shared_text(k: int, records: list[GateRecord], spent: float, alpha: float) -> str:
    named = [
        f"{r.id[:8]} (candidate {r.candidate or short(r.commit)}, on {r.worker or 'a machine not recorded'}, "
        f"{r.ts.astimezone(timezone.utc):%Y-%m-%d %H:%M:%S} UTC)"
        for r in records
    ]
    together = " and ".join(named) if len(named) == 2 else listing(named, len(named))
    # alpha_k sums to alpha over k = 1, 2, ...: with one k taken twice, the levels of
    # all attempts on this set, later ones included, add up to more than alpha.
    bound = (
        "the chance that a null candidate passed on it is no longer bounded by alpha"
        if spent > alpha
        else "its attempts so far stay within alpha, but its later ones will spend past it"
    )
    return (
        f"gate records {together} took the same attempt {k} on selection set {short(records[0].split_hash)}: "
        f"they were gated on clones that had not synced their gate notes, so {len(records)} comparisons "
        f"were tested at alpha_{k} = {records[0].alpha_k:.3g}. The selection set has spent {spent:.3g} of "
        f"its alpha {alpha:.3g}: {bound}. Each was gated correctly with the records its clone had. "
        "Gate on one machine, or sync the gate notes before gating (docs/ci.md); a new selection set "
        "starts a new budget"
    )


GATE_KEYS = ("alpha", "min_effect", "min_instances", "method", "resamples", "seed", "sample")


def _settings_used(objects: Objects, base: str, gate: GateRecord) -> list[str]:
    """The settings a gate decided with must be those its base committed: an
    uncommitted ``min_effect = -0.5`` or ``splits.json`` must not decide (issue 12)."""
    try:
        settings = committed_settings(objects, base, what=f"the base {base[:12]}")
    except (ConfigError, ManifestError) as exc:
        return [f"its settings cannot be checked: {exc}"]
    rules = settings.config.gate
    differ = [
        f"{key} {getattr(gate, key)!r} (committed: {getattr(rules, key)!r})"
        for key in GATE_KEYS
        if getattr(gate, key) != getattr(rules, key)
    ]
    if gate.split_hash != settings.manifest.split_hash("selection"):
        differ.append("a selection set other than the committed manifest's")
    if not differ:
        return []
    return ["the gate decided with settings its base did not commit: " + "; ".join(differ)]


def _pool_order(objects: Objects, base: str, gate: GateRecord, ids: list[str]) -> list[str]:
    """A pooled record's instances against the selection split its base committed."""
    try:
        settings = committed_settings(objects, base, what=f"the base {base[:12]}")
    except (ConfigError, ManifestError):
        return []  # `_settings_used` says so
    problem = read_in_order(settings.manifest.ids("selection"), gate.seed, ids)
    return [problem] if problem else []


def _rows(book: ScoreBook, key: Key, until: datetime, used: UsedRecords | None) -> Scored:
    """instance -> (mean over repeats, cluster): from the records the gate named
    (`harnessgit.gate.used`), or, for a record from before gates named them, from the key's
    records that existed when the gate decided."""
    if used is not None:
        return scored(used.of(key), key)
    return scored(book.records_for(key), key, until=until)
