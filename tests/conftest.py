"""Hermetic git for every test (git-revise's `hermetic_seal`).

HOME points at an empty temp dir, the system config is ignored, and author,
committer and dates are fixed, so object ids and results repeat exactly.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pytest

FIXED_DATE = "2026-01-01T00:00:00+00:00"

pytest_plugins = ["tests.gating_fixtures", "tests.history_fixtures"]  # gate_repo, review_repo


# Bytecode: these machines set PYTHONDONTWRITEBYTECODE=1, so every `harnessgit` the tests
# start (hundreds of them) compiled about 144 modules again, about 0.13 s each time. Users'
# machines cache bytecode; so does the suite, in a private folder (PYTHONPYCACHEPREFIX),
# never in the checkout. HARNESSGIT_TEST_NO_PYCACHE=1 keeps the machine's setting.
if not os.environ.get("HARNESSGIT_TEST_NO_PYCACHE"):
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ.setdefault(
        "PYTHONPYCACHEPREFIX", str(Path(tempfile.gettempdir()) / f"harnessgit-tests-pycache-{os.getuid()}")
    )


# A test run started in the background (`cmd &` in a script, some CI runners) inherits
# SIGINT ignored, and exec passes an ignored signal on: every harnessgit the tests start
# would ignore Ctrl-C and the interrupt tests would fail. The tests run as from a terminal.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def hermetic_seal(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path_factory.mktemp("home")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    for who in ("AUTHOR", "COMMITTER"):
        monkeypatch.setenv(f"GIT_{who}_NAME", "Test Author")
        monkeypatch.setenv(f"GIT_{who}_EMAIL", "test@example.com")
        monkeypatch.setenv(f"GIT_{who}_DATE", FIXED_DATE)
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_NOTES_REF", "GIT_OBJECT_DIRECTORY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HARNESSGIT_TEST", "1")


def git(repo: Path, *args: str, input: str | None = None) -> str:
    result = subprocess.run(
        ["git", *args], cwd=repo, input=input, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {result.stderr}")
    return result.stdout


CONFIG = """\
[harness]
paths = ["SKILL.md", "prompts/*.md", "skills/**/SKILL.md"]
base = "main"

[evaluator]
command = ["python3", "eval.py"]
model = "sim-1"
env = ["CALLS_FILE"]
"""

SKILL = """\
---
name: demo
description: A demo skill for tests.
---
# Demo

1. Read the task.
2. Answer it.
"""


def write(repo: Path, path: str, text: str | bytes) -> Path:
    target = repo / path
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        target.write_bytes(text)
    else:
        target.write_text(text)
    return target


@pytest.fixture
def make_repo(tmp_path: Path) -> Callable[..., Path]:
    counter = [0]

    def make(files: dict[str, str | bytes] | None = None, *, config: str | None = CONFIG) -> Path:
        counter[0] += 1
        repo = tmp_path / f"repo{counter[0]}"
        repo.mkdir()
        git(repo, "init", "-q", "-b", "main")
        contents: dict[str, str | bytes] = {
            "SKILL.md": SKILL,
            "prompts/system.md": "You are a careful assistant.\n",
            "eval.py": "print('evaluator')\n",
        }
        if config is not None:
            contents["harnessgit.toml"] = config
        contents.update(files or {})
        for path, text in contents.items():
            write(repo, path, text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "Initial harness")
        return repo

    return make


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo()


def snapshot(repo: Path) -> str:
    """Every ref and the working tree status: what a failed command must leave alone."""
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    status = git(repo, "status", "--porcelain=v1", "--untracked-files=all")
    head = git(repo, "rev-parse", "--symbolic-full-name", "HEAD")
    index = (repo / ".git" / "index").read_bytes() if (repo / ".git" / "index").exists() else b""
    return refs + "\n--\n" + status + "\n--\n" + head + str(hash(index))


def ended(pid: int, within: float = 5.0) -> bool:
    """Whether process ``pid`` has ended, or ends within ``within`` seconds. A zombie has
    ended (only its exit status is left, for a parent that may be init). Reads /proc."""
    deadline = time.monotonic() + within
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_bytes()
        except FileNotFoundError:
            return True
        # The command name may hold spaces and parentheses: the state follows its last ")".
        if stat[stat.rfind(b")") + 2 :][:1] == b"Z":
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def kill(pid: int) -> None:
    """SIGKILL ``pid`` if it is still there: a test leaves no process behind."""
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)


@pytest.fixture
def own_temp_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary directory of the test's own for what harnessgit makes in this process
    (`tempfile.tempdir`): `doctor` and the sweeps look there for what killed runs left,
    and must not find what other tests' kills left."""
    own = tmp_path / "own-tmp"
    own.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(own))
    return own
