"""`harnessgit init`: write harnessgit.toml."""

from __future__ import annotations

import shlex

import click

from harnessgit.cli._base import State, cli, echo


@cli.command()
@click.option(
    "--harness",
    "harness",
    multiple=True,
    metavar="GLOB",
    help="A glob of harness files (repeatable). Default: SKILL.md, AGENTS.md, "
    "CLAUDE.md anywhere, prompts/** and tools/**/*.json.",
)
@click.option(
    "--evaluator",
    metavar="CMD",
    help="The evaluator command, split into argv like a shell would (it is never run through a shell).",
)
@click.option(
    "--splits",
    default="splits.json",
    show_default=True,
    metavar="FILE",
    help="The split manifest: a JSON object with train, selection and test ids.",
)
@click.option(
    "--model", default="default", show_default=True, help="The model label recorded with every evaluation."
)
@click.option(
    "--base",
    metavar="BRANCH",
    help="The branch that moves only through the gate. Default: the current branch.",
)
@click.pass_obj
def init(
    state: State, harness: tuple[str, ...], evaluator: str | None, splits: str, model: str, base: str | None
) -> int:
    """Write harnessgit.toml and make `git log` show harnessgit notes.

    Refuses to overwrite an existing harnessgit.toml.
    """
    from harnessgit.config.init import init_repository
    from harnessgit.store import Store

    argv = None
    if evaluator is not None:
        try:
            argv = shlex.split(evaluator)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--evaluator") from None
        if not argv:
            raise click.BadParameter("empty command", param_hint="--evaluator")
    with Store.discover(state.directory) as store:
        result = init_repository(
            store, harness=list(harness) or None, evaluator=argv, splits=splits, model=model, base=base
        )
    echo(f"wrote {result.path}")
    if not state.quiet:
        for pattern in result.unmatched:
            echo(f"harnessgit: warning: --harness {pattern!r} matches no file in the working tree", err=True)
    for ref in result.display_refs_added:
        echo(f"git log now shows notes from {ref} (notes.displayRef)")
    files = result.config.evaluator.files
    if files and not state.quiet:
        echo(
            f"[evaluator] files = {', '.join(files)}: add whatever else the evaluator reads (its "
            "modules, data, rubrics), as an edit to those changes the scores too"
        )
    if not state.quiet:
        echo("next: commit harnessgit.toml, then `harnessgit propose -m 'why'` after editing a harness file")
    return 0
