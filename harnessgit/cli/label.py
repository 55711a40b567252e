"""`harnessgit label`: point label NAME (e.g. production) at REV, recording when, who and why."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK


@cli.command()
@click.argument("name", required=False)
@click.argument("rev", metavar="[REV]", required=False)
@click.option("--reason", default="", metavar="TEXT", help="Why the label moves (recorded).")
@click.option("--list", "list_", is_flag=True, help="List the labels and their last recorded moves.")
@click.option("--history", "history_", is_flag=True, help="List every recorded move (of NAME, if given).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def label(
    state: State, name: str | None, rev: str | None, reason: str, list_: bool, history_: bool, as_json: bool
) -> int:
    """Point label NAME (e.g. production) at REV, recording when, who and why.

    Moving a label also starts a new test-split peek period.
    """
    from harnessgit.candidates import label as labels
    from harnessgit.candidates import render as render_candidates
    from harnessgit.render import to_json
    from harnessgit.targets import label_moves

    store, _config = state.open()
    with store:
        if list_ or (name is None and not history_):
            found = labels.list_labels(store)
            echo(to_json(found) if as_json else render_candidates.labels_text(found))
            return EXIT_OK
        if history_:
            moves = label_moves(store.notes, name)
            echo(to_json(moves) if as_json else render_candidates.label_history_text(moves))
            return EXIT_OK
        if rev is None:
            raise click.UsageError("label NAME REV: say where the label should point")
        assert name is not None
        try:
            record = labels.move_label(store, name, rev, reason=reason)
        except labels.LabelUnchanged as exc:
            echo(str(exc), err=True)
            return EXIT_OK
    echo(to_json(record) if as_json else render_candidates.label_move_text(record))
    return EXIT_OK
