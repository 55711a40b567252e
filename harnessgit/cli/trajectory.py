"""`harnessgit trajectory`: show the feedback and trajectory recorded for INSTANCE on REV's harness."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo


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
