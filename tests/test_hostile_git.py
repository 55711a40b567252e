"""Issue 28, defect 3: harnessgit runs none of a repository's own code unless asked.

A repository that arrives with its ``.git`` (a tarball, a shared folder, a CI cache, an
untrusted pull request's checkout) may carry an fsmonitor command, hooks, diff textconv
and external diff drivers, clean/smudge filters, a gpg program for signed logs and
settings that start an automatic gc. Each of them here appends its name to a marker
file; every harnessgit command family runs against that repository and no marker may
appear. `harnessgit check` run by `git commit` through the pre-commit hook still works.
"""

from __future__ import annotations

import stat
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.runner import run
from tests.conftest import git
from tests.gating_fixtures import skill

# Every hook git documents (githooks(5)), whatever command might fire it.
HOOKS = [
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "post-index-change",
]


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def arm(repo: Path, markers: Path) -> Callable[[], list[str]]:
    """Make ``repo`` hostile; returns what fired since the last call (and forgets it)."""
    markers.mkdir()
    log = markers / "fired"
    tools = markers / "tools"
    tools.mkdir()
    mark = f'echo "$0 $*" >> {log}\n'
    for hook in HOOKS:
        _script(repo / ".git" / "hooks" / hook, mark)
    _script(tools / "fsmonitor", mark + "exit 1\n")
    _script(tools / "textconv", mark + 'cat "$1"\n')
    _script(tools / "extdiff", mark)
    _script(tools / "clean", mark + "cat\n")
    _script(tools / "smudge", mark + "cat\n")
    _script(tools / "gpg", mark + "exit 1\n")
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("* diff=evil filter=evil\n")
    settings = {
        "core.fsmonitor": str(tools / "fsmonitor"),
        "diff.evil.textconv": str(tools / "textconv"),
        "diff.evil.command": str(tools / "extdiff"),
        "diff.external": str(tools / "extdiff"),
        "filter.evil.clean": str(tools / "clean"),
        "filter.evil.smudge": str(tools / "smudge"),
        "filter.evil.required": "true",
        "log.showSignature": "true",
        "gpg.program": str(tools / "gpg"),
        # An automatic gc (and its pre-auto-gc hook) after any command that writes objects.
        "gc.auto": "1",
        "gc.autoPackLimit": "1",
        "gc.autoDetach": "false",
        "maintenance.auto": "true",
    }
    for key, value in settings.items():
        git(repo, "config", key, value)

    def fired() -> list[str]:
        if not log.exists():
            return []
        lines = log.read_text().splitlines()
        log.unlink()
        return [Path(line.split()[0]).name for line in lines]

    return fired


@pytest.fixture
def hostile(gate_repo: Path, tmp_path: Path) -> tuple[Path, Callable[[], list[str]]]:
    """The gate repository with two packs (so an automatic gc would start), a committed
    .gitattributes (so the evaluator's checkout goes through `git checkout-index`, which
    runs smudge filters), and armed."""
    git(gate_repo, "repack", "-q")
    (gate_repo / ".gitattributes").write_text("* filter=evil diff=evil\n")
    git(gate_repo, "add", ".gitattributes")
    git(gate_repo, "commit", "-q", "-m", "a second pack")
    git(gate_repo, "repack", "-q")
    fired = arm(gate_repo, tmp_path / "markers")
    assert fired() == []
    return gate_repo, fired


def test_the_fixture_fires_each_marker_through_plain_git(
    hostile: tuple[Path, Callable[[], list[str]]],
) -> None:
    """The markers work: plain git runs the repository's fsmonitor, hooks and drivers."""
    repo, fired = hostile
    (repo / "SKILL.md").write_text(skill(11))
    subprocess.run(["git", "status"], cwd=repo, capture_output=True, check=False)
    subprocess.run(["git", "diff"], cwd=repo, capture_output=True, check=False)
    subprocess.run(["git", "update-ref", "refs/x", "HEAD"], cwd=repo, capture_output=True, check=False)
    seen = set(fired())
    assert {"fsmonitor", "clean", "reference-transaction"} <= seen, seen


def _propose(repo: Path, level: int) -> str:
    (repo / "SKILL.md").write_text(skill(level))
    result = run(repo, "-q", "propose", "-m", f"level {level}")
    assert result.exit_code == 0, result.output
    (repo / "SKILL.md").write_text(skill(10))  # as committed (no git here: it would run the filters)
    return result.stdout.strip()


def every_family(repo: Path, fired: Callable[[], list[str]], tmp_path: Path) -> dict[str, list[str]]:
    """Run one command of each family against ``repo``: what fired, per command."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    git(repo, "-c", "core.hooksPath=/dev/null", "remote", "add", "origin", str(remote))
    tools = tmp_path / "markers" / "tools"  # the hostile fixture's
    for side in ("uploadpack", "receivepack"):  # the command a fetch or push starts for the remote
        script = _script(
            tools / side, f'echo "$0 $*" >> {tools.parent / "fired"}\nexec git-{side[:-4]}-pack "$@"\n'
        )
        git(repo, "config", f"remote.origin.{side}", str(script))
    fired()
    first = _propose(repo, 30)
    seen = {"propose": fired()}
    second = _propose(repo, 12)
    fired()
    steps: list[tuple[str, ...]] = [
        ("status",),
        ("eval", first),
        ("scores", first),
        ("show", first),
        ("gate", second),
        ("merge", first),
        ("show", "HEAD"),
        ("log",),
        ("label", "production", "main"),
        ("verify",),
        ("doctor",),
        ("doctor", "--fix"),
        ("check", "SKILL.md"),
        ("review", "HEAD~1", "HEAD"),
        ("report", "-o", str(tmp_path / "report.html")),
        ("revert", "HEAD"),
        ("sync",),
    ]
    for args in steps:
        result = run(repo, "-q", *args)
        # Each command did its work (1 or 4: `gate` fails or is inconclusive, `verify` finds
        # the revert ungated...).
        assert result.exit_code in ((0,) if args[0] in ("eval", "merge", "revert", "sync") else (0, 1, 4)), (
            args,
            result.output,
        )
        seen[" ".join(args)] = fired()
    return seen


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_no_command_runs_the_repository_s_code(
    hostile: tuple[Path, Callable[[], list[str]]], tmp_path: Path
) -> None:
    seen = every_family(*hostile, tmp_path)
    assert {step: what for step, what in seen.items() if what} == {}


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_with_the_opt_in_git_runs_them_as_it_would(
    hostile: tuple[Path, Callable[[], list[str]]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """HARNESSGIT_TRUST_REPOSITORY=1 gives the repository its hooks and drivers back
    (git-lfs's smudge filter, a team's reference-transaction hook): and shows that the
    test above would see each of them run."""
    monkeypatch.setenv("HARNESSGIT_TRUST_REPOSITORY", "1")
    seen = every_family(*hostile, tmp_path)
    ran = {name for names in seen.values() for name in names}
    assert ran >= {
        *("fsmonitor", "reference-transaction", "post-index-change", "pre-push", "pre-auto-gc"),
        *("textconv", "clean", "smudge", "uploadpack", "receivepack"),
    }, seen
    # The evaluator's checkout of a tree holding .gitattributes (`checkout-index`) smudged.
    assert any("smudge" in names for step, names in seen.items() if step.startswith("eval ")), seen
