"""Validation of user-supplied names and revisions, and new candidate ids.

Everything a user types that ends up in a git command line or a ref name passes
through here first, so that an argument such as ``--output=/tmp/x`` can never be
read by git as an option and a name such as ``a..b`` never becomes a ref.
"""

from __future__ import annotations

import os
import re

from harnessgit.errors import InvalidName

# Candidate ids are ref components: lowercase letters, digits and single hyphens.
CANDIDATE_ID = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
MAX_ID_LENGTH = 64
# 12 hex digits = 48 random bits: two machines that never talk collide with
# probability ~ n^2 / 2^49, i.e. below one in a billion for 10,000 candidates.
_ID_BYTES = 6

_CONTROL = re.compile(r"[\x00-\x20\x7f]")
_REF_FORBIDDEN = re.compile(r"[~^:?*\[\\]")


def new_candidate_id() -> str:
    # What secrets.token_hex does, without importing secrets (and hmac, hashlib) on
    # every command's path.
    return os.urandom(_ID_BYTES).hex()


def check_candidate_id(value: str) -> str:
    if len(value) > MAX_ID_LENGTH or not CANDIDATE_ID.fullmatch(value):
        raise InvalidName(f"invalid candidate id {value!r}: use lowercase letters, digits and single hyphens")
    return value


def check_ref_name(value: str, what: str = "name") -> str:
    """Enforce git-check-ref-format's rules for a (possibly multi-component) name."""
    problem = ref_name_problem(value)
    if problem:
        raise InvalidName(f"invalid {what} {value!r}: {problem}")
    return value


def ref_name_problem(value: str) -> str | None:
    """What git-check-ref-format would refuse in ``value``; None when it is a valid name."""
    if not value:
        return "it is empty"
    if value.startswith("-"):
        return "it looks like an option"
    if _CONTROL.search(value):
        return "it contains a space or a control character"
    if _REF_FORBIDDEN.search(value):
        return "it contains one of ~ ^ : ? * [ \\"
    if ".." in value or "@{" in value or value == "@":
        return "it contains '..' or '@{'"
    if value.endswith((".", "/")) or "//" in value or value.startswith("/"):
        return "it has an empty or trailing component"
    for part in value.split("/"):
        if part.startswith(".") or part.endswith(".lock"):
            return "a component starts with '.' or ends with '.lock'"
    return None


def check_revision(value: str) -> str:
    """A revision names one commit; it is resolved once, so git's revision syntax
    (``HEAD~2``, ``main^``, ``v1@{1}``) is allowed, but never an option, a range,
    whitespace or a control character."""
    if not value:
        raise InvalidName("empty revision")
    if value.startswith("-"):
        raise InvalidName(f"invalid revision {value!r}: it looks like an option")
    if _CONTROL.search(value):
        raise InvalidName(f"invalid revision {value!r}: it contains a space or a control character")
    if ".." in value:
        raise InvalidName(f"invalid revision {value!r}: expected one commit, not a range")
    return value
