"""`harnessgit propose`: an edit (a file, or a unified diff) as a candidate, with its evidence."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK


def _read_input(state: State, root: Path, path: str, what: str) -> bytes:
    """A file named on the command line (or - for standard input); a name inside the
    repository must not lead out of it through a symbolic link (`confine.read_named`)."""
    from harnessgit.confine import read_named

    return sys.stdin.buffer.read() if path == "-" else read_named(path, state.path("."), root, what)


def _edit_input(
    state: State, root: Path, files: tuple[str, ...], patch: str | None
) -> dict[str, bytes] | bytes | None:
    """The edit `propose` records: --file texts by component, a --patch, or None for the
    working tree's changes."""
    if files and patch:
        raise click.UsageError("use either --file or --patch, not both")
    sources: dict[str, bytes] = {}
    for item in files:
        component, sep, path = item.partition("=")
        if not sep or not component or not path:
            raise click.BadParameter(f"{item!r}: expected COMPONENT=PATH", param_hint="--file")
        sources[component] = _read_input(state, root, path, "file")
    return sources or (_read_input(state, root, patch, "patch") if patch else None)


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
    from harnessgit.candidates.propose import propose as run
    from harnessgit.candidates.render import proposal_text
    from harnessgit.config import require
    from harnessgit.evidence import parse_jsonl
    from harnessgit.render import to_json

    store, config = state.open()
    with store:
        edit = _edit_input(state, store.root, files, patch)
        items = (
            parse_jsonl(_read_input(state, store.root, evidence, "evidence file"), evidence)
            if evidence
            else None
        )
        result = run(store, require(config), edit, parent=parent, rationale=message, evidence=items)
    if as_json:
        echo(to_json(result))
    else:
        echo(result.candidate)
        if not state.quiet:
            echo(proposal_text(result), err=True)
    return EXIT_OK
