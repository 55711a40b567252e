"""What a team pinning harnessgit meets: the version (with the commit from a checkout),
shell completion in bash and zsh, and `git harnessgit -h`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit import __version__
from harnessgit.store.source import source_revision
from tests.conftest import git

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def harnessgit_env() -> dict[str, str]:
    """The test's venv first on PATH, as after `source .venv/bin/activate`."""
    return {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"}


def test_version_names_the_commit_of_the_checkout_it_runs_from() -> None:
    if not (ROOT / ".git").exists():
        pytest.skip("harnessgit is not running from a git checkout here")
    out = subprocess.run(
        [sys.executable, "-m", "harnessgit", "--version"], capture_output=True, text=True, check=True, cwd="/"
    ).stdout
    assert out.startswith(f"harnessgit, version {__version__} (git ")
    described = out.split("(git ", 1)[1].split(")")[0].removesuffix("-dirty")
    commit = described.rsplit("-g", 1)[-1]  # v0.2.0-3-gabc... once releases are tagged
    assert len(commit) >= 7 and git(ROOT, "rev-parse", "HEAD").strip().startswith(commit)


def test_a_package_outside_a_harnessgit_checkout_names_no_commit(tmp_path: Path) -> None:
    installed = tmp_path / "site-packages" / "harnessgit"  # as pip lays out a wheel
    installed.mkdir(parents=True)
    assert source_revision(installed) is None
    other = tmp_path / "other-project"  # harnessgit's folder copied into another checkout
    (other / "harnessgit").mkdir(parents=True)
    (other / "pyproject.toml").write_text('[project]\nname = "other"\n')
    git(other, "init", "-q")
    assert source_revision(other / "harnessgit") is None


def test_the_version_has_one_source() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert 'dynamic = ["version"]' in pyproject
    assert 'version = { attr = "harnessgit.__version__" }' in pyproject
    assert "\nversion = " not in pyproject.split("[tool.setuptools.dynamic]")[0]


def completion_script(shell: str) -> str:
    return subprocess.run(
        ["harnessgit"],
        env={**harnessgit_env(), "_HARNESSGIT_COMPLETE": f"{shell}_source"},
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is not installed")
def test_bash_completes_the_subcommands_of_a_partial_command(tmp_path: Path) -> None:
    script = tmp_path / "harnessgit.bash"
    script.write_text(completion_script("bash"))
    # What bash does on `harnessgit ev<TAB>`: the registered function, called with the words.
    program = f"""
source {script}
complete -p harnessgit
COMP_WORDS=(harnessgit ev); COMP_CWORD=1
_harnessgit_completion harnessgit ev harnessgit
printf '%s\\n' "${{COMPREPLY[@]}}"
"""
    out = subprocess.run(
        ["bash", "-c", program], env=harnessgit_env(), capture_output=True, text=True, check=True
    )
    lines = out.stdout.splitlines()
    assert "_harnessgit_completion" in lines[0]  # registered for the harnessgit command
    assert lines[1:] == ["eval", "evolve"]


@pytest.mark.skipif(shutil.which("zsh") is None, reason="zsh is not installed (apt-get install zsh)")
def test_zsh_completes_the_subcommands_of_a_partial_command(tmp_path: Path) -> None:
    script = tmp_path / "_harnessgit"
    script.write_text(completion_script("zsh"))
    # A real zsh runs the real script. _describe and compadd exist only inside zsh's
    # completion widget, so here they are stand-ins that print what they were given.
    program = f"""
compdef() {{ print -r -- "compdef $*" }}
_describe() {{ print -rl -- "${{(@P)3}}" }}
compadd() {{ print -rl -- "${{(@P)${{@[-1]}}}}" }}
source {script}
words=(harnessgit ev); CURRENT=2
_harnessgit_completion
"""
    out = subprocess.run(
        ["zsh", "-f", "-c", program], env=harnessgit_env(), capture_output=True, text=True, check=True
    )
    lines = out.stdout.splitlines()
    assert lines[0] == "compdef _harnessgit_completion harnessgit"
    names = [line.split(":", 1)[0] for line in lines[1:]]
    assert names == ["eval", "evolve"]
    assert all(":" in line for line in lines[1:])  # each with its help line as the description


def test_git_harnessgit_h_prints_the_help(tmp_path: Path) -> None:
    # git turns `git harnessgit --help` into `man git-harnessgit` (no page ships);
    # `-h` reaches harnessgit, as docs/cli.md says.
    if shutil.which("git-harnessgit", path=str(BIN)) is None:
        pytest.skip("git-harnessgit is not installed in this venv")
    out = subprocess.run(
        ["git", "harnessgit", "-h"],
        env=harnessgit_env(),
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    ).stdout
    assert out.startswith("Usage: harnessgit [OPTIONS] COMMAND [ARGS]...")


@pytest.mark.slow
def test_a_pre_commit_config_pinned_to_a_commit_id_runs_the_hook(tmp_path: Path) -> None:
    # docs/checks.md's form until releases are tagged: `rev:` a commit id of harnessgit.
    # pre-commit clones the repository at that commit and pip-installs it (registry needed).
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home")}
    repo = tmp_path / "harness"
    (repo / "skills" / "demo").mkdir(parents=True)
    (repo / "skills" / "demo" / "SKILL.md").write_text(
        "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n\n1. Read the task.\n2. Answer it.\n"
    )
    commit = git(ROOT, "rev-parse", "HEAD").strip()
    (repo / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: {commit}\n    hooks:\n      - id: harnessgit-check\n"
    )
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    result = subprocess.run(
        [sys.executable, "-m", "pre_commit", "run", "--all-files"],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "harnessgit check" in result.stdout and "Passed" in result.stdout
