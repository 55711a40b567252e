"""``[evaluator] adapter = "package.module:factory"``: a GEPA adapter as the evaluator.

A team that optimises with GEPA already has its task as a `GEPAAdapter`
(gepa.core.adapter: ``evaluate(batch, candidate, capture_traces)`` returning an
``EvaluationBatch`` of per-example scores, outputs and trajectories, and
``make_reflective_dataset``). This runs that adapter in harnessgit's process, on the
in-process evaluator's machinery (`harnessgit.evaluation.inprocess`): the same batch,
the same checks of the results, the same refusal of code the commit does not hold.

The factory is called once, with no arguments, and returns ``(adapter, dataset)``:
the dataset maps instance ids to GEPA's data instances (a mapping of id -> example,
or a list, whose ids are the indices "0", "1", ... as GEPA numbers a list valset).
GEPA's candidate is built from the harness files: ``[evaluator] components`` names
the file of each component, or, unset, each harness file is a component named by its
path. Duck-typed: gepa itself need not be installed.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from typing import Any

from harnessgit.evaluation.batch import EvaluatorError
from harnessgit.evaluation.inprocess import EvaluationRequest, EvaluatorFunction, PythonEvaluator
from harnessgit.processes.functions import describe, load_function
from harnessgit.render import listing

# An excerpt, not the whole thing: trajectories are evidence stored with every batch
# (docs/evaluator.md, "Where results go"), and GEPA's can hold whole conversations.
TEXT_CHARS = 4000
ITEMS = 50
DEPTH = 8
# The keys of a reflective-dataset record that hold its feedback (GEPA's recommended
# schema is "Feedback"; docs of gepa.core.adapter.make_reflective_dataset).
FEEDBACK_KEYS = ("Feedback", "feedback")


class AdapterEvaluator(PythonEvaluator):
    """The adapter of ``[evaluator] adapter``, made by its factory at the first batch."""

    def _load(self) -> EvaluatorFunction:
        factory = load_function(self.store.root, self.spec, "evaluator")
        try:
            made = factory()
        except Exception as exc:  # the user's code
            raise EvaluatorError(f"evaluator {self.spec} raised {describe(exc)}") from None
        if not (isinstance(made, tuple) and len(made) == 2):
            raise EvaluatorError(
                f"evaluator {self.spec} returned {type(made).__name__}, not (adapter, dataset)"
            )
        adapter, dataset = made
        if not callable(getattr(adapter, "evaluate", None)):
            raise EvaluatorError(f"evaluator {self.spec}: {type(adapter).__name__} has no evaluate method")
        return AdapterRun(self.spec, adapter, examples(self.spec, dataset), self.config.evaluator.components)


def examples(spec: str, dataset: Any) -> dict[str, Any]:
    """Instance id -> data instance: a mapping's keys, or a list's indices as GEPA
    numbers a list valset (so ids match a GEPA run's, `harnessgit import gepa`)."""
    if isinstance(dataset, Mapping):
        wrong = [key for key in dataset if not isinstance(key, str)]
        if wrong:
            raise EvaluatorError(f"evaluator {spec}: dataset ids must be strings, not {wrong[0]!r}")
        return dict(dataset)
    if isinstance(dataset, Sequence) and not isinstance(dataset, (str, bytes)):
        return {str(index): example for index, example in enumerate(dataset)}
    raise EvaluatorError(
        f"evaluator {spec}: the dataset is a {type(dataset).__name__}, "
        "not a mapping of id -> example or a list"
    )


@dataclasses.dataclass(frozen=True)
class AdapterRun:
    """The function called per batch: GEPA's candidate and batch in, result dicts out."""

    spec: str
    adapter: Any
    dataset: dict[str, Any]
    components: dict[str, str] | None

    def __call__(self, request: EvaluationRequest) -> list[dict[str, Any]]:
        candidate = self.candidate(request)
        missing = [instance for instance in request.instances if instance not in self.dataset]
        if missing:
            raise EvaluatorError(
                f"evaluator {self.spec}: {listing(missing)} not in the adapter's dataset "
                f"({len(self.dataset)} examples)"
            )
        batch = [self.dataset[instance] for instance in request.instances]
        result = self._call("evaluate", batch, candidate, capture_traces=True)
        rows = len(batch)
        scores = self._column(result, "scores", rows) or []  # never None: required
        outputs = self._column(result, "outputs", rows, optional=True)
        trajectories = self._column(result, "trajectories", rows, optional=True)
        objectives = self._column(result, "objective_scores", rows, optional=True)
        reflective = self._reflective(candidate, result, rows)
        found = []
        for row, instance in enumerate(request.instances):
            excerpt = {
                "output": excerpt_of(outputs[row]) if outputs else None,
                "trajectory": excerpt_of(trajectories[row]) if trajectories else None,
                "objective_scores": excerpt_of(objectives[row]) if objectives else None,
                "reflective": {name: excerpt_of(records[row]) for name, records in reflective.items()}
                or None,
            }
            found.append(
                {
                    "instance": instance,
                    "score": scores[row],
                    "feedback": feedback(reflective, row, objectives[row] if objectives else None),
                    "trajectory": {key: value for key, value in excerpt.items() if value is not None} or None,
                    "objective_scores": objectives[row] if objectives else None,
                }
            )
        return found

    def candidate(self, request: EvaluationRequest) -> dict[str, str]:
        """GEPA's candidate: component name -> text, from the evaluated tree's harness."""
        if self.components is None:
            return dict(request.harness)
        absent = [path for path in self.components.values() if path not in request.harness]
        if absent:
            raise EvaluatorError(
                f"evaluator {self.spec}: {listing(absent)} ([evaluator] components) not a harness file "
                f"of {request.commit[:12]}"
            )
        return {name: request.harness[path] for name, path in self.components.items()}

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self.adapter, method)(*args, **kwargs)
        except Exception as exc:  # the user's code: the batch fails, on one line
            raise EvaluatorError(f"evaluator {self.spec}: {method} raised {describe(exc)}") from None

    def _column(self, result: Any, name: str, rows: int, *, optional: bool = False) -> list[Any] | None:
        column = getattr(result, name, None)
        if column is None and optional:
            return None
        if not isinstance(column, Sequence) or isinstance(column, (str, bytes)) or len(column) != rows:
            size = len(column) if isinstance(column, Sequence) else type(column).__name__
            raise EvaluatorError(
                f"evaluator {self.spec}: evaluate returned {name} of {size} for a batch of {rows}"
            )
        return list(column)

    def _reflective(self, candidate: dict[str, str], result: Any, rows: int) -> dict[str, list[Any]]:
        """Component -> its reflective records, where they are one per example (an
        adapter may subsample; then no record is taken for one example's)."""
        if not callable(getattr(self.adapter, "make_reflective_dataset", None)):
            return {}
        found: dict[str, list[Any]] = {}
        for name in candidate:  # one at a time: GEPA's default adapter takes only one
            try:
                dataset = self.adapter.make_reflective_dataset(candidate, result, [name])
            except NotImplementedError:
                return {}
            except Exception as exc:
                raise EvaluatorError(
                    f"evaluator {self.spec}: make_reflective_dataset raised {describe(exc)}"
                ) from None
            records = dataset.get(name) if isinstance(dataset, Mapping) else None
            if isinstance(records, Sequence) and len(records) == rows:
                found[name] = list(records)
        return found


def feedback(reflective: dict[str, list[Any]], row: int, objectives: Any) -> str | None:
    """One example's feedback: its reflective records' (one text when the components
    agree, else one line per component), or else its objective scores."""
    texts: dict[str, str] = {}
    for name, records in reflective.items():
        record = records[row]
        if isinstance(record, Mapping):
            text = next((record[key] for key in FEEDBACK_KEYS if isinstance(record.get(key), str)), None)
            if text:
                texts[name] = text[:TEXT_CHARS]
    if len(set(texts.values())) == 1:
        return next(iter(texts.values()))
    if texts:
        return "\n".join(f"{name}: {text}" for name, text in texts.items())
    if isinstance(objectives, Mapping) and objectives:
        return "objective scores: " + ", ".join(f"{key}={value}" for key, value in objectives.items())
    return None


def excerpt_of(value: Any, depth: int = 0) -> Any:
    """``value`` as JSON can hold it, cut short: long texts and lists are cut, objects
    that are not data (a model client, a function) become the start of their repr."""
    if value is None or isinstance(value, (bool, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, str):
        return (
            value
            if len(value) <= TEXT_CHARS
            else value[:TEXT_CHARS] + f"... [{len(value) - TEXT_CHARS} chars cut]"
        )
    if depth >= DEPTH:
        return _cut(repr(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = {field.name: getattr(value, field.name) for field in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        items = list(value.items())
        kept = {str(key): excerpt_of(item, depth + 1) for key, item in items[:ITEMS]}
        if len(items) > ITEMS:
            kept["..."] = f"{len(items) - ITEMS} more keys cut"
        return kept
    if isinstance(value, (list, tuple, set, frozenset)):
        elements = sorted(value, key=repr) if isinstance(value, (set, frozenset)) else list(value)
        kept_list = [excerpt_of(item, depth + 1) for item in elements[:ITEMS]]
        if len(elements) > ITEMS:
            kept_list.append(f"... {len(elements) - ITEMS} more items cut")
        return kept_list
    return _cut(repr(value))


def _cut(text: str) -> str:
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + "..."
