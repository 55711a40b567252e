from __future__ import annotations

import pytest

from harnessgit.checks.compare import compare
from harnessgit.checks.edits import check_change_edit, check_file_edit

OLD = "".join(f"line {i}\n" for i in range(200))


def scattered(every: int, lines: int = 200) -> str:
    return "".join(f"LINE {i}\n" if i % every == 0 else f"line {i}\n" for i in range(lines))


def test_file_budget_counts_hunks_and_changed_lines() -> None:
    comparison = compare(OLD, scattered(10))  # 20 places, 40 changed lines
    assert comparison.hunks == 20
    findings = check_file_edit("p.md", comparison, 10, 30)
    assert [(f.measure, f.value, f.limit) for f in findings] == [("hunks", 20, 10), ("changed lines", 40, 30)]
    assert all(f.rule == "edit-size" and f.level == "failure" and f.path == "p.md" for f in findings)
    assert check_file_edit("p.md", comparison, None, None) == []


def test_change_budget_adds_files_up() -> None:
    one = compare(OLD, scattered(20))  # 10 hunks each
    findings = check_change_edit([(one, 10, 150), (one, 10, 150), (one, 10, 150)], 25, 400)
    [finding] = findings
    assert finding.path is None and (finding.value, finding.limit) == (30, 27)  # 25 + 1 per further file
    assert "3 files" in finding.message


def test_change_budget_grows_with_the_files_it_touches() -> None:
    # An upstream sync (issue 27): 28 files, one small hunk each, is not one large edit.
    before = "".join(f"line {i}\n" for i in range(50))
    one = compare(before, before.replace("line 7\n", "line seven\n"))
    assert (one.hunks, one.changed_lines) == (1, 2)
    assert check_change_edit([(one, 10, 150)] * 28, 25, 400) == []


def test_single_file_change_is_not_reported_twice() -> None:
    old = "".join(f"line {i}\n" for i in range(400))
    big = compare(old, scattered(8, 400))  # 50 hunks: 7 unchanged lines keep hunks apart
    assert big.hunks == 50
    assert check_change_edit([(big, 10, 150)], 25, 400) == []
    # ...unless the file has no budget of its own.
    assert len(check_change_edit([(big, None, None)], 25, 400)) == 1
    assert check_change_edit([], 25, 400) == []


# A command file in the style of the ones a prettier pass rewrote (issue 14's benchmark:
# 39 of 169 edit-size findings were formatting-only passes, 0 words changed).
BEFORE_PRETTIER = """# Debug and trace configuration
## Context
The user needs to set up debugging and tracing capabilities to efficiently diagnose issues,
track down bugs, and understand system behavior. Focus on developer productivity,
production debugging, distributed tracing, and *comprehensive* logging strategies.
## Requirements
* Attach the debugger to the running process
* Keep **source maps** enabled in every configuration
* Prefer `console` output over files
| Setting | Value |
|---|---|
| runtimeExecutable | node |
| sourceMaps | true |
```json
{
    "version": "0.2.0",
    "configurations": [
        {
            "name": "Debug Node.js App",
            "type": "node",
            "skipFiles": [
                "<node_internals>/**",
                "node_modules/**"
            ]
        }
    ]
}
```
```js
const tracer = require('dd-trace').init({ service: 'api' })
```
"""

AFTER_PRETTIER = """# Debug and trace configuration

## Context

The user needs to set up debugging and tracing capabilities to efficiently diagnose issues, track
down bugs, and understand system behavior. Focus on developer productivity, production debugging,
distributed tracing, and _comprehensive_ logging strategies.

## Requirements

- Attach the debugger to the running process
- Keep **source maps** enabled in every configuration
- Prefer `console` output over files

| Setting           | Value |
| ----------------- | ----- |
| runtimeExecutable | node  |
| sourceMaps        | true  |

```json
{
  "version": "0.2.0",
  "configurations": [
    {
      "name": "Debug Node.js App",
      "type": "node",
      "skipFiles": ["<node_internals>/**", "node_modules/**"]
    }
  ]
}
```

```js
const tracer = require("dd-trace").init({ service: "api" });
```
"""


def test_a_formatting_only_pass_is_not_an_edit() -> None:
    # Re-wrapped paragraph, `*` -> `-` bullets, `*em*` -> `_em_`, table padding, blank
    # lines, re-indented JSON, quotes and semicolons in code: no word changed.
    comparison = compare(BEFORE_PRETTIER, AFTER_PRETTIER)
    assert (comparison.changed_lines, comparison.hunks) == (0, 0)
    assert check_file_edit("cmd.md", comparison, 1, 1) == []
    assert check_change_edit([(comparison, None, None)] * 3, 1, 1) == []


def test_a_formatting_pass_with_one_real_change_counts_that_change() -> None:
    edited = AFTER_PRETTIER.replace("Prefer `console` output over files", "Write traces to a file")
    comparison = compare(BEFORE_PRETTIER, edited)
    assert (comparison.removed, comparison.added, comparison.hunks) == (1, 1, 1)


def test_a_real_rewrite_is_still_large() -> None:
    rewrite = (
        AFTER_PRETTIER.replace("debugging", "profiling")
        .replace("tracing", "sampling")
        .replace("source maps", "symbol files")
        .replace("node", "deno")
        .replace("configuration", "profile")
        .replace("process", "worker")
    )
    comparison = compare(BEFORE_PRETTIER, rewrite)
    assert comparison.changed_lines >= 14 and comparison.hunks == 1
    assert [f.measure for f in check_file_edit("cmd.md", comparison, 0, 10)] == ["hunks", "changed lines"]


def test_a_formatting_pass_never_counts_more_hunks_than_git() -> None:
    # Two real changes in one block that a formatter also re-marked: git shows one
    # hunk, and the unchanged words between the changes do not cut it in two.
    old = "".join(f"* Step {i}: run the migration for shard {i}\n" for i in range(20))
    new = old.replace("* ", "- ").replace("shard 0\n", "shard zero\n").replace("shard 19\n", "shard last\n")
    comparison = compare(old, new)
    assert (comparison.removed, comparison.added, comparison.hunks) == (2, 2, 1)


def test_deleting_a_code_block_counts_its_lines_without_words() -> None:
    # Issue 14's benchmark: sections cut from a SKILL.md are half code, and a fence or a
    # closing brace has no word of its own; git counts them, and so does edit-size.
    block = """```typescript
const tokens = {
  colors: {
    primary: "#0066cc",
  },
};
```
"""
    old = "## Design tokens\n\nKeep tokens in one file.\n\n" + block + "\n## Theming\n\nUse CSS variables.\n"
    new = old.replace(block, "")
    comparison = compare(old, new)
    assert (comparison.removed, comparison.added, comparison.hunks) == (7, 0, 1)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_filling_an_empty_file_is_writing_it_not_editing_it() -> None:
    # Held out (VoltAgent/awesome-claude-code-subagents e9123b1b44): 64 agent files that
    # were 0 bytes in the parent, filled in one commit, were each a 250-300-line edit over
    # the budget; a file created in the same commit was not. The same text rewritten over
    # real content still is.
    from harnessgit.checkconfig.sections import ChecksSection
    from harnessgit.checks import FileVersion, check_files

    written = "".join(f"{i}. Check the deployment's step {i} against the runbook.\n" for i in range(300))
    rewritten = "".join(f"{i}. Ask the owner of service {i} before you page anyone.\n" for i in range(300))
    for old in ("", "\n"):
        version = FileVersion.from_text("prompts/system.md", old, written)
        assert check_files([version], ChecksSection(), rules={"edit-size"}).findings == []
    version = FileVersion.from_text("prompts/system.md", rewritten, written)
    assert {f.measure for f in check_files([version], ChecksSection(), rules={"edit-size"}).findings} >= {
        "changed lines"
    }
