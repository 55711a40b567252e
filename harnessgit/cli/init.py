"""`harnessgit init`: write harnessgit.toml."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

import click

from harnessgit.cli._base import State, cli, echo, quiet_option

if TYPE_CHECKING:
    from harnessgit.checkconfig.detect import LeftOut
    from harnessgit.config.init import InitResult


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
@click.option(
    "--dry-run",
    is_flag=True,
    help="Write nothing: print the harnessgit.toml init would write, the files each glob matches "
    "and the largest folders of prose it leaves out.",
)
@click.pass_obj
def init(
    state: State,
    harness: tuple[str, ...],
    evaluator: str | None,
    splits: str,
    model: str,
    base: str | None,
    dry_run: bool,
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
            store,
            harness=list(harness) or None,
            evaluator=argv,
            splits=splits,
            model=model,
            base=base,
            dry_run=dry_run,
        )
    if dry_run:
        echo(_dry_run_text(result))
        return 0
    echo(f"wrote {result.path}")
    if not state.quiet:
        for item in result.found:
            echo(f"found {item.what}: {plural(item.files, 'file')} -> {', '.join(item.globs)}")
        if result.hidden is not None:
            echo(_hidden_warning(result.hidden), err=True)
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


def _hidden_warning(hidden: LeftOut) -> str:
    from harnessgit.render import plural

    return (
        f"harnessgit: warning: {plural(hidden.files, 'prose file')} under {hidden.folder} match no "
        "[harness] paths glob, more than the globs found cover: if they are harness text, add a glob "
        "for them (`harnessgit init --dry-run` lists what is left out)"
    )


def _dry_run_text(result: InitResult) -> str:
    """What `init --dry-run` prints: the globs with their counts, what is left out, the file."""
    from harnessgit.render import plural

    width = max((len(glob) for glob in result.counts), default=0)
    out = [f"would write {result.path} (nothing written):", "", "[harness] paths, files matched now:"]
    out += [f"  {glob.ljust(width)}  {count:,}" for glob, count in result.counts.items()]
    if result.left_out:
        out += ["", "largest folders of prose no glob matches (docs, tests and READMEs not counted):"]
        wide = max(len(item.folder) for item in result.left_out)
        out += [f"  {item.folder.ljust(wide)}  {plural(item.files, 'file')}" for item in result.left_out]
    else:
        out += ["", "no folder of prose is left out (docs, tests and READMEs not counted)"]
    if result.hidden is not None:
        out += ["", _hidden_warning(result.hidden)]
    return "\n".join([*out, "", result.text.rstrip("\n")])
