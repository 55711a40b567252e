"""`harnessgit init`: write harnessgit.toml."""

from __future__ import annotations

import shlex

import click

from harnessgit.cli._base import State, cli, echo, quiet_option


@cli.command()
@click.option(
    "--harness",
    "harness",
    multiple=True,
    metavar="GLOB",
    help="A glob of harness files (repeatable). Default: what init finds (skill folders, "
    "AGENTS.md/CLAUDE.md, prompt folders, tool JSON, agent definitions), listed as it writes them.",
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
@quiet_option
@click.pass_obj
def init(
    state: State, harness: tuple[str, ...], evaluator: str | None, splits: str, model: str, base: str | None
) -> int:
    """Write harnessgit.toml and make `git log` show harnessgit notes.

    Without --harness, finds where the repository keeps its harness text (a skill is
    the folder holding its SKILL.md, with everything in it) and writes globs for what it
    found. Needs no evaluator: checks, the pre-commit hook, review and log work at once.
    Refuses to overwrite an existing harnessgit.toml.
    """
    from harnessgit.config.init import init_repository
    from harnessgit.render import plural
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
        for item in result.found:
            echo(f"found {item.what}: {plural(item.files, 'file')} -> {', '.join(item.globs)}")
        if not harness and not result.found:
            echo(
                "harnessgit: warning: found no skill folders, AGENTS.md/CLAUDE.md, prompts/ or tools/: wrote "
                "the default globs; set [harness] paths in harnessgit.toml to where your harness text is",
                err=True,
            )
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
        echo(
            "next: commit harnessgit.toml. Ready now: `harnessgit check` (and the pre-commit hook), "
            "`harnessgit review` and `harnessgit log --all-history`.\n"
            "Scores, the gate and bisect need an evaluator: docs/evaluator.md"
        )
    return 0
