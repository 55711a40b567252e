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
from harnessgit.names import argv_value
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
    # Schemas are built when Config is first validated, not at import: one build for
    # the whole tree instead of one per section class, and none for `--help`.
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


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


Severity = Literal["failure", "warning", "off"]
FileFormat = Literal["skill", "markdown", "tool-json", "none"]


class KindChecks(_Section):
    """The limits for one kind of harness file (docs/checks.md explains each key)."""

    paths: list[str] = Field(default_factory=list)
    format: FileFormat = "markdown"
    # "body" measures what follows the YAML frontmatter, as the Agent Skills spec does.
    measure: Literal["file", "body"] = "file"
    max_chars: int | None = Field(default=None, ge=1)
    max_lines: int | None = Field(default=None, ge=1)
    max_tokens: int | None = Field(default=None, ge=1)
    # ESPO (arXiv 2609.04197): prompts three times longer were not more accurate.
    growth_warn: float | None = Field(default=1.5, gt=1)
    growth_fail: float | None = Field(default=2.0, gt=1)
    # Growth and collapse ignore files smaller than this before the edit: doubling a
    # two-line prompt is not bloat.
    small_file_chars: int = Field(default=400, ge=0)
    # ACE (arXiv 2510.04618): 18,282 tokens rewritten to 122 in one step.
    collapse: bool = True
    collapse_min_size: float = Field(default=0.5, ge=0, le=1)
    collapse_min_kept_lines: float = Field(default=0.25, ge=0, le=1)
    collapse_min_kept_sections: float = Field(default=0.5, ge=0, le=1)
    duplication: bool = True
    max_duplicates: int = Field(default=0, ge=0)
    near_duplicate: float = Field(default=0.85, gt=0, le=1)  # Jaccard similarity of word sets
    # SkillOpt (arXiv 2605.23904): the accepted edits were few (1-4 per benchmark).
    max_hunks: int | None = Field(default=10, ge=1)
    max_changed_lines: int | None = Field(default=150, ge=1)

    @field_validator("paths")
    @classmethod
    def _globs(cls, paths: list[str]) -> list[str]:
        return HarnessSection._globs(paths)


# The built-in kinds, in the order a file is matched against them (user-defined kinds
# come first). Sources of the numbers are in docs/checks.md.
BUILTIN_KINDS: dict[str, dict[str, Any]] = {
    # Agent Skills specification: name/description frontmatter, body under 500 lines
    # and about 5,000 tokens.
    "skill": {
        "paths": ["**/SKILL.md"],
        "format": "skill",
        "measure": "body",
        "max_lines": 500,
        "max_tokens": 5000,
    },
    # Common guidance for AGENTS.md / CLAUDE.md: under ~200-300 lines.
    "agents": {"paths": ["**/AGENTS.md", "**/CLAUDE.md"], "max_lines": 300},
    # Tool descriptions travel with every request, like a prompt: the same cap.
    "tool": {"paths": ["tools/**/*.json"], "format": "tool-json", "max_chars": 5000, "duplication": False},
    # Decagon: production GEPA prompts grew past 5,000 characters; ~1,000 lost little.
    "prompt": {"paths": ["prompts/**"], "max_chars": 5000},
    # Harness files no kind claims (a custom [harness] paths glob): history rules only.
    "other": {"format": "none"},
}
_KIND_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


class SeverityOverrides(_Section):
    """Per-rule severity: "failure", "warning" or "off" instead of the rule's default."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True, defer_build=True)

    length: Severity | None = None
    growth: Severity | None = None
    collapse: Severity | None = None
    format: Severity | None = None
    duplication: Severity | None = None
    edit_size: Severity | None = Field(default=None, alias="edit-size")


def _builtin_kinds() -> dict[str, KindChecks]:
    return {name: KindChecks.model_validate(values) for name, values in BUILTIN_KINDS.items()}


class ChecksSection(_Section):
    # "auto": tiktoken when installed (the `tokens` extra), else the estimate below.
    tokenizer: Literal["auto", "estimate", "tiktoken"] = "auto"
    encoding: str = "o200k_base"
    # OpenAI's rule of thumb: one token is about 4 characters of English text.
    chars_per_token: float = Field(default=4.0, gt=0)
    # Larger files are not read at all (bounded memory): they fail the length rule.
    max_file_bytes: int = Field(default=1024 * 1024, ge=1)
    change_max_hunks: int | None = Field(default=25, ge=1)
    change_max_changed_lines: int | None = Field(default=400, ge=1)
    severity: SeverityOverrides = Field(default_factory=SeverityOverrides)
    kinds: dict[str, KindChecks] = Field(default_factory=_builtin_kinds)

    @field_validator("kinds", mode="before")
    @classmethod
    def _merge_builtin_kinds(cls, kinds: Any) -> Any:
        # A table such as [checks.kinds.skill] changes only the keys it names; a new
        # kind starts from the generic defaults and needs its own paths.
        if not isinstance(kinds, dict):
            return kinds
        merged: dict[str, Any] = {}
        for name, values in kinds.items():
            if name not in BUILTIN_KINDS:
                if not isinstance(name, str) or not _KIND_NAME.fullmatch(name):
                    raise ValueError(f"{name!r}: kind names use lowercase letters, digits and hyphens")
                if isinstance(values, dict) and not values.get("paths"):
                    raise ValueError(f"{name}: a new kind needs paths")
                merged[name] = values
        for name, defaults in BUILTIN_KINDS.items():
            values = kinds.get(name, {})
            merged[name] = {**defaults, **values} if isinstance(values, dict) else values
        return merged

    def globs(self) -> list[str]:
        return [glob for kind in self.kinds.values() for glob in kind.paths]


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


class Config(_Section):
    harness: HarnessSection = Field(default_factory=HarnessSection)
    evaluator: EvaluatorSection = Field(default_factory=EvaluatorSection)
    splits: SplitsSection = Field(default_factory=SplitsSection)
    gate: GateSection = Field(default_factory=GateSection)
    checks: ChecksSection = Field(default_factory=ChecksSection)
    scrub: ScrubSection = Field(default_factory=ScrubSection)
    evolve: EvolveSection = Field(default_factory=EvolveSection)
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
