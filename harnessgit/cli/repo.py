"""Commands for the repository and its candidates: init, propose, show, log."""

from __future__ import annotations

import shlex
import sys

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
    for ref in result.display_refs_added:
        echo(f"git log now shows notes from {ref} (notes.displayRef)")
    if not state.quiet:
        echo("next: commit harnessgit.toml, then `harnessgit propose -m 'why'` after editing a harness file")
    return 0


def _read_input(state: State, path: str, what: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return state.path(path).read_bytes()
    except OSError as exc:
        from harnessgit.errors import HarnessgitError

        raise HarnessgitError(f"cannot read {what} {path}: {exc.strerror}") from None


@cli.command()
@click.option(
    "--parent", metavar="REV", help="Build on this candidate or revision. Default: the base branch tip."
)
@click.option(
    "-m",
    "--message",
    default="",
    metavar="MSG",
    help="The rationale: why this edit should help (first line becomes the subject).",
)
@click.option(
    "--file",
    "files",
    multiple=True,
    metavar="COMPONENT=PATH",
    help="Use the content of PATH as the new text of harness file COMPONENT "
    "(repeatable; PATH may be - for standard input).",
)
@click.option(
    "--patch", metavar="FILE", help="Apply this unified diff to the parent (- reads standard input)."
)
@click.option(
    "--evidence",
    metavar="FILE",
    help="Attach a JSONL file of trajectories or critique as evidence (secrets are "
    "scrubbed before it is written).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def propose(
    state: State,
    parent: str | None,
    message: str,
    files: tuple[str, ...],
    patch: str | None,
    evidence: str | None,
    as_json: bool,
) -> int:
    """Record an edit as one commit on a new candidate branch.

    By default the edit is the working tree's uncommitted changes to harness
    files. The working tree, the index and HEAD are never changed. Prints the
    new candidate id.
    """
    from harnessgit import render
    from harnessgit.candidates.propose import propose as run
    from harnessgit.config import require
    from harnessgit.evidence import parse_jsonl

    if files and patch:
        raise click.UsageError("use either --file or --patch, not both")
    sources: dict[str, bytes] = {}
    for item in files:
        component, sep, path = item.partition("=")
        if not sep or not component or not path:
            raise click.BadParameter(f"{item!r}: expected COMPONENT=PATH", param_hint="--file")
        sources[component] = _read_input(state, path, "file")
    items = parse_jsonl(_read_input(state, evidence, "evidence file"), evidence) if evidence else None
    edit = sources or (_read_input(state, patch, "patch") if patch else None)
    store, config = state.open()
    with store:
        result = run(store, require(config), edit, parent=parent, rationale=message, evidence=items)
    if as_json:
        echo(
            render.to_json(
                {
                    "candidate": result.candidate,
                    "commit": result.commit,
                    "parent": result.parent,
                    "components": result.components,
                    "ref": result.ref,
                }
            )
        )
    else:
        echo(result.candidate)
        if not state.quiet:
            echo(
                f"  {render.short(result.commit)} on {render.short(result.parent)}: "
                f"{', '.join(result.components)}",
                err=True,
            )
            if result.ignored:
                echo(f"  left out {len(result.ignored)} changed files that are not harness files", err=True)
    return 0


@cli.command()
@click.argument("name", metavar="CAND|REV")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--no-diff", is_flag=True, help="Leave out the diff.")
@click.pass_obj
def show(state: State, name: str, as_json: bool, no_diff: bool) -> int:
    """Show a candidate or commit: its diff, rationale, evidence and evaluations."""
    from harnessgit.candidates import render as render_show
    from harnessgit.candidates.show import show as run

    store, config = state.open()
    with store:
        result = run(store, config, name)
    echo(render_show.show_json(result) if as_json else render_show.show_text(result, diff=not no_diff))
    return 0


@cli.command()
@click.option("--base", metavar="BRANCH", help="The branch to list. Default: [harness] base.")
@click.option("-n", "--limit", type=click.IntRange(min=1), metavar="N", help="Show at most N entries.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def log(state: State, base: str | None, limit: int | None, as_json: bool) -> int:
    """List the accepted edits: the base branch's first-parent chain, newest first."""
    from harnessgit.candidates import render as render_show
    from harnessgit.candidates.log import accepted_log

    store, config = state.open()
    with store:
        entries = accepted_log(store, config, base=base, limit=limit)
    echo(render_show.log_json(entries) if as_json else render_show.log_text(entries))
    return 0
