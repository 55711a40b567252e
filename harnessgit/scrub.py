"""Scrubbing secrets out of everything harnessgit records or prints.

Notes are pushed to shared remotes, and what evaluators and proposers write
routinely contains the environment they saw: API keys, bearer tokens, cloud
credentials. Every string that comes from an evaluator or a proposer passes
through one `Scrubber` before it reaches git or the terminal (docs/design.md,
"Secrets").

Two kinds of rule:

- patterns: secrets with a recognisable shape (`DEFAULT_PATTERNS`, plus
  ``[scrub] patterns``);
- literal secrets: the values of the environment variables that hold secrets
  (``[proposer] api_key_env``, ``[scrub] env`` and `DEFAULT_SECRET_ENV`), whatever
  their shape. A value is redacted as it is and in any letter case, in the forms
  quoting gives it (JSON escapes, a Python literal) and where a message cut it
  short ("...") leaving only its start or its end: error messages quote evaluator and proposer output
  cut to a width, and a cut key is still most of a key.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from fnmatch import fnmatchcase
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

# Environment variables whose values are secrets by their name (globs, matched
# without regard to case): OPENAI_API_KEY, GITHUB_TOKEN, HF_TOKEN, DB_PASSWORD...
DEFAULT_SECRET_ENV = ["*_API_KEY", "*_TOKEN", "*_SECRET", "*_SECRET_KEY", "*_PASSWORD"]

# A shorter value is not redacted: it would match ordinary words and numbers all
# over the records (and inside JSON keys), and it is no secret worth the name.
MIN_SECRET_CHARS = 8

# Where a message cut a quoted text short: "start...", 'start'..., "...end".
_CUT_AFTER = r"(?=[\"']?\.\.\.|\Z)"
_CUT_BEFORE = r"(?:(?<=\.\.\.)|\A)"


def _scoped(pattern: str) -> str:
    """Move a leading global flag group such as ``(?i)`` into a scoped one, ``(?i:...)``,
    which is allowed inside an alternation."""
    found = re.match(r"\(\?([aiLmsux]+)\)", pattern)
    return f"(?{found.group(1)}:{pattern[found.end() :]})" if found else pattern


def secret_values(names: Iterable[str], environ: Mapping[str, str]) -> list[str]:
    """The values of the variables in ``environ`` that ``names`` (globs) match, long
    enough to redact."""
    globs = [name.upper() for name in names]
    return sorted(
        {
            value
            for variable, value in environ.items()
            if len(value) >= MIN_SECRET_CHARS and any(fnmatchcase(variable.upper(), g) for g in globs)
        }
    )


def _forms(secret: str) -> set[str]:
    """The secret, and how it reads once quoted: in JSON (escaped, with or without
    ASCII escapes) and as a Python literal (`repr`, as error messages quote output).
    Each also upper- and lower-cased: matching without regard to case does not reach
    inside an escape (``\u00e4`` is not ``\u00c4``)."""
    return {
        form
        for value in {secret, secret.upper(), secret.lower()}
        for form in (
            value,
            json.dumps(value)[1:-1],
            json.dumps(value, ensure_ascii=False)[1:-1],
            repr(value)[1:-1],
        )
    }


def _literals(secrets: Iterable[str]) -> list[str]:
    """Expressions for the secrets' forms, lower-cased (`Scrubber` matches them in the
    lower-cased text): whole, the start of one before a cut, the end of one after a cut
    (each at least MIN_SECRET_CHARS long), longest first, so that a secret is redacted
    whole rather than a shorter one inside it."""
    forms = sorted(
        {form.lower() for secret in secrets if len(secret) >= MIN_SECRET_CHARS for form in _forms(secret)},
        key=lambda form: (-len(form), form),
    )
    if not forms:
        return []
    starts, ends = [], []
    for form in forms:
        chars = [re.escape(char) for char in form]
        more = chars[MIN_SECRET_CHARS:]  # nested optional groups, one per character
        starts.append("".join(chars[:MIN_SECRET_CHARS]) + "".join(f"(?:{c}" for c in more) + ")?" * len(more))
        before = ""
        for char in chars[:-MIN_SECRET_CHARS]:
            before = f"(?:{before}{char})?"
        ends.append(before + "".join(chars[-MIN_SECRET_CHARS:]))
    # One look-behind for all the ends: it is tried at every position of every string.
    return [
        *(re.escape(form) for form in forms),
        f"(?:{'|'.join(starts)}){_CUT_AFTER}",
        f"{_CUT_BEFORE}(?:{'|'.join(ends)})",
    ]


class Scrubber:
    def __init__(self, patterns: Iterable[str] = DEFAULT_PATTERNS, secrets: Iterable[str] = ()) -> None:
        # Two passes per string: the secret values, then the patterns in one alternation
        # (trajectories hold tens of thousands of strings; each pattern keeps its own
        # inline flags inside its group).
        self.secrets = sorted(set(secrets))
        literals = _literals(self.secrets)
        # Secrets are matched without regard to case: an upper-cased copy of a key is the
        # key to anyone who reads it (issue 28: 16 blobs held one; docs/design.md,
        # "Secrets", says what else is and is not covered). Matched in the lower-cased
        # text: IGNORECASE over the cut alternations took 1.6-6x the case-sensitive
        # match, this 0.9-1.4x (tests/bench/bench_scrub.py, on a busy host).
        self.literal = re.compile("|".join(f"(?:{source})" for source in literals)) if literals else None
        self._any_case: re.Pattern[str] | None = None  # for text whose lower case is longer
        sources = [_scoped(pattern) for pattern in patterns]
        self.pattern = re.compile("|".join(f"(?:{source})" for source in sources)) if sources else None

    def literal_only(self) -> Scrubber:
        """A scrubber of the secret values alone, for text where a pattern could match
        something legitimate (a harness file's example of a key format)."""
        return Scrubber([], self.secrets)

    def text(self, value: str) -> str:
        if self.literal is not None:
            value = self._secrets_out(value, self.literal)
        if self.pattern is None:
            return value
        return self.pattern.sub(REDACTED, value)

    def _secrets_out(self, value: str, literal: re.Pattern[str]) -> str:
        folded = value.lower()
        if len(folded) != len(value):  # a character whose lower case is two ("İ")
            if self._any_case is None:
                self._any_case = re.compile(literal.pattern, re.IGNORECASE)
            return self._any_case.sub(REDACTED, value)
        parts, at = [], 0  # each character lower-cased to one: positions carry over
        for found in literal.finditer(folded):
            parts += [value[at : found.start()], REDACTED]
            at = found.end()
        return "".join([*parts, value[at:]]) if parts else value

    def value(self, value: Any) -> Any:
        """A copy of a JSON value with every string scrubbed (keys included)."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, list):
            return [self.value(item) for item in value]
        if isinstance(value, dict):
            return {self.text(str(key)): self.value(item) for key, item in value.items()}
        return value

    @contextmanager
    def errors(self) -> Iterator[None]:
        """Scrub the message of an exception raising through: error messages quote the
        output of evaluators and proposers (stderr, a reply's body), and they are printed.
        The exception keeps its type, so its exit code and handling do not change."""
        try:
            yield
        except Exception as exc:
            if exc.args and all(isinstance(arg, str) for arg in exc.args):
                exc.args = tuple(self.text(arg) for arg in exc.args)
            raise
