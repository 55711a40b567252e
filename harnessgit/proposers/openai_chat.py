"""The ``kind = "openai"`` proposer: any OpenAI-compatible chat-completions endpoint.

OpenAI itself, vLLM, Ollama and LM Studio all speak POST {base_url}/chat/completions.
The `openai` package is an optional extra (``pip install 'harnessgit[openai]'``),
imported only when this proposer is built.

One call: render the prompt (`prompt`), send it with retries (`retry`), take the
edit from the reply's fenced block (`reply`), apply and check it (`edits.settle`).
A reply that hit the token limit (finish_reason "length") or whose block is
missing or unclosed is a `RejectedProposal`; an endpoint that keeps failing, a
refused key or an unknown model raises `ProposerFailed`, quoting the body the
server sent, scrubbed first: a 401's body often echoes the key it refused.
"""

from __future__ import annotations

import ipaddress
import os
import random
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from harnessgit.config.proposer import OpenAIProposerSection
from harnessgit.errors import ConfigError, ProposerFailed
from harnessgit.proposers import retry
from harnessgit.proposers.edits import EditRejected, rejected, settle
from harnessgit.proposers.prompt import render_messages
from harnessgit.proposers.protocol import ProposalRequest, ProposedEdit, RejectedProposal, Usage
from harnessgit.proposers.reply import parse_reply
from harnessgit.render import quoted_start
from harnessgit.scrub import DEFAULT_PATTERNS, Scrubber

if TYPE_CHECKING:
    import openai
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam

INSTALL_HINT = "pip install 'harnessgit[openai]'"
# Local servers (Ollama, LM Studio, vLLM without --api-key) need no key, but the
# openai client refuses an empty one.
_LOCAL_KEY = "not-needed"
_MESSAGE_CHARS = 300


def is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class OpenAIProposer:
    def __init__(
        self,
        section: OpenAIProposerSection,
        *,
        environ: Mapping[str, str] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], float] = time.time,
        rng: random.Random | None = None,
    ) -> None:
        self.section = section
        self.name = f"openai:{section.model}"
        self._where = f"{self.name} at {section.base_url}"
        self._sleep = sleep
        self._clock = clock
        self._wall_clock = wall_clock
        self._rng = rng or random.Random()
        key = _api_key(section, os.environ if environ is None else environ)
        # Before anything the server says is quoted: the key, whatever its shape, and
        # the built-in patterns (the evolve loop adds the [scrub] settings).
        self._scrubber = Scrubber(DEFAULT_PATTERNS, [] if key == _LOCAL_KEY else [key])
        self._client = _client(section, key)

    def propose(self, request: ProposalRequest) -> ProposedEdit | RejectedProposal:
        messages: list[ChatCompletionMessageParam] = [
            {"role": "system", "content": content}
            if role == "system"
            else {"role": "user", "content": content}
            for role, content in render_messages(request)
        ]
        started = self._clock()
        completion, retries = self._complete(messages)
        usage = self._usage(completion, self._clock() - started, retries)
        if not completion.choices:
            raise ProposerFailed(f"{self.name}: the endpoint answered without any choice")
        choice = completion.choices[0]
        raw = choice.message.content or ""
        common: dict[str, Any] = {"proposer": self.name, "raw_output": raw, "usage": usage}
        if choice.finish_reason in ("length", "content_filter"):
            why = "its output token limit" if choice.finish_reason == "length" else "the content filter"
            problem = EditRejected(
                "truncated", f'the reply was cut off by {why} (finish_reason "{choice.finish_reason}")'
            )
            return rejected(request, problem, **common)
        try:
            parsed = parse_reply(raw, request.form)
        except EditRejected as problem:
            return rejected(request, problem, **common)
        return settle(
            request, text=parsed.text, operations=parsed.operations, rationale=parsed.rationale, **common
        )

    def _complete(self, messages: list[ChatCompletionMessageParam]) -> tuple[ChatCompletion, int]:
        import openai

        options: dict[str, Any] = {}
        if self.section.temperature is not None:
            options["temperature"] = self.section.temperature
        retries = 0
        while True:
            try:
                completion = self._client.chat.completions.create(
                    model=self.section.model, messages=messages, **options
                )
                if not hasattr(completion, "choices"):  # e.g. a proxy's HTML page with status 200
                    raise ProposerFailed(
                        f"{self._where}: the answer is not a chat completion{self._start(completion)}"
                    )
                return completion, retries
            except openai.APIStatusError as exc:
                if not retry.is_retryable(exc.status_code):
                    raise ProposerFailed(self._refused(exc)) from None
                failure = f"HTTP {exc.status_code}: {self._first_line(exc.message)}"
                wait = retry.retry_after(exc.response.headers, self._wall_clock())
            except openai.APITimeoutError:
                failure = f"no answer within the {self.section.timeout:g} s timeout"
                wait = None
            except openai.APIConnectionError as exc:
                failure = f"cannot connect ({self._first_line(str(exc.__cause__ or exc))})"
                wait = None
            except openai.APIError as exc:  # e.g. a 200 whose body is not a completion
                raise ProposerFailed(f"{self._where}: {self._first_line(str(exc))}") from None
            if retries >= self.section.max_retries:
                attempts = f"{retries + 1} attempt" + ("s" if retries else "")
                raise ProposerFailed(f"{self._where}: {failure} (gave up after {attempts})")
            if wait is not None and wait > self.section.max_retry_wait:
                raise ProposerFailed(
                    f"{self._where}: {failure}; the server asks to wait {wait:g} s, "
                    f"more than max_retry_wait = {self.section.max_retry_wait:g}"
                )
            retries += 1
            self._sleep(retry.backoff(retries, self._rng) if wait is None else wait)

    def _refused(self, exc: openai.APIStatusError) -> str:
        status, detail = exc.status_code, self._first_line(exc.message)
        if status in (401, 403):
            return f"{self._where} refused the key in ${self.section.api_key_env} (HTTP {status}): {detail}"
        if status == 404:
            return f"{self._where}: HTTP 404 (check base_url and model): {detail}"
        return f"{self._where}: HTTP {status}: {detail}"

    def _first_line(self, text: str) -> str:
        """What the server said, scrubbed, on one line. Scrubbed before it is cut: a cut
        could leave a start of the key that no longer matches."""
        line = " ".join(self._scrubber.text(text).split())
        return line if len(line) <= _MESSAGE_CHARS else line[: _MESSAGE_CHARS - 3] + "..."

    def _start(self, answer: object) -> str:
        """The start of an answer that is not JSON: the openai package hands such a body
        over as text (a proxy's sign-in page, a load balancer's error page)."""
        return f": {quoted_start(self._scrubber.text(answer))}" if isinstance(answer, str) else ""

    def _usage(self, completion: ChatCompletion, latency: float, retries: int) -> Usage:
        tokens = completion.usage
        prompt_tokens = tokens.prompt_tokens if tokens else None
        completion_tokens = tokens.completion_tokens if tokens else None
        return Usage(
            model=completion.model or self.section.model,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            cost_usd=_cost(self.section, prompt_tokens, completion_tokens),
            latency_seconds=max(0.0, latency),
            retries=retries,
        )


def _cost(
    section: OpenAIProposerSection, prompt_tokens: int | None, completion_tokens: int | None
) -> float | None:
    """USD from the configured prices; None when a price or a token count is unknown
    (a made-up 0 would let a --max-cost budget pass unnoticed)."""
    prices = (section.price_per_1k_input, section.price_per_1k_output)
    if prices[0] is None or prices[1] is None or prompt_tokens is None or completion_tokens is None:
        return None
    return (prompt_tokens * prices[0] + completion_tokens * prices[1]) / 1000


def _api_key(section: OpenAIProposerSection, environ: Mapping[str, str]) -> str:
    key = environ.get(section.api_key_env, "")
    if key:
        return key
    if is_loopback(section.base_url):
        return _LOCAL_KEY
    raise ConfigError(
        f"proposer: the environment variable {section.api_key_env} (api_key_env) is not set; "
        f"export the API key for {section.base_url} in it"
    )


def _client(section: OpenAIProposerSection, api_key: str) -> openai.OpenAI:
    try:
        import openai
    except ImportError:
        raise ConfigError(f'proposer kind = "openai" needs the openai package: {INSTALL_HINT}') from None
    # max_retries=0: the retry loop is ours, see `retry`.
    return openai.OpenAI(api_key=api_key, base_url=section.base_url, timeout=section.timeout, max_retries=0)
