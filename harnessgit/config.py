"""harnessgit.toml: parsed once, at the boundary, into frozen models.

Every key has a default, so a missing file or section means "defaults"; an unknown
key is an error (a misspelt ``alpah`` must not silently leave alpha at 0.05).
The sections are pydantic models, except ``[harness]`` and ``[checks]``: those are
the plain dataclasses of `harnessgit.sections`, which `harnessgit check` reads
without importing pydantic, and `Config` validates them with that same reader.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    InstanceOf,
    ValidationError,
    field_validator,
)

from harnessgit.errors import ConfigError
from harnessgit.names import argv_value
from harnessgit.proposer_settings import CommandProposerSection, ProposerSection
from harnessgit.scrub import DEFAULT_PATTERNS
from harnessgit.sections import (
    BUILTIN_KINDS,
    CONFIG_FILE,
    DEFAULT_HARNESS_PATHS,
    ChecksSection,
    HarnessSection,
    KindChecks,
    SeverityOverrides,
    check_sections,
    parse_toml,
    read_table,
    read_toml,
)

__all__ = [
    "BUILTIN_KINDS",
    "CONFIG_FILE",
    "DEFAULT_HARNESS_PATHS",
    "ChecksSection",
    "Config",
    "HarnessSection",
    "KindChecks",
    "SeverityOverrides",
    "load_config",
    "parse_config",
    "require",
]


class _Section(BaseModel):
    # Schemas are built when Config is first validated, not at import: one build for
    # the whole tree instead of one per section class, and none for `--help`.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class EvaluatorSection(_Section):
    command: list[str] | None = None
    model: str = "default"
    timeout: float = Field(default=600.0, gt=0)  # seconds per batch
    batch_size: int = Field(default=10, ge=1)
    jobs: int = Field(default=1, ge=1)
    max_line_bytes: int = Field(default=16 * 1024 * 1024, ge=1024)  # one line of evaluator output
    # Files whose content is part of the evaluator fingerprint. Default: every
    # file outside the harness paths, so an edit to the grader invalidates the cache.
    files: list[str] | None = None

    _argv = field_validator("command", mode="before")(argv_value)


class SplitsSection(_Section):
    manifest: str = "splits.json"


class GateSection(_Section):
    alpha: float = Field(default=0.05, gt=0, lt=1)
    min_effect: float = Field(default=0.0, ge=-1, le=1)
    min_instances: int = Field(default=30, ge=1)
    method: Literal["bootstrap", "sign"] = "bootstrap"
    resamples: int = Field(default=10_000, ge=100)
    seed: int = 0


class EvolveSection(_Section):
    minibatch: int = Field(default=3, ge=1)  # GEPA's minibatch check uses 3 examples
    # Which harness file an iteration edits: in turn, or the one the failures name most.
    component: Literal["round-robin", "most-failures"] = "round-robin"
    form: Literal["delta", "replace"] = "delta"  # delta operations make small, reviewable diffs
    trajectory_chars: int = Field(default=2000, ge=100)  # excerpt per example in the reflective dataset
    max_examples: int = Field(default=8, ge=1)


class ScrubSection(_Section):
    # Regular expressions redacted from evidence before it is written, in addition
    # to the built-in ones (API keys, bearer tokens, AWS keys, private key blocks).
    patterns: list[str] = Field(default_factory=list)
    defaults: bool = True

    @field_validator("patterns")
    @classmethod
    def _compile(cls, patterns: list[str]) -> list[str]:
        for pattern in patterns:
            try:
                re.compile(pattern)
            except re.error as exc:
                raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from None
        return patterns


def _plain(cls: type[Any], key: str) -> BeforeValidator:
    """Validate a section that is a plain dataclass (harnessgit.sections) with its own reader."""
    return BeforeValidator(lambda value: read_table(cls, value, key))


class Config(_Section):
    # [harness] and [checks] are the plain dataclasses of harnessgit.sections, so that
    # `harnessgit check` can read them without pydantic; the same reader validates them here.
    harness: Annotated[InstanceOf[HarnessSection], _plain(HarnessSection, "harness")] = Field(
        default_factory=HarnessSection
    )
    evaluator: EvaluatorSection = Field(default_factory=EvaluatorSection)
    splits: SplitsSection = Field(default_factory=SplitsSection)
    gate: GateSection = Field(default_factory=GateSection)
    checks: Annotated[InstanceOf[ChecksSection], _plain(ChecksSection, "checks")] = Field(
        default_factory=ChecksSection
    )
    scrub: ScrubSection = Field(default_factory=ScrubSection)
    evolve: EvolveSection = Field(default_factory=EvolveSection)
    proposer: ProposerSection = Field(default_factory=CommandProposerSection)
    # Whether harnessgit.toml exists; commands that need a real setup refuse without it.
    present: bool = Field(default=False, exclude=True)

    def scrub_patterns(self) -> list[str]:
        return (list(DEFAULT_PATTERNS) if self.scrub.defaults else []) + self.scrub.patterns


def load_config(root: Path) -> Config:
    data = read_toml(root)
    return Config() if data is None else _validate(data)


def parse_config(raw: bytes) -> Config:
    return _validate(parse_toml(raw))


def _validate(data: dict[str, Any]) -> Config:
    # The plain sections first: their errors name the key (checks.kinds.skill.max_lines).
    harness, checks = check_sections(data)
    try:
        return Config.model_validate({**data, "harness": harness, "checks": checks, "present": True})
    except ValidationError as exc:
        errors = exc.errors()
        first = errors[0]
        key = ".".join(str(part) for part in first["loc"]) or "(top level)"
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        message = first["msg"].removeprefix("Value error, ")
        if first["type"] == "extra_forbidden":
            message = "unknown key"
        raise ConfigError(f"{CONFIG_FILE}: {key}: {message}{more}") from None


def require(config: Config) -> Config:
    if not config.present:
        raise ConfigError(f"no {CONFIG_FILE} at the repository root: run `harnessgit init` first")
    return config
