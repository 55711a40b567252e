"""Real kills inside a real ref transaction, at a point chosen in advance.

A ``git`` shim early on PATH passes every call to the real git except the one
``update-ref --stdin`` whose input names ``refs/harnessgit/archive/``: there it sends
SIGKILL to its whole process group (the harnessgit process, the shim and the real git:
what a CI cancel or a container stop does) at one point:

- ``before-update``: before git starts (the store has written its journal);
- ``after-prepare``: once git has taken every lock and written every new value into
  them (``prepare: ok``), before it renames any into place;
- ``after-commit``: once git has finished, before the store has seen its answer;
- ``cut``: after git has read only the first three lines of the input, and exited;
- ``commit-fails``: not a kill: git fails after renaming the first lock into place;
- ``delay:SECONDS``: that long after git started, wherever it is.

The victim is a separate Python process (its own session, so the kill spares pytest)
applying a merge-shaped transaction through `Refs.commit`: main moves to a merge
commit, the candidate branch is deleted and archived, two notes refs and the evidence
store are written, two commits pinned.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from tests.conftest import git

SHIM = """\
import os, signal, subprocess, sys, time

real = os.environ["SHIM_REAL_GIT"]
args = sys.argv[1:]
point = os.environ.get("SHIM_KILL_AT", "")
command = args
while command[:1] == ["-c"]:  # harnessgit's guards against the repository's programs
    command = command[2:]
if not point or command[:1] != ["update-ref"] or "--stdin" not in args:
    os.execv(real, [real, *args])
if "-m" in args and args[args.index("-m") + 1].startswith("harnessgit: records"):
    # A records session (store/refsession.py) stays open for many transactions: reading
    # its input to the end would wait forever. It never moves an archive ref.
    os.execv(real, [real, *args])
data = sys.stdin.buffer.read()
if b"refs/harnessgit/archive/" not in data:
    sys.exit(subprocess.run([real, *args], input=data).returncode)


def die():
    os.killpg(os.getpgrp(), signal.SIGKILL)


def prepared():  # the real git, holding every lock of the transaction, waiting for "commit"
    proc = subprocess.Popen([real, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    proc.stdin.write(("start\\n" + "\\n".join(lines) + "\\nprepare\\n").encode())
    proc.stdin.flush()
    while proc.stdout.readline().strip() != b"prepare: ok":
        pass
    return proc


lines = [line for line in data.decode().splitlines() if line not in ("start", "prepare", "commit")]
if point == "before-update":
    die()
if point == "after-prepare":
    prepared()
    die()
if point == "commit-fails":
    # git's commit step fails after its first rename (a full disk, say): the rename is
    # done here by hand, the real git killed, and its failure reported as git would.
    proc = prepared()
    os.replace(".git/refs/harnessgit/archive/c1.lock", ".git/refs/harnessgit/archive/c1")
    proc.kill()
    sys.stderr.write("fatal: commit: cannot update ref 'refs/heads/main': No space left on device\\n")
    sys.exit(128)
if point == "after-commit":
    subprocess.run([real, *args], input=data, stdout=subprocess.DEVNULL)
    die()
if point == "cut":
    head = b"".join(data.splitlines(keepends=True)[:3])
    subprocess.run([real, *args], input=head, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    die()
if point.startswith("delay:"):
    proc = subprocess.Popen([real, *args], stdin=subprocess.PIPE)
    proc.stdin.write(data)
    proc.stdin.close()
    time.sleep(float(point.split(":")[1]))
    die()
sys.exit("unknown kill point " + point)
"""

VICTIM = """\
import sys
from datetime import datetime, timezone
from pathlib import Path
from harnessgit.records import ProposalRecord
from harnessgit.store import Store, Transaction

with Store.discover(Path(sys.argv[1])) as store:
    main = store.refs.resolve("main")
    cand = store.refs.resolve("refs/heads/harnessgit/cand/c1")
    tree = store.objects.commit_info(cand).tree
    merge = store.objects.write_commit(tree, [main, cand], "Merge candidate c1")
    record = ProposalRecord(ts=datetime(2026, 1, 1, tzinfo=timezone.utc), candidate="c1", parent=main,
                            components=["SKILL.md"], rationale="r", source="api")
    txn = Transaction("merge c1 into main")
    txn.move("refs/heads/main", merge, main)
    txn.append("refs/notes/harnessgit/gate", merge, [record])
    txn.append("refs/notes/harnessgit/evidence", cand, [record])
    txn.delete("refs/heads/harnessgit/cand/c1", cand)
    txn.create("refs/harnessgit/archive/c1", cand)
    txn.keep(store.objects.write_blob(b"a trajectory"))
    store.refs.commit(txn)
"""

# What the merge-shaped transaction writes, besides the pins.
WRITTEN = [
    "refs/harnessgit/archive/c1",
    "refs/harnessgit/evidence-store",
    "refs/notes/harnessgit/evidence",
    "refs/notes/harnessgit/gate",
]


def left_lock(repo: Path, name: str, age: float) -> Path:
    """A lock file (``name`` under .git) as a killed git leaves it, ``age`` seconds old."""
    path = repo / ".git" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("")
    then = time.time() - age
    os.utime(path, (then, then))
    return path


def killed_git(repo: Path, ref: str, age: float) -> list[str]:
    """SIGKILL a real ``git update-ref`` of ``ref`` once it holds its locks, then age them
    ``age`` seconds: the lock files (relative to .git) a killed git leaves on one ref."""
    tip = git(repo, "rev-parse", "HEAD").strip()
    proc = subprocess.Popen(
        ["git", "update-ref", "--stdin"], cwd=repo, stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(f"start\nupdate {ref} {tip}\nprepare\n".encode())
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == b"start: ok"
    assert proc.stdout.readline().strip() == b"prepare: ok"
    proc.kill()
    proc.wait()
    left = state(repo).locks
    then = time.time() - age
    for name in left:
        os.utime(repo / ".git" / name, (then, then))
    return left


def candidate_repo(repo: Path) -> Path:
    """``repo`` with candidate c1 (one commit on main), refs packed as after a gc, so
    that deleting the candidate rewrites packed-refs (and takes packed-refs.lock)."""
    git(repo, "checkout", "-q", "-b", "harnessgit/cand/c1")
    (repo / "SKILL.md").write_text("# Demo\n\n1. Read the task twice.\n")
    git(repo, "commit", "-qam", "Read twice")
    git(repo, "checkout", "-q", "main")
    git(repo, "pack-refs", "--all")
    return repo


def kill_at(repo: Path, point: str, tmp: Path, argv: list[str] | None = None) -> int:
    """Run the victim (or ``argv``, e.g. a harnessgit command) with the shim killing it at
    ``point``; its exit status (-9: killed)."""
    shim_dir = tmp / "shim"
    shim_dir.mkdir(exist_ok=True)
    shim = shim_dir / "git"
    shim.write_text(f"#!{sys.executable}\n{SHIM}")
    shim.chmod(0o755)
    real = shutil.which("git")
    assert real is not None and not real.startswith(str(shim_dir))
    env = {
        **os.environ,
        "PATH": f"{shim_dir}{os.pathsep}{os.environ['PATH']}",
        "SHIM_REAL_GIT": real,
        "SHIM_KILL_AT": point,
    }
    command = argv or [sys.executable, "-c", VICTIM, str(repo)]
    victim = subprocess.run(command, cwd=repo, env=env, start_new_session=True, capture_output=True)
    return victim.returncode


@dataclass(frozen=True)
class State:
    refs: dict[str, str]  # every ref but the pins
    pins: int
    locks: list[str]  # lock files (and packed-refs.new), relative to .git
    journals: list[str]

    @property
    def merged(self) -> bool:
        """All of the transaction: main merged, candidate retired, records written."""
        return (
            "refs/heads/harnessgit/cand/c1" not in self.refs
            and all(ref in self.refs for ref in WRITTEN)
            and self.pins == 2
        )

    @property
    def untouched(self) -> bool:
        """None of it."""
        return "refs/heads/harnessgit/cand/c1" in self.refs and not any(ref in self.refs for ref in WRITTEN)


def state(repo: Path) -> State:
    listing = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    refs = dict(line.split(" ") for line in listing.splitlines())
    pins = {ref for ref in refs if ref.startswith("refs/harnessgit/pins/")}
    dot_git = repo / ".git"
    locks = sorted(
        str(path.relative_to(dot_git))
        for path in dot_git.rglob("*")
        if path.name.endswith(".lock") or path.name == "packed-refs.new"
    )
    journal_dir = dot_git / "harnessgit" / "journal"
    journals = sorted(path.name for path in journal_dir.iterdir()) if journal_dir.is_dir() else []
    return State({r: s for r, s in refs.items() if r not in pins}, len(pins), locks, journals)
