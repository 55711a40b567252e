"""Scrubbing secrets out of evidence before it is written.

Notes are pushed to shared remotes, and trajectories routinely contain the
environment an agent saw: API keys, bearer tokens, cloud credentials. Every
string in evidence passes through `scrub` before it reaches git.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

REDACTED = "[REDACTED]"

DEFAULT_PATTERNS = [
    # Private key blocks (PEM), whole.
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY-----",
    # OpenAI / Anthropic style keys: sk-..., sk-proj-..., sk-ant-...
    r"\bsk-[A-Za-z0-9_\-]{16,}",
    # Bearer tokens in headers or logs.
    r"(?i)\bbearer\s+[A-Za-z0-9_\-\.=~+/]{16,}",
    # AWS access key ids and secret keys written as assignments.
    r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    r"(?i)aws_secret_access_key\s*[=:]\s*[\"']?[A-Za-z0-9/+=]{40}",
    # GitHub, Slack and Google API tokens.
    r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
    r"\bxox[abposr]-[A-Za-z0-9\-]{10,}",
    r"\bAIza[0-9A-Za-z_\-]{35}\b",
]


def _scoped(pattern: str) -> str:
    """Move a leading global flag group such as ``(?i)`` into a scoped one, ``(?i:...)``,
    which is allowed inside an alternation."""
    found = re.match(r"\(\?([aiLmsux]+)\)", pattern)
    return f"(?{found.group(1)}:{pattern[found.end() :]})" if found else pattern


class Scrubber:
    def __init__(self, patterns: Iterable[str] = DEFAULT_PATTERNS) -> None:
        # One alternation, one pass per string: trajectories hold tens of thousands
        # of strings, and each pattern keeps its own inline flags inside its group.
        sources = list(patterns)
        self.pattern = re.compile("|".join(f"(?:{_scoped(p)})" for p in sources)) if sources else None

    def text(self, value: str) -> str:
        if self.pattern is None:
            return value
        return self.pattern.sub(REDACTED, value)

    def value(self, value: Any) -> Any:
        """A copy of a JSON value with every string scrubbed (keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(key)): self.value(item) for key, item in value.items()}
        return value
