"""`harnessgit revert`: the inverse of an accepted edit, proposed as a candidate."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK


@cli.command()
@click.argument("rev", metavar="REV")
@click.option(
    "--reason", default="", metavar="TEXT", help="Why the edit is reverted (required with --no-gate)."
)
@click.option(
    "--no-gate",
    is_flag=True,
    help="Land the revert at once without the gate: an explicit override, recorded with "
    "--reason and listed by verify.",
)
@click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base.")
@click.pass_obj
def revert(state: State, rev: str, reason: str, no_gate: bool, base: str | None) -> int:
    """the inverse of an accepted edit, proposed as a candidate."""
    from harnessgit.gate.checkout import finished_line
    from harnessgit.gate.revert import revert as run
    from harnessgit.render import short

    store, config = state.open()
    with store:
        proposal, landed = run(store, config, rev, base=base, reason=reason, no_gate=no_gate)
    echo(proposal.candidate)
    if landed is not None and landed.finished is not None:  # a rerun after a kill
        echo(finished_line(landed.finished), err=True)
    elif landed is not None and landed.merge:
        echo(f"merged without the gate (override recorded) as {short(landed.merge)}", err=True)
    elif not state.quiet:
        echo(f"next: harnessgit merge {proposal.candidate}", err=True)
    return EXIT_OK
