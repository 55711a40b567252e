"""What an evaluation of a commit is keyed by: the harness it holds, the evaluator, the model.

A result is keyed by (harness tree id, evaluator fingerprint, model, instance,
repeat) (docs/design.md, "Cache key = harness tree id"): a candidate, its merge and a
revert to identical text share one key and are never evaluated twice.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

from harnessgit.config import Config
from harnessgit.evaluation.fingerprint import (
    evaluator_files,
    evaluator_fingerprint,
    harness_files,
    harness_tree_id,
)
from harnessgit.objects import TreeEntry
from harnessgit.render import listing
from harnessgit.store import Blob, Objects, Store

if TYPE_CHECKING:  # the record models cost about 100 ms at import; a key needs none of it
    from harnessgit.records import EvalRecord


class KeyFields(TypedDict):
    """A key as the records and results that carry it spell it: three fields."""

    harness: str
    fingerprint: str
    model: str


@dataclass(frozen=True)
class Key:
    harness: str  # git tree id of the harness files alone
    fingerprint: str  # the evaluator command and the evaluator's files
    model: str

    @classmethod
    def of(cls, record: EvalRecord) -> Key:
        """The key an eval record carries."""
        return cls(record.harness, record.fingerprint, record.model)

    def fields(self) -> KeyFields:
        """The key for a record or result that carries it: ``EvalRecord(**key.fields(), ...)``."""
        return KeyFields(harness=self.harness, fingerprint=self.fingerprint, model=self.model)


@dataclass(frozen=True)
class EvalContext:
    commit: str
    tree: str  # what the evaluator runs in: the commit's tree, or its harness in a grader's
    key: Key
    grader: str | None = None  # the commit whose evaluator grades ``commit``'s harness, when not its own


def eval_context(objects: Objects, config: Config, commit: str, *, grader: str | None = None) -> EvalContext:
    """What evaluating ``commit`` means. With ``grader``, another commit whose evaluator
    differs: ``commit``'s harness files in ``grader``'s tree, so that harnesses on
    either side of a regrade are scored by one evaluator (bisect across a regrade).
    The key is then (``commit``'s harness, ``grader``'s fingerprint, model), the key
    a commit with that harness and that evaluator has."""
    files = objects.files_at(commit)
    fingerprint = evaluator_fingerprint(files, config)
    own = EvalContext(
        commit,
        objects.commit_info(commit).tree,
        Key(harness_tree_id(files, config), fingerprint, config.evaluator.model),
    )
    if grader is None or grader == commit:
        return own
    grader_files = objects.files_at(grader)
    theirs = evaluator_fingerprint(grader_files, config)
    if theirs == fingerprint:
        return own
    harness = harness_files(files, config)
    changes: dict[str, Blob | None] = dict.fromkeys(harness_files(grader_files, config))
    changes.update({path: Blob(entry.sha, entry.mode) for path, entry in harness.items()})
    tree = objects.edit_tree(objects.commit_info(grader).tree, changes)
    return EvalContext(commit, tree, Key(own.key.harness, theirs, config.evaluator.model), grader)


def uncommitted_evaluator(store: Store, config: Config, commit: str) -> list[str]:
    """The evaluator files (docs/evaluator.md, "Fingerprint") whose working-tree
    version differs from ``commit``'s: edits an evaluation ignores, since the
    evaluator runs in a checkout of the commit. Only paths ``git status`` lists are
    read, so a clean working tree costs one status call."""
    changes = store.worktree.changes()
    if not changes:
        return []
    files = store.objects.files_at(commit)
    committed = evaluator_files(files, config)
    # A new file counts too when the rule would claim it once committed (an eval.py
    # the command names but no commit holds yet).
    new = {path: TreeEntry("100644", path, "") for path in changes if path not in files}
    claimed = evaluator_files({**files, **new}, config)
    dirty = sorted(path for path in changes if path in claimed)
    on_disk = store.worktree.hash_files([path for path in dirty if changes[path]], write=False)
    return [
        path for path in dirty if on_disk.get(path) != (committed[path].sha if path in committed else None)
    ]


def ignored_edits_warning(paths: list[str], commit: str, why: str) -> str:
    """One line naming working-tree edits a command ignores (at most three paths)."""
    shown = listing(paths)
    differ, are = ("differs", "is") if len(paths) == 1 else ("differ", "are")
    return f"the working tree's {shown} {differ} from {commit[:12]}'s and {are} ignored: {why}"
