"""Commands for candidates and what main accepted: propose, show, log, status, label."""

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


@cli.command()
@click.argument("name", metavar="CAND|REV")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--no-diff", is_flag=True, help="Leave out the diff.")
@click.pass_obj
def show(state: State, name: str, as_json: bool, no_diff: bool) -> int:
    """Show a candidate or commit: its diff, rationale, evidence and evaluations."""
    from harnessgit.candidates.render import show_text
    from harnessgit.candidates.show import show as run
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        result = run(store, config, name)
    echo(to_json(result) if as_json else show_text(result, diff=not no_diff))
    return EXIT_OK


@cli.command()
@click.option("--base", metavar="BRANCH", help="The branch to list. Default: [harness] base.")
@click.option(
    "-n",
    "--limit",
    type=click.IntRange(min=1),
    metavar="N",
    help="Show at most N entries, the newest (with --all-history: the newest N commits that "
    "changed a harness file; the whole chain is still read to find them).",
)
@click.option(
    "--all-history",
    is_flag=True,
    help="Audit the past: every commit of the branch's first-parent chain that changed a "
    "harness file (a merge counts as the change it brought), judged under today's "
    "harnessgit.toml, with sizes, sections touched and check findings, then the harness's "
    "growth and shrinkage over time. Needs no evaluator.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def log(state: State, base: str | None, limit: int | None, all_history: bool, as_json: bool) -> int:
    """List the accepted edits: the base branch's first-parent chain, newest first.

    Then every look at the test split and every forced export of the selection or test
    split as training data (`export failures --force`).

    With --all-history, audit every past change to the harness instead (docs/checks.md,
    "Audit a history you already have").
    """
    if all_history:
        echo(_audit_text(state, base, limit, as_json))
        return EXIT_OK
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        from harnessgit.candidates.log import accepted_log
        from harnessgit.candidates.render import log_text

        result = accepted_log(store, config, base=base, limit=limit)
    echo(to_json(result) if as_json else log_text(result))
    return EXIT_OK


def _audit_text(state: State, base: str | None, limit: int | None, as_json: bool) -> str:
    """`log --all-history`'s output: the last run's when nothing it depends on changed
    (read without importing the checks), else the audit's, kept for the next run."""
    from harnessgit.candidates.history_output import output_key, read_output, save_output
    from harnessgit.store import Store

    with Store.discover(state.directory, writes=False) as store:
        key = output_key(store, base=base, limit=limit, as_json=as_json)
        text = read_output(store, key) if key is not None else None
    if text is not None:
        return text
    from harnessgit.candidates.history import harness_history
    from harnessgit.candidates.history_render import history_text
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        audit = harness_history(store, config, base=base, limit=limit)
        text = to_json(audit) if as_json else history_text(audit)
        # Kept only when nothing moved while the audit ran.
        if key is not None and output_key(store, base=base, limit=limit, as_json=as_json) == key:
            save_output(store, key, text)
    return text


@cli.command()
@click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def status(state: State, base: str | None, as_json: bool) -> int:
    """Show where things stand: the base tip, the live candidates, the archive, alpha spent.

    Each live candidate with its parent, age, selection coverage and mean under the
    current evaluator and model, frontier membership and last gate verdict. Reads
    the record only: runs no evaluator and writes nothing.
    """
    from harnessgit.candidates.render import status_text
    from harnessgit.candidates.status import status as run
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        result = run(store, config, base=base)
    echo(to_json(result) if as_json else status_text(result))
    return EXIT_OK


@cli.command()
@click.argument("name", required=False)
@click.argument("rev", metavar="[REV]", required=False)
@click.option("--reason", default="", metavar="TEXT", help="Why the label moves (recorded).")
@click.option("--list", "list_", is_flag=True, help="List the labels and their last recorded moves.")
@click.option("--history", "history_", is_flag=True, help="List every recorded move (of NAME, if given).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def label(
    state: State, name: str | None, rev: str | None, reason: str, list_: bool, history_: bool, as_json: bool
) -> int:
    """Point label NAME (e.g. production) at REV, recording when, who and why.

    Moving a label also starts a new test-split peek period.
    """
    from harnessgit.candidates import label as labels
    from harnessgit.candidates import render as render_candidates
    from harnessgit.render import to_json
    from harnessgit.targets import label_moves

    store, _config = state.open()
    with store:
        if list_ or (name is None and not history_):
            found = labels.list_labels(store)
            echo(to_json(found) if as_json else render_candidates.labels_text(found))
            return EXIT_OK
        if history_:
            moves = label_moves(store, name)
            echo(to_json(moves) if as_json else render_candidates.label_history_text(moves))
            return EXIT_OK
        if rev is None:
            raise click.UsageError("label NAME REV: say where the label should point")
        assert name is not None
        try:
            record = labels.move_label(store, name, rev, reason=reason)
        except labels.LabelUnchanged as exc:
            echo(str(exc), err=True)
            return EXIT_OK
    echo(to_json(record) if as_json else render_candidates.label_move_text(record))
    return EXIT_OK
