"""`harnessgit calibrate`: the evaluator's noise and the gate's false-pass rate, A/A."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo, jobs_option
from harnessgit.cli._options import json_option
from harnessgit.errors import EXIT_NO, EXIT_OK


@cli.command()
@click.argument("rev", metavar="[REV]", required=False)
@click.option(
    "--repeats",
    type=int,
    default=4,
    show_default=True,
    metavar="K",
    help="Fresh evaluator runs of every selection instance (2 to 50).",
)
@click.option(
    "--effect",
    type=float,
    default=5.0,
    show_default=True,
    metavar="POINTS",
    help="The true gain, in points, to size the selection split and repeats for (80% power).",
)
@click.option(
    "--draws",
    type=int,
    default=200,
    show_default=True,
    metavar="N",
    help="A/A comparisons (one repeat against another) the gate's rule is applied to.",
)
@jobs_option
@json_option
@click.pass_obj
def calibrate(
    state: State, rev: str | None, repeats: int, effect: float, draws: int, jobs: int | None, as_json: bool
) -> int:
    """Score REV (default: the base branch's tip) again on the selection split with fresh
    repeats, and report the evaluator's noise, the gate's false-pass rate on identical
    inputs and the sample an effect needs; exit 1 when that rate is above alpha.

    The fresh runs never come from the cache and never go into it; the result is
    recorded (refs/notes/harnessgit/calibration), and `gate` and `review` quote it.
    """
    from harnessgit.calibrate.calibrate import Request
    from harnessgit.calibrate.calibrate import calibrate as run
    from harnessgit.calibrate.render import calibration_text
    from harnessgit.render import to_json

    request = Request(rev=rev, repeats=repeats, effect=effect / 100, draws=draws)
    store, config = state.open()
    execution = state.execution(jobs, None if as_json else "calibrate selection")
    with store:
        result = run(store, config, request, execution)
    echo(to_json(result) if as_json else calibration_text(result))
    return EXIT_OK if result.holds else EXIT_NO
