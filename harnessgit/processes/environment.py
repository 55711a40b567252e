"""The environment of the programs harnessgit runs: an allow-list, not a copy of its own.

An evaluator's trajectories and a proposer's rationale end up in notes pushed to shared
remotes; whatever is in their environment can end up there too (issue 15: a token from
harnessgit's environment was in 32 evidence blobs). So a program gets the names below,
which locate things and set the locale but hold no credentials, plus the names the user
lists in harnessgit.toml (``[evaluator] env``, ``[proposer] env``), plus the
``HARNESSGIT_*`` variables harnessgit sets for it. A key the evaluator needs is passed
on purpose, by name, in the repository's configuration.

Left out on purpose: proxies (``HTTPS_PROXY=http://user:password@...``), package index
URLs (``PIP_INDEX_URL``, ``UV_INDEX_URL`` carry tokens), ``GIT_*`` (a ``GIT_DIR`` would
point the evaluator's git at the user's repository), ``SSH_AUTH_SOCK`` (a key agent).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from fnmatch import fnmatchcase

# docs/evaluator.md#environment lists these (globs, as in [evaluator] env).
DEFAULT_NAMES = (
    # where programs and the user's files are, who and where the user is
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TMPDIR",
    "TEMP",
    "TMP",
    "XDG_*",
    # locale and terminal
    "LANG",
    "LANGUAGE",
    "LC_*",
    "TZ",
    "TERM",
    "NO_COLOR",
    # Python and its environments (what `python3 eval.py` needs to find its packages)
    "PYTHON*",
    "VIRTUAL_ENV",
    "CONDA_PREFIX",
    "CONDA_DEFAULT_ENV",
    # certificate bundles (corporate TLS inspection), paths not secrets
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
    "CURL_CA_BUNDLE",
    # what a program needs to start on Windows
    "SYSTEMROOT",
    "COMSPEC",
    "PATHEXT",
    "WINDIR",
)

# A name, or a glob of names (fnmatch: *, ?, [...]); the same for [scrub] env.
NAME = re.compile(r"[A-Za-z0-9_*?\[\]!]+")


def check_names(names: list[str]) -> None:
    """ValueError unless each is a variable name or a glob of names (``AWS_*``)."""
    for name in names:
        if not NAME.fullmatch(name):
            raise ValueError(f"{name!r} is not an environment variable name (or a glob of names)")


def child_environment(
    allowed: Iterable[str] = (),
    extra: Mapping[str, str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The variables of ``environ`` (default: harnessgit's own) that `DEFAULT_NAMES` or
    ``allowed`` name or match, then ``extra`` (the ``HARNESSGIT_*`` variables set for
    this run). Case counts, as it does for the programs that read them (POSIX)."""
    source = os.environ if environ is None else environ
    names = [*DEFAULT_NAMES, *allowed]
    env = {name: value for name, value in source.items() if any(fnmatchcase(name, glob) for glob in names)}
    env.update(extra or {})
    return env
