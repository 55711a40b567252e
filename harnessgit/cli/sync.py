"""`harnessgit sync`: share candidates, records and labels with a remote."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.cli._options import json_option


@cli.command()
@click.argument("remote", default="origin")
@json_option
@click.pass_obj
def sync(state: State, remote: str, as_json: bool) -> int:
    """Fetch and push every harnessgit ref and record to REMOTE (default: origin).

    REMOTE is a remote's name or anything git can push to (a path to a bare
    repository, an ssh or https URL). Records (every notes ref, the evidence store,
    pins) are merged as the union of both sides; a candidate archived on either side
    is archived on both; a label points where its last recorded move says. The push is
    atomic and leased on what was fetched: when another clone pushed meanwhile, the
    sync fetches and merges again. The base branch is not touched: it moves through
    your usual pushes and pull requests.
    """
    from harnessgit.render import to_json
    from harnessgit.store import Store
    from harnessgit.sync.render import sync_text
    from harnessgit.sync.sync import sync as run_sync

    with Store.discover(state.directory) as store:
        result = run_sync(store, remote)
    echo(to_json(result) if as_json else sync_text(result))
    return 0
