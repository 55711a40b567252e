"""Running every rule over a set of file versions: the pure heart of `harnessgit check`.

No git and no files here: callers hand in `FileVersion`s (see `collect` for the
ones read from a repository) and get a `CheckReport` back.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import replace

from harnessgit import globs
from harnessgit.checks.compare import Comparison, compare
from harnessgit.checks.duplication import check_duplication
from harnessgit.checks.edits import check_change_edit, check_file_edit
from harnessgit.checks.formats import check_encoding, check_fences, check_skill, check_tool_json
from harnessgit.checks.growth import check_collapse, check_growth
from harnessgit.checks.length import check_length, measure, too_large
from harnessgit.checks.models import RULES, CheckReport, FileSummary, FileVersion, Finding, Rule
from harnessgit.checks.tokens import Tokenizer, load_tokenizer
from harnessgit.config.sections import ChecksSection, KindChecks, Severity

FALLBACK_KIND = "other"


def kind_of(path: str, config: ChecksSection) -> str:
    """The first kind whose paths match (kinds from harnessgit.toml before built-in ones)."""
    for name, kind in config.kinds.items():
        if kind.paths and globs.matches(path, kind.paths):
            return name
    return FALLBACK_KIND


def check_files(
    files: Sequence[FileVersion],
    config: ChecksSection,
    *,
    rules: Collection[Rule] | None = None,
    tokenizer: Tokenizer | None = None,
) -> CheckReport:
    """Check each file version with the rules of its kind, and the change as a whole.

    ``rules`` limits the run to some rules (default: all that are not "off" in
    ``[checks.severity]``); ``tokenizer`` defaults to the one the config asks for.
    """
    notes: list[str] = []
    if tokenizer is None:
        tokenizer, notes = load_tokenizer(config)
    wanted = {rule for rule in (rules or RULES) if _severity(config, rule) != "off"}
    run = _Run(config, wanted, tokenizer, notes)
    for version in files:
        run.check(version)
    if "edit-size" in wanted:
        run.findings += check_change_edit(run.edits, config.change_max_hunks, config.change_max_changed_lines)
    findings = [_with_severity(config, finding) for finding in run.findings]
    return CheckReport(
        files=run.summaries,
        findings=findings,
        tokenizer=tokenizer.name,
        tokens_exact=tokenizer.exact,
        notes=notes,
    )


def _severity(config: ChecksSection, rule: Rule) -> Severity | None:
    value: Severity | None = getattr(config.severity, rule.replace("-", "_"))
    return value


def _with_severity(config: ChecksSection, finding: Finding) -> Finding:
    level = _severity(config, finding.rule)
    if level is None or level == "off" or level == finding.level:
        return finding
    return replace(finding, level=level)


class _Run:
    def __init__(
        self, config: ChecksSection, wanted: set[Rule], tokenizer: Tokenizer, notes: list[str]
    ) -> None:
        self.config = config
        self.wanted = wanted
        self.tokenizer = tokenizer
        self.notes = notes
        self.findings: list[Finding] = []
        self.summaries: list[FileSummary] = []
        self.edits: list[tuple[Comparison, int | None, int | None]] = []

    def check(self, version: FileVersion) -> None:
        path, new, old = version.path, version.new, version.old
        name = kind_of(path, self.config)
        kind = self.config.kinds[name]
        summary = FileSummary(path=path, kind=name, status=version.status, old_path=version.old_path)
        if new is None:
            self.summaries.append(summary)
            return
        if new.too_large:
            self.summaries.append(summary)
            if "length" in self.wanted:
                self.findings.append(too_large(path, new.size, self.config.max_file_bytes))
            return
        if new.text is None:
            self.summaries.append(summary)
            if "format" in self.wanted:
                self.findings += check_encoding(path, new)
            return
        text = new.text
        size = measure(text, kind, self.tokenizer)
        self.summaries.append(replace(summary, chars=size.chars, lines=size.lines, tokens=size.tokens))
        if "length" in self.wanted:
            self.findings += check_length(path, name, kind, size, self.tokenizer)
        if "format" in self.wanted:
            self.findings += _format(path, kind, text)
        if "duplication" in self.wanted and kind.duplication:
            self.findings += check_duplication(path, text, kind.near_duplicate, kind.max_duplicates)
        if old is None or version.status == "unchanged":
            return
        if old.text is None:
            self.notes.append(
                f"{version.old_path or path}: the previous version is not readable text; "
                "growth, collapse and edit size were not checked"
            )
            return
        self._against_previous(path, kind, old.text, text)

    def _against_previous(self, path: str, kind: KindChecks, old: str, new: str) -> None:
        comparison = compare(old, new)
        if "growth" in self.wanted:
            self.findings += check_growth(path, kind, old, new)
        if "collapse" in self.wanted:
            self.findings += check_collapse(path, kind, old, new, comparison)
        if "edit-size" in self.wanted:
            self.findings += check_file_edit(path, comparison, kind.max_hunks, kind.max_changed_lines)
            self.edits.append((comparison, kind.max_hunks, kind.max_changed_lines))


def _format(path: str, kind: KindChecks, text: str) -> list[Finding]:
    if kind.format == "skill":
        return check_skill(path, text) + check_fences(path, text)
    if kind.format == "markdown":
        return check_fences(path, text)
    if kind.format == "tool-json":
        return check_tool_json(path, text)
    return []
