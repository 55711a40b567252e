"""Writing a tree's files for the evaluator: modes, links and filters as a checkout would."""

from __future__ import annotations

from pathlib import Path

import pytest

from harnessgit.store import Store
from tests.conftest import git


@pytest.mark.parametrize("attributes", [False, True])
def test_checkout_tree_writes_files_modes_and_links(repo: Path, tmp_path: Path, attributes: bool) -> None:
    (repo / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (repo / "run.sh").chmod(0o755)
    (repo / "link.md").symlink_to("SKILL.md")
    if attributes:  # through git checkout-index, so that filters and eol rules apply
        (repo / ".gitattributes").write_text("*.md text eol=lf\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "modes")
    target = tmp_path / f"out-{attributes}"
    target.mkdir()
    with Store.discover(repo) as store:
        store.checkout_tree(store.commit_info(store.resolve_commit("HEAD")).tree, target)
    assert (target / "prompts" / "system.md").read_text() == (repo / "prompts" / "system.md").read_text()
    assert (target / "run.sh").stat().st_mode & 0o111
    assert (target / "link.md").is_symlink()
    assert (target / "link.md").read_text() == (repo / "SKILL.md").read_text()
    assert sorted(p.name for p in target.iterdir()) == sorted(
        p.name for p in repo.iterdir() if p.name != ".git"
    )
