"""The scrubber: patterns, and the values of secret variables whatever their shape."""

from __future__ import annotations

import json

import pytest

from harnessgit.config import parse_config
from harnessgit.config.proposer import OpenAIProposerSection
from harnessgit.errors import ConfigError, ProposerFailed
from harnessgit.render import quoted_start
from harnessgit.scrub import MIN_SECRET_CHARS, REDACTED, Scrubber, secret_values

# No pattern matches it: spaces, quotes, a backslash, regular-expression syntax, non-ASCII.
ODD = "k3y with spaces \"q'\\ $(x)*+?[a]{2}|^ ünd"


def test_the_built_in_patterns() -> None:
    scrubber = Scrubber()
    text = "key sk-Ab3dEf6hIj9kLm2nOp5qRs8t and Authorization: Bearer abcdefghijklmnop.qrs"
    assert scrubber.text(text) == f"key {REDACTED} and Authorization: {REDACTED}"


def test_a_secret_value_is_redacted_whatever_its_shape() -> None:
    scrubber = Scrubber(secrets=[ODD])
    assert Scrubber().text(f"a {ODD} b") == f"a {ODD} b"  # no pattern knows it
    assert scrubber.text(f"a {ODD} b") == f"a {REDACTED} b"
    # As JSON (with and without ASCII escapes) and as a Python literal write it.
    for quoted in (json.dumps({"k": ODD}), json.dumps({"k": ODD}, ensure_ascii=False), repr(ODD)):
        assert ODD[:12] not in scrubber.text(quoted) and REDACTED in scrubber.text(quoted)
    assert scrubber.value({ODD: [ODD, 1]}) == {REDACTED: [REDACTED, 1]}  # keys included


def test_a_secret_cut_short_by_a_message_is_still_redacted() -> None:
    scrubber = Scrubber(secrets=[ODD])
    # Error messages quote output cut to a width: a start before "...", an end after it.
    cut = quoted_start("x" * 60 + ODD)  # 80 characters: the secret's first 20, escaped
    assert ODD[:16] in cut and scrubber.text(cut) == "'" + "x" * 60 + REDACTED + "'..."
    assert scrubber.text(f"stderr: {ODD[:20]}...") == f"stderr: {REDACTED}..."
    assert scrubber.text(f"...{ODD[-15:]} | next") == f"...{REDACTED} | next"
    assert scrubber.text(ODD[:30]) == REDACTED  # cut at the very end
    # Shorter than MIN_SECRET_CHARS, a fragment is left: it would match ordinary text.
    assert scrubber.text(ODD[:7] + "...") == ODD[:7] + "..."


def test_values_too_short_to_be_secrets_are_not_redacted() -> None:
    short = "x" * (MIN_SECRET_CHARS - 1)
    assert Scrubber(secrets=[short]).text(f'{{"kind": "{short}"}}') == f'{{"kind": "{short}"}}'


def test_secret_values_by_name_or_glob() -> None:
    environ = {
        "OPENAI_API_KEY": "sk-openai-0123456789",
        "gh_token": "lowercase-name-value",
        "MY_CREDENTIAL": "named-explicitly",
        "HOME": "/home/someone",
        "SHORT_TOKEN": "abc",
    }
    names = ["*_API_KEY", "*_TOKEN", "MY_CREDENTIAL"]
    assert secret_values(names, environ) == [
        "lowercase-name-value",
        "named-explicitly",
        "sk-openai-0123456789",
    ]


def test_errors_are_scrubbed_and_keep_their_type() -> None:
    scrubber = Scrubber(secrets=[ODD])
    with pytest.raises(ProposerFailed) as info, scrubber.errors():
        raise ProposerFailed(f"HTTP 401: Incorrect API key provided: {ODD}")
    assert str(info.value) == f"HTTP 401: Incorrect API key provided: {REDACTED}"
    assert info.value.exit_code == 3


def test_the_scrub_section_knows_the_proposer_key_and_the_named_variables() -> None:
    config = parse_config(
        b'[scrub]\nenv = ["HG_DB_*"]\n[proposer]\nkind = "openai"\nmodel = "m"\n'
        b'api_key_env = "HG_LLM_CREDENTIAL"\n'
    )
    assert isinstance(config.proposer, OpenAIProposerSection)
    environ = {
        "HG_LLM_CREDENTIAL": ODD,
        "HG_DB_PASSWORD_FILE_CONTENT": "pässwörd-ø-4242",
        "SERVICE_TOKEN": "svc.7f3a9c2e.token",
        "HG_OTHER": "not-a-secret-at-all",
    }
    scrubber = config.scrub.scrubber(config.proposer, environ)
    assert scrubber.secrets == sorted([ODD, "pässwörd-ø-4242", "svc.7f3a9c2e.token"])
    assert config.scrub.scrubber(None, environ).secrets == ["pässwörd-ø-4242", "svc.7f3a9c2e.token"]
    bare = parse_config(b"[scrub]\ndefaults = false\n").scrub.scrubber(None, environ)
    assert bare.secrets == [] and bare.text("sk-Ab3dEf6hIj9kLm2nOp5qRs8t") == "sk-Ab3dEf6hIj9kLm2nOp5qRs8t"


def test_scrub_env_must_name_variables() -> None:
    with pytest.raises(ConfigError, match=r"scrub\.env.*'MY TOKEN' is not an environment variable name"):
        parse_config(b'[scrub]\nenv = ["MY TOKEN"]\n')


def test_literal_only_leaves_the_patterns_alone() -> None:
    scrubber = Scrubber(secrets=[ODD]).literal_only()
    assert scrubber.text(f"AKIAIOSFODNN7EXAMPLE {ODD}") == f"AKIAIOSFODNN7EXAMPLE {REDACTED}"


def test_a_secret_is_redacted_in_any_letter_case() -> None:
    """issue 28, defect 7: an upper-cased copy of an allow-listed secret was stored."""
    secret = "MyCorp-Token-31415926"
    scrubber = Scrubber([], [secret])
    for text in (secret, secret.upper(), secret.lower(), secret.swapcase(), '"MYCORP-TOKEN-314159"...'):
        assert scrubber.text(f"key={text}!") in (f"key={REDACTED}!", f'key="{REDACTED}"...!'), text
    # a character whose lower case is two (İ -> i̇) moves every position after it: the
    # text is then matched without lower-casing it
    assert scrubber.text(f"İ {secret.upper()} İ") == f"İ {REDACTED} İ"
    assert scrubber.text("MyCorp-Token is not the whole value") == "MyCorp-Token is not the whole value"
