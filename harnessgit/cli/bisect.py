"""`harnessgit bisect`: which accepted edit (or model checkpoint) broke it."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo, instance_ids
from harnessgit.cli._options import criterion_options
from harnessgit.errors import EXIT_NO, EXIT_OK


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
@criterion_options
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
