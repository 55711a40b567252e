"""Issue 27: the checks read every harness file that is prose, say which ones no rule
read and why, and find fences misnested so that they still pair up by count.

The fixture repositories are shaped like the public ones the findings came from: a
Cursor-rules collection (``rules/*.mdc``), a plugin collection of skills with scripts,
lockfiles and build files in its skill folders, and a scanner SKILL.md whose
"Example Output" fence was never closed (trailofbits/skills, fixed in 7be90d6).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from harnessgit.checks import CheckReport, CheckRequest, check_change
from harnessgit.checks.formats import check_fences
from harnessgit.checks.render import report_text
from harnessgit.config import load_config
from harnessgit.store import Store
from tests.cli.runner import run
from tests.conftest import git, write

CONFIG = '[harness]\npaths = {paths}\nbase = "main"\n'

MDC_RULE = """\
---
description: Python style for this project
globs: "**/*.py"
alwaysApply: false
---
# Python style

Prefer small functions.

```python
def example():
    return 1
"""

SKILL = "---\nname: {name}\ndescription: Scan a contract for known vulnerability patterns.\n---\n"

# Shaped like cairo-vulnerability-scanner/SKILL.md before 7be90d6: the "Example Output"
# fence is never closed, so it swallows sections 5-6 up to the first bash block, whose
# closing fence then ends it. Every fence pairs with another: 4 fence lines.
MISNESTED = """\
## 4. How This Skill Works

Run the scanner, then report.

## 5. Example Output

```
=== SCANNER REPORT ===

## 6. Scanning Workflow

### Step 1: Arithmetic Sweep
```bash
rg "felt252" src/
```

## 7. Reporting Format

```bash
caracal detect .
```

## 8. Priority Guidelines

Fix critical findings first.
"""
FIXED = MISNESTED.replace("=== SCANNER REPORT ===\n", "=== SCANNER REPORT ===\n```\n")


def head(repo: Path) -> str:
    return git(repo, "rev-parse", "HEAD").strip()


def _check_all(repo: Path) -> tuple[CheckReport, str]:
    with Store.discover(repo) as store:
        report = check_change(
            store, load_config(repo), None, head(repo), CheckRequest(all_files=True, ratchet=False)
        )
    return report, report_text(report)


def test_cursor_rules_at_a_custom_path_are_read_as_markdown(make_repo: Callable[..., Path]) -> None:
    repo = make_repo(
        {"rules/python.mdc": MDC_RULE, "rules/go.mdc": MDC_RULE.replace("```python\n", "")},
        config=CONFIG.format(paths='["rules/**/*.mdc"]'),
    )
    report, text = _check_all(repo)
    [finding] = report.findings
    assert (finding.path, finding.line, finding.measure) == (
        "rules/python.mdc",
        10,
        "unterminated code fence",
    )
    assert "checked 4 harness files: 1 failure" in text


def test_skill_resources_and_custom_prompts_are_read(make_repo: Callable[..., Path]) -> None:
    cut = "# Reference\n\n```python\nprint('cut off'\n"
    repo = make_repo(
        {
            "skills/scan/SKILL.md": SKILL.format(name="scan") + "# Scan\n",
            "skills/scan/references/patterns.md": cut,
            "agent-prompts/triage.prompt": cut,
        },
        config=CONFIG.format(paths='["skills/*/**", "agent-prompts/**"]'),
    )
    report, _text = _check_all(repo)
    failed = sorted(f.path for f in report.findings)
    assert failed == ["agent-prompts/triage.prompt", "skills/scan/references/patterns.md"]


def test_the_summary_names_the_files_no_rule_read(make_repo: Callable[..., Path]) -> None:
    skill = "plugins/audit/skills/scan"
    repo = make_repo(
        {
            f"{skill}/SKILL.md": SKILL.format(name="scan") + "# Scan\n",
            f"{skill}/uv.lock": "version = 1\n",
            f"{skill}/pyproject.toml": "[project]\nname = 'scan'\n",
            f"{skill}/scripts/scan.py": "# " + "=" * 40 + "\nprint('scan')\n",
            f"{skill}/assets/logo.svg": "<svg/>\n",
            f"{skill}/Dockerfile": "FROM python:3.12\n",
            f"{skill}/assets/font.bin.data": b"\0\1\2binary",
        },
        config=CONFIG.format(paths='["plugins/*/skills/*/**"]'),
    )
    report, text = _check_all(repo)
    unread = {file.path.removeprefix(f"{skill}/"): file.reason for file in report.unread}
    assert unread == {
        "Dockerfile": "build or licence files, not prose",
        "assets/font.bin.data": "binary files, not prose",
        "assets/logo.svg": "code, data or binaries, not prose",
        "pyproject.toml": "code, data or binaries, not prose",
        "scripts/scan.py": "code, data or binaries, not prose",
        "uv.lock": "code, data or binaries, not prose",
    }
    assert report.findings == []
    assert "checked 9 harness files (6 read by no rule, named above): no findings" in text
    assert f"note: no rule read 4 harness files (code, data or binaries, not prose): {skill}/" in text


def test_fences_that_pair_by_count_but_swallow_sections_are_found() -> None:
    [finding] = check_fences("SKILL.md", MISNESTED)
    assert (finding.measure, finding.line, finding.end_line) == ("misnested code fence", 7, 15)
    assert "holds the opening fence of line 13" in finding.message
    assert "lines 8-12 are read as code (2 headings among them)" in finding.message
    assert check_fences("SKILL.md", FIXED) == []


def test_a_nested_template_fence_is_found_and_a_longer_outer_fence_is_not() -> None:
    # trailofbits/skills' Finding Template: the template's own close opens a block that
    # runs to the next fenced example, whose close ends it (fences still pair up).
    template = (
        "## Finding Template\n\n```markdown\n## [HIGH] Issue\n```rust\nfn f() {}\n```\n```\n\n"
        "## 9. Priority Guidelines\n\n```bash\ncargo test\n```\n"
    )
    found = check_fences("SKILL.md", template)
    assert [(f.measure, f.line) for f in found] == [("misnested code fence", 3), ("misnested code fence", 8)]
    assert "ends it early at line 7" in found[0].message
    widened = template.replace("```markdown", "````markdown").replace("```\n```\n", "```\n````\n")
    assert check_fences("SKILL.md", widened) == []


def test_check_and_review_of_the_fix_say_it_fixed_it(make_repo: Callable[..., Path]) -> None:
    path = "skills/cairo-scanner/SKILL.md"
    repo = make_repo({path: SKILL.format(name="cairo-scanner") + MISNESTED})
    broken = head(repo)
    with Store.discover(repo) as store:
        report = check_change(store, load_config(repo), None, broken)
    assert [f.measure for f in report.findings] == ["misnested code fence"]  # the hook would say so
    write(repo, path, SKILL.format(name="cairo-scanner") + FIXED)
    git(repo, "commit", "-qam", "Close unterminated fence in the scanner skill")
    with Store.discover(repo) as store:
        fix = check_change(store, load_config(repo), broken, head(repo))
    assert fix.findings == [] and [(f.measure, f.line) for f in fix.fixed] == [("misnested code fence", 11)]
    assert "fixed: 1" in report_text(fix)
    result = run(repo, "review", broken, "HEAD", "--format", "text")
    assert result.exit_code == 0, result.output
    assert f"fixed: {path}: format: code fence ``` at line 11 holds" in result.output


def test_a_file_over_its_limit_that_grows_a_little_warns(make_repo: Callable[..., Path]) -> None:
    lines = "".join(f"- Rule {n}: keep the build green.\n" for n in range(354))
    repo = make_repo({"AGENTS.md": lines})
    base = head(repo)
    write(repo, "AGENTS.md", lines.replace("Rule 3:", "Rule three:") + "- One more rule.\n" * 8)
    git(repo, "commit", "-qam", "agents: +10 -2")
    with Store.discover(repo) as store:
        report = check_change(store, load_config(repo), base, head(repo))
    [finding] = [f for f in report.findings if f.rule == "length"]
    assert (finding.level, finding.state, report.failed) == ("warning", "new", False)
    assert "within [checks] over_limit_tolerance (5% of the limit)" in finding.details[-1]
    write(repo, "AGENTS.md", lines + "- Another rule.\n" * 20)  # 20 lines: over 5% of 300
    git(repo, "commit", "-qam", "agents: +20")
    with Store.discover(repo) as store:
        report = check_change(store, load_config(repo), base, head(repo))
    assert report.failed and [f.level for f in report.findings if f.rule == "length"] == ["failure"]
