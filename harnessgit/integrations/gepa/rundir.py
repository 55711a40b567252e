"""A finished GEPA run directory, as gepa 0.1.4 writes it (``run_dir=``).

`gepa.core.state.GEPAState.save` writes, at the start of every iteration and at the
end of the run:

- ``gepa_state.bin``: a pickle of the whole state: every program's texts
  (``program_candidates``), its parents (``parent_program_for_candidate``), its
  valset scores per example (``prog_candidate_val_subscores``), the per-example
  Pareto fronts, the metric calls spent, the run log;
- ``candidates.json``: the programs' texts, and ``run_log.json``: the run log
  (per iteration: the parent selected, the minibatch ids and scores before and after,
  the program added, merges). JSON, but no valset score is in them.

Unpickling runs whatever code the pickle names, so a run directory from someone else
can execute anything on load. The pickle is read only when the caller says it is
trusted; otherwise the JSON files give the texts and the parents, and no scores.
"""

from __future__ import annotations

import json
import math
import pickle
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.splits import MAX_ID_LENGTH
from harnessgit.processes.functions import describe

STATE = "gepa_state.bin"
CANDIDATES = "candidates.json"
RUN_LOG = "run_log.json"


class RunDirError(HarnessgitError):
    pass


@dataclass(frozen=True)
class Program:
    """One of GEPA's programs: the seed (0) or a candidate it accepted."""

    index: int
    texts: dict[str, str]  # component name -> text
    parents: list[int]  # [] for the seed; two for a merge
    scores: dict[str, float] | None  # valset example id -> score; None: not kept (JSON only)
    discovered_at: int | None = None  # metric calls spent when it was found
    iteration: dict[str, Any] | None = field(default=None)  # the run-log entry that added it


@dataclass(frozen=True)
class GepaRun:
    path: Path
    source: str  # what was read: "pickle" or "json"
    programs: list[Program]
    front: dict[str, list[int]] | None  # valset example -> programs best on it (GEPA's fronts)
    iterations: int
    metric_calls: int | None
    proposals: int  # proposals GEPA evaluated on a minibatch (accepted or not)
    merges: int  # merges GEPA accepted

    @property
    def accepted(self) -> int:
        return len(self.programs) - 1

    @property
    def rejected(self) -> int:
        return max(self.proposals - self.accepted, 0)


def read_run(path: Path, *, trust_pickle: bool) -> GepaRun:
    """The run at ``path``; a `RunDirError` on one line when it is none."""
    if not path.is_dir():
        raise RunDirError(f"{path}: no such directory")
    has_state, has_json = (path / STATE).is_file(), (path / CANDIDATES).is_file()
    if not has_state and not has_json:
        raise RunDirError(f"{path} is not a GEPA run directory (no {STATE} nor {CANDIDATES} in it)")
    log = _run_log(path)
    if trust_pickle and has_state:
        return _from_state(path, _unpickle(path / STATE), log)
    if not has_json or (not (path / RUN_LOG).is_file() and len(_candidates(path)) > 1):
        raise RunDirError(
            f"{path}: the parents of GEPA's programs are only in {STATE}, a pickle, and unpickling "
            "runs any code its author put in it: pass --trust-pickle if you made the run or trust who did"
        )
    return _from_json(path, _candidates(path), log)


def _unpickle(file: Path) -> dict[str, Any]:
    try:
        with file.open("rb") as handle:
            data = pickle.load(handle)  # only with --trust-pickle: docs/gepa.md says why
    except Exception as exc:  # a damaged file, a class that is not importable here
        raise RunDirError(f"{file}: cannot unpickle it: {describe(exc)}") from None
    if not isinstance(data, dict) or "program_candidates" not in data:
        raise RunDirError(f"{file} is not a GEPA state (no program_candidates in it)")
    return data


def _read_json(file: Path) -> Any:
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise RunDirError(f"{file}: cannot read it as JSON: {describe(exc)}") from None


def _candidates(path: Path) -> list[dict[str, str]]:
    return _texts(_read_json(path / CANDIDATES), path / CANDIDATES)


def _run_log(path: Path) -> list[dict[str, Any]]:
    file = path / RUN_LOG
    if not file.is_file():
        return []  # GEPA writes it from the first iteration on
    log = _read_json(file)
    if not isinstance(log, list) or not all(isinstance(entry, dict) for entry in log):
        raise RunDirError(f"{file} is not a GEPA run log (a list of iteration objects)")
    return log


def _texts(value: Any, where: Path) -> list[dict[str, str]]:
    ok = isinstance(value, list) and bool(value)
    ok = ok and all(
        isinstance(c, dict) and c and all(isinstance(k, str) and isinstance(v, str) for k, v in c.items())
        for c in value
    )
    if not ok:
        raise RunDirError(f"{where}: GEPA's programs are not a list of component name -> text")
    return [dict(c) for c in value]


def _from_state(path: Path, state: dict[str, Any], log: list[dict[str, Any]]) -> GepaRun:
    where = path / STATE
    texts = _texts(state.get("program_candidates"), where)
    parents: Any = state.get("parent_program_for_candidate")
    scores: Any = state.get("prog_candidate_val_subscores")
    calls: Any = state.get("num_metric_calls_by_discovery") or [None] * len(texts)
    if not all(isinstance(column, list) and len(column) == len(texts) for column in (parents, scores, calls)):
        raise RunDirError(f"{where}: its parents, scores and programs do not line up")
    if scores and isinstance(scores[0], list):  # gepa's schema before version 2: one list per program
        scores = [dict(enumerate(row)) for row in scores]
    added = _added_by(log)
    programs = [
        Program(
            index,
            texts[index],
            _parents_of(parents[index], index, where),
            _scores_of(scores[index], index, where),
            calls[index] if isinstance(calls[index], int) else None,
            added.get(index),
        )
        for index in range(len(texts))
    ]
    fronts = state.get("program_at_pareto_front_valset")
    front = (
        {_instance(key, where): sorted(value) for key, value in fronts.items()}
        if isinstance(fronts, Mapping)
        else None
    )
    total = state.get("total_num_evals")
    return GepaRun(
        path, "pickle", programs, front, len(log), total if isinstance(total, int) else None, *_counts(log)
    )


def _from_json(path: Path, texts: list[dict[str, str]], log: list[dict[str, Any]]) -> GepaRun:
    """Programs from candidates.json, their parents from the run log: a reflective
    program's is the candidate its iteration selected, a merge's the two it merged."""
    added = _added_by(log)
    programs = [Program(0, texts[0], [], None)]
    for index in range(1, len(texts)):
        entry = added.get(index)
        parents = _logged_parents(entry, index) if entry is not None else None
        if parents is None:
            raise RunDirError(
                f"{path / RUN_LOG} does not say which program GEPA's program {index} came from: "
                f"its parents are in {STATE} (pass --trust-pickle to read it)"
            )
        programs.append(Program(index, texts[index], parents, None, None, entry))
    return GepaRun(path, "json", programs, None, len(log), None, *_counts(log))


def _logged_parents(entry: dict[str, Any], index: int) -> list[int] | None:
    if entry.get("merged"):
        merged = entry.get("merged_entities")
        return (
            [int(p) for p in merged[:2]] if isinstance(merged, (list, tuple)) and len(merged) >= 2 else None
        )
    tasks = entry.get("tasks") or [{"parent_idx": entry.get("selected_program_candidate")}]
    if len(tasks) != 1 or len(entry.get("new_program_indices", [index])) != 1:
        return None  # several proposals in one iteration: which parent is whose is not logged
    parent = tasks[0].get("parent_idx")
    return [parent] if isinstance(parent, int) and 0 <= parent < index else None


def _added_by(log: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    """Program index -> the run-log entry (iteration) that added it."""
    found: dict[int, dict[str, Any]] = {}
    for entry in log:
        for index in entry.get("new_program_indices") or (
            [entry["new_program_idx"]] if "new_program_idx" in entry else []
        ):
            if isinstance(index, int):
                found[index] = entry
    return found


def _counts(log: list[dict[str, Any]]) -> tuple[int, int]:
    """(proposals evaluated on a minibatch, merges accepted), as the run log tells."""
    reflective = sum(
        1 for entry in log for task in entry.get("tasks") or [] if "new_subsample_scores" in task
    )
    merges_tried = sum(1 for entry in log if "new_program_subsample_scores" in entry)
    merges = sum(1 for entry in log if entry.get("merged") and "new_program_idx" in entry)
    return reflective + merges_tried, merges


def _parents_of(value: Any, index: int, where: Path) -> list[int]:
    parents = [p for p in value if p is not None] if isinstance(value, list) else None
    if parents is None or not all(isinstance(p, int) and 0 <= p < index for p in parents):
        raise RunDirError(f"{where}: program {index} has parents {value!r}, not earlier programs")
    if index > 0 and not parents:
        raise RunDirError(f"{where}: program {index} has no parent")
    return parents


def _scores_of(value: Any, index: int, where: Path) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise RunDirError(f"{where}: program {index}'s valset scores are not a mapping")
    scores: dict[str, float] = {}
    for key, score in value.items():
        instance = _instance(key, where)
        ok = isinstance(score, (int, float)) and not isinstance(score, bool) and math.isfinite(score)
        if not ok or not 0 <= score <= 1:
            raise RunDirError(
                f"{where}: program {index} scored {score!r} on valset example {instance}: "
                "harnessgit records scores in [0, 1]"
            )
        if instance in scores:
            raise RunDirError(f"{where}: two valset examples are both named {instance!r}")
        scores[instance] = float(score)
    return scores


def _instance(key: Any, where: Path) -> str:
    """A valset example's id as an instance id: GEPA numbers a list valset 0, 1, ..."""
    text = str(key)
    if not text or len(text) > MAX_ID_LENGTH or any(c in text for c in "\n\r\0"):
        raise RunDirError(f"{where}: valset example id {text[:40]!r} cannot be an instance id")
    return text
