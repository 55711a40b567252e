"""`harnessgit override`: accept REV, a commit made straight to the base branch, on the record."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK


@cli.command()
@click.argument("rev", metavar="REV")
@click.option("--reason", required=True, metavar="TEXT", help="Why this commit may skip the gate (recorded).")
@click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base.")
@click.option("--json", "as_json", is_flag=True, help="Print the override record as JSON.")
@click.pass_obj
def override(state: State, rev: str, reason: str, base: str | None, as_json: bool) -> int:
    """Accept REV, a commit made straight to the base branch, on the record.

    For a commit that changed the gate's settings, the evaluator (a regrade) or the
    harness without the gate: verify reports it until it is reverted or overridden.
    The override (reason, author) is a record verify and log list. Commits that
    change only infrastructure (docs, CI) need none.
    """
    from harnessgit.gate.override import override as run
    from harnessgit.render import short, to_json

    store, config = state.open()
    with store:
        record = run(store, config, rev, reason=reason, base=base)
    echo(
        to_json(record)
        if as_json
        else f"override recorded on {short(record.commit)} ({record.action}): {reason}"
    )
    return EXIT_OK
