"""`harnessgit bisect` and `harnessgit bisect-judge`: which accepted edit broke it."""

from __future__ import annotations

from collections.abc import Callable

import click

from harnessgit.cli._base import State, cli, echo, instance_ids, jobs_option
from harnessgit.errors import EXIT_NO, EXIT_OK, HarnessgitError

# `git bisect run` reads exit codes 1..127 (except 125) as "bad" and anything from 128
# on as "stop" (git-bisect(1)). A usage error (2) or a harnessgit error (3) from
# bisect-judge would silently mark a commit bad, so they exit 128 instead.
EXIT_SKIP = 125
EXIT_ABORT_BISECT = 128


class _JudgeAbort(HarnessgitError):
    exit_code = EXIT_ABORT_BISECT


class _JudgeCommand(click.Command):
    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:
            raise _JudgeAbort(f"{exc.format_message()} (exit 128 stops `git bisect run`)") from None


def _criterion_options(command: Callable[..., int]) -> Callable[..., int]:
    """The options that say what "bad" means, shared by bisect and bisect-judge."""
    options = [
        click.option(
            "--split", default="selection", show_default=True, help="The split to judge commits on."
        ),
        click.option(
            "--instance",
            "--instances",
            "instances",
            multiple=True,
            metavar="ID[,ID...]",
            help="Judge these instances, not the mean: a commit is bad when any of them fails "
            "(scores under --threshold, default 1) or drops more than --drop below its score at good.",
        ),
        click.option(
            "--drop",
            type=float,
            metavar="D",
            help="Bad when the mean falls more than D (0..1) below good's. Default without --instance: 0.05.",
        ),
        click.option(
            "--threshold",
            type=float,
            metavar="X",
            help="Bad when the mean (or an instance's score) is under X (0..1).",
        ),
        jobs_option,
    ]
    for option in reversed(options):
        command = option(command)
    return command


@cli.command()
@click.option("--good", metavar="REV", help="A commit (or candidate id) known to be good: bisect commits.")
@click.option("--bad", metavar="REV", help="A commit known to be bad. Default: the base branch's tip.")
@click.option(
    "--good-model",
    metavar="LABEL",
    help="A model checkpoint known to be good. Without --good: bisect over the checkpoint lineage from "
    "LABEL to --bad-model at a fixed harness. With --good: the model good was measured with, so the "
    "weights change is measured apart from the harness edits.",
)
@click.option(
    "--bad-model",
    metavar="LABEL",
    help="The model judged bad: every commit (or the last checkpoint) is judged for it. "
    "Default: [evaluator] model.",
)
@click.option(
    "--harness",
    metavar="REV",
    help="The harness held fixed while bisecting over checkpoints. Default: the base branch's tip.",
)
@_criterion_options
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def bisect(
    state: State,
    good: str | None,
    bad: str | None,
    good_model: str | None,
    bad_model: str | None,
    harness: str | None,
    split: str,
    instances: tuple[str, ...],
    drop: float | None,
    threshold: float | None,
    jobs: int | None,
    as_json: bool,
) -> int:
    """Find the first accepted edit (or model checkpoint) between good and bad that made things worse.

    Over commits (--good REV): walks the first-parent chain, judging every commit
    for one model (--bad-model), using stored scores where they exist and evaluating
    (through the cache) only the commits a binary search needs: at most
    ceil(log2 N) + 2 evaluations for N edits. When good was measured with another
    model (--good-model, or a checkpoint ancestor's scores on record), it says
    whether the regression came from a harness edit or from the weights change.

    Over checkpoints (--good-model OLD without --good): walks the lineage
    `harnessgit model add` recorded from OLD to --bad-model, the harness fixed
    (--harness), and names the first bad checkpoint.

    Exit 0 when it names the first bad edit or checkpoint, 1 when it cannot (bad
    is not bad, good is already bad, or points that could not be evaluated hide
    the answer).
    """
    from harnessgit.bisect import render as render_bisect
    from harnessgit.bisect.judge import Criterion
    from harnessgit.render import to_json

    if good is None and good_model is None:
        raise click.UsageError("give --good REV (bisect commits) or --good-model LABEL (bisect checkpoints)")
    if good is not None and harness is not None:
        raise click.UsageError("--harness is for bisecting checkpoints: drop --good or --harness")
    if good is None and bad is not None:
        raise click.UsageError("--bad names a commit: over checkpoints, fix the harness with --harness")
    criterion = Criterion.build(split, instance_ids(instances), drop, threshold)
    store, config = state.open()
    execution = state.execution(jobs, None if as_json else f"eval {split}")
    with store:
        if good is None:
            from harnessgit.bisect.checkpoints import bisect_models

            assert good_model is not None
            by_model = bisect_models(
                store,
                config,
                good_model,
                bad_model or config.evaluator.model,
                harness or config.harness.base,
                criterion,
                execution=execution,
            )
            echo(to_json(by_model) if as_json else render_bisect.checkpoint_bisect_text(by_model))
            return EXIT_OK if by_model.outcome == "found" else EXIT_NO
        from harnessgit.bisect.bisect import bisect as run

        result = run(
            store,
            config,
            good,
            bad or config.harness.base,
            criterion,
            model=bad_model,
            good_model=good_model,
            execution=execution,
        )
    echo(to_json(result) if as_json else render_bisect.bisect_text(result))
    return EXIT_OK if result.outcome == "found" else EXIT_NO


@cli.command("bisect-judge", cls=_JudgeCommand)
@click.option("--good", required=True, metavar="REV", help="The good commit whose scores are the baseline.")
@click.option(
    "--grader",
    metavar="REV",
    help="Score good and every judged commit with the evaluator as this commit holds it (pass "
    "the bad commit when the range has a regrade). Default: each commit's own.",
)
@_criterion_options
@click.pass_obj
def bisect_judge(
    state: State,
    good: str,
    grader: str | None,
    split: str,
    instances: tuple[str, ...],
    drop: float | None,
    threshold: float | None,
    jobs: int | None,
) -> int:
    """Judge the commit `git bisect` is at (BISECT_HEAD, else HEAD): exit 0 good, 1 bad, 125 cannot judge.

    For `git bisect start --first-parent [--no-checkout] BAD GOOD` then
    `git bisect run harnessgit bisect-judge --good GOOD`. Bad input exits 128,
    which stops `git bisect run` instead of marking the commit bad.
    """
    from harnessgit.bisect.judge import Criterion, judge_one, judged_commit
    from harnessgit.bisect.render import step_line
    from harnessgit.errors import ConfigError
    from harnessgit.evaluation.splits import ManifestError

    try:
        criterion = Criterion.build(split, instance_ids(instances), drop, threshold)
        store, config = state.open()
        with store:
            commit = judged_commit(store.refs)
            step = judge_one(
                store, config, good, commit, criterion, execution=state.execution(jobs, None), grader=grader
            )
    except (ConfigError, ManifestError) as exc:
        # In a checkout bisect the configuration is the judged commit's own: a commit
        # from before harnessgit was set up cannot be judged, only skipped.
        echo(f"harnessgit: cannot judge this commit: {exc}", err=True)
        return EXIT_SKIP
    except _JudgeAbort:
        raise
    except HarnessgitError as exc:
        raise _JudgeAbort(f"{exc} (exit 128 stops `git bisect run`)") from None
    echo(step_line(step))
    if step.state == "skip":
        echo(f"harnessgit: cannot judge this commit: {step.reason}", err=True)
        return EXIT_SKIP
    return EXIT_OK if step.state == "good" else EXIT_NO
