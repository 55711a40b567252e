"""What `harnessgit doctor` finds and reports: a finding, a check (how to look, how to
repair), the report; `CannotRepair`, raised by a repair that would take a guess."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from harnessgit.errors import HarnessgitError
from harnessgit.store import Store


class CannotRepair(HarnessgitError):
    """A fix that would have to guess: the finding stays, with this as the reason."""


@dataclass(frozen=True)
class Finding:
    check: str  # the name of the check that found it
    subject: str  # what it is about: a path, relative to the repository where it lies inside
    problem: str  # what is wrong, one line
    fix: str  # what `--fix` does about it, or what to do by hand
    fixable: bool  # whether `--fix` repairs it without guessing
    details: tuple[str, ...] = ()  # more lines: a transaction's ref updates
    fixed: bool = False  # repaired by this run's --fix
    outcome: str = ""  # what --fix did, or why it could not


@dataclass(frozen=True)
class Check:
    name: str
    about: str  # what it looks for, one line (docs/cli.md lists them)
    find: Callable[[Store], list[Finding]]
    fix: Callable[[Store, Finding], str]


@dataclass(frozen=True)
class DoctorReport:
    checks: tuple[str, ...]  # the checks that ran, in order
    fixing: bool  # --fix
    findings: tuple[Finding, ...]

    JSON_EXTRA = ("healthy",)

    @property
    def healthy(self) -> bool:
        """Nothing found, or everything found repaired."""
        return all(finding.fixed for finding in self.findings)


def shown(store: Store, path: Path) -> str:
    """A path as findings name it: relative to the repository when inside it."""
    try:
        return str(path.relative_to(store.root))
    except ValueError:
        return str(path)
