"""The published hooks (.pre-commit-hooks.yaml) through the real pre-commit.

`pre-commit try-repo` clones this repository, builds a virtualenv and
pip-installs harnessgit into it, as a user's `repo:` entry would; it needs the
package registry. The harness repositories here have no harnessgit.toml: the
hooks must work on defaults. try-repo uses this checkout's committed state plus
changes to tracked files (pre-commit's "shadow repo"), not untracked files.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git, write
from tests.harness_text import prompt

HOOK_REPO = Path(__file__).resolve().parents[2]
GOOD = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n\n1. Read the task.\n2. Answer it.\n"


def pre_commit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", *args], cwd=cwd, capture_output=True, text=True, check=False
    )


def test_manifest_is_valid() -> None:
    result = pre_commit("validate-manifest", ".pre-commit-hooks.yaml", cwd=HOOK_REPO)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.fixture(scope="session")
def install_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    # Shared by the tests below so that pip and virtualenv download once per run.
    return tmp_path_factory.mktemp("pre-commit-cache")


@pytest.fixture
def harness_repo(tmp_path: Path, install_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PRE_COMMIT_HOME", str(install_cache / "pre-commit"))
    monkeypatch.setenv("PIP_CACHE_DIR", str(install_cache / "pip"))
    monkeypatch.setenv("VIRTUALENV_OVERRIDE_APP_DATA", str(install_cache / "virtualenv"))
    repo = tmp_path / "harness"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "skills/demo/SKILL.md", GOOD)
    write(repo, "prompts/system.md", prompt(8))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Initial harness")
    return repo


def try_repo(repo: Path, path: str, text: str) -> subprocess.CompletedProcess[str]:
    write(repo, path, text)
    git(repo, "add", "-A")
    return pre_commit("try-repo", str(HOOK_REPO), "harnessgit-check", cwd=repo)


@pytest.mark.slow
def test_a_good_small_edit_passes(harness_repo: Path) -> None:
    result = try_repo(harness_repo, "skills/demo/SKILL.md", GOOD.replace("Answer it.", "Answer it briefly."))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "harnessgit check" in result.stdout and "Passed" in result.stdout


@pytest.mark.slow
def test_a_bloated_skill_fails(harness_repo: Path) -> None:
    bloated = GOOD + "".join(f"{i}. Also consider case number {i}.\n" for i in range(600))
    result = try_repo(harness_repo, "skills/demo/SKILL.md", bloated)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "skills/demo/SKILL.md:505: length: body is 604 lines, over the skill limit of 500" in result.stdout


@pytest.mark.slow
def test_a_collapsed_prompt_fails_with_a_collapse_finding(harness_repo: Path) -> None:
    result = try_repo(harness_repo, "prompts/system.md", "## Part 0\nAnswer.\n")
    assert result.returncode == 1, result.stdout + result.stderr
    assert "prompts/system.md: collapse: shrank to" in result.stdout
    assert "section gone: ## Part 7" in result.stdout


@pytest.mark.slow
def test_an_invalid_frontmatter_name_fails(harness_repo: Path) -> None:
    result = try_repo(harness_repo, "skills/demo/SKILL.md", GOOD.replace("name: demo", "name: Demo_Skill"))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "skills/demo/SKILL.md:2: format: name 'Demo_Skill' is not a valid skill name" in result.stdout


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_project_checks_its_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The project's own .pre-commit-config.yaml runs harnessgit on templates/, and they pass.

    Only its local harnessgit hook runs here (the other hooks come from GitHub):
    in a copy of templates/, staged, with the development install on PATH.
    """
    import shutil

    import yaml

    config = yaml.safe_load((HOOK_REPO / ".pre-commit-config.yaml").read_text())
    local = [repo for repo in config["repos"] if repo["repo"] == "local"]
    hooks = [hook for repo in local for hook in repo["hooks"] if hook["id"] == "harnessgit-check"]
    assert len(hooks) == 1
    repo = tmp_path / "project"
    shutil.copytree(HOOK_REPO / "templates", repo / "templates")
    (repo / "notes.txt").write_text("not under templates/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    (repo / "only-hook.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": hooks}]}))
    monkeypatch.setenv("PRE_COMMIT_HOME", str(tmp_path / "pre-commit-home"))
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    result = pre_commit("run", "--config", "only-hook.yaml", "--all-files", "--verbose", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "checked 2 harness files: no findings" in result.stdout  # templates/example
    # The same hook fails on a broken template, so the pass above means something.
    write(repo, "templates/example/SKILL.md", "---\nname: Example\ndescription: d\n---\n")
    git(repo, "add", "-A")
    broken = pre_commit("run", "--config", "only-hook.yaml", "--all-files", cwd=repo)
    assert broken.returncode == 1 and "is not a valid skill name" in broken.stdout


def test_repository_templates_pass_at_their_own_root(tmp_path: Path) -> None:
    """A template with its own harnessgit.toml is copied to become a repository (see
    its README); there, every harness file passes `harnessgit check --all`."""
    import shutil

    templates = [path.parent for path in sorted((HOOK_REPO / "templates").glob("*/harnessgit.toml"))]
    assert templates, "no repository template to check"
    for template in templates:
        repo = tmp_path / template.name
        shutil.copytree(template, repo)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        result = subprocess.run(
            [sys.executable, "-m", "harnessgit", "check", "--all", "--staged"],
            cwd=repo,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, f"{template.name}: {result.stdout}{result.stderr}"
        assert "no findings" in result.stdout


@pytest.mark.slow
def test_warnings_show_when_the_hook_passes(harness_repo: Path) -> None:
    # pre-commit hides a passing hook's output unless the hook is verbose: on main the
    # warning below was never seen by whoever committed.
    rule = "\nAlways cite the source document and the page number for every figure you quote in the answer.\n"
    repeated = prompt(8) + rule * 2
    result = try_repo(harness_repo, "prompts/system.md", repeated)
    assert result.returncode == 0, result.stdout + result.stderr
    assert re.search(r"prompts/system\.md:\d+: duplication: ", result.stdout)
    assert "checked 1 harness file: 0 failures, 1 warning" in result.stdout


@pytest.mark.slow
def test_a_one_line_fix_in_a_file_already_too_long_passes_the_hook(harness_repo: Path) -> None:
    # The shape: a link fixed in a 675-line SKILL.md exited 1 on main.
    body = "".join(f"{i}. Step {i}: see the guide for details.\n" for i in range(674))
    long = GOOD + "See [the guide](http://example.com/old).\n" + body
    write(harness_repo, "skills/demo/SKILL.md", long)
    git(harness_repo, "commit", "-qam", "a long skill")
    result = try_repo(harness_repo, "skills/demo/SKILL.md", long.replace("http://", "https://"))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "not blocking: 2 existing" in result.stdout
    # Growing a little past a limit it is already over warns ([checks] over_limit_tolerance,
    # 5% of the limit: issue 27); growing past the tolerance fails.
    little = try_repo(harness_repo, "skills/demo/SKILL.md", long + "One more line.\n")
    assert little.returncode == 0, little.stdout + little.stderr
    worse = try_repo(harness_repo, "skills/demo/SKILL.md", long + "One more line.\n" * 40)
    assert worse.returncode == 1 and "lines, over the skill limit of 500" in worse.stdout
