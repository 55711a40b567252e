"""Rendering results for people (text tables) and programs (--json).

Core functions return models; only this module decides how they look. JSON output
is `model_dump(mode="json")` of the documented models, indented, keys in model order.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel
from tabulate import tabulate


def to_json(value: BaseModel | Sequence[BaseModel] | dict[str, Any]) -> str:
    if isinstance(value, BaseModel):
        data: Any = value.model_dump(mode="json")
    elif isinstance(value, dict):
        data = value
    else:
        data = [item.model_dump(mode="json") for item in value]
    return json.dumps(data, indent=2, ensure_ascii=False)


def short(sha: str | None, width: int = 12) -> str:
    return sha[:width] if sha else "-"


def table(rows: list[list[Any]], headers: list[str]) -> str:
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
