"""`harnessgit doctor`: what a killed harnessgit or git left behind, and its repair."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo


@cli.command()
@click.option(
    "--fix",
    is_flag=True,
    help="Repair what can be repaired without guessing: finish or drop interrupted "
    "transactions, remove stale lock files, bring a working tree a killed merge left "
    "behind to its branch.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def doctor(state: State, fix: bool, as_json: bool) -> int:
    """Find what a killed harnessgit or git left behind, and with --fix repair it.

    Checks for ref transactions a kill interrupted (the journal in
    .git/harnessgit/journal: what landed, what rolling it forward does), for stale
    lock files on refs (older than 1 s: a live git holds one for milliseconds), with
    their path and age, and for a merge or revert --no-gate killed after moving the
    checked-out branch but before its index and files followed. Every other command
    finishes interrupted transactions on its own and refuses to start past a stale
    lock; this one only looks, unless --fix.
    Exits 0 when healthy or when --fix repaired everything, 1 when problems remain.
    """
    from harnessgit.render import to_json
    from harnessgit.repair.doctor import diagnose
    from harnessgit.repair.render import doctor_text
    from harnessgit.store import Store

    with Store.discover(state.directory, preflight=False) as store:
        report = diagnose(store, fix=fix)
    echo(to_json(report) if as_json else doctor_text(report))
    return 0 if report.healthy else 1
