"""The user's Python functions, called in harnessgit's own process (``package.module:function``).

An in-process evaluator or proposer saves a process start per call (20-90 ms each,
issue 13). The module is imported from the repository root, which is put first on
``sys.path``; Python keeps one version of a module per process, so callers that must
attribute results to a commit check the files themselves (docs/evaluator.md).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harnessgit.errors import HarnessgitError

_MESSAGE_CHARS = 300


def module_of(spec: str) -> str:
    """``package.module`` of ``package.module:function``."""
    return spec.partition(":")[0]


def top_level(spec: str) -> str:
    """The top-level package (or module) of a spec: the unit whose files are fingerprinted."""
    return module_of(spec).split(".")[0]


def load_function(root: Path, spec: str, what: str) -> Callable[..., Any]:
    """The function ``spec`` names, imported with ``root`` first on sys.path; a
    `HarnessgitError` naming ``what`` (e.g. "evaluator") when it cannot be."""
    module_name, _, name = spec.partition(":")
    where = str(root)
    if where in sys.path:
        sys.path.remove(where)
    sys.path.insert(0, where)  # first: the repository's module, not one of the same name elsewhere
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # a syntax error or a failing import in the user's module
        raise HarnessgitError(f"{what} {spec}: cannot import {module_name}: {describe(exc)}") from None
    origin = getattr(module, "__file__", None)
    if origin is None or not Path(origin).resolve().is_relative_to(root.resolve()):
        # Imported before from elsewhere (another repository, site-packages): its code is
        # not the repository's, and Python keeps one module of a name per process.
        raise HarnessgitError(f"{what} {spec}: {module_name} is imported from {origin}, not from {root}")
    function = getattr(module, name, None)
    if not callable(function):
        raise HarnessgitError(f"{what} {spec}: {module_name} has no function {name!r}")
    return function  # type: ignore[no-any-return]


def describe(exc: BaseException) -> str:
    """An exception on one line: its type and the start of its message."""
    message = " ".join(str(exc).split())
    if len(message) > _MESSAGE_CHARS:
        message = message[: _MESSAGE_CHARS - 3] + "..."
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__
