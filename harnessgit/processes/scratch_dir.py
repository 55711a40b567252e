"""A temporary directory that names its owner (`ScratchDir`), and its removal, marker last.

Apart from `harnessgit.processes.scratch`, which sweeps what killed runs left (reading
every process's table): the store makes scratch directories to apply a patch, check a
tree out or merge a file, and needs none of the sweep (issue 26).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
import weakref
from pathlib import Path
from types import TracebackType

from harnessgit.processes.owner import Owner

PREFIX = "harnessgit-"
MARKER = ".harnessgit-owner"


class ScratchDir:
    """A temporary directory ``harnessgit-<kind>-XXXXXXXX`` with its owner marker; a
    context manager, or `cleanup` when it is done (also called when it is collected)."""

    def __init__(self, kind: str, *, parent: Path | None = None) -> None:
        self.path = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{kind}-", dir=parent))
        try:
            (self.path / MARKER).write_text(Owner.current().dumps() + "\n", encoding="utf-8")
        except BaseException:
            shutil.rmtree(self.path, ignore_errors=True)
            raise
        # Also when collected, or at exit, as tempfile.TemporaryDirectory does; but with
        # the marker last (`remove_dir`), which TemporaryDirectory's rmtree does not keep.
        self._finalizer = weakref.finalize(self, _remove_if_there, self.path)

    def cleanup(self) -> None:
        self._finalizer()

    def __enter__(self) -> Path:
        return self.path

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.cleanup()


def _remove_if_there(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        remove_dir(path)


def remove_dir(path: Path) -> None:
    """Remove a scratch directory, its owner marker last."""
    # An evaluator may leave read-only directories: each is made writable before it is
    # entered (top-down), never through a symbolic link.
    for top, dirs, _files in os.walk(path):
        for name in dirs:
            inner = os.path.join(top, name)
            if not os.path.islink(inner):
                os.chmod(inner, 0o700)
    # The marker goes last: a sweep killed halfway leaves a directory still marked as
    # abandoned, for the next sweep.
    for child in path.iterdir():
        if child.name == MARKER:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            os.unlink(child)
    # os.unlink and os.rmdir, not Path's: on Python 3.10 pathlib holds its own reference to
    # them, which tests/processes/test_scratch.py could not watch for the order.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path / MARKER)
    os.rmdir(path)
