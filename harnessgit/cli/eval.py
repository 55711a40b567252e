"""`harnessgit eval`: evaluate a harness on a split, through the score cache."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo, instance_ids, jobs_option
from harnessgit.cli._options import json_per_model_option, model_option


@cli.command("eval")
@click.argument("rev", metavar="REV")
@click.option("--split", default="selection", show_default=True, help="The split to evaluate on.")
@click.option(
    "--instances",
    "--instance",
    "instances",
    multiple=True,
    metavar="ID[,ID...]",
    help="Only these instances of the split (repeatable, or comma-separated).",
)
@jobs_option
@click.option(
    "--repeats",
    type=click.IntRange(min=1),
    default=1,
    show_default=True,
    metavar="K",
    help="Evaluate every instance K times; the per-instance mean is the unit of analysis.",
)
@click.option(
    "--no-cache",
    is_flag=True,
    help="Run everything again even if results are on record (recorded as a fresh run).",
)
@click.option(
    "--grader",
    metavar="REV",
    help="Score REV's harness with the evaluator as this commit holds it (after a regrade: "
    "old harnesses on today's evaluator). Default: REV's own.",
)
@model_option
@json_per_model_option
@click.pass_obj
def eval_command(
    state: State,
    rev: str,
    split: str,
    instances: tuple[str, ...],
    jobs: int | None,
    repeats: int,
    no_cache: bool,
    grader: str | None,
    models: tuple[str, ...],
    as_json: bool,
) -> int:
    """Evaluate REV's harness on a split, running only what is not on record yet."""
    from harnessgit.evaluation import render as render_eval
    from harnessgit.evaluation.eval import EvalRequest, evaluate
    from harnessgit.evaluation.models import for_model, requested_models
    from harnessgit.render import to_json

    request = EvalRequest(
        split=split,
        instances=instance_ids(instances),
        repeats=repeats,
        no_cache=no_cache,
        warn_uncommitted=True,
        grader=grader,
    )
    store, config = state.open()
    with store:
        labels = requested_models(config, models)
        execution = state.execution(jobs, None if as_json else f"eval {split}")
        results = [
            evaluate(store, for_model(config, model), rev, request, execution=execution) for model in labels
        ]
    if as_json:
        echo(to_json(results[0] if len(results) == 1 else results))
    else:
        echo("\n".join(render_eval.evaluation_text(result) for result in results))
    return 0
