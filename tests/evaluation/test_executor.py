"""Choosing where batches run (``[evaluator] executor``, ``--executor``), without a
cluster: what is refused, the tree that travels to a Ray node, and the variables
that follow it. The runs on a real Ray cluster are in test_remote.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.command import passed_variables
from harnessgit.evaluation.ray_executor import INSTALL_HINT, RayConnection, pack, unpack
from tests.cli.runner import run
from tests.conftest import CONFIG, snapshot, write
from tests.evaluation.test_persistent import PERSISTENT


@pytest.mark.parametrize(
    ("setting", "kind"),
    [('python = "grader:score"', "python"), ('command = ["x"]\npersistent = true', "persistent")],
)
def test_a_local_only_evaluator_on_ray_is_one_clear_error(
    make_repo: Callable[..., Path], setting: str, kind: str
) -> None:
    config = f'[harness]\npaths = ["SKILL.md"]\n\n[evaluator]\n{setting}\nexecutor = "ray"\n'
    repo = make_repo(config=config)
    before = snapshot(repo)
    result = run(repo, "eval", "HEAD")
    assert result.exit_code == 3
    assert f"a {kind} evaluator runs only here" in result.output
    assert "evaluator.executor" in result.output
    assert snapshot(repo) == before


def test_executor_option_reaches_the_evaluation(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({"server.py": "", "splits.json": '{"selection": ["a"]}'}, config=PERSISTENT)
    before = snapshot(repo)
    result = run(repo, "eval", "HEAD", "--executor", "ray")
    assert result.exit_code == 3
    assert "--executor ray: " in result.output and "a persistent evaluator runs only here" in result.output
    assert snapshot(repo) == before


@pytest.mark.parametrize(
    "command", [["eval"], ["test"], ["gate"], ["merge"], ["evolve"], ["bisect"], ["bisect-judge"]]
)
def test_every_command_that_evaluates_has_executor(repo: Path, command: list[str]) -> None:
    result = run(repo, *command, "--help")
    assert "--executor [local|ray]" in result.output and "--jobs" in result.output


def test_without_ray_installed_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # what `import ray` does when it is not installed
    with pytest.raises(HarnessgitError, match=r"pip install 'harnessgit\[ray\]'") as caught:
        RayConnection().ray()
    assert str(caught.value) == INSTALL_HINT


def test_the_tree_travels_whole(tmp_path: Path) -> None:
    source = tmp_path / "source"
    write(source, "SKILL.md", "# skill\n")
    write(source, "grader/run.sh", "#!/bin/sh\n").chmod(0o755)
    (source / "link.md").symlink_to("SKILL.md")
    target = tmp_path / "target"
    target.mkdir()
    unpack(pack(source), target)
    assert (target / "SKILL.md").read_text() == "# skill\n"
    assert os.access(target / "grader/run.sh", os.X_OK)
    assert (target / "link.md").is_symlink() and os.readlink(target / "link.md") == "SKILL.md"


def test_the_variables_evaluator_env_names_follow_the_job(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GRADER_TOKEN", "t-1")
    monkeypatch.setenv("OTHER_SECRET", "s")
    # A node's PATH and HOME are its own: only what [evaluator] env adds travels.
    assert passed_variables(["GRADER_*", "PATH"]) == {"GRADER_TOKEN": "t-1"}


def test_the_config_default_is_local(repo: Path) -> None:
    from harnessgit.config import load_config

    assert load_config(repo).evaluator.executor == "local"
    write(repo, "harnessgit.toml", CONFIG + 'executor = "cloud"\n')
    with pytest.raises(HarnessgitError, match="executor"):
        load_config(repo)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_an_unreachable_ray_address_is_one_line_at_once(
    make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("ray")
    with socket.socket() as closed:  # a port nothing listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    repo = make_repo({"splits.json": '{"selection": ["a"]}'})
    before = snapshot(repo)
    result = run(repo, "eval", "HEAD", "--executor", "ray")
    assert result.exit_code == 3  # not Ray's own wait, minutes long
    assert f"cannot connect to Ray at 127.0.0.1:{port} (RAY_ADDRESS)" in result.output
    assert snapshot(repo) == before


def test_a_ray_node_needs_none_of_harnessgits_dependencies() -> None:
    """Only harnessgit's code travels to the nodes (Ray's py_modules), not pydantic,
    GitPython or numpy: what a task imports must be the standard library."""
    probe = (
        "import json, sys\n"
        "import harnessgit.evaluation.ray_executor\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules} - set(sys.stdlib_module_names))))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])}
    found = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert [name for name in json.loads(found.stdout) if not name.startswith("_")] == ["harnessgit"]
