"""``[evaluator] python = "package.module:function"``: the evaluator called in harnessgit's process.

The function gets an `EvaluationRequest` per batch and returns (or yields) one
mapping per instance with the fields of the JSON-lines protocol; each goes through
JSON and the command protocol's own parser (`batch.parse_output`), so both kinds
accept exactly the same results. No process starts and nothing is copied unless
the function asks for the tree (`EvaluationRequest.directory`): the harness files'
texts come straight from git.

Scores must be attributable to the commit (docs/evaluator.md, "In-process
evaluators"). A command evaluator runs as each commit holds it; Python keeps one
version of a module per process, imported from the working tree. So the imported
files are hashed as they are imported, and an evaluation whose commit holds another
version of them (uncommitted edits, or an older evaluator) is refused, naming the
files, rather than scored by code the commit does not hold.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnessgit.config import Config
from harnessgit.evaluation.batch import BatchOutput, EvaluatorError, OutputProblem, check_results
from harnessgit.evaluation.context import EvalContext
from harnessgit.evaluation.fingerprint import evaluator_files, evaluator_fingerprint, harness_files
from harnessgit.object_ids import object_id
from harnessgit.objects import TreeEntry
from harnessgit.processes.functions import describe, load_function, top_level
from harnessgit.processes.scratch import ScratchDir
from harnessgit.render import listing
from harnessgit.store import Store


@dataclass(frozen=True)
class EvaluationRequest:
    """One batch, as the evaluator function receives it."""

    harness: Mapping[str, str]  # path -> text of each harness file of the evaluated tree
    instances: list[str]
    split: str
    commit: str  # the evaluated commit
    repeat: int
    model: str
    _directory: Callable[[], Path] = field(repr=False, compare=False)

    def directory(self) -> Path:
        """The evaluated tree, checked out on the first call (fresh for this batch and
        removed after it): only an evaluator that needs more than the harness texts pays."""
        return self._directory()


class _Checkout:
    """A batch's tree, written only when asked for."""

    def __init__(self, store: Store, tree: str) -> None:
        self.store, self.tree = store, tree
        self.scratch: ScratchDir | None = None

    def __call__(self) -> Path:
        if self.scratch is None:
            self.scratch = ScratchDir("eval")
            (self.scratch.path / "harness").mkdir()
            self.store.worktree.checkout_tree(self.tree, self.scratch.path / "harness")
        return self.scratch.path / "harness"

    def cleanup(self) -> None:
        if self.scratch is not None:
            self.scratch.cleanup()


# What an in-process evaluator is called as, once per batch.
EvaluatorFunction = Callable[[EvaluationRequest], Iterable[Mapping[str, Any]]]


class PythonEvaluator:
    """The function of ``[evaluator] python``, imported at its first batch. Subclasses
    make the function another way (`harnessgit.evaluation.adapter`: a GEPA adapter)
    and keep the rest: the batch, the checks of its results, the fingerprint guard."""

    def __init__(self, store: Store, config: Config) -> None:
        assert config.evaluator.in_process
        self.store, self.config, self.spec = store, config, config.evaluator.in_process
        self._function: EvaluatorFunction | None = None
        self._imported: dict[str, TreeEntry] = {}  # the evaluator files as imported
        self._fingerprint = ""
        self._harness: dict[str, dict[str, str]] = {}  # tree id -> harness texts

    def run(self, context: EvalContext, split: str, instances: list[str], repeat: int) -> BatchOutput:
        function = self._check(context)
        checkout = _Checkout(self.store, context.tree)
        request = EvaluationRequest(
            harness=self._texts(context.tree),
            instances=list(instances),
            split=split,
            commit=context.commit,
            repeat=repeat,
            model=context.key.model,
            _directory=checkout,
        )
        started = time.monotonic()
        try:
            items = _json_objects(function(request))
        except _NotJSON as problem:
            raise EvaluatorError(f"evaluator {self.spec}: {problem}") from None
        except EvaluatorError:  # said in full by a subclass's function (the adapter's)
            raise
        except Exception as exc:  # the user's code: any failure is the batch's
            raise EvaluatorError(f"evaluator {self.spec} raised {describe(exc)}") from None
        finally:
            checkout.cleanup()
        wall = time.monotonic() - started
        try:
            return BatchOutput(check_results(items, instances), wall)
        except OutputProblem as exc:
            raise EvaluatorError(f"evaluator {self.spec}: {exc}") from None

    def _load(self) -> EvaluatorFunction:
        """The function called per batch (imported here; after the files were hashed)."""
        return load_function(self.store.root, self.spec, "evaluator")

    def _check(self, context: EvalContext) -> EvaluatorFunction:
        """The function, if the evaluated commit holds the files it was imported from."""
        if self._function is None:
            self._imported = self._on_disk(self.store.objects.files_at(context.grader or context.commit))
            self._fingerprint = evaluator_fingerprint(self._imported, self.config)
            self._function = self._load()
        if context.key.fingerprint != self._fingerprint:
            committed = evaluator_files(
                self.store.objects.files_at(context.grader or context.commit), self.config
            )
            differ = sorted(
                path
                for path in set(committed) | set(self._imported)
                if (committed[path].sha if path in committed else None)
                != (self._imported[path].sha if path in self._imported else None)
            )
            raise EvaluatorError(
                f"evaluator {self.spec}: {listing(differ) or 'its files'} in the working tree "
                f"differ from {(context.grader or context.commit)[:12]}'s, and an in-process evaluator "
                "runs the working tree's: commit (or stash) the edits, or use a command evaluator"
            )
        return self._function

    def _on_disk(self, committed: Mapping[str, TreeEntry]) -> dict[str, TreeEntry]:
        """The evaluator files as the working tree holds them: the committed ones and any
        new file in the module's package (an untracked helper would be imported too)."""
        root = self.store.root
        candidates = set(committed)
        top = top_level(self.spec)
        for directory, subdirs, names in os.walk(root / top):
            subdirs[:] = [d for d in subdirs if d != "__pycache__"]
            base = Path(directory).relative_to(root).as_posix()
            candidates.update(f"{base}/{name}" for name in names if not name.endswith(".pyc"))
        found: dict[str, TreeEntry] = {}
        for path in sorted(candidates):
            try:
                data = (root / path).read_bytes()
            except OSError:  # deleted in the working tree, or not a file
                continue
            found[path] = TreeEntry("100644", path, object_id("blob", data))
        return evaluator_files(found, self.config)

    def _texts(self, tree: str) -> dict[str, str]:
        if tree not in self._harness:
            files = harness_files(self.store.objects.files_at(tree), self.config)
            blobs = self.store.objects.read_blobs([entry.sha for entry in files.values()])
            self._harness[tree] = {
                path: blobs[entry.sha].decode("utf-8", "replace") for path, entry in sorted(files.items())
            }
        return dict(self._harness[tree])


class _NotJSON(Exception):
    """A result that cannot be written as a JSON line."""


def _json_objects(results: Iterable[Mapping[str, Any]]) -> list[tuple[int, dict[str, Any]]]:
    """The function's results as the JSON objects a command would print: through JSON,
    so that a value JSON cannot hold (NaN, a set, an object) fails here, not when the
    evidence is written."""
    if isinstance(results, (str, bytes, Mapping)) or not isinstance(results, Iterable):
        raise _NotJSON(f"returned {type(results).__name__}, not an iterable of result dicts")
    items = []
    for number, result in enumerate(results, 1):
        if not isinstance(result, Mapping):
            raise _NotJSON(f"result {number} is a {type(result).__name__}, not a dict")
        try:
            items.append((number, json.loads(json.dumps(dict(result), allow_nan=False))))
        except (TypeError, ValueError) as exc:
            raise _NotJSON(f"result {number} cannot be written as JSON ({describe(exc)})") from None
    return items
