"""`harnessgit log --all-history`: a history made before harnessgit, audited under today's
settings, on a repository laid out like a public skills collection (issue 20)."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from harnessgit.candidates.history import HistoryResult, harness_history
from harnessgit.config import load_config
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot, write
from tests.test_read_only import objects

TOML = """\
[harness]
paths = ["**/SKILL.md", "skills/*/**"]
base = "main"
"""


def skill(name: str, sections: list[str], lines: int = 3) -> str:
    """A SKILL.md with a frontmatter and one section per name, each a few lines long."""
    out = [f"---\nname: {name}\ndescription: Use when the task needs {name}.\n---\n# {name.title()}\n"]
    for title in sections:
        body = "\n".join(f"- {title} step {i}: do the {title.lower()} part with care." for i in range(lines))
        out.append(f"## {title}\n\n{body}\n")
    return "\n".join(out)


ALPHA = skill("alpha", ["Setup", "Usage", "Limits"], lines=4)
ALPHA_GROWN = skill("alpha", ["Setup", "Usage", "Limits", "Examples"], lines=12)
BETA = skill("beta", ["Setup", "Inputs", "Steps", "Checks", "Output", "Pitfalls"], lines=4)
BETA_COLLAPSED = skill("beta", ["Steps"], lines=1)
GUIDE = "# Guide\n\nRead this when alpha needs more detail.\n"
NOTES = "# Notes\n\nWhat beta used to say at length.\n"
GAMMA = skill("gamma", ["Usage"])


@dataclass(frozen=True)
class Collection:
    repo: Path
    root: str  # alpha and beta added (before harnessgit.toml)
    readme: str  # README only
    grow: str  # alpha more than doubled
    adopt: str  # harnessgit.toml committed
    collapsed: str  # the merge that collapsed beta (its branch had two commits)
    gamma: str  # a new skill
    last_readme: str


def commit(repo: Path, message: str, files: dict[str, str]) -> str:
    for path, text in files.items():
        write(repo, path, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD").strip()


@pytest.fixture
def collection(tmp_path: Path) -> Collection:
    repo = tmp_path / "skills-collection"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    files = {
        "skills/alpha/SKILL.md": ALPHA,
        "skills/alpha/references/guide.md": GUIDE,
        "skills/beta/SKILL.md": BETA,
        "README.md": "# Skills\n",
    }
    root = commit(repo, "Add skills alpha and beta", files)
    readme = commit(repo, "Describe the collection", {"README.md": "# Skills\n\nA collection.\n"})
    grow = commit(repo, "Teach alpha everything", {"skills/alpha/SKILL.md": ALPHA_GROWN})
    adopt = commit(repo, "Adopt harnessgit", {"harnessgit.toml": TOML})
    git(repo, "checkout", "-q", "-b", "trim-beta")
    commit(repo, "Trim beta", {"skills/beta/SKILL.md": BETA_COLLAPSED})
    commit(repo, "Keep beta's notes", {"skills/beta/references/notes.md": NOTES})
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge trim-beta", "trim-beta")
    collapsed = git(repo, "rev-parse", "HEAD").strip()
    gamma = commit(repo, "Add skill gamma", {"skills/gamma/SKILL.md": GAMMA})
    last = commit(repo, "Link the skills", {"README.md": "# Skills\n\nalpha, beta, gamma.\n"})
    return Collection(repo, root, readme, grow, adopt, collapsed, gamma, last)


def harness_history_of(repo: Path, limit: int | None = None) -> HistoryResult:
    with Store.discover(repo) as store:
        return harness_history(store, load_config(repo), limit=limit)


def size(*texts: str) -> int:
    return sum(len(text.encode()) for text in texts)


def test_lists_exactly_the_harness_commits_with_their_sizes(collection: Collection) -> None:
    result = harness_history_of(collection.repo)
    # README-only commits and the one adding harnessgit.toml are absent; the merge
    # stands for its branch's two commits; commits before harnessgit.toml are judged.
    assert [e.commit for e in result.entries] == [
        collection.gamma,
        collection.collapsed,
        collection.grow,
        collection.root,
    ]
    assert (result.examined, result.harness_commits) == (7, 4)
    gamma, merge, grow, root = result.entries
    assert merge.merge and not grow.merge
    assert [(f.path, f.status) for f in root.files] == [
        ("skills/alpha/SKILL.md", "added"),
        ("skills/alpha/references/guide.md", "added"),
        ("skills/beta/SKILL.md", "added"),
    ]
    ((path, before, after),) = [(f.path, f.bytes_before, f.bytes_after) for f in grow.files]
    assert (path, before, after) == ("skills/alpha/SKILL.md", size(ALPHA), size(ALPHA_GROWN))
    assert grow.files[0].status == "modified" and grow.growth == size(ALPHA_GROWN) - size(ALPHA)
    assert [(f.path, f.status) for f in merge.files] == [
        ("skills/beta/SKILL.md", "modified"),
        ("skills/beta/references/notes.md", "added"),
    ]
    assert [(e.harness_bytes, e.harness_files) for e in result.entries] == [
        (size(ALPHA_GROWN, GUIDE, BETA_COLLAPSED, NOTES, GAMMA), 5),
        (size(ALPHA_GROWN, GUIDE, BETA_COLLAPSED, NOTES), 4),
        (size(ALPHA_GROWN, GUIDE, BETA), 3),
        (size(ALPHA, GUIDE, BETA), 3),
    ]
    assert result.oldest is not None and result.oldest.commit == collection.root
    assert result.newest is not None and result.newest.bytes == gamma.harness_bytes
    # The estimate: characters / 4, rounded up.
    assert grow.files[0].tokens_after == -(-len(ALPHA_GROWN) // 4)


def test_sections_touched(collection: Collection) -> None:
    _gamma, merge, grow, root = harness_history_of(collection.repo).entries
    alpha = grow.files[0].sections
    assert alpha is not None and alpha.added == ["## Examples"] and alpha.removed == []
    assert alpha.changed == ["## Setup", "## Usage", "## Limits"]  # each grew longer
    beta = merge.files[0].sections
    assert beta is not None
    assert beta.removed == ["## Setup", "## Inputs", "## Checks", "## Output", "## Pitfalls"]
    assert beta.changed == ["## Steps"] and beta.added == []
    assert root.files[1].sections is not None and root.files[1].sections.added == ["# Guide"]


def test_findings_are_the_checks_of_each_change_and_add_up_by_rule(collection: Collection) -> None:
    result = harness_history_of(collection.repo)
    gamma, merge, grow, root = result.entries
    assert {(f.path, f.rule, f.level) for f in grow.findings if f.rule == "growth"} == {
        ("skills/alpha/SKILL.md", "growth", "failure")
    }
    assert {(f.path, f.rule) for f in merge.findings if f.blocks} >= {("skills/beta/SKILL.md", "collapse")}
    assert grow.failed and merge.failed and not gamma.failed and not root.failed
    counts = {r.rule: (r.failures, r.commits) for r in result.findings_by_rule}
    assert counts["growth"] == (1, 1) and counts["collapse"] == (1, 1)
    assert [s.commit for s in result.largest_growth] == [collection.root, collection.grow, collection.gamma]
    assert [s.commit for s in result.largest_shrink] == [collection.collapsed]


def test_limit_keeps_the_newest_harness_commits(collection: Collection) -> None:
    result = harness_history_of(collection.repo, limit=2)
    assert [e.commit for e in result.entries] == [collection.gamma, collection.collapsed]
    assert (result.examined, result.harness_commits) == (7, 4)
    assert result.oldest is not None and result.oldest.commit == collection.collapsed
    assert result.entries[1].harness_bytes == size(ALPHA_GROWN, GUIDE, BETA_COLLAPSED, NOTES)


def test_cli_text_and_json_write_nothing(collection: Collection) -> None:
    before, refs = objects(collection.repo), snapshot(collection.repo)
    text = run(collection.repo, "log", "--all-history")
    assert text.exit_code == 0, text.output
    assert "Add skill gamma" in text.stdout and "Describe the collection" not in text.stdout
    assert "4 commits of 7 on main's first-parent chain changed a harness file; 4 shown" in text.stdout
    assert "skills/beta/SKILL.md: removed ## Setup, ## Inputs, ## Checks and 2 more" in text.stdout
    assert "skills/alpha/SKILL.md: growth: grew" in text.stdout
    data = json.loads(run(collection.repo, "log", "--all-history", "--json", "-n", "1").stdout)
    assert [e["commit"] for e in data["entries"]] == [collection.gamma]
    added = data["entries"][0]["files"][0]["sections"]["added"]
    assert added == ["(frontmatter)", "# Gamma", "## Usage"]
    assert set(data) >= {"examined", "harness_commits", "oldest", "newest", "findings_by_rule"}
    assert objects(collection.repo) == before and snapshot(collection.repo) == refs


def test_unknown_base_is_one_line_and_changes_nothing(collection: Collection) -> None:
    before = snapshot(collection.repo)
    line = one_error_line(run(collection.repo, "log", "--all-history", "--base", "nosuch"))
    assert "base branch 'nosuch' does not exist" in line
    assert snapshot(collection.repo) == before


def test_without_harnessgit_toml_says_run_init(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(config=None)
    before = snapshot(repo)
    line = one_error_line(run(repo, "log", "--all-history"))
    assert "no harnessgit.toml" in line and "harnessgit init" in line
    assert snapshot(repo) == before


def test_a_file_renamed_into_the_harness_grows_it(make_repo: Callable[..., Path]) -> None:
    helper = "def helper():\n    return 'moved into the skill'\n"
    repo = make_repo({"lib/helper.py": helper, "skills/alpha/SKILL.md": ALPHA}, config=TOML)
    (repo / "skills/alpha/scripts").mkdir()
    git(repo, "mv", "lib/helper.py", "skills/alpha/scripts/helper.py")
    moved = commit(repo, "Move the helper into alpha", {})
    newest, first = harness_history_of(repo).entries
    assert newest.commit == moved
    (renamed,) = newest.files
    assert (renamed.status, renamed.old_path) == ("renamed", "lib/helper.py")
    assert (newest.growth, newest.harness_files) == (size(helper), first.harness_files + 1)


def test_links_are_left_out_and_an_unread_side_gives_no_sections(make_repo: Callable[..., Path]) -> None:
    config = TOML + "\n[checks]\nmax_file_bytes = 2000\n"
    repo = make_repo({"skills/alpha/SKILL.md": ALPHA}, config=config)
    (repo / "skills/alpha/also.md").symlink_to("SKILL.md")
    commit(repo, "Link a second name", {})
    big = commit(repo, "Grow alpha past the size the checks read", {"skills/alpha/SKILL.md": ALPHA_GROWN})
    entries = harness_history_of(repo).entries
    assert [e.commit for e in entries[:1]] == [big] and len(entries) == 2  # the link commit is absent
    (grown,) = entries[0].files
    assert (grown.bytes_before, grown.bytes_after) == (size(ALPHA), size(ALPHA_GROWN))
    assert grown.tokens_after is None and grown.sections is None  # never "every section added"
