from __future__ import annotations

import sys
import types

import pytest

from harnessgit.checks.tokens import Estimate, load_tokenizer
from harnessgit.config import ChecksSection
from harnessgit.errors import ConfigError


def test_estimate_rounds_up() -> None:
    estimate = Estimate(4.0)
    assert estimate.count("") == 0
    assert estimate.count("abcde") == 2
    assert not estimate.exact and "estimate" in estimate.name


class _FakeEncoding:
    name = "fake_base"

    def encode(self, text: str, disallowed_special: object = None) -> list[int]:
        assert disallowed_special == ()
        return [0] * len(text.split())


def _fake_tiktoken(monkeypatch: pytest.MonkeyPatch, *, fail: bool = False) -> None:
    module = types.ModuleType("tiktoken")

    def get_encoding(name: str) -> _FakeEncoding:
        if fail:
            raise ValueError("cannot download the encoding\nsecond line")
        return _FakeEncoding()

    module.get_encoding = get_encoding  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tiktoken", module)


def test_auto_uses_tiktoken_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tiktoken(monkeypatch)
    tokenizer, notes = load_tokenizer(ChecksSection())
    assert tokenizer.exact and tokenizer.name == "tiktoken fake_base"
    assert tokenizer.count("three words here") == 3 and notes == []


def test_auto_falls_back_with_a_note_when_the_encoding_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_tiktoken(monkeypatch, fail=True)
    tokenizer, notes = load_tokenizer(ChecksSection())
    assert not tokenizer.exact
    assert notes == [
        "tiktoken cannot load 'o200k_base' (cannot download the encoding); token counts are estimates"
    ]
    with pytest.raises(ConfigError, match="cannot load encoding"):
        load_tokenizer(ChecksSection(tokenizer="tiktoken"))


def test_missing_tiktoken(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "tiktoken", None)  # import fails
    tokenizer, notes = load_tokenizer(ChecksSection())
    assert not tokenizer.exact and notes == []
    with pytest.raises(ConfigError, match=r"harnessgit\[tokens\]"):
        load_tokenizer(ChecksSection(tokenizer="tiktoken"))
    estimate, _ = load_tokenizer(ChecksSection(tokenizer="estimate", chars_per_token=2))
    assert estimate.count("abcd") == 2
