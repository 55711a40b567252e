"""`harnessgit status`: the base tip, the live candidates, the archive, alpha spent."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK


@cli.command()
@click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def status(state: State, base: str | None, as_json: bool) -> int:
    """the base tip, the live candidates, the archive, alpha spent.

    Each live candidate with its parent, age, selection coverage and mean under the
    current evaluator and model, frontier membership and last gate verdict. Reads
    the record only: runs no evaluator and writes nothing.
    """
    from harnessgit.candidates.render import status_text
    from harnessgit.candidates.status import status as run
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        result = run(store, config, base=base)
    echo(to_json(result) if as_json else status_text(result))
    return EXIT_OK
