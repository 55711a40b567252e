from __future__ import annotations

import pytest

from harnessgit.review.diff import parse_patch, unquote_path


@pytest.mark.parametrize(
    ("printed", "name"),
    [
        ("a/SKILL.md", "SKILL.md"),
        ('"b/say \\"hi\\".md"', 'say "hi".md'),
        ('"b/new\\nline.md"', "new\nline.md"),
        ('"a/back\\\\slash\\ttab"', "back\\slash\ttab"),
        ('"a/\\303\\251t\\303\\251.md"', "été.md"),  # core.quotePath=true's octal bytes
        ("b/été.md", "été.md"),  # core.quotePath=false: as is
        ("/dev/null", "/dev/null"),
    ],
)
def test_unquote_path(printed: str, name: str) -> None:
    assert unquote_path(printed) == name


PATCH = """\
diff --git a/assets/logo.png b/assets/logo.png
new file mode 100644
index 0000000..f76dd23
Binary files /dev/null and b/assets/logo.png differ
diff --git a/old.bin b/old.bin
deleted file mode 100644
index f68ed80..0000000
Binary files a/old.bin and /dev/null differ
diff --git a/prompts/system.md b/prompts/main.md
similarity index 85%
rename from prompts/system.md
rename to prompts/main.md
index b2f931a..b566061 100644
--- a/prompts/system.md
+++ b/prompts/main.md
@@ -1,2 +1,3 @@
 one
-two
+deux
+three
diff --git a/moved.md b/there.md
similarity index 100%
rename from moved.md
rename to there.md
diff --git "a/say \\"hi\\".md" "b/say \\"hi\\".md"
deleted file mode 100644
index e9891ed..0000000
--- "a/say \\"hi\\".md"
+++ /dev/null
@@ -1 +0,0 @@
-hi
diff --git a/prompts/é tab.md b/prompts/é tab.md
index 587be6b..b77b4eb 100644
--- a/prompts/é tab.md\t
+++ b/prompts/é tab.md\t
@@ -1 +1,2 @@
 x
+diff --git a/not/a/file b/not/a/file
"""


def test_parse_patch_reads_every_kind_of_change() -> None:
    files = {f.path: f for f in parse_patch(PATCH)}
    assert list(files) == [
        "assets/logo.png",
        "old.bin",
        "prompts/main.md",
        "there.md",
        'say "hi".md',
        "prompts/é tab.md",
    ]
    logo = files["assets/logo.png"]
    assert (logo.status, logo.binary, logo.added, logo.removed) == ("added", True, None, None)
    assert (files["old.bin"].status, files["old.bin"].binary) == ("deleted", True)
    renamed = files["prompts/main.md"]
    assert (renamed.status, renamed.old_path, renamed.added, renamed.removed) == (
        "renamed",
        "prompts/system.md",
        2,
        1,
    )
    assert "+deux" in renamed.patch and "rename from prompts/system.md" in renamed.patch
    assert (files["there.md"].status, files["there.md"].old_path, files["there.md"].added) == (
        "renamed",
        "moved.md",
        0,
    )
    assert (files['say "hi".md'].status, files['say "hi".md'].removed) == ("deleted", 1)
    # A line inside a hunk that looks like a diff header is content, not a new file.
    assert (files["prompts/é tab.md"].status, files["prompts/é tab.md"].added) == ("modified", 1)


def test_an_empty_patch_has_no_files() -> None:
    assert parse_patch("") == []


def test_each_file_keeps_its_text_as_git_printed_it() -> None:
    files = parse_patch(PATCH)
    assert "".join(f.patch for f in files) == PATCH
    assert files[2].patch.startswith("diff --git a/prompts/system.md b/prompts/main.md\nsimilarity index 85%")
