from __future__ import annotations

from harnessgit.check_findings import Content
from harnessgit.checks import FileVersion, check_files, kind_of
from harnessgit.checks.tokens import Estimate
from harnessgit.config import ChecksSection, parse_config
from harnessgit.render import jsonable
from tests.harness_text import prompt

CHECKS = ChecksSection()
GOOD_SKILL = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n\n1. Read the task.\n"


def sectioned(n: int) -> str:
    return prompt(n)


def test_kind_of_uses_globs_in_order() -> None:
    assert kind_of("SKILL.md", CHECKS) == "skill"
    assert kind_of("skills/pdf/SKILL.md", CHECKS) == "skill"
    assert kind_of("nested/CLAUDE.md", CHECKS) == "agents"
    assert kind_of("tools/search/web.json", CHECKS) == "tool"
    assert kind_of("prompts/a/system.txt", CHECKS) == "prompt"
    assert kind_of("hooks/pre.sh", CHECKS) == "other"
    custom = parse_config(
        b'[checks.kinds.runbook]\npaths = ["prompts/runbooks/*.md"]\nmax_lines = 10\n'
    ).checks
    assert kind_of("prompts/runbooks/a.md", custom) == "runbook"  # a user's kind comes first
    assert kind_of("prompts/other.md", custom) == "prompt"


def test_good_files_pass() -> None:
    report = check_files(
        [
            FileVersion.from_text("skills/demo/SKILL.md", None, GOOD_SKILL),
            FileVersion.from_text(
                "prompts/system.md", sectioned(4), sectioned(4).replace("## Part 2", "## Part two")
            ),
        ],
        CHECKS,
    )
    assert report.findings == [] and not report.failed
    assert [(f.path, f.kind, f.status) for f in report.files] == [
        ("skills/demo/SKILL.md", "skill", "added"),
        ("prompts/system.md", "prompt", "modified"),
    ]
    assert report.files[0].lines == 3  # the body


def test_failures_and_warnings_decide_failed() -> None:
    old = sectioned(5)
    warn_only = check_files(
        [FileVersion.from_text("prompts/a.md", old, old + "z" * (len(old) // 3 * 2))], CHECKS
    )
    assert [f.level for f in warn_only.findings] == ["warning"] and not warn_only.failed
    collapsed = check_files(
        [FileVersion.from_text("prompts/a.md", sectioned(6), "## Part 0\nshort\n")], CHECKS
    )
    assert collapsed.failed and [f.rule for f in collapsed.findings] == ["collapse"]
    assert jsonable(collapsed)["failed"] is True


def test_severity_overrides_and_rule_selection() -> None:
    bloated = FileVersion.from_text("prompts/a.md", sectioned(5), sectioned(5) + "y" * 5000)
    base = check_files([bloated], CHECKS)
    assert sorted(f.rule for f in base.findings) == ["growth", "length"]
    relaxed = parse_config(b'[checks.severity]\nlength = "warning"\ngrowth = "off"\n').checks
    report = check_files([bloated], relaxed)
    assert [(f.rule, f.level) for f in report.findings] == [("length", "warning")] and not report.failed
    only = check_files([bloated], CHECKS, rules=["growth"])
    assert [f.rule for f in only.findings] == ["growth"]


def test_unchanged_and_deleted_files() -> None:
    text = sectioned(6)
    report = check_files(
        [
            FileVersion.from_text("prompts/a.md", text, text),
            FileVersion.from_text("prompts/b.md", text, None),
        ],
        CHECKS,
    )
    assert report.findings == []
    assert [f.status for f in report.files] == ["unchanged", "deleted"]


def test_renamed_file_is_compared_with_its_old_path() -> None:
    version = FileVersion.from_text("prompts/new.md", sectioned(6), "## Part 0\n", old_path="prompts/old.md")
    report = check_files([version], CHECKS)
    assert report.files[0].status == "renamed" and report.files[0].old_path == "prompts/old.md"
    assert [f.rule for f in report.findings] == ["collapse"]


def test_unreadable_sides_give_findings_or_notes_never_errors() -> None:
    files = [
        FileVersion.from_text("prompts/bin.md", None, b"\0\1\2"),
        FileVersion.from_text("prompts/latin.md", None, "caf\xe9".encode("latin-1")),
        FileVersion(path="prompts/huge.md", new=Content.unread(100 * 1024 * 1024)),
        FileVersion.from_text("prompts/was-binary.md", b"\0old", "now text\n"),
    ]
    report = check_files(files, CHECKS)
    assert [(f.path, f.rule, f.measure) for f in report.findings] == [
        ("prompts/bin.md", "format", "encoding"),
        ("prompts/latin.md", "format", "encoding"),
        ("prompts/huge.md", "length", "bytes"),
    ]
    assert report.notes == [
        "prompts/was-binary.md: the previous version is not readable text; "
        "growth, collapse and edit size were not checked"
    ]


def test_change_budget_over_several_files() -> None:
    old = "".join(f"line {i}\n" for i in range(400))
    new = "".join(f"LINE {i}\n" if i % 40 == 0 else f"line {i}\n" for i in range(400))  # 10 hunks each
    files = [FileVersion.from_text(f"prompts/p{i}.md", old, new) for i in range(3)]
    report = check_files(files, CHECKS, tokenizer=Estimate())
    assert [(f.path, f.measure, f.value) for f in report.findings] == [(None, "hunks", 30)]


def test_tokenizer_is_reported() -> None:
    report = check_files([], CHECKS, tokenizer=Estimate(3.0))
    assert report.tokenizer == "estimate: 3 characters per token" and not report.tokens_exact
