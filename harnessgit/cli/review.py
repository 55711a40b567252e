"""`harnessgit review`: a change reviewed like a pull request."""

from __future__ import annotations

from pathlib import Path

import click

from harnessgit.cli._base import State, cli, echo
from harnessgit.errors import EXIT_OK, HarnessgitError


@cli.command()
@click.argument("revisions", nargs=-1, metavar="[[BASE] HEAD]")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "text", "json"]),
    default="text",
    show_default=True,
    help="md: GitHub-flavoured Markdown for a pull-request comment (under GitHub's 65,536-character "
    "limit); text: for a terminal; json: every field.",
)
@click.option(
    "--output",
    "-o",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Write the review to FILE instead of standard output.",
)
@click.pass_obj
def review(state: State, revisions: tuple[str, ...], fmt: str, output: Path | None) -> int:
    """Review BASE..HEAD like a pull request: verdict, files, checks, scores, flips, evidence.

    With one argument it is HEAD (`review CAND` reviews a candidate), and BASE is
    HEAD's merge-base with the base branch; with none, HEAD is the current HEAD.
    Both may be any revision or candidate id. The verdict is what the gate would
    decide from stored scores: review never runs the evaluator and records nothing.
    With no evaluator configured (or no split manifest) it says "not evaluated" and
    shows the rest: files, sizes, checks, rationale, diff. Exits 0 whatever the
    verdict (use `harnessgit gate` to decide).
    """
    from harnessgit.calibrate.calibrate import for_commit
    from harnessgit.calibrate.render import calibration_line
    from harnessgit.records import CalibrationRecord
    from harnessgit.render import to_json
    from harnessgit.review.comment import review_markdown
    from harnessgit.review.render import review_text
    from harnessgit.review.review import review as run

    if len(revisions) > 2:
        raise click.UsageError("review takes at most two revisions: [[BASE] HEAD]")
    # One revision is the change to review, as `git show REV` reads it, not where to start.
    base = revisions[0] if len(revisions) == 2 else None
    head = revisions[-1] if revisions else None
    store, config = state.open(writes=False)
    with store:
        result = run(store, config, base, head)
        found = for_commit(store, result.base)
    # A line about the evaluator's calibration, when there is an evaluator to calibrate.
    record = found if isinstance(found, CalibrationRecord) else None
    calibration = "" if found is False else f"\n{calibration_line(record)}\n"
    if fmt == "md":
        text = review_markdown(result) + calibration
    elif fmt == "json":
        text = to_json(result)
    else:
        text = review_text(result).rstrip("\n") + "\n" + calibration
    if output is None:
        echo(text.rstrip("\n"))
    else:
        _write(state, output, text)
    return EXIT_OK


def _write(state: State, output: Path, text: str) -> None:
    target = state.path(output)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
    except OSError as exc:
        raise HarnessgitError(f"cannot write {target}: {exc.strerror}") from None
    if not state.quiet:
        echo(f"wrote the review to {target}", err=True)
