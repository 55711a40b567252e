"""`harnessgit import gepa RUN_DIR`: a finished GEPA run as candidates and records.

Each of GEPA's programs becomes a candidate commit on its parents' commits (a merge
has two), its components written to the files ``--component NAME=PATH`` names; the
seed sits on the base branch tip, and is that tip when its texts are already there.
Valset scores become eval records on the selection split. Everything lands in one ref
transaction: a bad run directory or map leaves the repository as it was.

Importing twice creates nothing new: every program's commit carries an evidence record
(label ``gepa-import``) naming the program by its identity, a hash of its texts, its
index and its parents' identities, so a program already on record is found, and a
score already on record under the same key is not written again. A run that went on
after an import adds only its new programs.

What the run directory does not keep cannot be imported, and the result says so:
`NOT_KEPT`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from harnessgit import globs, layout
from harnessgit.candidates.edits import normalise_component
from harnessgit.candidates.propose import SUBJECT_WIDTH
from harnessgit.canonical import sha256_canonical
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError, ProposalError
from harnessgit.evaluation.context import Key, eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.splits import Manifest, ManifestError, load_manifest
from harnessgit.evidence import encode_evidence, parse_jsonl
from harnessgit.integrations.gepa.rundir import GepaRun, Program
from harnessgit.names import new_candidate_id
from harnessgit.records import EvalRecord, EvidenceRecord, ProposalRecord, this_worker
from harnessgit.store import Blob, Store, Transaction
from harnessgit.targets import base_tip, candidate_tips

LABEL = "gepa-import"
SELECTION = "selection"
# What gepa 0.1.4's run_dir does not hold (gepa/core/state.py GEPAState.save): said with
# every import, so that nobody looks for it in the record.
NOT_KEPT = [
    "the texts of proposals GEPA rejected on the minibatch",
    "the reflective datasets and the reflection LM's prompts and replies",
    "per-example outputs, trajectories and feedback (best outputs only with track_best_outputs)",
    "minibatch scores beyond the run log's",
]


@dataclass(frozen=True)
class ImportedProgram:
    program: int
    parents: list[int]
    commit: str
    candidate: str | None  # None: the base tip itself, whose texts are the seed's
    new: bool  # created by this import
    mean: float | None  # GEPA's valset mean; None when the scores were not read


@dataclass(frozen=True)
class GepaImport:
    """`harnessgit import gepa`: its ``--json`` form is the run, each program's commit,
    what was created, the key the scores are under, and what the run dir did not keep."""

    run_dir: str
    source: str  # "pickle" (gepa_state.bin, trusted) or "json" (candidates.json, run_log.json)
    programs: list[ImportedProgram]
    created: int  # candidate commits made by this import
    scores_written: int  # per-example scores written by this import
    fingerprint: str | None  # the evaluator fingerprint of the scores; None: no scores read
    model: str
    scores_as: str  # "import" (a fingerprint of its own) or "evaluator" (the configured one's)
    front: list[int]  # programs best on some valset example (GEPA's per-example fronts)
    rejected: int  # proposals GEPA evaluated and did not keep
    not_kept: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what else the reader should know


def import_gepa_run(
    store: Store,
    config: Config,
    run: GepaRun,
    components: dict[str, str],
    *,
    same_evaluator: bool = False,
    model: str | None = None,
) -> GepaImport:
    """Record ``run`` in ``store``: the whole import in one transaction, or nothing."""
    files = _component_files(config, run, components)
    if same_evaluator:
        config = require_evaluator(config, "--same-evaluator")
        if model is not None and model != config.evaluator.model:
            raise HarnessgitError("--same-evaluator records under [evaluator] model: leave --model out")
    base = base_tip(store.refs, config.harness.base)
    known = _known_programs(store)
    names = {sha: cid for cid, (_state, sha) in candidate_tips(store.refs).items()}
    txn = Transaction(f"import gepa {run.path.name}")
    commits: dict[int, str] = {}
    imported: list[ImportedProgram] = []
    started = store.clock()
    identities: dict[int, str] = {}
    for program in run.programs:
        identity = identities[program.index] = _identity(program, identities)
        commit = known.get(identity)
        new = commit is None
        candidate = None if commit is None else names.get(commit)
        if commit is None:
            parents = [commits[p] for p in program.parents] or [base]
            commit, candidate = _write_program(store, txn, run, program, files, parents, started)
            evidence = _program_evidence(store, config, run, program, identity)
            txn.append(layout.NOTES_EVIDENCE, commit, [evidence])
            txn.keep(evidence.blob)
        commits[program.index] = commit
        mean = sum(program.scores.values()) / len(program.scores) if program.scores else None
        imported.append(
            ImportedProgram(
                program.index, program.parents, commit, candidate, new and candidate is not None, mean
            )
        )
    scored, fingerprint, notes = 0, None, list[str]()
    if run.source == "pickle":
        scored, fingerprint, notes = _write_scores(store, config, txn, run, commits, same_evaluator, model)
    if not txn.empty:
        store.refs.commit(txn)
    front = sorted({p for programs in (run.front or {}).values() for p in programs})
    return GepaImport(
        str(run.path),
        run.source,
        imported,
        sum(1 for p in imported if p.new),
        scored,
        fingerprint,
        config.evaluator.model if same_evaluator or model is None else model,
        "evaluator" if same_evaluator else "import",
        front,
        run.rejected,
        NOT_KEPT if run.source == "pickle" else [*NOT_KEPT, "valset scores (read only from the pickle)"],
        notes,
    )


def _component_files(config: Config, run: GepaRun, components: dict[str, str]) -> dict[str, str]:
    """Component name -> harness file, checked before anything is written."""
    names = sorted({name for program in run.programs for name in program.texts})
    mapping = components or dict(config.evaluator.components or {})
    missing = [name for name in names if name not in mapping]
    if missing:
        raise HarnessgitError(
            f"map GEPA's component{'s' if len(missing) > 1 else ''} {', '.join(missing)} to "
            f"files: --component {missing[0]}=PATH (or [evaluator] components)"
        )
    unknown = sorted(set(mapping) - set(names))
    if unknown:
        raise HarnessgitError(
            f"--component {unknown[0]}: the run has no such component (it has {', '.join(names)})"
        )
    files = {name: normalise_component(mapping[name]) for name in names}
    for name, path in files.items():
        if not globs.matches(path, config.harness.paths):
            paths = ", ".join(config.harness.paths)
            raise ProposalError(f"--component {name}={path}: not a harness file ([harness] paths = {paths})")
    if len(set(files.values())) < len(files):
        raise HarnessgitError("two components map to one file: each needs a file of its own")
    return files


def _identity(program: Program, identities: dict[int, str]) -> str:
    payload = [program.index, sorted(program.texts.items()), [identities[p] for p in program.parents]]
    return hashlib.sha256(json.dumps(payload, ensure_ascii=False).encode("utf-8")).hexdigest()


def _write_program(
    store: Store,
    txn: Transaction,
    run: GepaRun,
    program: Program,
    files: dict[str, str],
    parents: list[str],
    started: Any,
) -> tuple[str, str | None]:
    """The program's commit (and candidate id) on ``parents`` (its parents' commits, or
    the base tip for the seed), added to ``txn``; the seed whose texts the base tip
    already holds is the base tip."""
    parent_tree = store.objects.commit_info(parents[0]).tree
    changes: dict[str, Blob | None] = {}
    for name, path in files.items():
        text = program.texts.get(name)
        if text is None:  # a component this program does not have: the parent's file stays
            continue
        entry = store.objects.entry_at(parent_tree, path)
        changes[path] = Blob(
            store.objects.write_blob(text.encode("utf-8")), entry.mode if entry else "100644"
        )
    tree = store.objects.edit_tree(parent_tree, changes)
    if program.index == 0 and tree == parent_tree:
        return parents[0], None
    changed = sorted(store.history.changed_paths(parent_tree, tree))
    candidate = new_candidate_id()
    rationale = _rationale(run, program)
    commit = store.objects.write_commit(
        tree, parents, f"{rationale}\n\n{layout.CANDIDATE_TRAILER}: {candidate}"
    )
    txn.create(layout.candidate_ref(candidate), commit)
    # GEPA numbers programs in creation order, and the frontier orders candidates by
    # their proposal's time: one microsecond apart keeps GEPA's order.
    proposal = ProposalRecord(
        ts=started + timedelta(microseconds=program.index),
        candidate=candidate,
        parent=parents[0],
        components=changed,
        rationale=rationale,
        source="import",
        proposer="gepa",
    )
    txn.append(layout.NOTES_EVIDENCE, commit, [proposal])
    return commit, candidate


def _rationale(run: GepaRun, program: Program) -> str:
    subject = f"GEPA program {program.index} of run {run.path.name}"
    if len(subject) > SUBJECT_WIDTH:
        subject = f"GEPA program {program.index}"
    if not program.parents:
        how = "GEPA's seed candidate."
    elif len(program.parents) > 1:
        how = f"GEPA merged programs {program.parents[0]} and {program.parents[1]}."
    else:
        how = f"GEPA's reflective mutation of program {program.parents[0]}."
    entry = program.iteration or {}
    before, after = entry.get("subsample_scores"), entry.get("new_subsample_scores")
    if isinstance(before, list) and isinstance(after, list) and program.parents:
        how += f" Minibatch {entry.get('subsample_ids')}: {before} -> {after}."
    return f"{subject}\n\n{how} Imported by `harnessgit import gepa`."


def _program_evidence(
    store: Store, config: Config, run: GepaRun, program: Program, identity: str
) -> EvidenceRecord:
    item: dict[str, Any] = {
        "kind": "gepa-program",
        "identity": identity,
        "program": program.index,
        "parents": program.parents,
        "metric_calls_at_discovery": program.discovered_at,
        "iteration": program.iteration,
    }
    items: list[Any] = [item]
    if program.index == 0:
        items.append(
            {
                "kind": "gepa-run",
                "run_dir": run.path.name,
                "programs": len(run.programs),
                "iterations": run.iterations,
                "metric_calls": run.metric_calls,
                "proposals_rejected": run.rejected,
                "not_kept": NOT_KEPT,
            }
        )
    data, kinds = encode_evidence(items, config.scrub.scrubber(config.proposer))
    blob = store.objects.write_blob(data)
    return EvidenceRecord(
        ts=store.clock(), blob=blob, items=len(items), bytes=len(data), label=LABEL, item_kinds=kinds
    )


def _known_programs(store: Store) -> dict[str, str]:
    """Program identity -> its commit, for every program imported before."""
    found: dict[str, str] = {}
    for commit, records in store.notes.records(layout.NOTES_EVIDENCE).items():
        for record in records:
            if isinstance(record, EvidenceRecord) and record.label == LABEL:
                for item in parse_jsonl(store.objects.read_blob(record.blob), f"evidence {record.blob[:12]}"):
                    if isinstance(item, dict) and item.get("kind") == "gepa-program":
                        found[str(item.get("identity"))] = commit
    return found


def _write_scores(
    store: Store,
    config: Config,
    txn: Transaction,
    run: GepaRun,
    commits: dict[int, str],
    same_evaluator: bool,
    model: str | None,
) -> tuple[int, str, list[str]]:
    """Each program's valset scores as an eval record on its commit, skipping what is on
    record under the same key (so a program with another's texts is scored once)."""
    ids = sorted({i for p in run.programs for i in p.scores or {}})
    manifest, notes = _manifest(store, config, ids, same_evaluator)
    seed = run.programs[0]
    fingerprint = _import_fingerprint(seed, ids)
    book = ScoreBook.load(store)
    written = 0
    done: set[tuple[Key, str]] = set()
    for program in run.programs:
        if not program.scores:
            continue
        commit = commits[program.index]
        own = eval_context(store.objects, config, commit).key
        key = own if same_evaluator else Key(own.harness, fingerprint, model or config.evaluator.model)
        on_record = {instance for instance, _repeat in book.rows(key)}
        rows = [
            (i, s) for i, s in sorted(program.scores.items()) if i not in on_record and (key, i) not in done
        ]
        if not rows:
            continue
        done.update((key, i) for i, _s in rows)
        written += len(rows)
        record = EvalRecord(
            ts=store.clock(),
            commit=commit,
            **key.fields(),
            **manifest.fields(SELECTION),
            instances=[i for i, _s in rows],
            repeats=[0] * len(rows),
            scores=[s for _i, s in rows],
            wall_time=0.0,
            worker=this_worker(),
        )
        txn.append(layout.NOTES_EVALS, commit, [record])
    if same_evaluator:
        fingerprint = eval_context(store.objects, config, commits[0]).key.fingerprint
    return written, fingerprint, notes


def _manifest(
    store: Store, config: Config, ids: list[str], same_evaluator: bool
) -> tuple[Manifest, list[str]]:
    """The split manifest, when its selection split is GEPA's valset; else (not with
    --same-evaluator) a manifest of the valset alone, so the records name their split."""
    try:
        manifest = load_manifest(store.root, config.splits.manifest)
        selection = set(manifest.ids(SELECTION))
    except ManifestError:
        manifest, selection = None, set()
    if manifest is not None and selection == set(ids):
        return manifest, []
    if same_evaluator:
        raise HarnessgitError(
            f"--same-evaluator: the selection split of {config.splits.manifest} must be GEPA's valset "
            f"({len(ids)} examples, ids {', '.join(ids[:3])}{', ...' if len(ids) > 3 else ''})"
        )
    own = Manifest({SELECTION: ids}, "")
    own = Manifest(own.splits, own.split_hash(SELECTION))
    return own, [
        f"GEPA's valset is not the selection split of {config.splits.manifest}: "
        "its scores are recorded under a split of their own"
    ]


def _import_fingerprint(seed: Program, ids: list[str]) -> str:
    """The fingerprint naming the import: GEPA's evaluator is not known to harnessgit, so
    its scores compare only with scores of the same run (its seed, its valset, the seed's
    scores, which differ between adapters), never with an evaluator's of this repository."""
    payload = {
        "import": "gepa",
        "seed": sorted(seed.texts.items()),
        "valset": ids,
        "seed_scores": seed.scores,
    }
    return sha256_canonical(payload)
