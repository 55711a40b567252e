"""The verdicts of the rules that read one version of a file alone, judged once.

What a version is under the cached rules (`RuleSpec.cached`: length, format,
duplication) depends only on its path, kind, tokenizer and text, and beyond one process
on the settings and harnessgit's rules: `checks.core` asks `cached_state` for them, which
keeps them for the process and, while `keep_verdicts` holds a table (the history audit's
`candidates.history_verdicts`), reads and adds to that table too.
"""

from __future__ import annotations

# hashlib.blake2b is _blake2's (always built); importing hashlib would also load
# OpenSSL's libcrypto for its other hashes, about 5 ms of every `check FILE`.
from _blake2 import blake2b
from collections.abc import Iterator, MutableMapping
from contextlib import contextmanager

from harnessgit.check_findings import Finding, Rule
from harnessgit.checks.rules import Version, judge

# What a version of a file is under the rules that read it alone and are cached
# (`RuleSpec.cached`: length, format, duplication) depends only on its path, kind,
# tokenizer and text (and, beyond one process, on the settings and harnessgit's rules:
# the fingerprint of the table `keep_verdicts` is given): judged once per process. A
# history audit meets each version twice (after the commit that wrote it and before the
# next one that changes it), and a ratchet reads the previous side again.
_JUDGED: dict[str, list[Finding]] = {}
_JUDGED_MAX = 12288  # keys are digests, not the text: a few MB at most
# A table kept between processes (the history audit's, `candidates.history_verdicts`):
# read before judging, and given every verdict judged while it is set.
_KEPT: list[MutableMapping[str, list[Finding]]] = []


@contextmanager
def keep_verdicts(table: MutableMapping[str, list[Finding]]) -> Iterator[None]:
    """While in the block, the cached rules' verdicts are read from ``table`` and every
    new one is added to it, under `verdict_key`. The caller keeps one table per
    fingerprint of the settings and the rules' code (a verdict holds for that only)."""
    _KEPT.append(table)
    try:
        yield
    finally:
        _KEPT.remove(table)


def verdict_key(rule: Rule, facts: tuple[str, str, str, str, bytes]) -> str:
    """The key of ``rule``'s verdict on one version: its path, kind name, kind limits,
    tokenizer and text digest (``facts``), hashed to 32 hex digits."""
    path, name, kind, tokenizer, digest = facts
    spelt = "\0".join((rule, path, name, kind, tokenizer, digest.hex()))
    return blake2b(spelt.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def cached_state(rule: Rule, facts: tuple[str, str, str, str, bytes], version: Version) -> list[Finding]:
    """``rule``'s findings on ``version`` (whose path, kind, tokenizer and digest are
    ``facts``), judged once per process (and once per kept table)."""
    key = verdict_key(rule, facts)
    known = _JUDGED.get(key)
    if known is None and _KEPT:
        known = _KEPT[-1].get(key)
    if known is None:
        known = list(judge(rule).state(version))
    for table in _KEPT:
        if key not in table:
            table[key] = known
    if key not in _JUDGED:
        if len(_JUDGED) >= _JUDGED_MAX:
            del _JUDGED[next(iter(_JUDGED))]
        _JUDGED[key] = known
    return known


def digest(text: str) -> bytes:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
