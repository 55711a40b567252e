"""`harnessgit demo`: the offline demo, in a fresh repository."""

from __future__ import annotations

from pathlib import Path

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK


@cli.command()
@click.argument("directory", required=False, type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--proposals",
    type=click.IntRange(min=1),
    default=20,
    show_default=True,
    help="How many proposals the demo's evolve run may make.",
)
@click.pass_obj
def demo(state: State, directory: Path | None, proposals: int) -> int:
    """Run the offline demo: evolve a triage skill, then log, frontier, review and bisect.

    Builds a harness repository from templates/triage in DIRECTORY (new or
    empty; default: a fresh temporary directory). No LLM and no network: the
    agent and the proposer are simulated, and the demo says so. With
    OPENAI_BASE_URL (and OPENAI_API_KEY) set, the proposer is that endpoint.
    """
    import tempfile

    from harnessgit.demo import run_demo

    target = (
        state.path(directory) if directory else Path(tempfile.mkdtemp(prefix="harnessgit-demo-")) / "triage"
    )
    run_demo(target, echo, proposals=proposals)
    return EXIT_OK
