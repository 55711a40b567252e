"""Per-example objective scores of GEPA's valset evaluations, taken from the adapter.

GEPA 0.1.4 gives its callbacks no per-example objective scores of a valset evaluation:
``on_valset_evaluated`` carries the scores and outputs only, ``on_evaluation_end``
(which has ``objective_scores``) fires for minibatch evaluations only, and the state
keeps each program's mean per objective, not the examples' scores
(gepa/core/callbacks.py ``ValsetEvaluatedEvent``; gepa/core/state.py
``_aggregate_objective_scores``). They exist only in the ``EvaluationBatch`` the
adapter returns. `ObjectiveTap` wraps the adapter given to GEPA
(``adapter=recorder.watch(adapter)``): it returns every result unchanged and notes, for
each valset example (found by identity in the recorder's ``valset``), the candidate's
last score and objective scores. That is what GEPA used: without GEPA's evaluation
cache the valset evaluation is the candidate's last call on those examples before
``on_valset_evaluated``; with it, a cached example was not evaluated again, so the
last call is the one GEPA cached. The recorder takes them at ``on_valset_evaluated``
and keeps them only when every score agrees with GEPA's event.

With GEPA's evaluation cache (``cache_evaluation=True``) the recorder needs no tap for
the programs an iteration adds: `cached_objectives` reads their examples' objective
scores from the cache in the state ``on_iteration_end`` carries, which is what GEPA
used even where its cache answers a val id with a train example's evaluation (gepa
keys the cache by (candidate, data id), and puts minibatch evaluations in it under their
train ids). The seed's valset evaluation is never cached (gepa/core/engine.py ``run``):
its objective scores come from the tap only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

Entry = tuple[float, dict[str, float]]  # the example's score, its objective scores


class ObjectiveTap:
    """The adapter GEPA is given, unchanged in what it answers, noting objective scores."""

    def __init__(self, adapter: Any, valset: Callable[[], Mapping[int, Any]]) -> None:
        self._adapter = adapter
        self._valset = valset  # id(example) -> GEPA's val id, made at the first call
        self._val_ids: Mapping[int, Any] | None = None
        self._seen: dict[tuple[tuple[str, str], ...], dict[Any, Entry]] = {}

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._adapter, name)
        if name == "batch_evaluate" and callable(found):
            return self._batch(found)
        return found

    def evaluate(self, batch: list[Any], candidate: dict[str, str], capture_traces: bool = False) -> Any:
        result = self._adapter.evaluate(batch, candidate, capture_traces)
        self._note(candidate, batch, result)
        return result

    def _batch(self, batch_evaluate: Callable[[Any], Any]) -> Callable[[Any], Any]:
        def evaluate_all(items: list[tuple[dict[str, str], list[Any]]]) -> Any:
            results = batch_evaluate(items)
            for (candidate, batch), result in zip(items, results, strict=False):
                self._note(candidate, batch, result)
            return results

        return evaluate_all

    def _note(self, candidate: Mapping[str, str], batch: Sequence[Any], result: Any) -> None:
        objectives = getattr(result, "objective_scores", None)
        scores = getattr(result, "scores", None)
        if not objectives or scores is None or len(objectives) != len(batch) or len(scores) != len(batch):
            return
        if self._val_ids is None:
            self._val_ids = self._valset()
        seen = self._seen.setdefault(tuple(sorted(candidate.items())), {})
        for example, score, scored in zip(batch, scores, objectives, strict=True):
            val_id = self._val_ids.get(id(example), _NOT_VAL)
            if val_id is not _NOT_VAL and isinstance(scored, Mapping):
                seen[val_id] = (float(score), {str(k): float(v) for k, v in scored.items()})

    def taken(
        self, candidate: Mapping[str, str], scores: Mapping[Any, float]
    ) -> dict[Any, dict[str, float]] | None:
        """val id -> objective scores of ``candidate``'s valset evaluation with these
        ``scores`` (GEPA's event's), or None unless every one was noted with its score."""
        seen = self._seen.get(tuple(sorted(candidate.items())), {})
        found: dict[Any, dict[str, float]] = {}
        for val_id, score in scores.items():
            entry = seen.get(val_id)
            if entry is None or entry[0] != score:
                return None
            found[val_id] = entry[1]
        return found


def cached_objectives(state: Any, valsets: Sequence[Any]) -> None:
    """Set each valset evaluation's ``objectives`` from GEPA's evaluation cache, where
    the state has one and it holds every example with GEPA's score for it."""
    cache = getattr(state, "evaluation_cache", None)
    if cache is None:
        return
    for valset in valsets:
        found: dict[Any, dict[str, float]] = {}
        for val_id, score in valset.scores.items():
            entry = cache.get(valset.candidate, val_id)
            if entry is None or entry.objective_scores is None or entry.score != score:
                break
            found[val_id] = {str(k): float(v) for k, v in entry.objective_scores.items()}
        else:
            valset.objectives = found


_NOT_VAL = object()
