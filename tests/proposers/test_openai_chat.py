"""The openai proposer, run for real through the openai package against a
chat-completions server on 127.0.0.1 (stdlib http.server in a thread).

Nothing here contacts a non-loopback address: every base_url is the local
server (or a closed local port), proxies are switched off, and the one
non-loopback URL is only used to check that a missing key fails before any
request is made.
"""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from typing import Any

import pytest

from harnessgit.checkconfig.reader import read_table
from harnessgit.config.proposer import OpenAIProposerSection
from harnessgit.errors import ConfigError, ProposerFailed
from harnessgit.proposers.openai_chat import OpenAIProposer, is_loopback
from harnessgit.proposers.protocol import (
    Limits,
    ProposalRequest,
    ProposedEdit,
    ReflectiveExample,
    RejectedProposal,
)
from tests.proposers.chat_server import ChatServer, Reply, completion, error

SKILL = "# Demo\n\n1. Read the task.\n2. Answer it.\n"
REQUEST = ProposalRequest(
    component="skills/demo/SKILL.md",
    current_text=SKILL,
    examples=[
        ReflectiveExample(
            instance="q1",
            inputs={"question": "12 apples minus 5"},
            outputs="17",
            trajectory="step 1: added the numbers",
            feedback="Wrong operation: the question asks for a difference.",
            score=0.0,
        )
    ],
    limits=Limits(max_chars=2000),
)
DELTA_REPLY = (
    "The model added instead of subtracting; make it name the operation first.\n\n"
    "```json\n"
    '{"operations": [{"op": "insert_after", "anchor": "1. Read the task.", '
    '"text": "2. Name the operation the question asks for."}, '
    '{"op": "replace", "old": "2. Answer it.", "new": "3. Answer it."}]}\n'
    "```\n"
)
NEW_SKILL = "# Demo\n\n1. Read the task.\n2. Name the operation the question asks for.\n3. Answer it.\n"


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


@pytest.fixture
def server() -> Iterator[ChatServer]:
    chat = ChatServer()
    chat.thread.start()
    try:
        yield chat
    finally:
        chat.released.set()
        chat.httpd.shutdown()
        chat.httpd.server_close()
        chat.thread.join(timeout=5)


class Sleeps(list[float]):
    """Records the waits the retry loop asks for instead of sleeping them."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def make(server: ChatServer, sleeps: Sleeps | None = None, **keys: Any) -> OpenAIProposer:
    section = read_table(
        OpenAIProposerSection,
        {"model": "test-model", "base_url": server.base_url, "api_key_env": "TEST_KEY", **keys},
        "proposer",
    )
    return OpenAIProposer(
        section,
        environ={"TEST_KEY": "sk-test-0123456789abcdefXYZ"},
        sleep=Sleeps() if sleeps is None else sleeps,
    )


def test_success_applies_the_operations_and_records_usage(server: ChatServer) -> None:
    server.replies.append(Reply(completion(DELTA_REPLY)))
    proposer = make(server, temperature=0.2, price_per_1k_input=0.4, price_per_1k_output=1.6)
    outcome = proposer.propose(REQUEST)
    assert isinstance(outcome, ProposedEdit)
    assert outcome.new_text == NEW_SKILL
    assert outcome.component == "skills/demo/SKILL.md" and outcome.proposer == "openai:test-model"
    assert outcome.operations is not None and len(outcome.operations) == 2
    assert outcome.rationale.startswith("The model added instead of subtracting")
    assert outcome.raw_output == DELTA_REPLY
    usage = outcome.usage
    assert (usage.model, usage.prompt_tokens, usage.completion_tokens, usage.retries) == (
        "served-model-2026",
        1200,
        80,
        0,
    )
    assert usage.cost_usd == pytest.approx(1200 * 0.4 / 1000 + 80 * 1.6 / 1000)
    assert usage.latency_seconds > 0
    (seen,) = server.requests
    assert seen["path"] == "/v1/chat/completions"
    assert seen["headers"]["authorization"] == "Bearer sk-test-0123456789abcdefXYZ"
    body = seen["body"]
    assert body["model"] == "test-model" and body["temperature"] == 0.2
    assert [message["role"] for message in body["messages"]] == ["system", "user"]
    user = body["messages"][1]["content"]
    assert SKILL.strip() in user and "Wrong operation" in user and "at most 2000 characters" in user


def test_replace_form_takes_the_text_block(server: ChatServer) -> None:
    reply = "Say which operation.\n\n```text\n" + NEW_SKILL + "```\n"
    server.replies.append(Reply(completion(reply)))
    outcome = make(server).propose(REQUEST.model_copy(update={"form": "replace"}))
    assert isinstance(outcome, ProposedEdit) and outcome.new_text == NEW_SKILL
    assert outcome.operations is None and outcome.usage.cost_usd is None  # no prices configured
    assert "temperature" not in server.requests[0]["body"]


def test_429_then_success_honours_retry_after(server: ChatServer) -> None:
    server.replies += [error(429, "Rate limit reached", {"Retry-After": "1"}), Reply(completion(DELTA_REPLY))]
    sleeps = Sleeps()
    outcome = make(server, sleeps).propose(REQUEST)
    assert isinstance(outcome, ProposedEdit) and outcome.new_text == NEW_SKILL
    assert outcome.usage.retries == 1
    assert len(server.requests) == 2
    assert sleeps == [1.0]


def test_429_with_retry_after_zero_really_retries(server: ChatServer) -> None:
    server.replies += [error(429, "slow down", {"Retry-After": "0"}), Reply(completion(DELTA_REPLY))]
    section = OpenAIProposerSection(model="m", base_url=server.base_url, api_key_env="TEST_KEY")
    outcome = OpenAIProposer(section, environ={"TEST_KEY": "k"}).propose(REQUEST)  # the real time.sleep
    assert isinstance(outcome, ProposedEdit) and outcome.usage.retries == 1 and len(server.requests) == 2


def test_5xx_then_success_backs_off(server: ChatServer) -> None:
    server.replies += [error(503, "overloaded"), error(500, "oops"), Reply(completion(DELTA_REPLY))]
    sleeps = Sleeps()
    outcome = make(server, sleeps).propose(REQUEST)
    assert isinstance(outcome, ProposedEdit) and outcome.usage.retries == 2
    assert len(server.requests) == 3
    # Exponential from 0.5 s with up to 25 % jitter: (0.375..0.5], then (0.75..1.0].
    assert 0.375 <= sleeps[0] <= 0.5 and 0.75 <= sleeps[1] <= 1.0


def test_5xx_forever_fails_after_bounded_retries(server: ChatServer) -> None:
    server.replies += [error(502, "bad gateway")] * 5
    with pytest.raises(ProposerFailed) as info:
        make(server, max_retries=2).propose(REQUEST)
    assert "HTTP 502" in str(info.value) and "gave up after 3 attempts" in str(info.value)
    assert len(server.requests) == 3


def test_retry_after_beyond_the_cap_fails_at_once(server: ChatServer) -> None:
    server.replies += [error(429, "quota", {"Retry-After": "3600"}), Reply(completion(DELTA_REPLY))]
    with pytest.raises(ProposerFailed, match="asks to wait 3600 s, more than max_retry_wait = 60"):
        make(server).propose(REQUEST)
    assert len(server.requests) == 1


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_timeout_is_an_error_after_bounded_retries(server: ChatServer) -> None:
    server.replies += [Reply(completion(DELTA_REPLY), delay=30)] * 2
    with pytest.raises(ProposerFailed) as info:
        make(server, timeout=0.5, max_retries=1).propose(REQUEST)
    message = str(info.value)
    assert "no answer within the 0.5 s timeout" in message and "gave up after 2 attempts" in message
    assert server.base_url in message
    assert len(server.requests) == 2


def test_auth_error_is_not_retried_and_does_not_show_the_key(server: ChatServer) -> None:
    server.replies += [error(401, "Incorrect API key provided"), Reply(completion(DELTA_REPLY))]
    with pytest.raises(ProposerFailed) as info:
        make(server).propose(REQUEST)
    message = str(info.value)
    assert "refused the key in $TEST_KEY (HTTP 401)" in message and "sk-test" not in message
    assert len(server.requests) == 1


# A key no pattern knows (spaces, quotes, a backslash, regular-expression syntax).
ODD_KEY = "k3y with spaces \"q'\\ $(x)*+?[a]{2}|^ end"


def make_odd(server: ChatServer, **keys: Any) -> OpenAIProposer:
    section = OpenAIProposerSection(model="m", base_url=server.base_url, api_key_env="ODD_KEY", **keys)
    return OpenAIProposer(section, environ={"ODD_KEY": ODD_KEY}, sleep=Sleeps())


def test_a_refused_key_echoed_in_the_body_is_redacted(server: ChatServer) -> None:
    server.replies.append(
        error(401, f"Incorrect API key provided: {ODD_KEY}. Also sk-Ab3dEf6hIj9kLm2nOp5qRs8t")
    )
    with pytest.raises(ProposerFailed) as info:
        make_odd(server).propose(REQUEST)
    message = str(info.value)
    assert server.requests[0]["headers"]["authorization"] == f"Bearer {ODD_KEY}"
    assert message.endswith("Incorrect API key provided: [REDACTED]. Also [REDACTED]")
    assert "k3y with" not in message


def test_a_5xx_body_is_redacted_before_it_is_cut(server: ChatServer) -> None:
    # The key straddles the 300-character cut: cut first, its start would show.
    server.replies += [error(500, "x" * 250 + ODD_KEY + " trailing detail")] * 2
    with pytest.raises(ProposerFailed) as info:
        make_odd(server, max_retries=1).propose(REQUEST)
    message = str(info.value)
    assert "HTTP 500" in message and "gave up after 2 attempts" in message
    assert "[REDACTED]" in message and "k3y with" not in message


def test_unknown_model_is_not_retried(server: ChatServer) -> None:
    server.replies.append(error(404, "model 'test-model' not found"))
    with pytest.raises(ProposerFailed, match=r"HTTP 404 \(check base_url and model\).*not found"):
        make(server).propose(REQUEST)


@pytest.mark.parametrize(
    "body", ["<html><body>Sign in to the proxy</body></html>", {"object": "list", "data": []}]
)
def test_an_answer_that_is_not_a_completion_is_an_error(server: ChatServer, body: Any) -> None:
    server.replies.append(Reply(body))
    with pytest.raises(ProposerFailed, match=r"not a chat completion|without any choice"):
        make(server).propose(REQUEST)
    assert len(server.requests) == 1


def test_an_answer_that_is_not_json_shows_its_start(server: ChatServer) -> None:
    page = "<!DOCTYPE html>\n<html><head><title>Sign in to the proxy</title></head><body>" + "x" * 500
    server.replies.append(Reply(page))
    with pytest.raises(ProposerFailed) as info:
        make(server).propose(REQUEST)
    # Its first 80 characters, the newline escaped: the error stays one line.
    assert str(info.value).endswith(
        r"the answer is not a chat completion: '<!DOCTYPE html>\n<html><head><title>Sign in to the proxy"
        + r"</title></head><body>xxxx'..."
    )


def test_finish_reason_length_is_rejected_even_with_a_complete_block(server: ChatServer) -> None:
    server.replies.append(Reply(completion(DELTA_REPLY, finish_reason="length")))
    outcome = make(server).propose(REQUEST)
    assert isinstance(outcome, RejectedProposal)
    assert outcome.code == "truncated" and '"length"' in outcome.reason
    assert outcome.raw_output == DELTA_REPLY and outcome.usage.completion_tokens == 80


def test_unclosed_fence_is_rejected(server: ChatServer) -> None:
    cut = "Name the operation.\n\n```text\n# Demo\n\n1. Read the task.\n2. Name the"
    server.replies.append(Reply(completion(cut)))
    outcome = make(server).propose(REQUEST.model_copy(update={"form": "replace"}))
    assert isinstance(outcome, RejectedProposal) and outcome.code == "unclosed_fence"
    assert outcome.raw_output == cut


def test_missing_fence_is_rejected(server: ChatServer) -> None:
    server.replies.append(Reply(completion(NEW_SKILL)))
    outcome = make(server).propose(REQUEST.model_copy(update={"form": "replace"}))
    assert isinstance(outcome, RejectedProposal) and outcome.code == "no_fence"


def test_empty_content_is_rejected(server: ChatServer) -> None:
    server.replies.append(Reply(completion(None)))
    outcome = make(server).propose(REQUEST)
    assert isinstance(outcome, RejectedProposal) and outcome.code == "no_fence"


def test_operations_that_do_not_apply_are_rejected(server: ChatServer) -> None:
    reply = '```json\n{"operations": [{"op": "delete", "old": "3. Never there."}]}\n```\n'
    server.replies.append(Reply(completion(reply)))
    outcome = make(server).propose(REQUEST)
    assert isinstance(outcome, RejectedProposal) and outcome.code == "anchor_not_found"


def test_secrets_in_the_reflective_dataset_are_not_sent(server: ChatServer) -> None:
    server.replies.append(Reply(completion(DELTA_REPLY)))
    secret = "sk-live-ABCDEFGHIJKLMNOPQRSTUV"
    leaky = REQUEST.model_copy(
        update={"examples": [REQUEST.examples[0].model_copy(update={"trajectory": f"env: KEY={secret}"})]}
    )
    make(server).propose(leaky)
    sent = json.dumps(server.requests[0]["body"])
    assert secret not in sent and "[REDACTED]" in sent


def test_a_loopback_server_needs_no_key(server: ChatServer) -> None:
    server.replies.append(Reply(completion(DELTA_REPLY)))
    section = OpenAIProposerSection(model="llama3", base_url=server.base_url, api_key_env="UNSET_KEY")
    outcome = OpenAIProposer(section, environ={}, sleep=Sleeps()).propose(REQUEST)
    assert isinstance(outcome, ProposedEdit)
    assert server.requests[0]["headers"]["authorization"] == "Bearer not-needed"


def test_a_remote_server_needs_its_key() -> None:
    section = OpenAIProposerSection(model="gpt-4.1-mini", api_key_env="UNSET_KEY")
    with pytest.raises(ConfigError, match=r"environment variable UNSET_KEY \(api_key_env\) is not set"):
        OpenAIProposer(section, environ={})


def test_connection_refused_is_an_error_after_retries() -> None:
    with socket.socket() as probe:  # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    section = OpenAIProposerSection(model="m", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    sleeps = Sleeps()
    with pytest.raises(ProposerFailed, match=r"cannot connect .*gave up after 2 attempts"):
        OpenAIProposer(section, environ={}, sleep=sleeps).propose(REQUEST)
    assert len(sleeps) == 1


def test_without_the_openai_package(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # makes `import openai` fail
    section = OpenAIProposerSection(model="m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ConfigError, match=r"pip install 'harnessgit\[openai\]'"):
        OpenAIProposer(section, environ={})


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8000/v1", True),
        ("http://127.8.9.1/v1", True),
        ("http://[::1]:1234/v1", True),
        ("http://localhost:11434/v1", True),
        ("https://api.openai.com/v1", False),
        ("http://10.0.0.5:8000/v1", False),
        ("http://localhost.example.com/v1", False),
    ],
)
def test_is_loopback(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback
