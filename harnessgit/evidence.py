"""Evidence files: JSON lines of trajectories, critiques and reflective datasets."""

from __future__ import annotations

from collections import Counter
from typing import Any

from harnessgit.canonical import dumps_canonical, loads_strict
from harnessgit.errors import RecordError
from harnessgit.scrub import Scrubber

MAX_EVIDENCE_BYTES = 256 * 1024 * 1024


def parse_jsonl(data: bytes, name: str) -> list[Any]:
    if len(data) > MAX_EVIDENCE_BYTES:
        raise RecordError(f"{name}: larger than {MAX_EVIDENCE_BYTES // 2**20} MiB")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{name}: not UTF-8 (byte {exc.start})") from None
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(loads_strict(line))
        except ValueError as exc:
            raise RecordError(f"{name}: line {number} is not JSON ({exc})") from None
    if not items:
        raise RecordError(f"{name}: no JSON lines in it")
    return items


def encode_evidence(items: list[Any], scrubber: Scrubber) -> tuple[bytes, dict[str, int]]:
    """Scrubbed canonical JSON lines, and a count of items by their kind/type field."""
    kinds: Counter[str] = Counter()
    lines = []
    for item in items:
        clean = scrubber.value(item)
        if isinstance(clean, dict):
            kind = clean.get("kind", clean.get("type"))
            if isinstance(kind, str):
                kinds[kind] += 1
        lines.append(dumps_canonical(clean))
    return ("\n".join(lines) + "\n").encode("utf-8"), dict(kinds)
