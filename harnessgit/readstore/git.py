"""Running git: one place that builds the command line and the environment.

User-supplied values never reach a shell: every call is an argv list, and callers
put ``--end-of-options`` or ``--`` before anything a user typed.

A repository's own ``.git`` is input too (issue 28, defect 3): it arrives in tarballs,
shared folders, CI caches and untrusted pull requests, and its config and hooks name
programs git would run inside harnessgit's commands. Unless the user sets
``HARNESSGIT_TRUST_REPOSITORY=1``, every git harnessgit starts runs none of them:
settings given with ``-c`` win over every config file and reach the gits git starts
(through ``GIT_CONFIG_PARAMETERS``).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path
from typing import NamedTuple

from harnessgit.errors import GitFailed, HarnessgitError

TRUST_VARIABLE = "HARNESSGIT_TRUST_REPOSITORY"

GUARDS = (
    "core.fsmonitor=false",  # a command every index read runs (status, diff, read-tree, ...)
    # Every hook (reference-transaction, post-index-change, pre-push, pre-auto-gc, ...):
    # git looks for <hooksPath>/<name>, and nothing is a file under /dev/null.
    "core.hooksPath=/dev/null",
    "gc.auto=0",  # no automatic gc (nor its pre-auto-gc hook) after a fetch or a write
    "maintenance.auto=false",
    "log.showSignature=false",  # `log` would run gpg.program on signed commits
    "protocol.ext.allow=never",  # an ext:: remote URL is a command
)

# Options after the command word. Porcelain diffs would run a diff driver's textconv and
# an external diff program. A fetch or push starts the program the remote's
# uploadpack/receivepack setting names for the other side: git's own instead (the
# option wins over the config, where a second `-c` value would not).
_OPTIONS = {
    "diff": ["--no-textconv", "--no-ext-diff"],
    "log": ["--no-textconv", "--no-ext-diff"],
    "show": ["--no-textconv", "--no-ext-diff"],
    "fetch": ["--upload-pack=git-upload-pack"],
    "push": ["--receive-pack=git-receive-pack"],
}

# Commands that move content between the working tree and the index run the clean and
# smudge filters .gitattributes (or .git/info/attributes) name: each driver the config
# defines is emptied before the first of them.
_FILTER_VERBS = {
    "status", "update-index", "read-tree", "checkout-index", "diff", "diff-files",
    "diff-index", "hash-object", "apply", "ls-files", "add", "checkout", "reset", "stash",
}  # fmt: skip
_FILTER_KEYS = re.compile(r"filter\.(?P<driver>.+)\.(clean|smudge|process|required)")


def trusted() -> bool:
    """Whether the user asked git to run the repository's own hooks and drivers."""
    return os.environ.get(TRUST_VARIABLE, "") not in ("", "0")


class Result(NamedTuple):
    """What one git process returned."""

    returncode: int
    stdout: bytes
    stderr: str


def git_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ)
    # Messages in English so that the few we recognise stay recognisable, and
    # never a password prompt from a command that was meant to be local.
    env.update(LC_ALL="C", LANGUAGE="", GIT_TERMINAL_PROMPT="0")
    if extra:
        env.update(extra)
    return env


def git_says(stderr: str) -> str:
    """git's own error line (its advice follows it, over several lines)."""
    for line in stderr.splitlines():
        if line.startswith(("fatal: ", "error: ")):
            return line.split(": ", 1)[1]
    return stderr.strip().splitlines()[-1] if stderr.strip() else "no message"


def verb(args: list[str]) -> str:
    """The git command ``args`` run: the first word that is not a global option."""
    words = iter(args)
    for word in words:
        if word in ("-c", "-C"):
            next(words, None)
        elif not word.startswith("-"):
            return word
    return ""


class Git:
    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.env = git_environment()
        self.trusted = trusted()
        self._guards = [] if self.trusted else [word for setting in GUARDS for word in ("-c", setting)]
        self._filters: list[str] | None = None if not self.trusted else []

    def argv(self, args: list[str]) -> list[str]:
        """The command line that runs ``args``: git, the guards, then ``args`` (with
        the command's own options against the repository's programs)."""
        if self.trusted:
            return ["git", *args]
        command = verb(args)
        if command in _FILTER_VERBS and self._filters is None:
            self._filters = self._no_filters()
        if command in _OPTIONS:
            at = args.index(command) + 1
            args = [*args[:at], *_OPTIONS[command], *args[at:]]
        return ["git", *self._guards, *(self._filters or []), *args]

    def _no_filters(self) -> list[str]:
        """``-c`` settings that empty every filter driver the config defines (and make it
        optional: a required driver with no command would fail the command)."""
        listed = self.run(["config", "--null", "--name-only", "--get-regexp", r"^filter\."], check=False)
        drivers = {
            match["driver"]
            for name in listed.stdout.decode("utf-8", "surrogateescape").split("\0")
            if (match := _FILTER_KEYS.fullmatch(name))
        }
        return [
            word
            for driver in sorted(drivers)
            for key in ("clean", "smudge", "process", "required")
            for word in ("-c", f"filter.{driver}.{key}={'false' if key == 'required' else ''}")
        ]

    def start(self, argv: list[str], *, stderr: int, bufsize: int = -1) -> subprocess.Popen[bytes]:
        """A long-lived git (``argv`` from `argv`, worked out once by the caller) spoken to
        through its standard input and output: the persistent cat-file and update-ref."""
        try:
            return subprocess.Popen(
                argv,
                cwd=self.cwd,
                env=self.env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                bufsize=bufsize,
            )
        except FileNotFoundError:
            raise HarnessgitError("git is not installed or not on PATH") from None

    def run(
        self,
        args: list[str],
        *,
        input: bytes | None = None,
        check: bool = True,
        env: dict[str, str] | None = None,
    ) -> Result:
        try:
            proc = subprocess.run(
                self.argv(args),
                cwd=self.cwd,
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                env={**self.env, **env} if env else self.env,
            )
        except FileNotFoundError:
            raise HarnessgitError("git is not installed or not on PATH") from None
        result = Result(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))
        if check and proc.returncode != 0:
            raise GitFailed(args, proc.returncode, result.stderr)
        return result

    def out(self, args: list[str], *, input: bytes | None = None, check: bool = True) -> str:
        return self.run(args, input=input, check=check).stdout.decode("utf-8", "surrogateescape")
