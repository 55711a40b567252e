"""`harnessgit verify`: does the base branch's history hold up?

Re-checks, from the record alone: every first-parent commit after the one that
added harnessgit.toml is a gated merge or a recorded override; each gate record
compared what was merged (its base is the merge's first parent, its tree the
merged tree); the scores were made with the recorded evaluator fingerprint; each
recorded decision recomputes from the stored scores; and every test-split peek is
listed. CI runs it on pull requests: any finding exits 1.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from harnessgit import layout
from harnessgit.candidates.log import landing
from harnessgit.config import CONFIG_FILE, Config, parse_config
from harnessgit.errors import ConfigError
from harnessgit.evaluation.context import Key
from harnessgit.evaluation.fingerprint import evaluator_fingerprint
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import ManifestError
from harnessgit.gate.changes import Change, classify
from harnessgit.gate.settings import committed_settings
from harnessgit.records import GateRecord, OverrideRecord, TestPeekRecord
from harnessgit.stats.decision import alpha_for_attempt, decide
from harnessgit.stats.pairing import Scored, instance_means, pair_scores
from harnessgit.store import Store
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
class VerifyReport:
    branch: str
    start: str | None  # the commit that added harnessgit.toml
    checked: list[str]  # commits after it, oldest first
    gated: int
    ok: bool  # no findings
    findings: list[Finding]
    overrides: list[OverrideRecord]
    infrastructure: list[Infrastructure]  # commits that change nothing the gate reads (docs, CI)
    test_peeks: list[TestPeekRecord]


def verify(store: Store, config: Config, *, base: str | None = None) -> VerifyReport:
    branch = base or config.harness.base
    chain = list(reversed(store.first_parent_chain(base_tip(store, branch))))
    start = next((sha for sha in chain if store.file_at(store.commit_info(sha).tree, CONFIG_FILE)), None)
    if start is None:
        raise ConfigError(
            f"no commit on {branch} holds {CONFIG_FILE}: harnessgit is not set up there, so nothing "
            "guards it (run `harnessgit init` and commit harnessgit.toml)"
        )
    book = ScoreBook.load(store)
    checked = chain[chain.index(start) + 1 :]
    gates = store.notes(layout.NOTES_GATE)
    all_gates = sorted(
        (r for rs in gates.values() for r in rs if isinstance(r, GateRecord)), key=lambda r: r.ts
    )
    findings: list[Finding] = []
    overrides: list[OverrideRecord] = []
    infrastructure: list[Infrastructure] = []
    gated = 0
    for sha in checked:
        landed = landing(gates.get(sha, []), sha)
        if landed.overrides:
            overrides.extend(landed.overrides)
        elif landed.gates:
            gated += 1
            problems = _check_gate(store, book, sha, landed.gates[-1], all_gates)
            findings += [Finding(sha, problem) for problem in problems]
        else:
            change = classify(store, sha)
            if change.infrastructure:
                infrastructure.append(Infrastructure(sha, change.other, change.beside))
            else:
                findings.append(Finding(sha, _ungated(change)))
    ok = not findings
    return VerifyReport(branch, start, checked, gated, ok, findings, overrides, infrastructure, book.peeks)


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
    store: Store, book: ScoreBook, sha: str, gate: GateRecord, all_gates: list[GateRecord]
) -> list[str]:
    problems = []
    info = store.commit_info(sha)
    if not gate.passed:
        problems.append("its gate record says the gate rejected it")
    if info.parents[:1] != (gate.base,) or len(info.parents) < 2 or info.parents[1] != gate.commit:
        problems.append(
            f"the gate compared {gate.commit[:12]} with {gate.base[:12]}, but this merge's parents "
            f"are {', '.join(p[:12] for p in info.parents)}"
        )
    if info.tree != gate.tree:
        problems.append(
            f"the merged tree {info.tree[:12]} is not the tree the gate evaluated ({gate.tree[:12]})"
        )
    problems += _settings_used(store, info.parents[0], gate)
    try:
        config = parse_config(store.file_at(store.commit_info(gate.commit).tree, CONFIG_FILE) or b"")
    except ConfigError as exc:
        problems.append(f"its harnessgit.toml does not parse: {exc}")
        return problems
    fingerprint = evaluator_fingerprint(store.files_at(gate.commit), config)
    if fingerprint != gate.fingerprint:
        problems.append("the candidate's evaluator files do not match the recorded evaluator fingerprint")
    if not math.isclose(gate.alpha_k, alpha_for_attempt(gate.alpha, gate.attempt), rel_tol=1e-9):
        problems.append(f"alpha_k {gate.alpha_k:.3g} is not the level of attempt {gate.attempt}")
    earlier = {
        (r.base_harness, r.harness) for r in all_gates if r.split_hash == gate.split_hash and r.ts < gate.ts
    }
    pair = (gate.base_harness, gate.harness)
    expected = len(earlier) + (0 if pair in earlier else 1)
    if pair not in earlier and gate.attempt < expected:
        problems.append(
            f"recorded as attempt {gate.attempt}, but {len(earlier)} other comparisons were "
            "gated on this selection set before it: it spent too little of alpha"
        )
    if gate.instances is None:
        problems.append("the gate record does not name the instances it compared")
        return problems
    ids = store.read_blob(gate.instances).decode("utf-8").split("\n")[:-1]
    base_rows = _rows(book, Key(gate.base_harness, gate.fingerprint, gate.model), gate.ts)
    cand_rows = _rows(book, Key(gate.harness, gate.fingerprint, gate.model), gate.ts)
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
    again = decide(paired, gate, attempt=gate.attempt, allow_small=gate.allow_small)
    recorded_bound = gate.lower_bound if gate.lower_bound is not None else math.nan
    if again.passed != gate.passed or not math.isclose(again.bound.lower_bound, recorded_bound, abs_tol=1e-9):
        problems.append(
            f"the decision does not recompute from the stored scores: recorded lower bound "
            f"{recorded_bound:+.4f} ({'pass' if gate.passed else 'reject'}), recomputed "
            f"{again.bound.lower_bound:+.4f} ({'pass' if again.passed else 'reject'})"
        )
    return problems


GATE_KEYS = ("alpha", "min_effect", "min_instances", "method", "resamples", "seed")


def _settings_used(store: Store, base: str, gate: GateRecord) -> list[str]:
    """The settings a gate decided with must be those its base committed: an
    uncommitted ``min_effect = -0.5`` or ``splits.json`` must not decide (issue 12)."""
    try:
        settings = committed_settings(store, base, what=f"the base {base[:12]}")
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


def _rows(book: ScoreBook, key: Key, until: datetime) -> Scored:
    """instance -> (mean over repeats, cluster), from the records that existed when the
    gate decided (a later --no-cache re-run must not rewrite history)."""
    latest: dict[tuple[str, int], tuple[str, float, str | None]] = {}
    for record in sorted(book.records_for(key), key=lambda r: r.ts):
        if record.ts > until:
            continue
        for i, instance in enumerate(record.instances):
            cluster = record.clusters[i] if record.clusters else None
            latest[(instance, record.repeats[i])] = (instance, record.scores[i], cluster)
    return instance_means(row for _key, row in sorted(latest.items(), key=lambda item: item[0][1]))
