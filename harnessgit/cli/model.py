"""`harnessgit model`: model labels as checkpoints with parents (the weights' history)."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo


@cli.group()
def model() -> None:
    """Model labels as checkpoints with parents (the weights' history)."""


@model.command("add")
@click.argument("name", metavar="NAME")
@click.option("--parent", metavar="OLD", help="The checkpoint NAME was trained from (registered first).")
@click.option("--note", default="", help="What changed in the weights: data, method, steps.")
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@click.pass_obj
def model_add(state: State, name: str, parent: str | None, note: str, as_json: bool) -> int:
    """Register model label NAME as a checkpoint of OLD, recorded in git."""
    from harnessgit.evaluation.lineage import add_model
    from harnessgit.render import to_json

    store, config = state.open()
    with store:
        record = add_model(store, name, parent=parent, note=note, base=config.harness.base)
    echo(to_json(record) if as_json else f"model {name}" + (f" <- {parent}" if parent else " (root)"))
    return 0


@model.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def model_list(state: State, as_json: bool) -> int:
    """Every registered model label with its lineage and how many harnesses it scored."""
    from harnessgit.evaluation.lineage import list_models, models_text
    from harnessgit.render import to_json

    store, _config = state.open(writes=False)
    with store:
        result = list_models(store)
    echo(to_json(result) if as_json else models_text(result))
    return 0
