"""Scratch directories name their owner; what a killed harnessgit left is swept."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from harnessgit.processes.group import RUN_VARIABLE, new_token, processes
from harnessgit.processes.owner import Owner
from harnessgit.processes.scratch import (
    MARKER,
    PREFIX,
    ScratchDir,
    remove_temp_dirs,
    stale_processes,
    stale_temp_dirs,
    sweep,
)

HAS_PROC = Path("/proc/self/stat").exists()
DAY = 24 * 3600


def gone_owner() -> Owner:
    """A harnessgit that has ended: a real process, started and reaped."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    here = Owner.current()
    owner = Owner(here.host, here.namespace, proc.pid, None)
    proc.wait()
    return owner


def left_by(tmp_path: Path, owner: Owner | None, name: str, age: float = 0.0) -> Path:
    path = tmp_path / name
    (path / "harness").mkdir(parents=True)
    (path / "harness" / "SKILL.md").write_text("# s\n")
    if owner is not None:
        (path / MARKER).write_text(owner.dumps())
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def test_a_scratch_directory_names_its_owner_and_goes_on_every_exit(tmp_path: Path) -> None:
    with ScratchDir("eval", parent=tmp_path) as path:
        assert path.name.startswith("harnessgit-eval-")
        assert Owner.loads((path / MARKER).read_text()) == Owner.current()
    assert not path.exists()
    with pytest.raises(KeyboardInterrupt), ScratchDir("eval", parent=tmp_path) as path:
        (path / "ro").mkdir()
        (path / "ro" / "file").write_text("x")
        (path / "ro").chmod(0o500)  # an evaluator's read-only directory
        raise KeyboardInterrupt
    assert not path.exists()


def test_owner_states() -> None:
    here = Owner.current()
    assert here.state() == "alive"
    assert gone_owner().state() == "gone"
    assert dataclasses.replace(here, host="elsewhere").state() == "unknown"
    assert dataclasses.replace(here, namespace="4026531999").state() == "unknown"
    if HAS_PROC:  # the same pid, started at another time: a reused pid
        assert here.started is not None
        assert dataclasses.replace(here, started=here.started - 1).state() == "gone"
    assert Owner.loads("{truncat") is None and Owner.loads('{"pid": "1"}') is None


def test_only_what_a_gone_harnessgit_left_is_stale(tmp_path: Path) -> None:
    gone, here = gone_owner(), Owner.current()
    stale = {
        left_by(tmp_path, gone, "harnessgit-eval-gone1"),
        left_by(tmp_path, gone, "harnessgit-tree-gone2", age=60),
        left_by(tmp_path, None, "harnessgit-eval-legacy", age=DAY + 60),  # before markers
    }
    kept = [
        left_by(tmp_path, here, "harnessgit-eval-alive"),
        left_by(tmp_path, dataclasses.replace(gone, host="other-host"), "harnessgit-eval-other"),
        left_by(tmp_path, None, "harnessgit-eval-young"),  # being made right now, or legacy and recent
        left_by(tmp_path, None, "harnessgit-demo-abc", age=10 * DAY),  # not ours to judge
        left_by(tmp_path, gone, "unrelated-dir"),
    ]
    assert {found.path for found in stale_temp_dirs(tmp_path)} == stale
    done = sweep(tmp_path)
    assert {removed.path for removed in done.removed} == stale and not done.failed
    assert not any(path.exists() for path in stale) and all(path.exists() for path in kept)
    assert stale_temp_dirs(tmp_path) == []


def test_a_sweep_removes_read_only_leftovers(tmp_path: Path) -> None:
    # (Meaningful when the tests do not run as root: root ignores the permissions.)
    path = left_by(tmp_path, gone_owner(), "harnessgit-eval-ro")
    (path / "harness" / "sub").mkdir()
    (path / "harness" / "sub" / "file").write_text("x")
    (path / "harness" / "sub").chmod(0o500)
    (path / "harness").chmod(0o500)
    done = sweep(tmp_path)
    assert [removed.path for removed in done.removed] == [path] and not path.exists()


@pytest.mark.skipif(not HAS_PROC, reason="finds processes in /proc")
def test_a_sweep_kills_evaluators_whose_harnessgit_is_gone() -> None:
    argv = [sys.executable, "-c", "import time; time.sleep(30)"]
    orphan = subprocess.Popen(argv, env={RUN_VARIABLE: new_token(gone_owner())}, start_new_session=True)
    alive = subprocess.Popen(argv, env={RUN_VARIABLE: new_token()}, start_new_session=True)
    try:
        deadline = time.monotonic() + 5  # until both have exec'd with their environment
        while not {orphan.pid, alive.pid} <= _carriers() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert [process.pid for process in stale_processes()] == [orphan.pid]
        done = sweep(Path("/nonexistent"))
        assert [process.pid for process in done.killed] == [orphan.pid]
        assert orphan.wait(5) == -signal.SIGKILL and alive.poll() is None
    finally:
        for proc in (orphan, alive):
            proc.kill()
            proc.wait()


def _carriers() -> set[int]:
    return {process.pid for process in processes() if process.token}


def test_what_a_killed_harnessgit_left_is_listed_then_removed(tmp_path: Path) -> None:
    # For `harnessgit doctor`: a real process makes its scratch directories and is
    # SIGKILLed in the middle; while it lives they are its own, once it is gone they
    # are listed with their owner, and removed.
    code = (
        "import sys, time\n"
        "from pathlib import Path\n"
        "from harnessgit.processes.scratch import ScratchDir\n"
        f"made = [ScratchDir(kind, parent=Path({str(tmp_path)!r})) for kind in ('eval', 'tree')]\n"
        "(made[0].path / 'harness').mkdir()\n"
        "print(' '.join(str(scratch.path) for scratch in made), flush=True)\n"
        "time.sleep(60)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        made = {Path(path) for path in proc.stdout.readline().split()}
        assert len(made) == 2 and stale_temp_dirs(tmp_path) == []  # its owner is alive
    finally:
        proc.kill()
        proc.wait()
    stale = stale_temp_dirs(tmp_path)
    assert {found.path for found in stale} == made
    assert all(found.owner == f"pid {proc.pid} on {socket.gethostname()} (gone)" for found in stale)
    done = remove_temp_dirs(stale)
    assert {found.path for found in done.removed} == made and not done.failed
    assert list(tmp_path.iterdir()) == []


def test_the_owner_removes_its_marker_last(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A kill during the owner's cleanup must leave a marked directory (the sweep then
    sees its owner gone), never an unmarked one (issue 28, defect 8)."""
    scratch = ScratchDir("eval", parent=tmp_path)
    for i in range(40):
        (scratch.path / f"file{i}").write_text("x")
        (scratch.path / f"dir{i}").mkdir()
        (scratch.path / f"dir{i}" / "inner").write_text("x")
    removed: list[str] = []
    real_unlink, real_rmdir = os.unlink, os.rmdir

    def unlink(path: str | Path, *args: object, **kwargs: object) -> None:
        removed.append(os.path.basename(path))
        real_unlink(path, *args, **kwargs)  # type: ignore[arg-type]

    def rmdir(path: str | Path, *args: object, **kwargs: object) -> None:
        removed.append(os.path.basename(path) + "/")
        real_rmdir(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "unlink", unlink)
    monkeypatch.setattr(os, "rmdir", rmdir)
    scratch.cleanup()
    monkeypatch.undo()
    assert not scratch.path.exists()
    assert removed[-2:] == [MARKER, scratch.path.name + "/"], removed[-5:]
    scratch.cleanup()  # once is enough; a second call does nothing


def test_an_unmarked_directory_of_a_known_kind_is_swept(tmp_path: Path) -> None:
    """What a kill during making or removing left (no marker): a kind that always had a
    marker once a minute old, an empty eval directory; an eval or tree directory with
    files only after a day (a version before markers may still use it)."""
    stale = {
        left_by(tmp_path, None, "harnessgit-index-cut", age=120),
        left_by(tmp_path, None, "harnessgit-merge-cut", age=120),
        left_by(tmp_path, None, "harnessgit-server-cut", age=120),
    }
    empty = tmp_path / "harnessgit-eval-empty"
    empty.mkdir()
    then = time.time() - 120
    os.utime(empty, (then, then))
    stale.add(empty)
    kept = [
        left_by(tmp_path, None, "harnessgit-index-young", age=5),  # being made or removed now
        left_by(tmp_path, None, "harnessgit-eval-files", age=120),  # a version before markers
        left_by(tmp_path, None, "harnessgit-demo-old", age=10 * DAY),
    ]
    assert {found.path for found in stale_temp_dirs(tmp_path)} == stale
    done = sweep(tmp_path)
    assert {removed.path for removed in done.removed} == stale and not done.failed
    assert not any(path.exists() for path in stale) and all(path.exists() for path in kept)


def test_a_directory_removed_between_listing_and_reading_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under parallel load another harnessgit removes its own scratch directory after
    # the sweep listed it: the sweep skips it (it once raised UnboundLocalError).
    (tmp_path / f"{PREFIX}kept").mkdir()
    listed = os.listdir
    monkeypatch.setattr(os, "listdir", lambda path: [*listed(path), f"{PREFIX}gone"])
    found = stale_temp_dirs(tmp_path, max_age=0.0)  # raised UnboundLocalError before
    assert f"{PREFIX}gone" not in [stale.path.name for stale in found]
