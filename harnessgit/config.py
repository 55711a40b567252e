"""harnessgit.toml: parsed once, at the boundary, into frozen pydantic models.

Every key has a default, so a missing file or section means "defaults"; an unknown
key is an error (a misspelt ``alpah`` must not silently leave alpha at 0.05).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from harnessgit.errors import ConfigError
from harnessgit.proposer_settings import CommandProposerSection, ProposerSection
from harnessgit.scrub import DEFAULT_PATTERNS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILE = "harnessgit.toml"

# Where harness text usually lives; `harnessgit init` writes these unless told otherwise.
DEFAULT_HARNESS_PATHS = [
    "**/SKILL.md",
    "**/AGENTS.md",
    "**/CLAUDE.md",
    "prompts/**",
    "tools/**/*.json",
]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class HarnessSection(_Section):
    paths: list[str] = Field(default_factory=lambda: list(DEFAULT_HARNESS_PATHS), min_length=1)
    base: str = "main"

    @field_validator("paths")
    @classmethod
    def _globs(cls, paths: list[str]) -> list[str]:
        for glob in paths:
            if not glob or glob.startswith("/") or "\\" in glob or ".." in glob.split("/"):
                raise ValueError(f"{glob!r} is not a repository-relative glob")
        return paths


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

    @field_validator("command", mode="before")
    @classmethod
    def _argv(cls, command: Any) -> Any:
        if isinstance(command, str):
            raise ValueError("must be a list of arguments (argv), not a shell string")
        if isinstance(command, list) and not command:
            raise ValueError("must not be empty")
        return command


class SplitsSection(_Section):
    manifest: str = "splits.json"


class GateSection(_Section):
    alpha: float = Field(default=0.05, gt=0, lt=1)
    min_effect: float = Field(default=0.0, ge=-1, le=1)
    min_instances: int = Field(default=30, ge=1)
    method: Literal["bootstrap", "sign"] = "bootstrap"
    resamples: int = Field(default=10_000, ge=100)
    seed: int = 0


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


class Config(_Section):
    harness: HarnessSection = Field(default_factory=HarnessSection)
    evaluator: EvaluatorSection = Field(default_factory=EvaluatorSection)
    splits: SplitsSection = Field(default_factory=SplitsSection)
    gate: GateSection = Field(default_factory=GateSection)
    scrub: ScrubSection = Field(default_factory=ScrubSection)
    proposer: ProposerSection = Field(default_factory=CommandProposerSection)
    # Whether harnessgit.toml exists; commands that need a real setup refuse without it.
    present: bool = Field(default=False, exclude=True)

    def scrub_patterns(self) -> list[str]:
        return (list(DEFAULT_PATTERNS) if self.scrub.defaults else []) + self.scrub.patterns


def load_config(root: Path) -> Config:
    path = root / CONFIG_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return Config()
    except OSError as exc:
        raise ConfigError(f"cannot read {CONFIG_FILE}: {exc.strerror}") from None
    return parse_config(raw)


def parse_config(raw: bytes) -> Config:
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{CONFIG_FILE} is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{CONFIG_FILE} is not valid TOML: {exc}") from None
    if "present" in data:
        raise ConfigError(f"{CONFIG_FILE}: present: unknown key")
    try:
        return Config.model_validate({**data, "present": True})
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
