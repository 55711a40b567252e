"""`harnessgit export failures`: the record's failing trajectories as training data.

One conversation per line (chat-format JSONL, the ``messages`` list that fine-tuning
tools read), cut after the failing turn (`turns.failing_turn`), which is its last
message, with ``metadata``: harness commit, instance, model, repeat, failure class,
score, feedback, the failing turn's index and the rule that found it. Every assistant
message carries ``weight: 0``: the turns are failures, so a tool that trains on the file
as it is learns nothing from them; a teacher rewrites the last message and sets its
weight to 1 (the paper's on-policy single-turn correction, arXiv 2609.09134).

``pairs``: for each failure, the passing trajectory of a later harness (a descendant
commit, same model and evaluator, same instance, score 1) as a preference pair,
``{"chosen": [...], "rejected": [...], "metadata": {...}}`` (TRL's conversational
preference format; the two harnesses' system prompts differ, so the shared prefix is
short). Failures with no such later pass are left out and counted.

The train split is the one to export. The selection split decides and the test split
is held out: training on either makes it no judge of the result, so they need
``force`` and the export is recorded (an ``export`` record on the base tip, like a
test peek).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any

from harnessgit import layout
from harnessgit.config import Config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import Key
from harnessgit.evaluation.lineage import note_commit
from harnessgit.evaluation.scores import TEST_SPLIT, Row, ScoreBook
from harnessgit.evaluation.splits import load_manifest
from harnessgit.evaluation.trajectory import evidence_items
from harnessgit.evaluation.turns import chat_messages, failing_turn
from harnessgit.records import ExportRecord, TestPeekRecord
from harnessgit.render import plural
from harnessgit.store import Store, Transaction

GUARDED = ("selection", TEST_SPLIT)


@dataclass(frozen=True)
class ExportResult:
    split: str
    model: str | None  # the --model filter
    conversations: int  # lines written
    pairs: bool
    failures: int  # failing (instance, repeat) results on record for the split
    skipped: dict[str, int]  # failures left out, by reason
    commits: list[str]  # harness commits exported from
    record: ExportRecord | None  # written for a forced export of a guarded split
    text: str = field(default="", metadata={"json": False})  # the JSONL itself


@dataclass(frozen=True)
class _Failure:
    key: Key
    row: Row

    @property
    def model(self) -> str:
        return self.key.model


def export_failures(
    store: Store,
    config: Config,
    *,
    split: str,
    model: str | None = None,
    pairs: bool = False,
    force: bool = False,
) -> ExportResult:
    """The failing trajectories of ``split`` (optionally one model's) as chat JSONL."""
    if split in GUARDED and not force:
        what = "decides what is accepted" if split != TEST_SPLIT else "is held out"
        raise HarnessgitError(
            f"the {split} split {what}: training on it makes it no judge of the result. Export "
            "--split train, or pass --force (the export is recorded)"
        )
    manifest = load_manifest(store.root, config.splits.manifest)
    ids = set(manifest.ids(split))
    if not ids:
        raise HarnessgitError(f"split {split!r} has no instances")
    book = ScoreBook.load(store)
    keys = [key for key in book.cache_keys() if model is None or key.model == model]
    if model is not None and not keys:
        raise HarnessgitError(f"no evaluation on record for model {model!r}")
    failures = [
        _Failure(key, row)
        for key in keys
        for row in book.rows(key).values()
        if row.instance in ids and row.score < 1
    ]
    failures.sort(key=lambda f: (f.row.ts, f.row.commit, f.model, f.row.instance, f.row.repeat))
    evidence = _Evidence(store)
    passes = _passes(book, keys, ids) if pairs else {}
    lines: list[str] = []
    skipped = Counter[str]()
    commits: dict[str, None] = {}
    exported: dict[Key, str] = {}  # whose results were read, and a commit holding them
    for failure in failures:
        line, why = _line(store, evidence, failure, split, passes if pairs else None)
        if line is None:
            skipped[why] += 1
            continue
        lines.append(json.dumps(line, ensure_ascii=False, sort_keys=True))
        commits.setdefault(failure.row.commit, None)
        exported.setdefault(failure.key, failure.row.commit)
    result = ExportResult(
        split=split,
        model=model,
        conversations=len(lines),
        pairs=pairs,
        failures=len(failures),
        skipped=dict(sorted(skipped.items())),
        commits=list(commits),
        record=None,
        text="".join(f"{line}\n" for line in lines),
    )
    if split not in GUARDED:
        return result
    peeks = _peeks(store, book, exported, manifest.ids(split)) if split == TEST_SPLIT else []
    return replace(result, record=_record(store, config, result, peeks))


class _Evidence:
    """Evidence blobs, each read and parsed once."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self._blobs: dict[str, dict[tuple[str, int], dict[str, Any]]] = {}

    def item(self, row: Row) -> dict[str, Any]:
        if not row.evidence:
            return {}
        if row.evidence not in self._blobs:
            self._blobs[row.evidence] = evidence_items(
                self.store.objects.read_blob(row.evidence), row.evidence[:12]
            )
        return self._blobs[row.evidence].get((row.instance, row.repeat), {})


def _passes(book: ScoreBook, keys: list[Key], ids: set[str]) -> dict[tuple[str, str, str], list[Row]]:
    """(model, fingerprint, instance) -> rows that scored 1, oldest first."""
    found: dict[tuple[str, str, str], list[Row]] = {}
    for key in keys:
        for row in book.rows(key).values():
            if row.instance in ids and row.score >= 1:
                found.setdefault((key.model, key.fingerprint, row.instance), []).append(row)
    for rows in found.values():
        rows.sort(key=lambda row: row.ts)
    return found


def _line(
    store: Store,
    evidence: _Evidence,
    failure: _Failure,
    split: str,
    passes: dict[tuple[str, str, str], list[Row]] | None,
) -> tuple[dict[str, Any] | None, str]:
    """One JSONL object for ``failure``, or None and why it is left out."""
    row = failure.row
    item = evidence.item(row)
    trajectory = item.get("trajectory")
    messages = chat_messages(trajectory)
    if messages is None:
        return None, "no trajectory with turns"
    turn = failing_turn(messages, trajectory, row.failure_class)
    if turn is None:
        return None, "no assistant turn"
    metadata: dict[str, Any] = {
        "harness_commit": row.commit,
        "instance": row.instance,
        "model": failure.model,
        "repeat": row.repeat,
        "split": split,
        "score": row.score,
        "failure_class": row.failure_class,
        "feedback": item.get("feedback"),
        "failing_turn": turn.index,
        "failing_turn_rule": turn.rule,
        "turns": len(messages),
        "fingerprint": failure.key.fingerprint,
    }
    rejected = _weighted(messages[: turn.index + 1])
    if passes is None:
        return {"messages": rejected, "metadata": metadata}, ""
    later = [
        other
        for other in passes.get((failure.model, failure.key.fingerprint, row.instance), [])
        if other.commit != row.commit and store.history.is_ancestor(row.commit, other.commit)
    ]
    for other in later:
        chosen = chat_messages(evidence.item(other).get("trajectory"))
        if chosen:
            metadata["chosen_commit"] = other.commit
            return {"chosen": _weighted(chosen, 1), "rejected": rejected, "metadata": metadata}, ""
    return None, "no passing trajectory of a later harness"


def _weighted(messages: list[dict[str, str]], weight: int = 0) -> list[dict[str, Any]]:
    return [{**m, "weight": weight} if m["role"] == "assistant" else dict(m) for m in messages]


def _record(store: Store, config: Config, result: ExportResult, peeks: list[TestPeekRecord]) -> ExportRecord:
    """Record a forced export (``result``) on the base tip, so `log` and an audit see it,
    with the test peeks it amounts to (one transaction)."""
    tip = note_commit(store, config.harness.base)
    record = ExportRecord(
        ts=store.clock(),
        commit=tip,
        split=result.split,
        model=result.model,
        conversations=result.conversations,
        pairs=result.pairs,
        commits=result.commits,
        digest=hashlib.sha256(result.text.encode("utf-8")).hexdigest(),
        author=store.identity(),
    )
    txn = Transaction(f"export {result.split}")
    txn.append(layout.NOTES_EVALS, tip, [record])
    for peek in peeks:
        txn.append(layout.NOTES_EVALS, peek.commit, [peek])
    store.refs.commit(txn)
    return record


def _peeks(store: Store, book: ScoreBook, exported: dict[Key, str], ids: list[str]) -> list[TestPeekRecord]:
    """Exporting test-split trajectories is looking at the test split: one forced
    `test-peek` per harness, evaluator and model exported, with its test score, so
    `test`, `log` and `verify` count the look as they count `harnessgit test`'s."""
    peeks = []
    for key, commit in exported.items():
        summary = book.summary(key, TEST_SPLIT, ids)
        peeks.append(
            TestPeekRecord(
                ts=store.clock(),
                commit=commit,
                **key.fields(),
                n=summary.n,
                mean=summary.mean if summary.mean is not None else 0.0,
                forced=True,
            )
        )
    return peeks


def summary_text(result: ExportResult) -> str:
    kind = "preference pairs" if result.pairs else "conversations"
    who = f", model {result.model}" if result.model else ""
    lines = [
        f"{result.conversations} {kind} from {result.failures} failures on the {result.split} split{who}, "
        + plural(len(result.commits), "harness commit")
    ]
    lines += [f"  {count} left out: {reason}" for reason, count in result.skipped.items()]
    if result.record is not None:
        lines.append(f"  recorded as export {result.record.id[:12]} on {result.record.commit[:12]} (forced)")
    return "\n".join(lines)
