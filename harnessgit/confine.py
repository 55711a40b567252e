"""Paths confined to the repository: where a path really leads, symbolic links followed.

A cloned repository is input like any other: it can hold `prompts/x.md ->
~/.aws/credentials` or `splits.json -> /etc/passwd`. Whatever harnessgit reads because
the repository names it (a harness file, the split manifest) must stay inside the
repository once every link is followed; a file the user names on the command line is
theirs to name, unless the name runs through the repository and a link there leads
out of it (issue 15, defects 9 and 14).
"""

from __future__ import annotations

import os
from pathlib import Path

from harnessgit.errors import HarnessgitError


def _inside(real: str, real_root: str) -> bool:
    return real == real_root or real.startswith(real_root.rstrip(os.sep) + os.sep)


def leads_out(root: Path, path: Path) -> Path | None:
    """Where ``path`` really leads, every symbolic link followed, when that is outside
    ``root``; None when it stays inside (or is ``root`` itself)."""
    real = os.path.realpath(path)
    return None if _inside(real, os.path.realpath(root)) else Path(real)


def check_relative(path: str) -> None:
    """A path the repository's configuration names: relative, and never climbing out.

    Raises ValueError (the config reader's `check` rule) with the reason."""
    parts = path.replace("\\", "/").split("/")
    if not path or os.path.isabs(path) or path.startswith(("/", "\\")) or ".." in parts or "\0" in path:
        raise ValueError(f"{path!r} is not a path inside the repository")


def read_named(name: str, base: Path, root: Path, what: str) -> bytes:
    """A file the user named (``--evidence``, ``--file``, ``--patch``), relative to
    ``base`` (the directory the command runs in), read as named.

    A path outside the repository is the user's to name and is read as it is
    (``../runs/last.jsonl``, ``/tmp/critique.jsonl``). A name that runs through the
    repository must not lead out of it through a symbolic link: `--evidence
    runs/last.jsonl` in a cloned repository must not attach `~/.ssh/id_rsa`. Naming
    the file where it really is reads it.
    """
    path = base / name
    if _runs_through(Path(name), base, os.path.realpath(root)):
        target = leads_out(root, path)
        if target is not None:
            raise HarnessgitError(
                f"{what} {name} leads out of the repository through a symbolic link (to {target}): "
                "name the file where it is if you mean it"
            )
    try:
        return path.read_bytes()
    except OSError as exc:
        raise HarnessgitError(f"cannot read {what} {name}: {exc.strerror}") from None


def _runs_through(name: Path, base: Path, real_root: str) -> bool:
    """Whether the name passes through the repository as written: a directory on the
    way, or the file, is inside it (``runs/../../etc/x`` runs through ``runs``)."""
    current = Path(name.anchor) if name.is_absolute() else base
    for part in name.parts[1:] if name.is_absolute() else name.parts:
        current = current / part
        if _inside(os.path.abspath(current), real_root):
            return True
    return False
