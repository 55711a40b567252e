"""Options that more than one command takes (each command module imports the ones it uses)."""

from __future__ import annotations

from collections.abc import Callable

import click

from harnessgit.cli._base import jobs_option

model_option = click.option(
    "--model",
    "models",
    multiple=True,
    metavar="LABEL",
    help="Evaluate for this model label (repeatable; the evaluator reads it as HARNESSGIT_MODEL). "
    "Default: [evaluator] models, else [evaluator] model.",
)
json_per_model_option = click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="Print the result as JSON (an array, one object per model, when several are evaluated).",
)


def gate_options(command: Callable[..., int]) -> Callable[..., int]:
    """The options gate and merge share (merge runs the gate)."""
    for option in reversed(
        [
            click.argument("candidate", metavar="CAND"),
            click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base."),
            click.option(
                "--allow-small",
                is_flag=True,
                help="Decide even when the selection split has fewer than [gate] min_instances instances.",
            ),
            jobs_option,
            click.option("--json", "as_json", is_flag=True, help="Print the result as JSON."),
        ]
    ):
        command = option(command)
    return command


def criterion_options(command: Callable[..., int]) -> Callable[..., int]:
    """The options that say what "bad" means, shared by bisect and bisect-judge."""
    options = [
        click.option(
            "--split", default="selection", show_default=True, help="The split to judge commits on."
        ),
        click.option(
            "--instance",
            "--instances",
            "instances",
            multiple=True,
            metavar="ID[,ID...]",
            help="Judge these instances, not the mean: a commit is bad when any of them fails "
            "(scores under --threshold, default 1) or drops more than --drop below its score at good.",
        ),
        click.option(
            "--drop",
            type=float,
            metavar="D",
            help="Bad when the mean falls more than D (0..1) below good's. Default without --instance: 0.05.",
        ),
        click.option(
            "--threshold",
            type=float,
            metavar="X",
            help="Bad when the mean (or an instance's score) is under X (0..1).",
        ),
        jobs_option,
    ]
    for option in reversed(options):
        command = option(command)
    return command
