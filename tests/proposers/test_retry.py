from __future__ import annotations

import random

import pytest

from harnessgit.proposers.retry import MAX_BACKOFF, backoff, is_retryable, retry_after

NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


@pytest.mark.parametrize(
    ("headers", "seconds"),
    [
        ({"retry-after": "2"}, 2.0),
        ({"retry-after": "0.5"}, 0.5),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after": "Thu, 01 Jan 2026 00:00:30 GMT"}, 30.0),
        ({"retry-after": "Wed, 31 Dec 2025 23:59:00 GMT"}, 0.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "-3"}, None),
        ({"retry-after": "inf"}, None),
        ({}, None),
    ],
)
def test_retry_after(headers: dict[str, str], seconds: float | None) -> None:
    assert retry_after(headers, NOW) == seconds


def test_backoff_doubles_with_jitter_up_to_the_cap() -> None:
    rng = random.Random(1)
    for retry, base in ((1, 0.5), (2, 1.0), (3, 2.0), (5, 8.0), (50, MAX_BACKOFF)):
        for _ in range(20):
            assert 0.75 * base <= backoff(retry, rng) <= base


@pytest.mark.parametrize(
    ("status", "retryable"),
    [
        (408, True),
        (409, True),
        (429, True),
        (500, True),
        (503, True),
        (400, False),
        (401, False),
        (404, False),
    ],
)
def test_is_retryable(status: int, retryable: bool) -> None:
    assert is_retryable(status) is retryable
