"""`harnessgit transfer`: does an edit gated on one model carry over to others? (issue 19)."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo


@cli.command()
@click.argument("revs", nargs=-1, required=True, metavar="REV...")
@click.option("--base", metavar="REV", help="What each REV is compared with. Default: [harness] base's tip.")
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="LABEL",
    help="A model label to compare on (repeatable). Default: [evaluator] models and any other "
    "model with scores on record for these harnesses.",
)
@click.option("--split", default="selection", show_default=True, help="The split whose scores are read.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def transfer(
    state: State, revs: tuple[str, ...], base: str | None, models: tuple[str, ...], split: str, as_json: bool
) -> int:
    """A harness x model table: each REV's mean per model and its paired difference with
    the base, flagging a harness that helps one model and hurts another.

    Reads the scores on record (run `harnessgit eval REV --model M` for an empty cell);
    evaluates and records nothing. Exits 0 whatever the table shows.
    """
    from harnessgit.render import to_json
    from harnessgit.review.transfer import transfer_table, transfer_text

    store, config = state.open(writes=False)
    with store:
        result = transfer_table(store, config, revs, base=base, models=models, split=split)
    echo(to_json(result) if as_json else transfer_text(result))
    return 0
