"""Harness and weights together (issue 19): transfer across models, training data."""

from __future__ import annotations

from pathlib import Path

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


@cli.group()
def export() -> None:
    """Export what the record holds in formats other tools read."""


@export.command("failures")
@click.option("--split", default="train", show_default=True, help="The split whose failures are exported.")
@click.option(
    "--model", metavar="LABEL", help="Only this model's trajectories. Default: every model on record."
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["chat-jsonl"]),
    default="chat-jsonl",
    show_default=True,
    help="chat-jsonl: one conversation per line, {messages, metadata}, cut after the failing turn.",
)
@click.option(
    "--pairs",
    is_flag=True,
    help="Preference pairs instead: each failure with the passing trajectory of a later harness "
    "for the same instance and model ({chosen, rejected, metadata}).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Export the selection or test split anyway (recorded, like a test peek).",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write the JSONL to FILE and print a summary. Default: the JSONL on standard output.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (with --output).")
@click.pass_obj
def export_failures_command(
    state: State,
    split: str,
    model: str | None,
    fmt: str,
    pairs: bool,
    force: bool,
    output: Path | None,
    as_json: bool,
) -> int:
    """Failing trajectories on record as training data, the failing turn located.

    The failing turn is the last message of each conversation (the rule:
    docs/coevolution.md); every assistant message has weight 0, so nothing is
    learnt from a failure until a teacher rewrites it.
    """
    from harnessgit.evaluation.export import export_failures, summary_text
    from harnessgit.render import to_json

    if as_json and output is None:
        raise click.UsageError("--json prints the summary: give --output FILE for the JSONL")
    store, config = state.open()
    with store:
        result = export_failures(store, config, split=split, model=model, pairs=pairs, force=force)
    if output is None:
        click.echo(result.text, nl=False)
        click.echo(summary_text(result), err=True)
        return 0
    output.write_text(result.text, encoding="utf-8")
    echo(to_json(result) if as_json else summary_text(result) + f"\nwritten to {output}")
    return 0


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
