"""Rendering results for people (text) and programs (--json): the pieces every feature shares.

Every command's result is a frozen dataclass; its ``--json`` form is `jsonable` of it:
its fields in order, recursively, with records (pydantic models, the only other type a
result holds) dumped as they are stored. A field's metadata can shape that form:
``{"json": False}`` leaves it out (what only the text needs), ``{"json": "flatten"}``
merges its object into the parent's. A class's ``JSON_EXTRA`` names properties to add
(``CheckReport.failed``). docs/cli.md's field lists are made from the same classes
(`json_fields`; tests/test_docs.py keeps them equal).

Numbers for people: scores in [0, 1] are shown as points (0..100) by `points`, and a
missing value is always `EMPTY`. Nothing here imports pydantic or tabulate at import
time: `harnessgit check` renders through this module on every commit.
"""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

EMPTY = "-"  # a missing number, in every table and sentence


def jsonable(value: Any) -> Any:
    """``value`` as JSON data: dataclasses by field, records by their stored form."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for spec in dataclasses.fields(value):
            how = spec.metadata.get("json", True)
            if how is False:
                continue
            item = jsonable(getattr(value, spec.name))
            if how == "flatten":
                out.update(item)
            else:
                out[spec.name] = item
        for name in getattr(type(value), "JSON_EXTRA", ()):
            out[name] = jsonable(getattr(value, name))
        return out
    if hasattr(value, "model_dump"):  # a record (pydantic), without importing pydantic here
        return jsonable(value.model_dump(mode="json"))  # its strings came from others too
    if isinstance(value, Mapping):
        return {utf8(str(key)): jsonable(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(item) for item in value]
    if isinstance(value, datetime):
        return value.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    if isinstance(value, str):
        return utf8(value)
    return value


def to_json(value: Any) -> str:
    """Strict JSON: a NaN or an infinity is refused (ValueError; Python would print a
    bare ``NaN`` that JSON parsers reject), and the text is valid UTF-8 (`utf8`)."""
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False, allow_nan=False)


def utf8(text: str) -> str:
    """``text`` that encodes as UTF-8: bytes that were not UTF-8 (a file name or file
    content decoded with surrogateescape, as the store decodes what git prints) become
    U+FFFD, the replacement character. Replaced, not escaped: the escape of such a
    byte (``\\udcff``, a lone surrogate) is no character, and JSON parsers refuse it or
    replace it themselves. git keeps the exact bytes."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # a surrogate that is no escaped byte
            raw = text.encode("utf-8", "surrogatepass")
        return raw.decode("utf-8", "replace")
    return text


def json_fields(cls: Any, depth: int = 2) -> str:
    """The JSON fields of a result class, as docs/cli.md lists them: nested objects in
    braces, lists of objects in brackets, records by their kind."""
    return ", ".join(_field_names(cls, depth))


def _field_names(cls: Any, depth: int) -> list[str]:
    if _is_record(cls):
        return list(cls.model_fields)
    hints = typing.get_type_hints(cls)
    names = []
    for spec in dataclasses.fields(cls):
        how = spec.metadata.get("json", True)
        if how is False:
            continue
        if how == "flatten":
            names += _field_names(_unwrap(hints[spec.name])[0], depth)
        else:
            names.append(spec.name + _nested(hints[spec.name], depth))
    for name in getattr(cls, "JSON_EXTRA", ()):
        returned = typing.get_type_hints(getattr(cls, name).fget).get("return")
        names.append(name + _nested(returned, depth))
    return names


def _nested(hint: Any, depth: int) -> str:
    inner, listed = _unwrap(hint)
    if _is_record(inner):
        kind = inner.model_fields["kind"].default
        return f" [{kind} records]" if listed else f" ({kind} record)"
    if depth <= 1 or not dataclasses.is_dataclass(inner):
        return ""
    fields = ", ".join(_field_names(inner, depth - 1))
    return f" [{{{fields}}}]" if listed else f" {{{fields}}}"


def _is_record(cls: Any) -> bool:
    return isinstance(cls, type) and hasattr(cls, "model_fields") and "kind" in cls.model_fields


def _unwrap(hint: Any) -> tuple[Any, bool]:
    """The class a hint holds (optional and list wrappers removed), and whether it is a list."""
    listed = False
    while True:
        origin = typing.get_origin(hint)
        args = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        if origin in (typing.Union, types.UnionType) and len(args) == 1:
            hint = args[0]
        elif origin in (list, tuple, Sequence) and args:
            hint, listed = args[0], True
        else:
            return hint, listed


def short(sha: str | None, width: int = 12) -> str:
    return sha[:width] if sha else EMPTY


def table(rows: list[list[Any]], headers: list[str]) -> str:
    from tabulate import tabulate  # not at import: a clean `check` prints no table

    return tabulate(rows, headers=headers, tablefmt="simple", disable_numparse=True)


def size(nbytes: int) -> str:
    if nbytes < 1024:
        return f"{nbytes} B"
    if nbytes < 1024 * 1024:
        return f"{nbytes / 1024:.1f} KiB"
    return f"{nbytes / 1024 / 1024:.1f} MiB"


def changes(added: int | None, removed: int | None) -> str:
    if added is None or removed is None:
        return "binary"
    return f"+{added} -{removed}"


def points(value: float | None, signed: bool = True) -> str:
    """A score or score difference in [0, 1] as points (0..100), one decimal."""
    if value is None:
        return EMPTY
    return f"{value * 100:+.1f}" if signed else f"{value * 100:.1f}"


def chance_text(p: float) -> str:
    """A probability as people read it: "97%", "over 99%", "under 1%"."""
    if p > 0.995:
        return "over 99%"
    if p < 0.005:
        return "under 1%"
    return f"{p * 100:.0f}%"


def rough_points(value: float) -> str:
    """A size of effect in a sentence ("cannot see effects under 17 points"): whole
    points from 10 up, where a decimal would claim a precision the estimate lacks."""
    scaled = value * 100
    return f"{scaled:.0f}" if abs(scaled) >= 10 else f"{scaled:.1f}"


def mean_text(mean: float | None, se: float | None) -> str:
    """A mean in points with its standard error: ``85.0 ± 2.1``."""
    if mean is None:
        return EMPTY
    return points(mean, False) + (f" ± {se * 100:.1f}" if se is not None else "")


def p_text(value: float | None) -> str:
    return EMPTY if value is None else f"{value:.2g}" if value >= 0.001 else f"{value:.1e}"


def share(value: float | None) -> str:
    return EMPTY if value is None else f"{value * 100:.1f}%"


SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float], low: float = 0.0, high: float = 1.0) -> str:
    """Scores in [low, high] as one line of block characters, one per value: a picture
    where no script can run (a pull-request comment, a terminal)."""
    span = high - low
    steps = len(SPARKS) - 1
    return "".join(SPARKS[round(min(max((v - low) / span, 0.0), 1.0) * steps)] for v in values)


def plural(count: int, word: str) -> str:
    return f"{count} {word}" + ("" if count == 1 else "s")


def listing(items: list[str], kept: int = 3) -> str:
    """The first ``kept`` items, then how many more: "a, b, c and 4 more"."""
    more = f" and {len(items) - kept} more" if len(items) > kept else ""
    return ", ".join(items[:kept]) + more


QUOTED_CHARS = 80  # of a line that breaks a protocol, quoted in the one-line error


def quoted_start(line: str | bytes) -> str:
    """The start of an offending line (evaluator or proposer output) as a Python
    literal: cut to QUOTED_CHARS, control characters escaped, so that the error quoting
    it stays one line. The user's own program's output, shown to the user."""
    return repr(line[:QUOTED_CHARS]) + ("..." if len(line) > QUOTED_CHARS else "")
