"""`harnessgit log`: list the accepted edits: the base branch's first-parent chain, newest first."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.cli._options import json_option
from harnessgit.errors import EXIT_OK


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
@json_option
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
    (read without importing the checks or the store), else the audit's, kept for the next run."""
    from harnessgit.candidates.history_output import output_key, read_output
    from harnessgit.readstore import ReadStore
    from harnessgit.readstore.inflight import settled

    with ReadStore.discover(state.directory) as repo:
        # A journal or a lock: the store's preflight finishes or reports it first (below).
        if settled(repo.common_dir, repo.git_dir):
            key = output_key(repo, base=base, limit=limit, as_json=as_json)
            text = read_output(repo.common_dir, key) if key is not None else None
            if text is not None:
                return text
    from harnessgit.candidates.history import harness_history
    from harnessgit.candidates.history_output import NAME, sealed_output
    from harnessgit.candidates.history_render import history_text
    from harnessgit.render import to_json
    from harnessgit.store.index import save_derived

    store, config = state.open(writes=False)
    with store:
        key = output_key(store, base=base, limit=limit, as_json=as_json)
        audit = harness_history(store, config, base=base, limit=limit)
        text = to_json(audit) if as_json else history_text(audit)
        # Kept only when nothing moved while the audit ran.
        if key is not None and output_key(store, base=base, limit=limit, as_json=as_json) == key:
            save_derived(store, NAME, sealed_output(key, text))
    return text
