"""Canonical JSON: the one way harnessgit writes JSON that is hashed or stored.

Sorted keys, no insignificant whitespace, UTF-8 text as it is, and no NaN or Infinity
(Python writes them by default, and they are not JSON: another reader would refuse the
record, or two writers would hash one value two ways). Records, evidence lines, the
evaluator fingerprint, the split manifest hash and the GEPA importer's run id all come
from `dumps_canonical`; `loads_strict` is its reading side. Nothing here imports harnessgit.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def loads_strict(text: str | bytes) -> Any:
    """json.loads that refuses NaN and Infinity, which Python accepts by default."""
    return json.loads(text, parse_constant=_reject_constant)


def dumps_canonical(value: Any) -> str:
    """One line of canonical JSON; ValueError on NaN or Infinity."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_canonical(value: Any) -> str:
    """The sha256 (hex) of ``value``'s canonical JSON: the key of a derived cache, the
    digest of the facts a verdict depends on."""
    return hashlib.sha256(dumps_canonical(value).encode("utf-8")).hexdigest()
