"""The [harness] and [checks] sections of harnessgit.toml, read without the rest.

`harnessgit check` (the pre-commit hook) reads these two sections and nothing else: a
bad ``[gate]`` is the gate's to refuse, not the hook's. This package holds them, the
one reader every section goes through (`reader`) and the harness-file detection
(`detect`), below `harnessgit.config`, which adds the other sections and `Config`; so
the hook loads neither the evaluator's, the gate's nor the proposer's settings.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Protocol

from harnessgit.checkconfig.reader import CONFIG_FILE, SettingError, read_table, read_toml
from harnessgit.checkconfig.sections import ChecksSection, HarnessSection
from harnessgit.errors import ConfigError

# The other top-level tables of harnessgit.toml (`harnessgit.config.Config`'s sections;
# tests/config/test_reader.py keeps the two lists equal): known here, not read.
OTHER_SECTIONS = ("evaluator", "splits", "gate", "scrub", "evolve", "proposer")


class CheckSections(Protocol):
    """What the checks read of a configuration: `CheckConfig` or the full `Config`."""

    @property
    def harness(self) -> HarnessSection: ...

    @property
    def checks(self) -> ChecksSection: ...


@dataclass(frozen=True)
class CheckConfig:
    """The sections `harnessgit check` reads, loaded without the rest of the config."""

    harness: HarnessSection = field(default_factory=HarnessSection)
    checks: ChecksSection = field(default_factory=ChecksSection)
    present: bool = field(default=False, metadata={"toml": False})  # whether harnessgit.toml exists


def load_check_config(root: Path) -> CheckConfig:
    """The [harness] and [checks] sections of ``root``/harnessgit.toml (defaults without
    one); the other sections' names are checked, their contents left to their commands."""
    data = read_toml(root)
    if data is None:
        return CheckConfig()
    try:
        config = read_table(CheckConfig, data, "", known=OTHER_SECTIONS)
    except SettingError as exc:
        raise ConfigError(f"{CONFIG_FILE}: {exc}") from None
    return replace(config, present=True)


__all__ = ["OTHER_SECTIONS", "CheckConfig", "CheckSections", "load_check_config"]
