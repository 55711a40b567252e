"""`harnessgit scores`: per-instance scores on record for REV's harness, their mean and standard error."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo


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
