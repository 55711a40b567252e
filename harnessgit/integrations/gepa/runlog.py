"""What a GEPA run says of itself, kept with its run record: the configuration the
caller and GEPA gave, GEPA's Pareto front after each change, its checkpoints, what its
final state says of its objectives, and why it ended.

GEPA's own events carry these piecemeal; `RunLog` gathers them on GEPA's thread (it
only appends to lists of plain data) and gives them to the recorder's writer as the
items of one evidence blob on the run's base commit.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from harnessgit.api import jsonable


class RunLog:
    """The run's evidence as GEPA reports it; ``settings`` is the configuration the
    caller gave GEPA (GEPA's events carry only a few of its settings)."""

    def __init__(self, settings: Mapping[str, Any] | None) -> None:
        self.info: dict[str, Any] = {"kind": "gepa-run", "settings": jsonable(dict(settings or {}))}
        self.fronts: list[dict[str, Any]] = []
        self.checkpoints: list[dict[str, Any]] = []

    def started(self, event: Mapping[str, Any], components: Mapping[str, str]) -> None:
        """GEPA's ``optimization_start``: its configuration and the data's sizes."""
        self.info.update(
            config=jsonable(dict(event["config"])),
            trainset_size=event.get("trainset_size"),
            valset_size=int(event["valset_size"]),
            components=dict(components),
        )

    def front_moved(self, event: Mapping[str, Any]) -> None:
        """GEPA's ``pareto_front_updated``: the front after the change, and who left it."""
        self.fronts.append(
            {
                "iteration": int(event["iteration"]),
                "front": sorted(int(p) for p in event["new_front"]),
                "displaced": sorted(int(p) for p in event["displaced_candidates"]),
            }
        )

    def state_saved(self, event: Mapping[str, Any]) -> None:
        """GEPA's ``state_saved``: a checkpoint the run can be resumed from."""
        if event.get("run_dir"):
            self.checkpoints.append({"iteration": int(event["iteration"]), "run_dir": str(event["run_dir"])})

    def ended(self, final_state: Any) -> None:
        """What GEPA's final state says of its frontier type and objectives: its
        ``frontier_type``, each program's mean per objective (``objective_scores`` of the
        evaluations; GEPA keeps the means only) and the programs best on each objective."""
        means = getattr(final_state, "prog_candidate_objective_scores", None) or []
        best = getattr(final_state, "program_at_pareto_front_objectives", None) or {}
        self.info.update(
            frontier_type=getattr(final_state, "frontier_type", None),
            objective_scores=[jsonable(dict(m)) for m in means] if any(means) else None,
            objective_front={str(k): sorted(int(p) for p in v) for k, v in best.items()} or None,
        )

    def items(self, run: str, programs: Mapping[int, str]) -> list[dict[str, Any]]:
        """The evidence items: the run (with GEPA's program index -> commit), then each
        front and each checkpoint, in the order GEPA reported them."""
        listed = {str(idx): commit for idx, commit in sorted(programs.items())}
        return [
            {**self.info, "run": run, "programs": listed},
            *({"kind": "pareto-front", **front} for front in self.fronts),
            *({"kind": "checkpoint", **saved} for saved in self.checkpoints),
        ]


def end_reason(calls: int, budget: int | None) -> str:
    """Why a run that reached ``optimization_end`` ended, from its metric calls and
    budget (``None`` when GEPA never reported one while budget was left)."""
    if budget is not None and calls >= budget:
        return f"budget: {calls} of {budget} metric calls used"
    return "stopped by a stopper"
