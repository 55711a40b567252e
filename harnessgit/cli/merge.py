"""`harnessgit merge`: the gate on CAND and, only if it passes, a merge into the base branch."""

from __future__ import annotations

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.cli._options import gate_options
from harnessgit.cli._runner import checker
from harnessgit.errors import EXIT_NO, EXIT_OK, verdict_exit


@cli.command()
@gate_options
@click.pass_obj
def merge(
    state: State, candidate: str, base: str | None, allow_small: bool, jobs: int | None, as_json: bool
) -> int:
    """the gate on CAND and, only if it passes, a merge into the base branch.

    The merge commit, its gate record and the retirement of the candidate land in
    one ref transaction; exit 1 when the gate fails, 4 when it is inconclusive.
    """
    from harnessgit.gate import render as render_gate
    from harnessgit.gate.gate import GateRequest
    from harnessgit.gate.merge import merge as run
    from harnessgit.render import to_json

    store, config = state.open()
    execution = state.execution(jobs, None if as_json else "eval selection")
    with store:
        request = GateRequest(candidate, base=base, allow_small=allow_small)
        result = run(store, config, request, execution=execution, check=checker)
    echo(to_json(result) if as_json else render_gate.merge_text(result))
    if result.merge or result.outcome is None:
        return EXIT_OK if result.merge else EXIT_NO
    return verdict_exit(result.outcome.verdict)
