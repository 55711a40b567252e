"""Commands that run or read evaluations: eval, scores, test, trajectory."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo, instance_ids, jobs_option

model_option = click.option(
    "--model",
    "models",
    multiple=True,
    metavar="LABEL",
    help="Evaluate for this model label (repeatable; the evaluator reads it as HARNESSGIT_MODEL). "
    "Default: [evaluator] models, else [evaluator] model.",
)
json_per_model_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (an array, one object per model, when several are evaluated).",
)


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


@cli.command()
@click.argument("rev", metavar="REV")
@click.option("--split", default="selection", show_default=True, help="The split to show.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def scores(state: State, rev: str, split: str, as_json: bool) -> int:
    """Per-instance scores on record for REV's harness, their mean and standard error."""
    from harnessgit.evaluation import render as render_eval
    from harnessgit.evaluation.scores import recorded_scores
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        commit, summary = recorded_scores(store, config, rev, split)
    echo(to_json(summary) if as_json else render_eval.scores_text(summary, commit))
    return 0


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
    from harnessgit.evaluation.models import for_model, requested_models
    from harnessgit.evaluation.test import peek_test_split
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


@cli.command()
@click.argument("rev", metavar="REV")
@click.argument("instance", metavar="INSTANCE")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def trajectory(state: State, rev: str, instance: str, as_json: bool) -> int:
    """Show the feedback and trajectory recorded for INSTANCE on REV's harness."""
    from harnessgit.evaluation import render as render_eval
    from harnessgit.evaluation.trajectory import trajectories
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        found = trajectories(store, config, rev, instance)
    echo(to_json(found) if as_json else render_eval.trajectory_text(found))
    return 0
