"""`harnessgit report`: the record as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.cli._options import output_option
from harnessgit.errors import EXIT_OK


@cli.command()
@click.argument("rev_range", required=False, metavar="[REV-RANGE]")
@output_option(
    "Where to write the HTML page. Default: .git/harnessgit/report.html, where it cannot be "
    "committed; a FILE in the working tree must be ignored or tracked."
)
@click.option(
    "--base", metavar="BRANCH", help="The base branch (default: [harness] base in harnessgit.toml)."
)
@click.option("--json", "as_json", is_flag=True, help="Print what was written as JSON.")
@click.pass_obj
def report(state: State, rev_range: str | None, output: Path | None, base: str | None, as_json: bool) -> int:
    """Write one HTML page of pictures: scores, lengths, the candidate tree, frontier, flips.

    REV-RANGE (`A..B`, or `B` for all of B's history) is a stretch of the base
    branch's first-parent chain; default: all of it. The page is self-contained:
    styles and script inline, no request leaves it, it opens offline. Reads only;
    writes FILE (default inside the git directory; its path is printed).
    """
    from harnessgit.render import plural, size, to_json
    from harnessgit.report.report import write_report

    store, config = state.open(writes=False)
    with store:
        result = write_report(store, config, state.path(output) if output else None, rev_range, base)
    if as_json:
        echo(to_json(result))
    else:
        echo(
            f"wrote {result.output} ({size(result.bytes)}): {plural(result.commits, 'commit')}, "
            f"{plural(result.gated_merges, 'gated merge')}, {plural(result.candidates, 'candidate')}"
        )
        for note in result.notes:
            echo(f"note: {note}")
    return EXIT_OK
