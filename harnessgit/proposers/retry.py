"""When to retry a chat-completions request, and how long to wait. Pure: no I/O.

The openai client can retry by itself, but it neither reports how many retries
it made (the evidence records them) nor lets a caller cap a server-requested
wait, so the proposer runs its own loop with the client's retries off. The
rules follow the openai client's (`_base_client.py`): retry on 408, 409, 429,
5xx, timeouts and connection errors; honour ``retry-after-ms`` / ``Retry-After``
(seconds or an HTTP date); otherwise back off exponentially from 0.5 s, doubling,
up to 8 s, minus up to 25 % jitter so that parallel workers do not retry in step.
"""

from __future__ import annotations

import email.utils
import math
import random
from collections.abc import Mapping

RETRYABLE_STATUS = frozenset({408, 409, 429})
INITIAL_BACKOFF = 0.5
MAX_BACKOFF = 8.0


def is_retryable(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


def retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds the server asked us to wait, or None if it did not say (or said nonsense).

    ``now`` is the current Unix time, for the HTTP-date form of Retry-After.
    """
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    value = headers.get("retry-after")
    if not value:
        return None
    parsed = email.utils.parsedate_tz(value)
    if parsed is None:
        return None
    return max(0.0, email.utils.mktime_tz(parsed) - now)


def backoff(retry: int, rng: random.Random) -> float:
    """The wait before retry number ``retry`` (1 for the first) when the server gave none."""
    base = min(INITIAL_BACKOFF * 2.0 ** min(retry - 1, 30), MAX_BACKOFF)
    return base * (1 - 0.25 * rng.random())
