"""`harnessgit check`: the harness checks from the command line and from pre-commit."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from harnessgit.check_rules import RULES
from harnessgit.cli._base import State, cli, echo

if TYPE_CHECKING:
    from harnessgit.check_findings import CheckReport, Rule
    from harnessgit.checks.collect import Source
    from harnessgit.checks.render import Format
    from harnessgit.readstore import ReadStore
    from harnessgit.readstore.objects import ObjectReader
    from harnessgit.readstore.refs import RefReader

FORMATS = ("text", "json", "github")  # harnessgit.checks.render.FORMATS


@cli.command()
@click.argument("files", nargs=-1, metavar="[FILES]...")
@click.option(
    "--against",
    metavar="REV",
    help="Compare with this revision. Default: HEAD (nothing before the first commit), "
    "or REV's first parent with --rev.",
)
@click.option(
    "--staged",
    is_flag=True,
    help="Check the staged content (the index) instead of the working tree, as the pre-commit hook does.",
)
@click.option(
    "--rev",
    metavar="REV",
    help="Check the content of this commit instead of the working tree (with --against: "
    "the change between the two, as the gate does).",
)
@click.option(
    "--all",
    "all_files",
    is_flag=True,
    help="Check every harness file, not only those changed since --against.",
)
@click.option(
    "--rule",
    "rules",
    multiple=True,
    type=click.Choice(RULES),  # harnessgit.check_rules: a leaf, `--help` imports no check
    help="Run only this rule (repeatable). Default: every rule not turned off in [checks.severity].",
)
@click.option(
    "--since",
    metavar="REV",
    help="Also measure growth against this revision, so many small steps add up. Default: "
    "[checks] growth_since (the merge base with [harness] base, or the last label).",
)
@click.option(
    "--format",
    "form",
    type=click.Choice(FORMATS),
    default="text",
    show_default=True,
    help="text: `path:line: rule: message` lines; json: the report; github: workflow annotations.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (same as --format json).")
@click.option(
    "--message-file",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The message of the commit being made (the commit-msg hook passes it): its "
    "Harness-Allow trailers allow findings, as a commit's own trailers do with --rev.",
)
@click.pass_obj
def check(
    state: State,
    files: tuple[str, ...],
    against: str | None,
    staged: bool,
    rev: str | None,
    all_files: bool,
    rules: tuple[str, ...],
    since: str | None,
    form: Format,
    as_json: bool,
    message_file: Path | None,
) -> int:
    """Check harness files for bloat, collapse, bad format, duplication and large edits.

    Without FILES, checks the harness files changed since --against (default
    HEAD) in the working tree, the index (--staged) or a commit (--rev). A
    failure the file already had there is reported as existing and does not
    block (the ratchet); --all judges every harness file as it stands. Exits 1
    when a failure blocks, 0 otherwise. Limits come from [checks] in
    harnessgit.toml; the defaults need no configuration.
    """
    from harnessgit.checkconfig import load_check_config
    from harnessgit.checks.check import CheckRequest, check_change
    from harnessgit.checks.render import render
    from harnessgit.errors import NotARepository
    from harnessgit.readstore import ReadStore

    if staged and rev:
        raise click.UsageError("use either --staged or --rev, not both")
    selected = cast("list[Rule]", [rule for rule in RULES if rule in rules]) or None
    here = (state.directory or Path.cwd()).absolute()
    try:
        # Opened to read (no preflight, no write machinery loaded): the hook runs inside
        # `git commit` and reads only files and refs; it must neither move refs (rolling a
        # transaction forward) nor stop a commit for a lock on harnessgit's refs.
        store = ReadStore.discover(state.directory)
    except NotARepository:
        if staged or rev or against or since or not files:
            raise
        report = _outside_git(here, files, selected)
    else:
        with store:
            # Only [harness] and [checks] (harnessgit.checkconfig): a bad [gate] is not the hook's to refuse.
            config = load_check_config(store.root)
            paths = _repo_paths(store, here, files) if files else None
            new = store.refs.resolve(rev) if rev else None
            old: str | None = store.refs.resolve(against) if against else None
            if not against:
                old = _first_parent(store.objects, new) if new else _head(store.refs)
            source: Source = "tree" if new else "index" if staged else "worktree"
            request = CheckRequest(
                source=source,
                paths=paths,
                rules=selected,
                all_files=all_files,
                ratchet=not all_files,
                since=since,
            )
            report = check_change(store, config, old, new, request)
            if new:  # a commit's messages may say a finding is deliberate (`checks.trailers`)
                from harnessgit.checks.trailers import with_trailers

                report = with_trailers(store, report, old, new)
    if message_file is not None:
        from harnessgit.checks.trailers import allow

        report = allow(report, [(None, _message(message_file))])
    echo(render(report, "json" if as_json else form, quiet=state.quiet))
    return 1 if report.failed else 0


def _message(path: Path) -> str:
    from harnessgit.errors import HarnessgitError

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise HarnessgitError(f"cannot read the commit message {path}: {exc.strerror}") from None
    # git's comment lines (the template, the status) say nothing the author wrote
    return "\n".join(line for line in text.splitlines() if not line.startswith("#"))


def _head(refs: RefReader) -> str | None:
    from harnessgit.errors import UnknownRevision

    try:
        return refs.resolve("HEAD")
    except UnknownRevision:
        return None  # before the first commit every file is new


def _first_parent(objects: ObjectReader, commit: str) -> str | None:
    parents = objects.commit_info(commit).parents
    return parents[0] if parents else None


def _repo_paths(store: ReadStore, here: Path, files: tuple[str, ...]) -> list[str]:
    """FILES as repository-relative paths (they are given relative to the current directory)."""
    from harnessgit.errors import HarnessgitError

    root = store.root.resolve()
    paths = []
    for name in files:
        given = here / name
        # Resolve the folder, not the file: a harness file may be a symbolic link.
        absolute = given.parent.resolve() / given.name
        try:
            relative = absolute.relative_to(root)
        except ValueError:
            raise HarnessgitError(f"{name} is outside the repository {root}") from None
        paths.append(relative.as_posix())
    return paths


def _outside_git(here: Path, files: tuple[str, ...], rules: list[Rule] | None) -> CheckReport:
    from harnessgit.checkconfig import load_check_config
    from harnessgit.checks.check import report_for
    from harnessgit.checks.collect import disk_versions

    paths = [os.path.relpath(here / name, here).replace(os.sep, "/") for name in files]
    config = load_check_config(here)
    return report_for(disk_versions(here, paths, config), config, rules)
