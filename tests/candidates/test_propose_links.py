"""`propose` and symbolic links in a hostile repository (issue 15, defect 9).

A cloned repository can hold `prompts/x.md -> ~/.aws/credentials`. Before, `propose`
read the working tree with `git hash-object --stdin-paths`, which follows links: the
secret behind the link was committed as a regular harness file, on a candidate branch
that `harnessgit-sync.sh` pushes. Now a link is never read through: a harness file that
is a link is refused, out of the repository or not, before anything is written.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.errors import ProposalError
from harnessgit.store import Store
from tests.conftest import git, snapshot

SECRET = b"TOP-SECRET-4242 aws_secret_access_key=wJalrXUtnFEMI/K7MDENG\n"


def every_object(repo: Path) -> bytes:
    """The content of every object in the repository, reachable or not, loose or packed
    (tests/cli/test_named_files.py uses it too)."""
    return subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch", "--unordered"],
        cwd=repo,
        capture_output=True,
        check=True,
    ).stdout


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "credentials"
    path.parent.mkdir()
    path.write_bytes(SECRET)
    return path


def link_out(repo: Path, secret: Path, how: str) -> Path:
    link = repo / "prompts" / "leak.md"
    if how == "absolute":
        link.symlink_to(secret)
    else:  # relative, climbing out of the repository
        link.symlink_to(Path("..", "..", secret.parent.name, secret.name))
    assert link.read_bytes() == SECRET  # the link does lead to the secret
    return link


@pytest.mark.parametrize("how", ["absolute", "relative"])
def test_a_link_out_of_the_repository_is_refused_and_nothing_is_written(
    repo: Path, secret: Path, how: str
) -> None:
    link_out(repo, secret, how)
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(ProposalError) as info:
        propose(store, load_config(repo), rationale="innocent")
    message = str(info.value)
    assert message.startswith("prompts/leak.md is a symbolic link out of the repository")
    assert "\n" not in message
    assert snapshot(repo) == before
    assert b"TOP-SECRET" not in every_object(repo)


def test_a_tracked_file_replaced_by_a_link_out_is_refused(repo: Path, secret: Path) -> None:
    system = repo / "prompts" / "system.md"
    system.unlink()
    system.symlink_to(secret)
    before = snapshot(repo)
    with (
        Store.discover(repo) as store,
        pytest.raises(ProposalError, match="symbolic link out of the repository"),
    ):
        propose(store, load_config(repo))
    assert snapshot(repo) == before
    assert b"TOP-SECRET" not in every_object(repo)


def test_a_link_out_is_refused_among_honest_edits(repo: Path, secret: Path) -> None:
    # The honest edit is hashed only after every path was looked at: the refusal
    # comes first, so not even the secret's blob is left behind.
    (repo / "prompts" / "system.md").write_text("Be brief.\n")
    (repo / "prompts" / "zz.md").symlink_to(secret)
    with (
        Store.discover(repo) as store,
        pytest.raises(ProposalError, match=r"prompts/zz\.md is a symbolic link"),
    ):
        propose(store, load_config(repo))
    assert b"TOP-SECRET" not in every_object(repo)
    assert git(repo, "for-each-ref", "refs/heads/harnessgit") == ""


def test_a_link_inside_the_repository_is_not_read_through(repo: Path) -> None:
    # git would commit it as a link (mode 120000); harness files must be regular files
    # (the checks never follow links), so it is refused rather than copied.
    (repo / "prompts" / "copy.md").symlink_to("system.md")
    with Store.discover(repo) as store, pytest.raises(ProposalError) as info:
        propose(store, load_config(repo))
    assert str(info.value) == (
        "prompts/copy.md is a symbolic link (to system.md): only regular files can be harness files"
    )
    assert git(repo, "for-each-ref", "refs/heads/harnessgit") == ""


def test_a_link_that_is_not_a_harness_file_is_left_out(repo: Path, secret: Path) -> None:
    (repo / "notes.md").symlink_to(secret)  # not under [harness] paths
    (repo / "prompts" / "system.md").write_text("Be brief.\n")
    with Store.discover(repo) as store:
        result = propose(store, load_config(repo))
    assert result.components == ["prompts/system.md"] and result.ignored == ["notes.md"]
    assert b"TOP-SECRET" not in every_object(repo)


def test_a_patch_cannot_add_a_link(repo: Path) -> None:
    patch = (
        "diff --git a/prompts/leak.md b/prompts/leak.md\nnew file mode 120000\n"
        "--- /dev/null\n+++ b/prompts/leak.md\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n"
    )
    with Store.discover(repo) as store, pytest.raises(ProposalError) as info:
        propose(store, load_config(repo), patch.encode())
    assert str(info.value) == (
        "prompts/leak.md is a symbolic link (to /etc/passwd): only regular files can be harness files"
    )


def test_a_committed_link_replaced_by_a_file_is_proposed_as_a_file(repo: Path) -> None:
    alias = repo / "prompts" / "alias.md"
    alias.symlink_to("system.md")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "an alias")
    alias.unlink()
    alias.write_text("A prompt of its own.\n")
    with Store.discover(repo) as store:
        result = propose(store, load_config(repo))
    assert result.components == ["prompts/alias.md"]
    mode = git(repo, "ls-tree", result.commit, "prompts/alias.md").split()[0]
    assert mode == "100644"  # before: mode 120000, a link whose "target" was the new text
    assert git(repo, "show", f"{result.commit}:prompts/alias.md") == "A prompt of its own.\n"
