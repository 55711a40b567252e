"""`harnessgit test`: evaluate the held-out test split once, and record that you looked."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo, jobs_option
from harnessgit.cli._options import json_per_model_option, model_option


@cli.command("test")
@click.argument("rev", metavar="REV")
@click.option(
    "--force",
    is_flag=True,
    help="Look although the test split was already seen for another harness since the last "
    "label move (the peek is recorded as forced).",
)
@jobs_option
@model_option
@json_per_model_option
@click.pass_obj
def test_command(
    state: State, rev: str, force: bool, jobs: int | None, models: tuple[str, ...], as_json: bool
) -> int:
    """Evaluate the held-out test split once, and record that you looked.

    No automatic decision (gate, frontier, evolve) ever reads test scores. One look
    per model, each recorded.
    """
    from harnessgit.evaluation import render as render_eval
    from harnessgit.evaluation.heldout import peek_test_split
    from harnessgit.evaluation.models import for_model, requested_models
    from harnessgit.render import to_json

    store, config = state.open()
    with store:
        execution = state.execution(jobs, None if as_json else "test")
        results = [
            peek_test_split(store, for_model(config, model), rev, force=force, execution=execution)
            for model in requested_models(config, models)
        ]
    if as_json:
        evaluations = [result.evaluation for result in results]
        echo(to_json(evaluations[0] if len(evaluations) == 1 else evaluations))
    else:
        echo("\n".join(render_eval.heldout_text(result) for result in results))
    return 0
