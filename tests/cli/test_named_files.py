"""Files named on `propose`'s command line (--evidence, --file, --patch) and symbolic links.

A file the user names is theirs to name, wherever it is. But a cloned repository can
hold `runs/last.jsonl -> ~/.ssh/id_rsa`: a name that runs through the repository must
not lead out of it through a link (issue 15). Before, both the evidence and the --file
below were read through the link and committed.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.candidates.test_propose_links import every_object
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot, write

PRIVATE = "HOST-PRIVATE-7777"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A private directory beside the repository, with a JSONL file and a text file."""
    private = tmp_path / "private"
    private.mkdir()
    (private / "run.jsonl").write_text(f'{{"kind": "critique", "text": "{PRIVATE}"}}\n')
    (private / "prompt.md").write_text(f"{PRIVATE}\n")
    return private


def hostile(repo: Path, outside: Path) -> None:
    """Links committed in the repository, as a clone would bring them."""
    (repo / "runs").mkdir()
    (repo / "runs" / "last.jsonl").symlink_to(outside / "run.jsonl")
    (repo / "runs" / "prompt.md").symlink_to(Path("..", "..", outside.name, "prompt.md"))
    (repo / "runs" / "private").symlink_to(outside)  # a linked directory
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "runs")


@pytest.mark.parametrize(
    ("args", "what"),
    [
        (["--evidence", "runs/last.jsonl"], "evidence file runs/last.jsonl"),
        (["--evidence", "runs/private/run.jsonl"], "evidence file runs/private/run.jsonl"),
        (["--file", "prompts/system.md=runs/prompt.md"], "file runs/prompt.md"),
        (["--patch", "runs/private/prompt.md"], "patch runs/private/prompt.md"),
    ],
)
def test_a_name_inside_the_repository_does_not_lead_out(
    repo: Path, outside: Path, args: list[str], what: str
) -> None:
    hostile(repo, outside)
    write(repo, "prompts/system.md", "Be brief.\n")
    before = snapshot(repo)
    line = one_error_line(run(repo, "propose", "-m", "x", *args))
    assert line.startswith(f"harnessgit: error: {what} leads out of the repository through a symbolic link")
    assert str(outside) in line
    assert snapshot(repo) == before
    assert PRIVATE.encode() not in every_object(repo)


def test_a_file_named_where_it_is_is_read(repo: Path, outside: Path) -> None:
    # The user's own file, outside the repository: named there, it is theirs to attach.
    hostile(repo, outside)
    write(repo, "prompts/system.md", "Be brief.\n")
    result = run(repo, "propose", "-m", "x", "--evidence", str(outside / "run.jsonl"))
    assert result.exit_code == 0, result.output
    assert PRIVATE.encode() in every_object(repo)


def test_a_link_inside_the_repository_is_read(repo: Path) -> None:
    write(repo, "data/run.jsonl", '{"kind": "critique", "text": "kept"}\n')
    (repo / "last.jsonl").symlink_to(Path("data", "run.jsonl"))
    write(repo, "prompts/system.md", "Be brief.\n")
    result = run(repo, "propose", "-m", "x", "--evidence", "last.jsonl")
    assert result.exit_code == 0, result.output


def test_a_name_that_climbs_out_is_read_as_named(repo: Path, outside: Path) -> None:
    # Relative to -C REPO, ../private/run.jsonl names a file outside: the user's own.
    write(repo, "prompts/system.md", "Be brief.\n")
    result = run(repo, "propose", "-m", "x", "--evidence", f"../{outside.name}/run.jsonl")
    assert result.exit_code == 0, result.output
