"""Commands that run or read evaluations: eval, scores, test, trajectory."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo, instance_ids, jobs_option


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
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
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
    as_json: bool,
) -> int:
    """Evaluate REV's harness on a split, running only what is not on record yet."""
    from harnessgit.evaluation import render as render_eval
    from harnessgit.evaluation.eval import evaluate
    from harnessgit.render import to_json

    store, config = state.open()
    with store:
        result = evaluate(
            store,
            config,
            rev,
            split=split,
            instances=instance_ids(instances),
            repeats=repeats,
            no_cache=no_cache,
            execution=state.execution(jobs, None if as_json else f"eval {split}"),
            warn_uncommitted=True,
            grader=grader,
        )
    echo(to_json(result) if as_json else render_eval.evaluation_text(result))
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
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def test_command(state: State, rev: str, force: bool, jobs: int | None, as_json: bool) -> int:
    """Evaluate the held-out test split once, and record that you looked.

    No automatic decision (gate, frontier, evolve) ever reads test scores.
    """
    from harnessgit.evaluation import render as render_eval
    from harnessgit.evaluation.test import peek_test_split
    from harnessgit.render import to_json

    store, config = state.open()
    with store:
        result = peek_test_split(
            store, config, rev, force=force, execution=state.execution(jobs, None if as_json else "test")
        )
    echo(to_json(result.evaluation) if as_json else render_eval.heldout_text(result))
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
