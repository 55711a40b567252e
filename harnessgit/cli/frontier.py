"""`harnessgit frontier`: the Pareto frontier of the live candidates on the selection split (GEPA's rule)."""

from __future__ import annotations

from dataclasses import replace

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK
from harnessgit.stats.frontier_keys import FRONTIER_TYPES, FrontierType


@cli.command()
@click.option(
    "--split",
    default="selection",
    show_default=True,
    help="The split the frontier is computed on (only selection decides).",
)
@click.option(
    "--update",
    is_flag=True,
    help="Make the live candidate branches exactly the frontier plus the candidates not yet "
    "evaluated; retire the rest to refs/harnessgit/archive/ in one transaction.",
)
@click.option(
    "--type",
    "frontier_type",
    type=click.Choice(FRONTIER_TYPES),
    help="What a front is kept for, as GEPA's frontier_type: each selection instance, each "
    "objective (mean objective score), both, or each (instance, objective) pair. "
    "Default: [gate] frontier_type (instance).",
)
@click.option("--sample", is_flag=True, help="Print one parent drawn with GEPA's weights (fronts led).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --sample.")
@click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def frontier(
    state: State,
    split: str,
    update: bool,
    frontier_type: FrontierType | None,
    sample: bool,
    seed: int,
    base: str | None,
    as_json: bool,
) -> int:
    """The Pareto frontier of the live candidates on the selection split (GEPA's rule)."""
    from harnessgit.errors import HarnessgitError
    from harnessgit.gate import render as render_gate
    from harnessgit.gate.frontier import frontier_view, update_frontier
    from harnessgit.render import to_json
    from harnessgit.stats.frontier import sample_parent

    if split != "selection":
        raise HarnessgitError("the frontier decides, so it is computed on the selection split only")
    store, config = state.open()
    with store:
        view = frontier_view(store, config, base=base, frontier_type=frontier_type)
        if update:
            view = update_frontier(store, config, view)
    if sample:
        view = replace(view, sampled=sample_parent(view.frontier, seed))
    if as_json:
        echo(to_json(view))
    elif sample:
        echo(view.sampled or "")
    else:
        echo(render_gate.frontier_text(view))
    return EXIT_OK
