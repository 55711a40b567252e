"""The ``[harness]`` and ``[checks]`` sections of harnessgit.toml, without pydantic.

`harnessgit check` runs in pre-commit hooks, on every commit, and should answer
for one file in well under 250 ms with the interpreter's start included. Importing
pydantic and building the config's schemas costs about 100 ms of that, so the two
sections `check` reads are plain frozen dataclasses, validated here from their own
annotations (`read_table`). `harnessgit.config.Config`, the pydantic model every
other command loads, embeds these same classes and calls the same validator: one
definition of each key and one set of error messages, whichever command reads the
file. `load_check_config` is the light reader `check` uses; it validates these two
sections and the names of the others, and leaves the rest of the file to the
commands that read it.
"""

from __future__ import annotations

import operator
import re
import sys
import types
import typing
from dataclasses import dataclass, field, fields, is_dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from harnessgit.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILE = "harnessgit.toml"

# The top-level tables of harnessgit.toml (harnessgit.config.Config has one field
# per name; tests/test_config.py keeps the two equal).
SECTION_NAMES = ("harness", "evaluator", "splits", "gate", "checks", "scrub", "evolve", "proposer")

# Where harness text usually lives; `harnessgit init` writes these unless told otherwise.
DEFAULT_HARNESS_PATHS = [
    "**/SKILL.md",
    "**/AGENTS.md",
    "**/CLAUDE.md",
    "prompts/**",
    "tools/**/*.json",
]

Severity = Literal["failure", "warning", "off"]
FileFormat = Literal["skill", "markdown", "tool-json", "none"]


# A field's metadata holds its rules: "ge", "gt", "le", "lt" (bounds), "nonempty",
# "check" (a function that raises ValueError), "key" (the TOML spelling, when it is
# not the field's name) and "read" (a reader of its own, for tables of tables).


class SettingError(ValueError):
    """A bad value, with the dotted key that holds it (``checks.kinds.skill.max_lines``)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.message = message


def _globs(paths: list[str]) -> None:
    for glob in paths:
        if not glob or glob.startswith("/") or "\\" in glob or ".." in glob.split("/"):
            raise ValueError(f"{glob!r} is not a repository-relative glob")


@dataclass(frozen=True)
class HarnessSection:
    paths: list[str] = field(
        default_factory=lambda: list(DEFAULT_HARNESS_PATHS), metadata={"nonempty": True, "check": _globs}
    )
    base: str = "main"


@dataclass(frozen=True)
class KindChecks:
    """The limits for one kind of harness file (docs/checks.md explains each key)."""

    paths: list[str] = field(default_factory=list, metadata={"check": _globs})
    format: FileFormat = "markdown"
    # "body" measures what follows the YAML frontmatter, as the Agent Skills spec does.
    measure: Literal["file", "body"] = "file"
    max_chars: int | None = field(default=None, metadata={"ge": 1})
    max_lines: int | None = field(default=None, metadata={"ge": 1})
    max_tokens: int | None = field(default=None, metadata={"ge": 1})
    # ESPO (arXiv 2609.04197): prompts three times longer were not more accurate.
    growth_warn: float | None = field(default=1.5, metadata={"gt": 1})
    growth_fail: float | None = field(default=2.0, metadata={"gt": 1})
    # Growth and collapse ignore files smaller than this before the edit: doubling a
    # two-line prompt is not bloat.
    small_file_chars: int = field(default=400, metadata={"ge": 0})
    # ACE (arXiv 2510.04618): 18,282 tokens rewritten to 122 in one step.
    collapse: bool = True
    collapse_min_size: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    collapse_min_kept_lines: float = field(default=0.25, metadata={"ge": 0, "le": 1})
    collapse_min_kept_sections: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    duplication: bool = True
    max_duplicates: int = field(default=0, metadata={"ge": 0})
    near_duplicate: float = field(
        default=0.85, metadata={"gt": 0, "le": 1}
    )  # Jaccard similarity of word sets
    # SkillOpt (arXiv 2605.23904): the accepted edits were few (1-4 per benchmark).
    max_hunks: int | None = field(default=10, metadata={"ge": 1})
    max_changed_lines: int | None = field(default=150, metadata={"ge": 1})


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


@dataclass(frozen=True)
class SeverityOverrides:
    """Per-rule severity: "failure", "warning" or "off" instead of the rule's default."""

    length: Severity | None = None
    growth: Severity | None = None
    collapse: Severity | None = None
    format: Severity | None = None
    duplication: Severity | None = None
    edit_size: Severity | None = field(default=None, metadata={"key": "edit-size"})


def _read_kinds(kinds: Any, key: str) -> dict[str, KindChecks]:
    # A table such as [checks.kinds.skill] changes only the keys it names; a new
    # kind starts from the generic defaults and needs its own paths.
    if not isinstance(kinds, dict):
        raise SettingError(key, "must be a table")
    merged: dict[str, KindChecks] = {}
    for name, values in kinds.items():
        if name in BUILTIN_KINDS:
            continue
        if not _KIND_NAME.fullmatch(name):
            raise SettingError(key, f"{name!r}: kind names use lowercase letters, digits and hyphens")
        if isinstance(values, dict) and not values.get("paths"):
            raise SettingError(key, f"{name}: a new kind needs paths")
        merged[name] = read_table(KindChecks, values, f"{key}.{name}")
    for name, defaults in BUILTIN_KINDS.items():
        values = kinds.get(name, {})
        if not isinstance(values, dict):
            raise SettingError(f"{key}.{name}", "must be a table")
        merged[name] = read_table(KindChecks, {**defaults, **values}, f"{key}.{name}")
    return merged


def _builtin_kinds() -> dict[str, KindChecks]:
    return _read_kinds({}, "checks.kinds")


@dataclass(frozen=True)
class ChecksSection:
    # "auto": tiktoken when installed (the `tokens` extra), else the estimate below.
    tokenizer: Literal["auto", "estimate", "tiktoken"] = "auto"
    encoding: str = "o200k_base"
    # OpenAI's rule of thumb: one token is about 4 characters of English text.
    chars_per_token: float = field(default=4.0, metadata={"gt": 0})
    # Larger files are not read at all (bounded memory): they fail the length rule.
    max_file_bytes: int = field(default=1024 * 1024, metadata={"ge": 1})
    change_max_hunks: int | None = field(default=25, metadata={"ge": 1})
    change_max_changed_lines: int | None = field(default=400, metadata={"ge": 1})
    severity: SeverityOverrides = field(default_factory=SeverityOverrides)
    kinds: dict[str, KindChecks] = field(default_factory=_builtin_kinds, metadata={"read": _read_kinds})

    def globs(self) -> list[str]:
        return [glob for kind in self.kinds.values() for glob in kind.paths]


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
    present: bool = False  # whether harnessgit.toml exists


# ----- reading --------------------------------------------------------------------


def read_toml(root: Path) -> dict[str, Any] | None:
    """harnessgit.toml at ``root`` as TOML tables; None when there is no such file."""
    path = root / CONFIG_FILE
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise ConfigError(f"cannot read {CONFIG_FILE}: {exc.strerror}") from None
    return parse_toml(raw)


def parse_toml(raw: bytes) -> dict[str, Any]:
    try:
        data: dict[str, Any] = tomllib.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise ConfigError(f"{CONFIG_FILE} is not UTF-8") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{CONFIG_FILE} is not valid TOML: {exc}") from None
    return data


def check_sections(data: dict[str, Any]) -> tuple[HarnessSection, ChecksSection]:
    """Validate the top-level names and the [harness] and [checks] tables of parsed TOML."""
    try:
        for name in data:
            if name not in SECTION_NAMES:
                raise SettingError(name, "unknown key")
        harness = read_table(HarnessSection, data.get("harness", {}), "harness")
        checks = read_table(ChecksSection, data.get("checks", {}), "checks")
    except SettingError as exc:
        raise ConfigError(f"{CONFIG_FILE}: {exc}") from None
    return harness, checks


def load_check_config(root: Path) -> CheckConfig:
    """The [harness] and [checks] sections of ``root``/harnessgit.toml (defaults without one)."""
    data = read_toml(root)
    if data is None:
        return CheckConfig()
    harness, checks = check_sections(data)
    return CheckConfig(harness=harness, checks=checks, present=True)


_T = typing.TypeVar("_T")
_HINTS: dict[type, dict[str, Any]] = {}


def read_table(cls: type[_T], table: Any, key: str) -> _T:
    """An instance of the dataclass ``cls`` from a TOML table: every key known, every
    value of the annotated type and within its field's rules. Raises `SettingError`
    naming the dotted key of the first bad value."""
    if isinstance(table, cls):
        return table
    if not isinstance(table, dict):
        raise SettingError(key, "must be a table")
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    by_key = {spec.metadata.get("key", spec.name): spec for spec in fields(cls)}  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for name, value in table.items():
        spec = by_key.get(name)
        where = f"{key}.{name}" if key else name
        if spec is None:
            raise SettingError(where, "unknown key")
        rules = spec.metadata
        reader = rules.get("read")
        values[spec.name] = reader(value, where) if reader else _value(value, hints[spec.name], where)
        _apply_rules(values[spec.name], rules, where)
    return cls(**values)


def _value(value: Any, hint: Any, key: str) -> Any:
    if is_dataclass(hint):
        return read_table(hint, value, key)  # type: ignore[arg-type]
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        options = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if value is None and len(options) < len(typing.get_args(hint)):
            return None
        (hint,) = options  # every optional setting has one type besides None
        origin = typing.get_origin(hint)
    if origin is Literal:
        choices = typing.get_args(hint)
        if value not in choices or isinstance(value, bool):
            raise SettingError(key, f"must be one of {', '.join(repr(c) for c in choices)}, not {value!r}")
        return value
    if origin is list:
        (item,) = typing.get_args(hint)
        if not isinstance(value, list):
            raise SettingError(key, f"must be a list, not {_type_name(value)}")
        return [_value(element, item, f"{key}[{index}]") for index, element in enumerate(value)]
    if hint is bool:
        if not isinstance(value, bool):
            raise SettingError(key, f"must be true or false, not {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SettingError(key, f"must be an integer, not {value!r}")
        return value
    if hint is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise SettingError(key, f"must be a number, not {value!r}")
        return float(value)
    if hint is str:
        if not isinstance(value, str):
            raise SettingError(key, f"must be a string, not {value!r}")
        return value
    raise TypeError(f"{key}: no reader for {hint!r}")  # a programming error, not a user's


_BOUNDS = (
    ("ge", "at least", operator.ge),
    ("gt", "greater than", operator.gt),
    ("le", "at most", operator.le),
    ("lt", "less than", operator.lt),
)


def _apply_rules(value: Any, rules: typing.Mapping[str, Any], key: str) -> None:
    if value is None:
        return
    for rule, words, holds in _BOUNDS:
        if rule in rules and not holds(value, rules[rule]):
            raise SettingError(key, f"must be {words} {rules[rule]}, not {value!r}")
    if rules.get("nonempty") and not value:
        raise SettingError(key, "must not be empty")
    if "check" in rules:
        try:
            rules["check"](value)
        except ValueError as exc:
            raise SettingError(key, str(exc)) from None


def _type_name(value: Any) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean", dict: "a table"}.get(
        type(value), type(value).__name__
    )
