"""Issue 15, defect 10: `eval` materialises a commit's tree without writing through a symlink.

A crafted tree (git mktree accepts what `git fsck` calls duplicate entries) held a
symlink ``d`` -> a directory outside the repository and a file ``d/pwn.txt``: `eval`
wrote ``pwned`` into that directory. Entries named ``..`` climbed out with no symlink
at all (``x/../../../pwn.txt`` landed in $TMPDIR).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git


def crafted_commit(repo: Path, listing: str) -> str:
    """A commit on HEAD whose tree is HEAD's plus the raw ``git mktree`` lines given."""
    tree = git(repo, "mktree", input=git(repo, "ls-tree", "HEAD") + listing).strip()
    return git(repo, "commit-tree", "-p", "HEAD", "-m", "crafted", tree).strip()


def symlink_escape(repo: Path, outside: Path) -> str:
    """A symlink ``d`` -> ``outside`` and a file ``d/pwn.txt`` in one tree."""
    link = git(repo, "hash-object", "-w", "--stdin", input=str(outside)).strip()
    pwn = git(repo, "hash-object", "-w", "--stdin", input="pwned\n").strip()
    sub = git(repo, "mktree", input=f"100644 blob {pwn}\tpwn.txt\n").strip()
    return crafted_commit(repo, f"120000 blob {link}\td\n040000 tree {sub}\td\n")


def run_eval(repo: Path, rev: str, **env: str) -> subprocess.CompletedProcess[str]:
    """A real `harnessgit eval`, in its own process."""
    return subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), "eval", rev, "--split", "train"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **env},
    )


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_eval_refuses_a_tree_that_writes_through_a_symlink(gate_repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    commit = symlink_escape(gate_repo, outside)
    refs = git(gate_repo, "for-each-ref")
    result = run_eval(gate_repo, commit)
    assert result.returncode == 3, result.stderr
    assert result.stderr.splitlines()[-1] == (
        "harnessgit: error: refused to check out the tree "
        f"{git(gate_repo, 'rev-parse', f'{commit}^{{tree}}').strip()[:12]}: d/pwn.txt lies below "
        "the symlink d, and writing it would follow the link"
    )
    assert list(outside.iterdir()) == []  # nothing written outside the repository
    assert git(gate_repo, "for-each-ref") == refs  # nothing evaluated, nothing recorded


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_eval_refuses_a_tree_that_climbs_out_with_dot_dot(gate_repo: Path, tmp_path: Path) -> None:
    pwn = git(gate_repo, "hash-object", "-w", "--stdin", input="pwned\n").strip()
    sub = git(gate_repo, "mktree", input=f"100644 blob {pwn}\tpwn.txt\n").strip()
    for _ in range(3):
        sub = git(gate_repo, "mktree", input=f"040000 tree {sub}\t..\n").strip()
    commit = crafted_commit(gate_repo, f"040000 tree {sub}\tx\n")
    scratch = tmp_path / "scratch"  # the evaluator's temp dirs, and what lies around them
    scratch.mkdir()
    result = run_eval(gate_repo, commit, TMPDIR=str(scratch))
    assert result.returncode == 3, result.stderr
    assert "x/../../../pwn.txt has a '..' component" in result.stderr.splitlines()[-1]
    assert list(scratch.iterdir()) == []  # no pwn.txt, and no temp dir left behind
