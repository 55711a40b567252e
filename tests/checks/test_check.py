"""check_change against real repositories: between commits, on the index, on the working tree."""

from __future__ import annotations

import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.checks import CheckRequest, check_change
from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.store import Store
from tests.conftest import git, write
from tests.harness_text import STORY_SKILL, STORY_SLIM, detail_file, prompt


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def harness(make_repo: Callable[..., Path]) -> Path:
    return make_repo(
        {"prompts/long.md": prompt(8), "skills/demo/SKILL.md": "---\nname: demo\ndescription: d\n---\n"}
    )


def test_the_gate_call_between_two_commits(harness: Path) -> None:
    base = head(harness)
    write(harness, "prompts/long.md", "## Part 0\nAnswer.\n")
    write(harness, "eval.py", "print('not a harness file')\n")
    git(harness, "commit", "-qam", "candidate")
    with Store.discover(harness) as store:
        report = check_change(store, load_config(harness), base, head(harness))
    assert [file.path for file in report.files] == ["prompts/long.md"]  # eval.py is not harness
    assert report.failed and [finding.rule for finding in report.findings] == ["collapse"]
    assert "section gone: ## Part 7 (line 50 before)" in report.findings[0].details


def test_renamed_deleted_and_new_files(harness: Path) -> None:
    base = head(harness)
    git(harness, "mv", "prompts/long.md", "prompts/moved.md")
    git(harness, "rm", "-q", "prompts/system.md")
    write(harness, "prompts/fresh.md", "A new prompt.\n")
    git(harness, "add", "-A")
    git(harness, "commit", "-qm", "move")
    with Store.discover(harness) as store:
        report = check_change(store, load_config(harness), base, head(harness))
    statuses = {file.path: (file.status, file.old_path) for file in report.files}
    assert statuses == {
        "prompts/fresh.md": ("added", None),
        "prompts/moved.md": ("renamed", "prompts/long.md"),
        "prompts/system.md": ("deleted", None),
    }
    assert report.findings == []


def test_old_none_means_every_file_is_new(harness: Path) -> None:
    with Store.discover(harness) as store:
        report = check_change(store, load_config(harness), None, head(harness))
    assert {file.status for file in report.files} == {"added"}
    assert "skills/demo/SKILL.md" in [file.path for file in report.files]


def test_staged_content_not_the_working_tree(harness: Path) -> None:
    write(harness, "prompts/long.md", "## Part 0\nstaged collapse\n")
    git(harness, "add", "prompts/long.md")
    write(harness, "prompts/long.md", prompt(8))  # unstaged: back to the original
    with Store.discover(harness) as store:
        config = load_config(harness)
        staged = check_change(store, config, head(harness), request=CheckRequest(source="index"))
        worktree = check_change(store, config, head(harness), request=CheckRequest(source="worktree"))
    assert [finding.rule for finding in staged.findings] == ["collapse"]
    assert worktree.findings == [] and worktree.files == []


def test_worktree_includes_untracked_and_explicit_unchanged_files(harness: Path) -> None:
    write(harness, "prompts/untracked.md", "```python\nprint('cut off')\n")
    with Store.discover(harness) as store:
        config = load_config(harness)
        changed = check_change(store, config, head(harness), request=CheckRequest(source="worktree"))
        named = check_change(
            store,
            config,
            head(harness),
            request=CheckRequest(source="worktree", paths=["skills/demo/SKILL.md", "eval.py"]),
        )
        everything = check_change(
            store, config, head(harness), request=CheckRequest(source="worktree", all_files=True)
        )
    assert [(f.path, f.rule) for f in changed.findings] == [("prompts/untracked.md", "format")]
    assert [(f.path, f.status) for f in named.files] == [("skills/demo/SKILL.md", "unchanged")]
    assert named.notes == ["skipped 1 file outside the harness paths: eval.py"]
    assert {f.path for f in everything.files} == {
        "SKILL.md",
        "prompts/long.md",
        "prompts/system.md",
        "prompts/untracked.md",
        "skills/demo/SKILL.md",
    }


def test_unborn_head_and_missing_files(tmp_path: Path) -> None:
    repo = tmp_path / "fresh"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    write(repo, "SKILL.md", "---\nname: Bad Name\ndescription: d\n---\n")
    git(repo, "add", "-A")
    with Store.discover(repo) as store:
        report = check_change(store, load_config(repo), None, request=CheckRequest(source="index"))
        assert [(f.path, f.status) for f in report.files] == [("SKILL.md", "added")]
        assert report.failed
        # A missing named file is a failing finding; the other named files are still checked.
        named = check_change(
            store,
            load_config(repo),
            None,
            request=CheckRequest(source="worktree", paths=["prompts/nope.md", "SKILL.md"]),
        )
        assert (named.findings[0].path, named.findings[0].rule, named.findings[0].message) == (
            "prompts/nope.md",
            "format",
            "no such file here",
        )
        assert [f.path for f in named.files] == ["SKILL.md"] and named.failed


def test_symlinks_are_noted_not_followed(harness: Path) -> None:
    (harness / "prompts" / "link.md").symlink_to("/etc/passwd")
    git(harness, "add", "-A")
    with Store.discover(harness) as store:
        staged = check_change(
            store, load_config(harness), head(harness), request=CheckRequest(source="index")
        )
        worktree = check_change(
            store, load_config(harness), head(harness), request=CheckRequest(source="worktree")
        )
    assert staged.notes == ["prompts/link.md is a symbolic link: not checked"]
    assert worktree.notes == ["prompts/link.md is a symbolic link: not checked"]
    assert staged.files == [] and worktree.files == []
    git(harness, "commit", "-qm", "link")  # unchanged and named: still never followed
    with Store.discover(harness) as store:
        for source in ("index", "worktree"):
            named = check_change(
                store,
                load_config(harness),
                head(harness),
                request=CheckRequest(source=source, paths=["prompts/link.md"]),
            )
            assert named.files == [] and named.notes == ["prompts/link.md is a symbolic link: not checked"]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_100_mb_file_is_sized_not_read(harness: Path) -> None:
    big = harness / "prompts" / "huge.md"
    with open(big, "wb") as handle:
        for _ in range(100):
            handle.write(b"a" * (1024 * 1024))
    git(harness, "add", "prompts/huge.md")
    with Store.discover(harness) as store:
        config = load_config(harness)
        tracemalloc.start()
        try:
            staged = check_change(store, config, head(harness), request=CheckRequest(source="index"))
            worktree = check_change(store, config, head(harness), request=CheckRequest(source="worktree"))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
    for report in (staged, worktree):
        [finding] = report.findings
        assert (finding.path, finding.rule, finding.measure) == ("prompts/huge.md", "length", "bytes")
        assert finding.value == 100 * 1024 * 1024
    assert peak < 10 * 1024 * 1024  # bounded: the 100 MB never entered memory


def test_revisions_are_never_options(harness: Path) -> None:
    with Store.discover(harness) as store, pytest.raises(HarnessgitError, match="looks like an option"):
        check_change(store, load_config(harness), "--output=/tmp/x", head(harness))
    with Store.discover(harness) as store:
        by_name = check_change(store, load_config(harness), None, "main")  # names work, once checked
    assert by_name.files


@pytest.fixture
def story(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"skills/data-storytelling/SKILL.md": STORY_SKILL})


def test_a_skill_slimmed_into_references_is_not_a_collapse(story: Path) -> None:
    # Issue 14's benchmark: 85 of 89 collapse findings were SKILL.md files whose
    # sections moved to references/*.md (not harness files) in the same commit.
    base = head(story)
    write(story, "skills/data-storytelling/SKILL.md", STORY_SLIM)
    write(story, "skills/data-storytelling/references/details.md", detail_file(STORY_SKILL))
    git(story, "add", "-A")
    git(story, "commit", "-qm", "extract detail to references/details.md")
    with Store.discover(story) as store:
        report = check_change(store, load_config(story), base, head(story))
    assert [file.path for file in report.files] == ["skills/data-storytelling/SKILL.md"]
    assert report.findings == []


def test_sections_split_into_several_new_files_staged_or_untracked(story: Path) -> None:
    frameworks, rest = detail_file(STORY_SKILL).split("## Visualization Techniques")
    write(story, "skills/data-storytelling/SKILL.md", STORY_SLIM)
    write(story, "skills/data-storytelling/references/frameworks.md", frameworks)
    write(story, "prompts/visuals.md", "## Visualization Techniques" + rest)  # a harness file
    with Store.discover(story) as store:
        config = load_config(story)
        untracked = check_change(store, config, head(story), request=CheckRequest(source="worktree"))
        git(story, "add", "-A")
        staged = check_change(store, config, head(story), request=CheckRequest(source="index"))
        hook = check_change(
            store,
            config,
            head(story),
            request=CheckRequest(source="index", paths=["skills/data-storytelling/SKILL.md"]),
        )
    assert [f.rule for report in (untracked, staged, hook) for f in report.findings] == []


def test_content_that_went_nowhere_is_still_a_collapse(story: Path) -> None:
    # ACE's case: the text is cut, and a file the change adds holds something else.
    base = head(story)
    write(story, "skills/data-storytelling/SKILL.md", STORY_SLIM)
    write(story, "skills/data-storytelling/references/details.md", "# Details\n\nTo be written.\n")
    git(story, "add", "-A")
    git(story, "commit", "-qm", "slim down")
    with Store.discover(story) as store:
        report = check_change(store, load_config(story), base, head(story))
    [finding] = report.findings
    assert finding.rule == "collapse" and finding.blocks
    assert "section gone: ## Story Frameworks (line 16 before)" in finding.details
