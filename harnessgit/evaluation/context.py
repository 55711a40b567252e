"""What an evaluation of a commit is keyed by: the harness it holds, the evaluator, the model.

A result is keyed by (harness tree id, evaluator fingerprint, model, instance,
repeat) (docs/design.md, "Cache key = harness tree id"): a candidate, its merge and a
revert to identical text share one key and are never evaluated twice.
"""

from __future__ import annotations

from dataclasses import dataclass

from harnessgit.config import Config
from harnessgit.evaluation.fingerprint import evaluator_fingerprint, harness_tree_id
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
