"""A review of a large change (issue 27 item 8): the totals first (files, lines, the
harness text's characters and tokens before -> after), the largest changes first, and
the long tail of the file table counted (text) or folded into <details> (Markdown)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from harnessgit.config import load_config
from harnessgit.review.comment import review_markdown
from harnessgit.review.render import FILE_ROWS, MD_FILE_ROWS, review_text
from harnessgit.review.review import review
from harnessgit.store import Store
from tests.conftest import git, write

FILES = 40


def synced(make_repo: Callable[..., Path]) -> Path:
    """40 prompts; one commit (an upstream sync) edits every one, prompt 07 the most,
    and adds a file outside the harness."""
    repo = make_repo({f"prompts/p{i:02d}.md": f"# Prompt {i}\n\nBe brief.\n" for i in range(FILES)})
    for i in range(FILES):
        extra = "".join(f"- rule {n}\n" for n in range(30 if i == 7 else 1 + i % 3))
        write(repo, f"prompts/p{i:02d}.md", f"# Prompt {i}\n\nBe brief and exact.\n\n{extra}")
    write(repo, "NOTES.txt", "release notes\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Sync upstream")
    return repo


def test_a_large_change_shows_its_totals_and_its_largest_files_first(make_repo: Callable[..., Path]) -> None:
    repo = synced(make_repo)
    with Store.discover(repo) as store:
        result = review(store, load_config(repo), "main~1", "main")
    before = sum(len(f"# Prompt {i}\n\nBe brief.\n") for i in range(FILES))
    after = sum((repo / f"prompts/p{i:02d}.md").stat().st_size for i in range(FILES))
    totals = result.totals
    assert totals is not None
    assert (totals.files, totals.harness_files) == (FILES + 1, FILES)
    assert (totals.chars_before, totals.chars_after) == (before, after)
    assert totals.tokens_after > totals.tokens_before > 0 and totals.unread == 0
    text = review_text(result)
    assert f"change: {FILES + 1} files ({FILES} harness), +" in text
    assert f"harness text {before:,} → {after:,} characters (+{after - before:,})" in text
    table = text.split("files changed:")[1].split("checks:")[0]
    rows = [line for line in table.splitlines() if re.match(r"(prompts|NOTES)", line)]
    assert len(rows) == FILE_ROWS and rows[0].startswith("prompts/p07.md")  # the largest change first
    assert f"... and {FILES + 1 - FILE_ROWS} more files with smaller changes" in table


def test_a_large_change_folds_its_file_table_in_markdown(make_repo: Callable[..., Path]) -> None:
    repo = synced(make_repo)
    with Store.discover(repo) as store:
        md = review_markdown(review(store, load_config(repo), "main~1", "main"))
    files = md.split("#### Files changed:")[1]
    assert "**The change:** 41 files (40 harness)" in files
    shown, folded = files.split("<details>", 1)
    assert shown.count("| `prompts/") == MD_FILE_ROWS and "| `prompts/p07.md` |" in shown
    assert f"<summary>{FILES + 1 - MD_FILE_ROWS} more files, smaller changes" in folded
    table = folded.split("</details>")[0]
    assert table.count("| `prompts/") + table.count("| `NOTES.txt`") == FILES + 1 - MD_FILE_ROWS
