"""`harnessgit show`: show a candidate or commit: its diff, rationale, evidence and evaluations."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK


@cli.command()
@click.argument("name", metavar="CAND|REV")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--no-diff", is_flag=True, help="Leave out the diff.")
@click.pass_obj
def show(state: State, name: str, as_json: bool, no_diff: bool) -> int:
    """Show a candidate or commit: its diff, rationale, evidence and evaluations."""
    from harnessgit.candidates.render import show_text
    from harnessgit.candidates.show import show as run
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        result = run(store, config, name)
    echo(to_json(result) if as_json else show_text(result, diff=not no_diff))
    return EXIT_OK
