"""What an evaluation of a commit is keyed by: the harness it holds, the evaluator, the model.

A result is keyed by (harness tree id, evaluator fingerprint, model, instance,
repeat) (docs/design.md, "Cache key = harness tree id"): a candidate, its merge and a
revert to identical text share one key and are never evaluated twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessgit.config import Config
from harnessgit.evaluation.fingerprint import evaluator_files, evaluator_fingerprint, harness_tree_id
from harnessgit.objects import TreeEntry
from harnessgit.store import Store


@dataclass(frozen=True)
class Key:
    harness: str  # git tree id of the harness files alone
    fingerprint: str  # the evaluator command and the evaluator's files
    model: str


@dataclass(frozen=True)
class EvalContext:
    commit: str
    tree: str
    key: Key


def eval_context(store: Store, config: Config, commit: str) -> EvalContext:
    files = store.files_at(commit)
    key = Key(harness_tree_id(files, config), evaluator_fingerprint(files, config), config.evaluator.model)
    return EvalContext(commit, store.commit_info(commit).tree, key)


def uncommitted_evaluator(store: Store, config: Config, commit: str) -> list[str]:
    """The evaluator files (docs/evaluator.md, "Fingerprint") whose working-tree
    version differs from ``commit``'s: edits an evaluation ignores, since the
    evaluator runs in a checkout of the commit. Only paths ``git status`` lists are
    read, so a clean working tree costs one status call."""
    changes = store.worktree_changes()
    if not changes:
        return []
    files = store.files_at(commit)
    committed = evaluator_files(files, config)
    # A new file counts too when the rule would claim it once committed (an eval.py
    # the command names but no commit holds yet).
    new = {path: TreeEntry("100644", path, "") for path in changes if path not in files}
    claimed = evaluator_files({**files, **new}, config)
    dirty = sorted(path for path in changes if path in claimed)
    on_disk = store.hash_worktree_files([path for path in dirty if changes[path]], write=False)
    return [
        path for path in dirty if on_disk.get(path) != (committed[path].sha if path in committed else None)
    ]


def ignored_edits_warning(paths: list[str], commit: str, why: str) -> str:
    """One line naming working-tree edits a command ignores (at most three paths)."""
    shown = ", ".join(paths[:3]) + (f" and {len(paths) - 3} more" if len(paths) > 3 else "")
    differ, are = ("differs", "is") if len(paths) == 1 else ("differ", "are")
    return f"the working tree's {shown} {differ} from {commit[:12]}'s and {are} ignored: {why}"
