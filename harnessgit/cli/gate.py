"""Commands that decide what reaches the base branch: gate, merge, revert, verify, frontier."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

import click

from harnessgit.cli._base import State, cli, echo, jobs_option
from harnessgit.errors import EXIT_NO, EXIT_OK, verdict_exit
from harnessgit.stats.frontier_keys import FRONTIER_TYPES, FrontierType

if TYPE_CHECKING:
    from harnessgit.records import GateRecord
    from harnessgit.store import Store


def _gate_options(command: Callable[..., int]) -> Callable[..., int]:
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


@cli.command()
@_gate_options
@click.option(
    "--model",
    "models",
    multiple=True,
    metavar="LABEL",
    help="Also require no significant loss on this model (repeatable; added to [gate] models, "
    "which `merge` reads: put it there to bind).",
)
@click.pass_obj
def gate(
    state: State,
    candidate: str,
    base: str | None,
    allow_small: bool,
    jobs: int | None,
    as_json: bool,
    models: tuple[str, ...],
) -> int:
    """Decide whether CAND may move the base branch; exit 0 on pass, 1 on fail, 4 when inconclusive.

    Evaluates whatever selection scores are missing (through the cache) and
    records the attempt: repeated gating spends the selection set's error rate.
    """
    from harnessgit.gate import render as render_gate
    from harnessgit.gate.gate import run_gate
    from harnessgit.render import to_json

    store, config = state.open()
    execution = state.execution(jobs, None if as_json else "eval selection")
    with store:
        outcome = run_gate(
            store, config, candidate, base=base, allow_small=allow_small, execution=execution, models=models
        )
        calibration = None if as_json else _calibration(store, outcome.record)
    echo(to_json(outcome) if as_json else render_gate.gate_text(outcome))
    if calibration is not None:
        echo(calibration)
    return verdict_exit(outcome.verdict)


def _calibration(store: Store, record: GateRecord) -> str:
    """The line about the evaluator's calibration on this selection set (or its absence)."""
    from harnessgit.calibrate.calibrate import latest
    from harnessgit.calibrate.render import calibration_line

    found = latest(store, fingerprint=record.fingerprint, model=record.model, split_hash=record.split_hash)
    return calibration_line(found)


@cli.command()
@_gate_options
@click.pass_obj
def merge(
    state: State, candidate: str, base: str | None, allow_small: bool, jobs: int | None, as_json: bool
) -> int:
    """Run the gate on CAND and, only if it passes, merge it (--no-ff) into the base branch.

    The merge commit, its gate record and the retirement of the candidate land in
    one ref transaction; exit 1 when the gate fails, 4 when it is inconclusive.
    """
    from harnessgit.gate import render as render_gate
    from harnessgit.gate.merge import merge as run
    from harnessgit.render import to_json

    store, config = state.open()
    execution = state.execution(jobs, None if as_json else "eval selection")
    with store:
        result = run(store, config, candidate, base=base, allow_small=allow_small, execution=execution)
    echo(to_json(result) if as_json else render_gate.merge_text(result))
    if result.merge or result.outcome is None:
        return EXIT_OK if result.merge else EXIT_NO
    return verdict_exit(result.outcome.verdict)


@cli.command()
@click.argument("rev", metavar="REV")
@click.option(
    "--reason", default="", metavar="TEXT", help="Why the edit is reverted (required with --no-gate)."
)
@click.option(
    "--no-gate",
    is_flag=True,
    help="Land the revert at once without the gate: an explicit override, recorded with "
    "--reason and listed by verify.",
)
@click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base.")
@click.pass_obj
def revert(state: State, rev: str, reason: str, no_gate: bool, base: str | None) -> int:
    """Propose the inverse of the accepted edit REV as a candidate (then gate and merge it)."""
    from harnessgit.gate.checkout import finished_line
    from harnessgit.gate.revert import revert as run
    from harnessgit.render import short

    store, config = state.open()
    with store:
        proposal, landed = run(store, config, rev, base=base, reason=reason, no_gate=no_gate)
    echo(proposal.candidate)
    if landed is not None and landed.finished is not None:  # a rerun after a kill
        echo(finished_line(landed.finished), err=True)
    elif landed is not None and landed.merge:
        echo(f"merged without the gate (override recorded) as {short(landed.merge)}", err=True)
    elif not state.quiet:
        echo(f"next: harnessgit merge {proposal.candidate}", err=True)
    return EXIT_OK


@cli.command()
@click.argument("rev", metavar="REV")
@click.option("--reason", required=True, metavar="TEXT", help="Why this commit may skip the gate (recorded).")
@click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base.")
@click.option("--json", "as_json", is_flag=True, help="Print the override record as JSON.")
@click.pass_obj
def override(state: State, rev: str, reason: str, base: str | None, as_json: bool) -> int:
    """Accept REV, a commit made straight to the base branch, on the record.

    For a commit that changed the gate's settings, the evaluator (a regrade) or the
    harness without the gate: verify reports it until it is reverted or overridden.
    The override (reason, author) is a record verify and log list. Commits that
    change only infrastructure (docs, CI) need none.
    """
    from harnessgit.gate.override import override as run
    from harnessgit.render import short, to_json

    store, config = state.open()
    with store:
        record = run(store, config, rev, reason=reason, base=base)
    echo(
        to_json(record)
        if as_json
        else f"override recorded on {short(record.commit)} ({record.action}): {reason}"
    )
    return EXIT_OK


@cli.command()
@click.option("--base", metavar="BRANCH", help="The branch to verify. Default: [harness] base.")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@click.pass_obj
def verify(state: State, base: str | None, as_json: bool) -> int:
    """Re-check the base branch from the record; exit 1 on any problem (for CI)."""
    from harnessgit.gate import render as render_gate
    from harnessgit.gate.verify import verify as run
    from harnessgit.render import to_json

    store, config = state.open(writes=False)
    with store:
        report = run(store, config, base=base)
    echo(to_json(report) if as_json else render_gate.verify_text(report))
    return EXIT_OK if report.ok else EXIT_NO


@cli.command()
@click.option(
    "--split",
    default="selection",
    show_default=True,
    help="The split the frontier is computed on (only selection decides).",
)
@click.option(
    "--update",
    is_flag=True,
    help="Make the live candidate branches exactly the frontier plus the candidates not yet "
    "evaluated; retire the rest to refs/harnessgit/archive/ in one transaction.",
)
@click.option(
    "--type",
    "frontier_type",
    type=click.Choice(FRONTIER_TYPES),
    help="What a front is kept for, as GEPA's frontier_type: each selection instance, each "
    "objective (mean objective score), both, or each (instance, objective) pair. "
    "Default: [gate] frontier_type (instance).",
)
@click.option("--sample", is_flag=True, help="Print one parent drawn with GEPA's weights (fronts led).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed for --sample.")
@click.option("--base", metavar="BRANCH", help="The base branch. Default: [harness] base.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.pass_obj
def frontier(
    state: State,
    split: str,
    update: bool,
    frontier_type: FrontierType | None,
    sample: bool,
    seed: int,
    base: str | None,
    as_json: bool,
) -> int:
    """The Pareto frontier of the live candidates on the selection split (GEPA's rule)."""
    from harnessgit.errors import HarnessgitError
    from harnessgit.gate import render as render_gate
    from harnessgit.gate.frontier import frontier_view, update_frontier
    from harnessgit.render import to_json
    from harnessgit.stats.frontier import sample_parent

    if split != "selection":
        raise HarnessgitError("the frontier decides, so it is computed on the selection split only")
    store, config = state.open()
    with store:
        view = frontier_view(store, config, base=base, frontier_type=frontier_type)
        if update:
            view = update_frontier(store, config, view)
    if sample:
        view = replace(view, sampled=sample_parent(view.frontier, seed))
    if as_json:
        echo(to_json(view))
    elif sample:
        echo(view.sampled or "")
    else:
        echo(render_gate.frontier_text(view))
    return EXIT_OK
