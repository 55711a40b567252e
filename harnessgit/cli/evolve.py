"""`harnessgit evolve`: the optimisation loop."""

from __future__ import annotations

from pathlib import Path

import click

from harnessgit.cli._base import State, cli, echo, jobs_option
from harnessgit.errors import EXIT_OK


@cli.command()
@click.option(
    "--max-rollouts",
    type=click.IntRange(min=1),
    metavar="N",
    help="Stop before running more than N evaluator rollouts (cached results are free).",
)
@click.option("--max-proposals", type=click.IntRange(min=1), metavar="N", help="Stop after N proposer calls.")
@click.option(
    "--max-cost",
    type=click.FloatRange(min=0),
    metavar="USD",
    help="Stop once proposer and evaluator costs (where reported) reach USD.",
)
@click.option(
    "--max-time",
    type=click.FloatRange(min=0, min_open=True),
    metavar="SECONDS",
    help="Start no iteration once the run has taken SECONDS of wall time.",
)
@click.option(
    "--no-improvement",
    type=click.IntRange(min=1),
    metavar="N",
    help="Stop after N iterations in a row that did not raise the best selection mean.",
)
@click.option(
    "--target",
    type=click.FloatRange(min=0, max=1),
    metavar="SCORE",
    help="Stop once a candidate's (or the base's) selection mean reaches SCORE.",
)
@click.option(
    "--seed",
    type=int,
    default=0,
    show_default=True,
    help="Seed for parent sampling and minibatches; re-running with it resumes the sequence.",
)
@click.option("--auto-merge", is_flag=True, help="Merge every candidate that passes the gate.")
@click.option(
    "--merge",
    "merge_proposals",
    is_flag=True,
    default=None,
    help="Also propose merges of two frontier candidates, on GEPA's schedule (default: [evolve] merge).",
)
@jobs_option
@click.option(
    "--stop-file",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Stop before the next iteration once FILE exists. Default: .git/harnessgit-stop.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the report as JSON at the end (standard output holds only it; the iteration "
    "lines go to standard error).",
)
@click.pass_obj
def evolve(
    state: State,
    max_rollouts: int | None,
    max_proposals: int | None,
    max_cost: float | None,
    max_time: float | None,
    no_improvement: int | None,
    target: float | None,
    seed: int,
    auto_merge: bool,
    merge_proposals: bool | None,
    jobs: int | None,
    stop_file: Path | None,
    as_json: bool,
) -> int:
    """Run GEPA-style reflective evolution with every step on the record.

    Each iteration draws a parent from the frontier, evaluates it on a train
    minibatch, asks the [proposer] for an edit to one component, keeps the edit
    only if it beats the parent on that minibatch, then evaluates it on the
    selection split and gates it. Stops at a budget or stopper, at the stop file, or
    on Ctrl-C; running it again resumes from what the repository holds.
    """
    import sys

    from harnessgit.evolve import render as render_evolve
    from harnessgit.evolve.evolve import evolve as run
    from harnessgit.evolve.state import Budget, EvolveRequest
    from harnessgit.render import to_json

    if all(limit is None for limit in (max_rollouts, max_proposals, max_cost, max_time, no_improvement)):
        raise click.UsageError(
            "give a budget: --max-rollouts, --max-proposals, --max-cost, --max-time or --no-improvement"
        )
    store, config = state.open()
    with store:
        stop = state.path(stop_file) if stop_file else store.git_dir / "harnessgit-stop"
        request = EvolveRequest(
            budget=Budget(max_rollouts, max_proposals, max_cost, max_time, no_improvement, target),
            seed=seed,
            auto_merge=auto_merge,
            merge=merge_proposals or None,
            stop_file=stop,
        )
        report = run(
            store,
            config,
            request,
            # A bar for evaluations on a terminal; in a log, the iteration lines say enough.
            execution=state.execution(jobs, "eval" if sys.stderr.isatty() else None),
            # With --json, standard output holds the JSON alone: the lines go to stderr.
            on_iteration=None
            if state.quiet
            else lambda record: echo(render_evolve.iteration_line(record), err=as_json),
        )
    echo(to_json(report) if as_json else render_evolve.report_text(report))
    if report.interruption is not None:  # exit 130 (143 for SIGTERM), after the report
        raise report.interruption
    return EXIT_OK
