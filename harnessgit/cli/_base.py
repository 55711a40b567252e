"""The root command group and what every command shares.

Only the ``harnessgit.cli`` package imports click (docs/design.md, "How the code reads": a thin CLI,
one module per command, named as the command is: `COMMAND_MODULES`).
Each command parses its options, opens the store and the config once, calls one
core function, renders the result, and returns its exit code (docs/design.md, "Exit codes").
Heavy modules are imported inside the commands, so `harnessgit --help` is fast.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import signal
import sys
import threading
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, TypeVar

import click

from harnessgit import __version__
from harnessgit.errors import EXIT_INTERRUPTED, HarnessgitError

if TYPE_CHECKING:
    from harnessgit.config import Config
    from harnessgit.evaluation.execution import Execution
    from harnessgit.scrub import Scrubber
    from harnessgit.store import Store


@dataclass
class State:
    directory: Path | None = None
    debug: bool = False
    quiet: bool = False
    # The configured scrubber, once a command has read the configuration: what the
    # command prints on the way out (an error, the evaluator's stderr) passes through it.
    scrubber: Scrubber | None = None
    executor: str | None = None  # --executor, where --jobs is
    # The configuration read, whose scrubber is made when something is first scrubbed:
    # a command that prints nothing from outside harnessgit never makes one (issue 26).
    config: Config | None = None

    def scrub(self, text: str) -> str:
        """``text`` without secrets: the last net under everything printed from outside
        harnessgit (the layers below scrub what they record; a message that quotes a
        name, a path or a program's output is scrubbed here once more)."""
        if self.scrubber is None and self.config is not None:
            self.scrubber = self.config.scrub.scrubber(self.config.proposer)
        if self.scrubber is None:  # no configuration read yet: the default rules
            from harnessgit.config.sections import ScrubSection

            self.scrubber = ScrubSection().scrubber()
        return self.scrubber.text(text)

    def path(self, value: str | Path) -> Path:
        """A path the user typed, relative to -C DIRECTORY as git -C would have it."""
        path = Path(value)
        return path if self.directory is None or path.is_absolute() else self.directory / path

    def execution(self, jobs: int | None, progress: str | None) -> Execution:
        """How this command's evaluations run: ``--jobs``, a progress display labelled
        ``progress`` on standard error (None, or -q: none), the evaluator's standard
        error shown (logged at debug level with -q), and the batch runner
        (`harnessgit.cli._runner.BatchRunner`)."""
        from harnessgit.evaluation.execution import Execution

        display: Callable[[int, int], None] | None = None
        if progress is not None and not self.quiet:  # -q and --json draw nothing, load nothing
            from harnessgit.evaluation.render import ProgressDisplay

            display = ProgressDisplay(progress)
        from harnessgit.cli._runner import BatchRunner

        runner = BatchRunner()
        click.get_current_context().call_on_close(runner.close)
        return Execution(
            jobs=jobs,
            executor=self.executor,
            progress=display,
            on_stderr=stderr_sink(self),
            runner=runner,
        )

    def open(self, *, writes: bool = True) -> tuple[Store, Config]:
        """The store and configuration; ``writes=False`` for a command that only reads
        (a stale ref lock is then a warning, not a refusal)."""
        from harnessgit.config import load_config
        from harnessgit.store import Store

        store = Store.discover(self.directory, writes=writes)
        try:
            config = load_config(store.root)
        except BaseException:
            store.close()
            raise
        self.config, self.scrubber = config, None
        return store, config


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return f"harnessgit: {record.levelname.lower()}: {record.getMessage()}"


class _StderrHandler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to whatever sys.stderr is when a record comes, not when the handler was made.

    A process that runs several commands (a test's CliRunner, a library user calling
    main() twice) swaps sys.stderr between them; a handler bound to the first stream
    would send every later warning into a closed buffer.
    """

    def emit(self, record: logging.LogRecord) -> None:
        self.stream = sys.stderr
        super().emit(record)


def _configure_logging(quiet: bool, debug: bool) -> None:
    logger = logging.getLogger("harnessgit")
    if not any(isinstance(h, _StderrHandler) for h in logger.handlers):
        handler = _StderrHandler(sys.stderr)
        handler.setFormatter(_Formatter())
        logger.addHandler(handler)
    logger.propagate = False
    logger.setLevel(logging.DEBUG if debug else logging.ERROR if quiet else logging.INFO)


# 128 + SIGTERM, as a shell reports a command that SIGTERM ended: CI runners and
# supervisors (docker stop, systemd, a cancelled job) send it, and 143 tells them the
# stop was theirs, not a Ctrl-C (130).
EXIT_TERMINATED = 128 + signal.SIGTERM


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like Ctrl-C's KeyboardInterrupt: every
    ``finally`` and ``with`` on the way out runs, so evaluators are killed and temporary
    directories removed (issue 15: SIGTERM used to act as SIGKILL, leaving both)."""


@contextlib.contextmanager
def _terminate_as_interrupt() -> Iterator[None]:
    """While a command runs, SIGTERM raises `Terminated`; once, so that a second one
    does not cut the cleanup short. Only the main thread can set a handler (a command
    run from another thread keeps the default)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum: int, frame: FrameType | None) -> None:
        # A Python handler, not SIG_IGN: an ignored signal would stay ignored in the
        # programs started while cleaning up.
        signal.signal(signal.SIGTERM, lambda signum, frame: None)
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


# Every command and the module of harnessgit.cli that defines it: the module is named as
# the command (a hyphen as an underscore, a Python keyword with one appended: `import` is
# in cli/import_.py), so a newcomer finds command X in cli/X.py. A command's module is
# imported when the command is looked up, so `harnessgit check` (a pre-commit hook, run on
# every commit) does not import the other commands' modules. A literal, not computed:
# nothing runs at start-up. tests/cli/test_base.py keeps it equal to what the modules
# define, and each module named as its command.
COMMAND_MODULES = {
    "init": "init",
    "propose": "propose",
    "show": "show",
    "log": "log",
    "status": "status",
    "label": "label",
    "eval": "eval",
    "scores": "scores",
    "test": "test",
    "trajectory": "trajectory",
    "gate": "gate",
    "merge": "merge",
    "revert": "revert",
    "override": "override",
    "verify": "verify",
    "frontier": "frontier",
    "check": "check",
    "calibrate": "calibrate",
    "review": "review",
    "report": "report",
    "bisect": "bisect",
    "bisect-judge": "bisect_judge",
    "evolve": "evolve",
    "doctor": "doctor",
    "sync": "sync",
    "demo": "demo",
    "import": "import_",
    "transfer": "transfer",
    "export": "export",
    "model": "model",
}


class OneLineUsageError(click.UsageError):
    """A usage error as one line, as every harnessgit error is (click prints the usage,
    a hint and the error on three), with where to read more; exit code 2 still."""

    @classmethod
    def of(cls, exc: click.UsageError) -> OneLineUsageError:
        if isinstance(exc, OneLineUsageError):
            return exc
        message = " ".join(exc.format_message().split()).rstrip(".")
        message = message[:1].lower() + message[1:]
        where = exc.ctx.command_path if exc.ctx is not None else "harnessgit"
        return cls(f"{message} (try '{where} -h')", exc.ctx)

    def show(self, file: Any = None) -> None:
        click.echo(f"harnessgit: usage error: {self.format_message()}", err=True)


class HarnessgitGroup(click.Group):
    """Maps outcomes to the exit codes of docs/design.md inside click, so that `main` and
    click's CliRunner see the same codes: a command's int return value is its exit
    code, a HarnessgitError prints one line (a traceback with --debug) and exits 3.
    Commands are loaded on first use (`COMMAND_MODULES`)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*COMMAND_MODULES, *self.commands})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        module = COMMAND_MODULES.get(cmd_name)
        if cmd_name not in self.commands and module is not None:
            importlib.import_module(f"harnessgit.cli.{module}")  # its decorators add its commands
        return super().get_command(ctx, cmd_name)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            from difflib import get_close_matches  # only on this error path

            close = get_close_matches(name, self.list_commands(ctx), n=1)
            suggestion = f"; did you mean {close[0]!r}?" if close else ""
            raise click.UsageError(f"no such command {name!r}{suggestion}", ctx)
        return super().resolve_command(ctx, args)

    def make_context(
        self, info_name: str | None, args: list[str], parent: click.Context | None = None, **extra: Any
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:  # harnessgit's own options (harnessgit --bogus)
            raise OneLineUsageError.of(exc) from None

    def invoke(self, ctx: click.Context) -> object:
        try:
            with _terminate_as_interrupt():
                result = super().invoke(ctx)
        except click.UsageError as exc:  # an unknown command, a subcommand's bad option or value
            raise OneLineUsageError.of(exc) from None
        except HarnessgitError as exc:
            state = ctx.find_object(State)
            if state is not None and state.debug:
                traceback.print_exc()
            said = state.scrub(str(exc)) if state is not None else str(exc)
            click.echo(f"harnessgit: {exc.label}: {said}", err=True)
            ctx.exit(exc.exit_code)
        except Terminated:
            click.echo("harnessgit: terminated", err=True)
            ctx.exit(EXIT_TERMINATED)
        except KeyboardInterrupt:
            click.echo("harnessgit: interrupted", err=True)
            ctx.exit(EXIT_INTERRUPTED)
        if isinstance(result, int) and result:
            ctx.exit(result)
        return result


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if not value or ctx.resilient_parsing:
        return
    from harnessgit.store.source import source_revision

    revision = source_revision(Path(__file__).resolve().parent.parent)
    click.echo(f"harnessgit, version {__version__}" + (f" (git {revision})" if revision else ""))
    ctx.exit()


@click.group(
    cls=HarnessgitGroup, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Print the version (and the commit, when run from a git checkout) and exit.",
)
@click.option(
    "-C",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Run as if harnessgit was started in DIRECTORY.",
)
@click.option("--debug", is_flag=True, help="Show a traceback when a command fails.")
@click.option("-q", "--quiet", is_flag=True, help="Print only results and errors.")
@click.pass_context
def cli(ctx: click.Context, directory: Path | None, debug: bool, quiet: bool) -> None:
    """Version, review and optimise an LLM harness, with git as the database.

    Every proposed edit is a commit on a candidate branch, with its evidence and
    scores attached as git notes; main moves only when a statistical gate passes.
    """
    state = ctx.ensure_object(State)
    state.directory, state.debug, state.quiet = directory, debug, quiet
    _configure_logging(quiet, debug)


_Command = TypeVar("_Command", bound=Callable[..., Any])


def _keep_executor(ctx: click.Context, _param: click.Parameter, value: str | None) -> None:
    ctx.ensure_object(State).executor = value


def jobs_option(command: _Command) -> _Command:
    """One --jobs, and --executor beside it, for every command that may run the
    evaluator (--executor reaches `State.execution`, not the command's parameters)."""
    command = click.option(
        "--executor",
        type=click.Choice(["local", "ray"]),
        expose_value=False,
        callback=_keep_executor,
        help="Where evaluator batches run: local processes, or Ray tasks on RAY_ADDRESS's "
        "cluster (else a Ray started here). Default: [evaluator] executor.",
    )(command)
    return click.option(
        "--jobs",
        "-j",
        type=click.IntRange(min=1),
        metavar="N",
        help="Evaluator batches at a time. Default: [evaluator] jobs; with Ray, the cluster's CPUs.",
    )(command)


def _keep_quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value:
        state = ctx.ensure_object(State)
        state.quiet = True
        _configure_logging(True, state.debug)


def quiet_option(command: _Command) -> _Command:
    """``-q`` after the command as well as before it (``harnessgit init -q``), for the
    commands whose warnings a script may want silenced."""
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        expose_value=False,
        callback=_keep_quiet,
        help="Print only results and errors (as `harnessgit -q`).",
    )(command)


def echo(text: str = "", *, err: bool = False) -> None:
    click.echo(text, err=err)


def stderr_sink(state: State) -> Callable[[str], None]:
    """Where the evaluator's standard error goes: shown, or logged at debug level with -q."""
    if state.quiet:
        logger = logging.getLogger("harnessgit.evaluator")
        return lambda line: logger.debug("evaluator: %s", state.scrub(line))
    return lambda line: click.echo(state.scrub(line), err=True)


def instance_ids(values: tuple[str, ...]) -> list[str]:
    """Instance ids given as a repeatable option, each value possibly comma-separated."""
    return [part for value in values for part in value.split(",") if part]
