"""harnessgit.toml: read once, at the boundary, into frozen dataclasses.

Every key has a default, so a missing file or section means "defaults"; an unknown
key is an error (a misspelt ``alpah`` must not silently leave alpha at 0.05). One
reader validates every section (`harnessgit.checkconfig.reader`); `harnessgit check`
uses the same reader for the two sections it needs (`harnessgit.checkconfig`, which
this package builds on and `load_check_config` is re-exported from), so a bad
``[gate]`` is the gate's to refuse, not the pre-commit hook's.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from harnessgit.checkconfig import CheckConfig, CheckSections, load_check_config
from harnessgit.checkconfig.reader import CONFIG_FILE, SettingError, parse_toml, read_table, read_toml
from harnessgit.checkconfig.sections import (
    BUILTIN_KINDS,
    DEFAULT_HARNESS_PATHS,
    ChecksSection,
    HarnessSection,
    KindChecks,
    SeverityOverrides,
)
from harnessgit.config.proposer import CommandProposerSection, ProposerSection, read_proposer
from harnessgit.config.sections import (
    EvaluatorSection,
    EvolveSection,
    GateSection,
    ScrubSection,
    SplitsSection,
)
from harnessgit.errors import ConfigError

__all__ = [
    "BUILTIN_KINDS",
    "CONFIG_FILE",
    "DEFAULT_HARNESS_PATHS",
    "CheckConfig",
    "CheckSections",
    "ChecksSection",
    "Config",
    "EvaluatorSection",
    "EvolveSection",
    "GateSection",
    "HarnessSection",
    "KindChecks",
    "ScrubSection",
    "SeverityOverrides",
    "SplitsSection",
    "load_check_config",
    "load_config",
    "parse_config",
    "require",
    "require_evaluator",
]


@dataclass(frozen=True)
class Config:
    harness: HarnessSection = field(default_factory=HarnessSection)
    evaluator: EvaluatorSection = field(default_factory=EvaluatorSection)
    splits: SplitsSection = field(default_factory=SplitsSection)
    gate: GateSection = field(default_factory=GateSection)
    checks: ChecksSection = field(default_factory=ChecksSection)
    scrub: ScrubSection = field(default_factory=ScrubSection)
    evolve: EvolveSection = field(default_factory=EvolveSection)
    proposer: ProposerSection = field(
        default_factory=CommandProposerSection, metadata={"read": read_proposer}
    )
    # Whether harnessgit.toml exists; commands that need a real setup refuse without it.
    present: bool = field(default=False, metadata={"toml": False})


# The top-level tables of harnessgit.toml.
SECTION_NAMES = tuple(spec.name for spec in fields(Config) if spec.metadata.get("toml", True))


def load_config(root: Path) -> Config:
    data = read_toml(root)
    return Config() if data is None else _read(data)


def parse_config(raw: bytes) -> Config:
    return _read(parse_toml(raw))


def _read(data: dict[str, Any]) -> Config:
    try:
        config = read_table(Config, data, "")
    except SettingError as exc:
        raise ConfigError(f"{CONFIG_FILE}: {exc}") from None
    table = data.get("gate")
    given = frozenset(table) if isinstance(table, dict) else frozenset()
    return replace(config, present=True, gate=replace(config.gate, given=given))


def require(config: Config) -> Config:
    if not config.present:
        raise ConfigError(f"no {CONFIG_FILE} at the repository root: run `harnessgit init` first")
    return config


def require_evaluator(config: Config, what: str) -> Config:
    """``config``, if it names an evaluator: what scores, the gate and bisect need.
    Checks, review and log work without one (docs/design.md: levels of adoption)."""
    config = require(config)
    if not config.evaluator.configured:
        raise ConfigError(
            f"{what} needs an evaluator: set [evaluator] command (or python, or adapter) in {CONFIG_FILE} "
            "(docs/evaluator.md says what it runs and returns); without one, `harnessgit check`, "
            "`review` and `log` work"
        )
    return config
