"""`harnessgit bisect-judge`: judge the commit `git bisect` is at, for `git bisect run`."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo, instance_ids
from harnessgit.cli._options import criterion_options
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


@cli.command("bisect-judge", cls=_JudgeCommand)
@click.option("--good", required=True, metavar="REV", help="The good commit whose scores are the baseline.")
@click.option(
    "--grader",
    metavar="REV",
    help="Score good and every judged commit with the evaluator as this commit holds it (pass "
    "the bad commit when the range has a regrade). Default: each commit's own.",
)
@criterion_options
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
    """judge the commit `git bisect` is at, for `git bisect run`.

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
