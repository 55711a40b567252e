"""Reading harnessgit.toml: TOML tables into frozen dataclasses, one rule set for every key.

Every section of the configuration is a plain frozen dataclass
(`harnessgit.checkconfig.sections`, `harnessgit.config.sections`,
`harnessgit.config.proposer`), read by `read_table` from its own annotations and the
metadata of its fields. There is one reader, so each key has one definition and each
error one wording, whichever command reads the file. It imports neither pydantic nor
anything heavy: `harnessgit check`, a pre-commit hook run on every commit, reads its
sections through it in a few milliseconds (docs/benchmarks.md).

Values are taken as typed, never coerced: a string is never a number, a float never
an integer, a boolean neither, and a number is finite.

A field's metadata holds its rules: "ge", "gt", "le", "lt" (bounds), "nonempty",
"check" (a function that raises ValueError), "key" (the TOML spelling, when it is not
the field's name), "read" (a reader of its own, for argv lists and tables of tables)
and "toml": False (not a TOML key at all, such as `Config.present`).
"""

from __future__ import annotations

import dataclasses
import math
import operator
import re
import sys
import types
import typing
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import Any, Literal

from harnessgit.confine import leads_out
from harnessgit.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

CONFIG_FILE = "harnessgit.toml"
# The largest size setting (max_output_bytes and the like): 2**63-1 was accepted, and a
# huge max_output_bytes removed the output cap it is there to keep (issue 28). Reading
# output costs about twice its size in memory: 1 GiB of it is 2 GB of RSS.
MAX_BYTES = 1024**3


class SettingError(ValueError):
    """A bad value, with the dotted key that holds it (``checks.kinds.skill.max_lines``)."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.message = message


def read_toml(root: Path) -> dict[str, Any] | None:
    """harnessgit.toml at ``root`` as TOML tables; None when there is no such file.

    A link leading out of the repository is refused: a cloned repository's
    ``harnessgit.toml -> /dev/zero`` ran every command, the pre-commit hook included,
    out of memory (issue 15)."""
    path = root / CONFIG_FILE
    target = leads_out(root, path)
    if target is not None:
        raise ConfigError(f"{CONFIG_FILE} leads out of the repository through a symbolic link (to {target})")
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
    except RecursionError:
        # tomllib parses nested arrays and inline tables by recursion: 5,000 levels
        # gave a 3,000-line traceback and exit 1, "the check failed", to the
        # pre-commit hook (issue 28). No setting nests more than three levels.
        raise ConfigError(f"{CONFIG_FILE} nests arrays or tables too deeply to read") from None
    return data


# ``package.module:function``, what `[evaluator] python` and `[proposer] function` name.
_FUNCTION_SPEC = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*:[A-Za-z_]\w*")


def check_function_spec(spec: str) -> None:
    if not _FUNCTION_SPEC.fullmatch(spec):
        raise ValueError(f"must be 'package.module:function', not {spec!r}")


_T = typing.TypeVar("_T")
_HINTS: dict[type, dict[str, Any]] = {}


def read_table(
    cls: type[_T],
    table: Any,
    key: str,
    *,
    only: Mapping[str, None] | None = None,
    known: Collection[str] = (),
) -> _T:
    """An instance of the dataclass ``cls`` from a TOML table: every key known, every
    value of the annotated type and within its field's rules, every required key
    present. Raises `SettingError` naming the dotted key of the first bad value.

    With ``only``, keys outside it are checked to be known but not read (their
    fields keep their defaults); ``known``: more keys that are known, and not read
    (`harnessgit check` reads two sections of the file, and knows the others' names).
    """
    if isinstance(table, cls):
        return table
    if not isinstance(table, dict):
        raise SettingError(key, "must be a table")
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = typing.get_type_hints(cls)
    specs = [spec for spec in dataclasses.fields(cls) if spec.metadata.get("toml", True)]  # type: ignore[arg-type]
    by_key = {spec.metadata.get("key", spec.name): spec for spec in specs}
    values: dict[str, Any] = {}
    for name, value in table.items():
        spec = by_key.get(name)
        where = f"{key}.{name}" if key else name
        if spec is None:
            if name in known:
                continue
            raise SettingError(where, "unknown key")
        if only is not None and name not in only:
            continue
        reader = spec.metadata.get("read")
        values[spec.name] = reader(value, where) if reader else read_value(value, hints[spec.name], where)
        _apply_rules(values[spec.name], spec.metadata, where)
    for spec in specs:
        required = spec.default is dataclasses.MISSING and spec.default_factory is dataclasses.MISSING
        if required and spec.name not in values:
            name = spec.metadata.get("key", spec.name)
            raise SettingError(f"{key}.{name}" if key else name, "is required")
    return cls(**values)


def read_value(value: Any, hint: Any, key: str) -> Any:
    """``value`` as the annotated type ``hint`` (a dataclass, an optional, a Literal,
    a list or a scalar); a `SettingError` naming ``key`` otherwise."""
    if dataclasses.is_dataclass(hint):
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
        return [read_value(element, item, f"{key}[{index}]") for index, element in enumerate(value)]
    return _scalar(value, hint, key)


def _scalar(value: Any, hint: Any, key: str) -> Any:
    if hint is bool:
        if not isinstance(value, bool):
            raise SettingError(key, f"must be true or false, not {value!r}")
        return value
    if hint is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise SettingError(key, f"must be an integer, not {value!r}")
        return value
    if hint is float:
        return _finite(value, key)
    if hint is str:
        if not isinstance(value, str):
            raise SettingError(key, f"must be a string, not {value!r}")
        return value
    raise TypeError(f"{key}: no reader for {hint!r}")  # a programming error, not a user's


def _finite(value: Any, key: str) -> float:
    # TOML reads 1e400 as infinity, and `timeout = inf` meant no timeout at all; NaN
    # fails every bound silently. A number is finite, or it is refused (issue 15).
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SettingError(key, f"must be a number, not {value!r}")
    try:
        number = float(value)
    except OverflowError:  # an integer of hundreds of digits
        raise SettingError(key, "must be a finite number, not an integer beyond 1.8e308") from None
    if not math.isfinite(number):
        raise SettingError(key, f"must be a finite number, not {number!r}")
    return number


def read_argv(value: Any, key: str) -> list[str]:
    """A command as an argv list: never a shell string, never empty."""
    if isinstance(value, str):
        raise SettingError(key, "must be a list of arguments (argv), not a shell string")
    if isinstance(value, list) and not value:
        raise SettingError(key, "must not be empty")
    argv: list[str] = read_value(value, list[str], key)
    return argv


_BOUNDS = (
    ("ge", "at least", operator.ge),
    ("gt", "greater than", operator.gt),
    ("le", "at most", operator.le),
    ("lt", "less than", operator.lt),
)


def _apply_rules(value: Any, rules: Mapping[str, Any], key: str) -> None:
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
