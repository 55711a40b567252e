"""`harnessgit import`: another optimiser's run (import gepa) into the record."""

from __future__ import annotations

from pathlib import Path

import click

from harnessgit.cli._base import State, cli, echo


@cli.group("import")
def import_group() -> None:
    """Record another optimiser's finished run as candidates and eval records."""


def _components(values: tuple[str, ...]) -> dict[str, str]:
    found: dict[str, str] = {}
    for value in values:
        name, equals, path = value.partition("=")
        if not equals or not name or not path:
            raise click.BadParameter(f"{value!r} is not NAME=PATH", param_hint="--component")
        if name in found:
            raise click.BadParameter(f"{name} is mapped twice", param_hint="--component")
        found[name] = path
    return found


@import_group.command("gepa")
@click.argument("run_dir", metavar="RUN_DIR", type=click.Path(path_type=Path))
@click.option(
    "--component",
    "components",
    multiple=True,
    metavar="NAME=PATH",
    help="The harness file of GEPA's component NAME (repeatable; every component needs one). "
    "Default: [evaluator] components.",
)
@click.option(
    "--trust-pickle",
    is_flag=True,
    help="Read gepa_state.bin, the only file with the valset scores (and, in some runs, the "
    "parents). It is a pickle: loading one runs whatever code its author put in it, so pass this "
    "only for a run you made or whose source you trust. Without it: candidates.json and "
    "run_log.json, texts and parents, no scores.",
)
@click.option(
    "--same-evaluator",
    is_flag=True,
    help="GEPA ran the adapter [evaluator] names, on the selection split: record its valset "
    "scores as that evaluator's, so frontier, gate and the cache use them without re-running.",
)
@click.option("--model", metavar="LABEL", help="The model label of the scores. Default: [evaluator] model.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def import_gepa_command(
    state: State,
    run_dir: Path,
    components: tuple[str, ...],
    trust_pickle: bool,
    same_evaluator: bool,
    model: str | None,
    as_json: bool,
) -> int:
    """Import a finished GEPA run: every program as a candidate on its parents, its valset
    scores as eval records. Importing again creates nothing new."""
    from harnessgit.integrations.gepa.import_render import render_import
    from harnessgit.integrations.gepa.importer import import_gepa_run
    from harnessgit.integrations.gepa.rundir import read_run
    from harnessgit.render import to_json

    mapping = _components(components)
    store, config = state.open()
    with store:
        run = read_run(state.path(run_dir), trust_pickle=trust_pickle)
        result = import_gepa_run(store, config, run, mapping, same_evaluator=same_evaluator, model=model)
    echo(to_json(result) if as_json else render_import(result))
    return 0
