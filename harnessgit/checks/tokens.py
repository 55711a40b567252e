"""Counting tokens: exactly with tiktoken (the optional ``tokens`` extra), else an estimate.

The estimate is characters divided by ``[checks] chars_per_token`` (default 4,
OpenAI's rule of thumb for English text), rounded up. It is labelled as an
estimate everywhere it is shown. Models tokenize differently, so even an exact
count is exact for one encoding only (``[checks] encoding``, default o200k_base).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol

from harnessgit.checkconfig.sections import ChecksSection
from harnessgit.errors import ConfigError


class Tokenizer(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def exact(self) -> bool: ...

    def count(self, text: str) -> int: ...


@dataclass(frozen=True)
class Estimate:
    """Tokens estimated from characters (no tokenizer installed or configured)."""

    chars_per_token: float = 4.0

    @property
    def name(self) -> str:
        return f"estimate: {self.chars_per_token:g} characters per token"

    @property
    def exact(self) -> bool:
        return False

    def count(self, text: str) -> int:
        return math.ceil(len(text) / self.chars_per_token)


@dataclass(frozen=True)
class Tiktoken:
    """Tokens counted by a tiktoken encoding (the `tokens` extra)."""

    encoding: Any  # a tiktoken.Encoding

    @property
    def name(self) -> str:
        return f"tiktoken {self.encoding.name}"

    @property
    def exact(self) -> bool:
        return True

    def count(self, text: str) -> int:
        # Special-token text such as "<|endoftext|>" in a prompt is counted as
        # plain text, not refused.
        return len(self.encoding.encode(text, disallowed_special=()))


def load_tokenizer(config: ChecksSection) -> tuple[Tokenizer, list[str]]:
    """The tokenizer the config asks for, and notes for the report when it fell back."""
    estimate = Estimate(config.chars_per_token)
    if config.tokenizer == "estimate":
        return estimate, []
    try:
        import tiktoken
    except ImportError:
        if config.tokenizer == "tiktoken":
            raise ConfigError(
                "checks.tokenizer is tiktoken but tiktoken is not installed: pip install 'harnessgit[tokens]'"
            ) from None
        return estimate, []
    try:
        return Tiktoken(tiktoken.get_encoding(config.encoding)), []
    except Exception as exc:  # an unknown encoding, or its file cannot be downloaded
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if config.tokenizer == "tiktoken":
            raise ConfigError(f"tiktoken cannot load encoding {config.encoding!r}: {reason}") from None
        return estimate, [f"tiktoken cannot load {config.encoding!r} ({reason}); token counts are estimates"]
