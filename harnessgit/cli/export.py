"""`harnessgit export`: export what the record holds in formats other tools read."""

from __future__ import annotations

from pathlib import Path

import click

from harnessgit.cli._base import State, cli, echo


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
