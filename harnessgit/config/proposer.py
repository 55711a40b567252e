"""The ``[proposer]`` section of harnessgit.toml, one dataclass per kind.

``kind`` selects the dataclass; each kind accepts only its own keys, so a key meant
for another kind (``model`` under ``kind = "command"``) is an error that names it
instead of being ignored. Without a ``[proposer]`` section the kind is "command"
with no command: commands that need a proposer refuse with a message saying
what to set (`harnessgit.proposers.make_proposer`).

It lives in the config package, not in `harnessgit.proposers`, so that reading the
configuration never imports the proposers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlsplit

from harnessgit.checkconfig.reader import MAX_BYTES, SettingError, check_function_spec, read_argv, read_table
from harnessgit.processes.environment import check_names

DEFAULT_KIND = "command"


@dataclass(frozen=True)
class CommandProposerSection:
    """Run ``command`` (argv, never a shell): JSON request on stdin, JSON answer on stdout."""

    kind: Literal["command"] = "command"
    command: list[str] | None = field(default=None, metadata={"read": read_argv})
    timeout: float = field(default=600.0, metadata={"gt": 0})  # seconds; the command is killed after it
    # Its answer on standard output, at most: a harness file's text, JSON-escaped.
    max_output_bytes: int = field(default=8 * 1024 * 1024, metadata={"ge": 1024, "le": MAX_BYTES})
    # Environment variables (names or globs) passed to it besides the defaults (docs/proposers.md).
    env: list[str] = field(default_factory=list, metadata={"check": check_names})


def _http_url(url: str) -> None:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{url!r} is not an http(s) URL")


@dataclass(frozen=True, kw_only=True)
class OpenAIProposerSection:
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio)."""

    kind: Literal["openai"] = "openai"
    model: str = field(metadata={"nonempty": True})
    base_url: str = field(default="https://api.openai.com/v1", metadata={"check": _http_url})
    # The NAME of the environment variable holding the key: keys stay out of the
    # repository. May be unset only when base_url is a loopback address.
    api_key_env: str = field(default="OPENAI_API_KEY", metadata={"nonempty": True})
    timeout: float = field(default=120.0, metadata={"gt": 0})  # seconds per HTTP request
    # On 429, 5xx, timeouts and connection errors.
    max_retries: int = field(default=4, metadata={"ge": 0, "le": 20})
    # Longest server-requested wait (Retry-After) to honour; a longer one fails
    # at once instead of burning retries against a quota that will not reset soon.
    max_retry_wait: float = field(default=60.0, metadata={"gt": 0})
    temperature: float | None = field(default=None, metadata={"ge": 0, "le": 2})  # None: the server's
    price_per_1k_input: float | None = field(default=None, metadata={"ge": 0})  # USD, for cost records
    price_per_1k_output: float | None = field(default=None, metadata={"ge": 0})


@dataclass(frozen=True, kw_only=True)
class PythonProposerSection:
    """Call ``function`` (``package.module:function``, imported from the repository root)
    in harnessgit's own process: the command proposer's request and reply, as dicts."""

    kind: Literal["python"] = "python"
    function: str = field(metadata={"check": check_function_spec})


ProposerSection = CommandProposerSection | OpenAIProposerSection | PythonProposerSection

SECTIONS: Mapping[
    str, type[CommandProposerSection] | type[OpenAIProposerSection] | type[PythonProposerSection]
] = MappingProxyType(
    {"command": CommandProposerSection, "openai": OpenAIProposerSection, "python": PythonProposerSection}
)


def read_proposer(value: Any, key: str) -> ProposerSection:
    """The section of the kind ``value`` names, validated against that kind's keys only."""
    if isinstance(value, (CommandProposerSection, OpenAIProposerSection, PythonProposerSection)):
        return value
    if not isinstance(value, dict):
        raise SettingError(key, "must be a table")
    kind = value.get("kind", DEFAULT_KIND)
    cls = SECTIONS.get(kind) if isinstance(kind, str) else None
    if cls is None:
        kinds = ", ".join(f'"{name}"' for name in SECTIONS)
        raise SettingError(f"{key}.kind", f"must be one of {kinds}, not {kind!r}")
    try:
        return read_table(cls, value, key)
    except SettingError as exc:
        if exc.message != "unknown key":
            raise
        hint = "" if "kind" in value else f' (no kind given; the default is "{DEFAULT_KIND}")'
        raise SettingError(exc.key, f'unknown key for kind = "{kind}"{hint}') from None
