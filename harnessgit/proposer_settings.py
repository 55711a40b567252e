"""The ``[proposer]`` section of harnessgit.toml, one model per kind.

``kind`` selects the model; each kind accepts only its own keys, so a key meant
for another kind (``model`` under ``kind = "command"``) is an error that names it
instead of being ignored. Without a ``[proposer]`` section the kind is "command"
with no command: commands that need a proposer refuse with a message saying
what to set (`make_proposer`).

Imported by `harnessgit.config`; of harnessgit it imports only `harnessgit.names`. It lives
outside the proposers package so that reading the config never imports the proposers.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    field_validator,
)

from harnessgit.names import argv_value

KINDS = ("command", "openai")
DEFAULT_KIND = "command"


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


class CommandProposerSection(_Section):
    """Run ``command`` (argv, never a shell): JSON request on stdin, JSON answer on stdout."""

    kind: Literal["command"] = "command"
    command: list[str] | None = None
    timeout: float = Field(default=600.0, gt=0)  # seconds; the command is killed after it

    _argv = field_validator("command", mode="before")(argv_value)


class OpenAIProposerSection(_Section):
    """Any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, Ollama, LM Studio)."""

    kind: Literal["openai"] = "openai"
    model: str = Field(min_length=1)
    base_url: str = "https://api.openai.com/v1"
    # The NAME of the environment variable holding the key: keys stay out of the
    # repository. May be unset only when base_url is a loopback address.
    api_key_env: str = Field(default="OPENAI_API_KEY", min_length=1)
    timeout: float = Field(default=120.0, gt=0)  # seconds per HTTP request
    max_retries: int = Field(default=4, ge=0, le=20)  # on 429, 5xx, timeouts, connection errors
    # Longest server-requested wait (Retry-After) to honour; a longer one fails
    # at once instead of burning retries against a quota that will not reset soon.
    max_retry_wait: float = Field(default=60.0, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)  # None: the server's default
    price_per_1k_input: float | None = Field(default=None, ge=0)  # USD, for cost records
    price_per_1k_output: float | None = Field(default=None, ge=0)

    @field_validator("base_url")
    @classmethod
    def _url(cls, url: str) -> str:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError(f"{url!r} is not an http(s) URL")
        return url


_SECTIONS: Mapping[str, type[_Section]] = MappingProxyType(
    {
        "command": CommandProposerSection,
        "openai": OpenAIProposerSection,
    }
)


def _kind_of(value: Any) -> str | None:
    if isinstance(value, dict):
        kind = value.get("kind", DEFAULT_KIND)
        return kind if isinstance(kind, str) and kind in _SECTIONS else None
    return getattr(value, "kind", None)


def _parse(value: Any) -> Any:
    """Validate against the selected kind's model, naming the key on failure.

    Left to the union, pydantic would name the tag in the location
    ("proposer.openai.timeout") and call a key of another kind merely "extra".
    """
    if isinstance(value, _Section):
        return value
    if not isinstance(value, dict):
        raise ValueError("must be a table: [proposer]")
    kind = _kind_of(value)
    if kind is None:
        return value  # an unknown kind: the discriminator's error lists the kinds
    try:
        return _SECTIONS[kind].model_validate(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        key = ".".join(str(part) for part in first["loc"])
        if first["type"] == "extra_forbidden":
            hint = "" if "kind" in value else f' (no kind given; the default is "{DEFAULT_KIND}")'
            raise ValueError(f'{key}: unknown key for kind = "{kind}"{hint}') from None
        message = first["msg"].removeprefix("Value error, ")
        raise ValueError(f"{key}: {message}") from None


ProposerSection = Annotated[
    Annotated[CommandProposerSection, Tag("command")] | Annotated[OpenAIProposerSection, Tag("openai")],
    Discriminator(
        _kind_of,
        custom_error_type="invalid_kind",
        custom_error_message="kind must be one of " + ", ".join(f'"{kind}"' for kind in KINDS),
    ),
    BeforeValidator(_parse),
]
