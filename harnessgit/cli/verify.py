"""`harnessgit verify`: re-check the base branch from the record; exit 1 on any problem (for CI)."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_NO, EXIT_OK


@cli.command()
@click.option("--base", metavar="BRANCH", help="The branch to verify. Default: [harness] base.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def verify(state: State, base: str | None, as_json: bool) -> int:
    """Re-check the base branch from the record; exit 1 on any problem (for CI)."""
    from harnessgit.gate import render as render_gate
    from harnessgit.gate.verify import verify as run
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        report = run(store, config, base=base)
    echo(to_json(report) if as_json else render_gate.verify_text(report))
    return EXIT_OK if report.ok else EXIT_NO
