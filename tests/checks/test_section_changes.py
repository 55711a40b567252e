"""Which sections an edit added, removed or changed (`checks.section_changes`), without git."""

from __future__ import annotations

from harnessgit.checks.section_changes import FRONTMATTER, INTRO, is_markdown, section_changes

OLD = """\
---
name: demo
description: Old description.
---
Intro text.

# Demo

## 1. Setup

Install it.

### Example

Run it.

## 2. Usage

Use it.

### Example

Call it.
"""


def test_an_unchanged_text_touches_nothing() -> None:
    assert not section_changes(OLD, OLD)


def test_renumbering_and_blank_lines_are_no_change() -> None:
    new = OLD.replace("## 1. Setup", "## 2. Setup").replace("## 2. Usage", "## 3. Usage")
    assert not section_changes(OLD, new.replace("Install it.\n", "\n\nInstall it.   \n"))


def test_a_subsection_edit_changes_that_subsection_only() -> None:
    found = section_changes(OLD, OLD.replace("Call it.", "Call it twice."))
    assert (found.added, found.removed, found.changed) == ([], [], ["### Example"])


def test_added_and_removed_are_told_apart_by_their_parents() -> None:
    new = OLD.replace("## 2. Usage\n\nUse it.\n\n### Example\n\nCall it.\n", "## Limits\n\nNone.\n")
    found = section_changes(OLD, new)
    assert (found.added, found.removed, found.changed) == (["## Limits"], ["## 2. Usage", "### Example"], [])


def test_frontmatter_and_intro_count() -> None:
    found = section_changes(OLD, OLD.replace("Old description.", "New.").replace("Intro text.", "Hi."))
    assert found.changed == [FRONTMATTER, INTRO]


def test_an_added_or_deleted_file_adds_or_removes_every_section() -> None:
    added = section_changes(None, "# A\n\ntext\n\n## B\n\nmore\n")
    assert (added.added, added.removed) == (["# A", "## B"], [])
    assert section_changes("# A\n", None).removed == ["# A"]


def test_markdown_files_by_suffix() -> None:
    assert is_markdown("skills/x/SKILL.md") and is_markdown("docs/A.MDX")
    assert not is_markdown("skills/x/scripts/run.py")
