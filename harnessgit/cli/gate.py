"""`harnessgit gate`: may a candidate move the base branch? (a statistical test, on the record)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.cli._options import gate_options
from harnessgit.cli._runner import checker
from harnessgit.errors import verdict_exit

if TYPE_CHECKING:
    from harnessgit.records import GateRecord
    from harnessgit.store import Store


@cli.command()
@gate_options
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="LABEL",
    help="Also require no significant loss on this model (repeatable; added to [gate] models, "
    "which `merge` reads: put it there to bind).",
)
@click.pass_obj
def gate(
    state: State,
    candidate: str,
    base: str | None,
    allow_small: bool,
    jobs: int | None,
    as_json: bool,
    models: tuple[str, ...],
) -> int:
    """Decide whether CAND may move the base branch; exit 0 on pass, 1 on fail, 4 when inconclusive.

    Evaluates whatever selection scores are missing (through the cache) and
    records the attempt: repeated gating spends the selection set's error rate.
    """
    from harnessgit.gate import render as render_gate
    from harnessgit.gate.gate import GateRequest, run_gate
    from harnessgit.render import to_json

    store, config = state.open()
    execution = state.execution(jobs, None if as_json else "eval selection")
    with store:
        request = GateRequest(candidate, base=base, allow_small=allow_small, models=models)
        outcome = run_gate(store, config, request, execution=execution, check=checker)
        calibration = None if as_json else _calibration(store, outcome.record)
    echo(to_json(outcome) if as_json else render_gate.gate_text(outcome))
    if calibration is not None:
        echo(calibration)
    return verdict_exit(outcome.verdict)


def _calibration(store: Store, record: GateRecord) -> str:
    """The line about the evaluator's calibration on this selection set (or its absence)."""
    from harnessgit.calibrate.recorded import latest
    from harnessgit.calibrate.render import calibration_line

    found = latest(store, fingerprint=record.fingerprint, model=record.model, split_hash=record.split_hash)
    return calibration_line(found)
