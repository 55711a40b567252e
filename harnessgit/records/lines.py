"""Records on note lines: one compact JSON object a line, written by `dump_record` and
read strictly by `parse_note` / `parse_record` (docs/design.md, "Reading records
strictly"). A line is validated by the model its ``"kind"`` key names (each model built
on first use); a line whose kind that cannot tell is decided by the union of every
kind. What cannot be read is skipped with one warning per kind of problem (`Skipped`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import logging
import re
from typing import Any

from pydantic import TypeAdapter, ValidationError

from harnessgit.canonical import dumps_canonical
from harnessgit.records import _KINDS, SCHEMA_VERSION, AnyRecord, Record
from harnessgit.render import listing, plural

log = logging.getLogger("harnessgit")


@functools.cache
def _any_record() -> TypeAdapter[Record]:
    """Every kind at once (building it builds every model): only for a line whose kind
    `_kind_of` cannot tell."""
    return TypeAdapter(AnyRecord)


# A "kind" key with a string value. Inside a JSON string a quote is always escaped, so a
# match is a real key; no field of any record nests a "kind" key with a string value, so
# in a valid record the only match is its own kind.
_KIND_KEY = re.compile(rb'"kind"\s*:\s*"([a-z-]+)"')


def _kind_of(line: bytes) -> type[Record] | None:
    """The model of the record on ``line`` by its "kind" key, read without parsing the
    JSON; None when that is not certain (no such key, an escaped one, or two of them),
    and then the union of every kind decides, as pydantic's discriminator would."""
    found = _KIND_KEY.findall(line)
    return _KINDS.get(found[0].decode("ascii")) if len(found) == 1 else None


def dump_record(record: Record) -> bytes:
    data = record.model_dump(mode="json", exclude_none=True)
    return dumps_canonical(data).encode("utf-8")


@dataclasses.dataclass
class Skipped:
    """What a read of notes left out, by kind of problem: the reader warns once per
    kind, naming the notes, not once per line (a read of thousands of notes would
    bury the one warning that matters)."""

    source: str = ""  # the notes ref read
    # (what was skipped, why) -> the note of each line skipped
    found: dict[tuple[str, str], list[str]] = dataclasses.field(default_factory=dict)

    def add(self, problem: tuple[str, str], where: str) -> None:
        self.found.setdefault(problem, []).append(where)

    def warnings(self) -> list[str]:
        said = []
        for (what, why), places in self.found.items():
            named = listing(sorted({place for place in places if place}))
            at = f" in {self.source}" if self.source else ""
            on = f" on {named}" if named else ""
            said.append(
                f"skipped {plural(len(places), 'record')} {what}{at}{on}" + (f" ({why})" if why else "")
            )
        return said


def parse_note(text: bytes, where: str = "", skipped: Skipped | None = None) -> list[Record]:
    """Every record of one note, skipping blank lines and what cannot be read: into
    ``skipped``, or, without one, with a warning per kind of problem."""
    collected = Skipped() if skipped is None else skipped
    records = []
    for line in text.splitlines():
        if line.strip():
            record = parse_record(line, where, collected)
            if record is not None:
                records.append(record)
    if skipped is None:
        warn_skipped(collected)
    return records


def parse_record(line: bytes, where: str = "", skipped: Skipped | None = None) -> Record | None:
    """One record, validated strictly (no string for a number, no NaN, every range
    checked); None when it cannot be read, noted in ``skipped`` (else warned)."""
    # Validated by its own model, so that only the kinds a command reads are ever built;
    # a line of another kind than its key says fails there as it fails the union.
    cls = _kind_of(line)
    try:
        if cls is not None:
            return cls.model_validate_json(line, strict=True)
        return _any_record().validate_json(line, strict=True)
    except ValidationError:
        pass
    record, problem = _parse_tolerant(line)
    if problem is not None:
        collected = Skipped() if skipped is None else skipped
        collected.add(problem, where)
        if skipped is None:
            warn_skipped(collected)
    return record


def warn_skipped(skipped: Skipped) -> None:
    """One warning per kind of problem a read skipped."""
    for warning in skipped.warnings():
        log.warning("%s", warning)


def _parse_tolerant(line: bytes) -> tuple[Record | None, tuple[str, str] | None]:
    """The record, dropping fields this version does not know; or what is wrong with it."""
    try:
        data: Any = json.loads(line)
    except ValueError:
        return None, ("of invalid JSON", "")
    if not isinstance(data, dict):
        return None, ("other than JSON objects", "")
    version, kind = data.get("v"), data.get("kind")
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        why = f"a newer harnessgit wrote them; this one reads versions up to {SCHEMA_VERSION}"
        return None, (f"of schema version {version}", why)
    cls = _KINDS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        return None, (f"of unknown kind {str(kind)[:40]!r}", "")
    known = {key: value for key, value in data.items() if key in cls.model_fields}
    try:
        # Through JSON again, so that strict mode reads the timestamp from its string
        # and refuses NaN and Infinity as the first attempt did.
        return cls.model_validate_json(json.dumps(known), strict=True), None
    except ValidationError as exc:
        return None, ("with an impossible value", f"{kind} {_first_error(exc)}")


def _first_error(exc: ValidationError) -> str:
    """The first error, without list positions (scores.3 and scores.7 are one kind of problem)."""
    first = exc.errors(include_url=False)[0]
    field = ".".join(str(part) for part in first["loc"] if not isinstance(part, int))
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{field}: {message}" if field else message
