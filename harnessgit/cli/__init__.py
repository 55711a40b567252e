"""harnessgit's command line: `main` maps every outcome to the exit codes of docs/design.md."""

from __future__ import annotations

import sys

import click

from harnessgit.cli._base import State, cli
from harnessgit.errors import EXIT_ERROR, EXIT_INTERRUPTED, EXIT_USAGE, HarnessgitError

__all__ = ["cli", "commands", "main"]


def commands() -> dict[str, click.Command]:
    """Every command by name, each module loaded (they load lazily otherwise)."""
    ctx = click.Context(cli)
    found = {name: cli.get_command(ctx, name) for name in cli.list_commands(ctx)}
    return {name: command for name, command in found.items() if command is not None}


def main(argv: list[str] | None = None) -> int:
    """Run harnessgit and return its exit code (0 ok, 1 an expected no, 2 usage,
    3 error, 130 interrupted, 143 terminated by SIGTERM)."""
    try:
        # Without standalone mode click returns the code of a ctx.exit() instead of exiting.
        result = cli.main(args=argv, prog_name="harnessgit", obj=State(), standalone_mode=False)
    except click.exceptions.Exit as exc:
        return exc.exit_code
    except click.UsageError as exc:
        exc.show()
        return EXIT_USAGE
    except click.ClickException as exc:
        exc.show()
        return EXIT_ERROR
    except (click.Abort, KeyboardInterrupt):
        click.echo("harnessgit: interrupted", err=True)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader went away (`harnessgit log | head`): not an error.
        sys.stderr.close()
        return 0
    except HarnessgitError as exc:  # raised before a command ran, e.g. by an option callback
        click.echo(f"harnessgit: {exc.label}: {exc}", err=True)
        return exc.exit_code
    return result if isinstance(result, int) else 0
