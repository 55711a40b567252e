"""Running every rule over a set of file versions: the pure heart of `harnessgit check`.

No git and no files here: callers hand in `FileVersion`s (see `collect` for the
ones read from a repository) and get a `CheckReport` back. The rules themselves are
in `harnessgit.checks.rules`, one module each, listed once in `harnessgit.check_rules`;
this module runs them on each file in stages: the kind and its overrides, the rules'
verdicts (state, ratchet, change), the limits an override raised, then severity
and suppression.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import cast

from harnessgit import globs
from harnessgit.check_findings import (
    CheckReport,
    Content,
    FileSummary,
    FileVersion,
    Finding,
    Level,
    Rule,
    Unread,
)
from harnessgit.check_rules import BY_NAME, RULES
from harnessgit.checkconfig.folders import VENDORED_FOLDERS
from harnessgit.checkconfig.sections import CheckOverride, ChecksSection, KindChecks
from harnessgit.checks import allow
from harnessgit.checks.compare import compare
from harnessgit.checks.growth import Moved, added_lines
from harnessgit.checks.length import Size, measure
from harnessgit.checks.ratchet import pairing_key, ratchet
from harnessgit.checks.rules import Edit, Version, judge
from harnessgit.checks.tokens import Tokenizer, load_tokenizer
from harnessgit.checks.verdicts import cached_state, digest

FALLBACK_KIND = "other"
SKILL_RESOURCE = "skill-resource"
# The files of the catch-all kinds the rules read: prose a model loads as instructions,
# whatever its suffix (a Cursor rule's .mdc, a .prompt or .j2 template, .cursorrules).
# A skill folder also holds scripts, data, build files and assets (fonts, images,
# archives): part of the repository, but not text a model reads as its instructions, so
# no rule judges them and the summary says so (on anthropics/skills, 56 fonts and PDFs
# failed "binary" and Python comment banners were "repeated headings" before this).
PROSE_SUFFIXES = (".md", ".markdown", ".mdx", ".mdc", ".txt", ".rst")
# Code, data, build and binary suffixes (whitespace-separated, read once).
_NOT_PROSE = """
.py .pyi .ipynb .js .mjs .cjs .ts .tsx .jsx .sh .bash .zsh .ps1 .bat .cmd .rb .go .rs .java .kt .swift
.c .h .cc .cpp .hpp .cs .php .pl .lua .r .sql .scala .sol .move .cairo .ql .yar .ll .s .lean .bats
.json .jsonl .yaml .yml .toml .ini .cfg .conf .lock .xml .csv .tsv .html .htm .css .scss .svg
.png .jpg .jpeg .gif .webp .ico .pdf .ttf .otf .woff .woff2 .zip .gz .tgz .tar .whl .jar .so .dll
.exe .bin .pyc .wasm .mp3 .mp4 .wav .docx .xlsx .pptx .xsd .dtd .gitignore .gitattributes
.dockerignore .editorconfig .env .mod .sum .gradle .cmake .mk
"""
NOT_PROSE_SUFFIXES = frozenset(_NOT_PROSE.split())
# Build, dependency and licence files without a telling suffix.
_BUILD = "dockerfile containerfile makefile gnumakefile justfile procfile gemfile rakefile vagrantfile "
BUILD_FILES = frozenset((_BUILD + "license licence copying notice codeowners").split())


def unread_reason(path: str, kind: str) -> str | None:
    """Why no rule reads ``path`` of ``kind`` (None: the rules read it). Every file of a
    named kind is read; of the catch-all ones, the prose that is not a copy of another
    project (a skill's scripts/node_modules: 50 duplication warnings on express's
    changelog in superpowers)."""
    if kind not in (FALLBACK_KIND, SKILL_RESOURCE):
        return None
    folders = path.split("/")[:-1]
    if vendored := VENDORED_FOLDERS.intersection(folders):
        return f"copies of another project (under {sorted(vendored)[0]}/)"
    name = path.rsplit("/", 1)[-1].lower()
    suffix = "." + name.rsplit(".", 1)[-1] if "." in name.lstrip(".") else ""
    if name.endswith(PROSE_SUFFIXES):
        return None
    if suffix in NOT_PROSE_SUFFIXES or name in NOT_PROSE_SUFFIXES:
        return "code, data or binaries, not prose"
    if name.split(".")[0] in BUILD_FILES:
        return "build or licence files, not prose"
    return None


def judged(path: str, kind: str) -> bool:
    """Whether the rules judge ``path`` of ``kind`` (see `unread_reason`)."""
    return unread_reason(path, kind) is None


def kind_of(path: str, config: ChecksSection, skill_folders: Collection[str] = ()) -> str:
    """The first kind whose paths match (kinds from harnessgit.toml before built-in
    ones); else "skill-resource" for a file under one of ``skill_folders`` (the folders
    holding a SKILL.md, "" for the root), else the fallback kind."""
    for name, kind in config.kinds.items():
        if kind.paths and globs.matches(path, kind.paths):
            return name
    if any(folder == "" or path.startswith(folder + "/") for folder in skill_folders):
        return SKILL_RESOURCE
    return FALLBACK_KIND


def check_files(
    files: Sequence[FileVersion],
    config: ChecksSection,
    *,
    rules: Collection[Rule] | None = None,
    tokenizer: Tokenizer | None = None,
    ratchet: bool = True,
    since: str | None = None,
    others: Callable[[], Sequence[FileVersion]] | None = None,
    skill_folders: Collection[str] = (),
) -> CheckReport:
    """Check each file version with the rules of its kind, and the change as a whole.

    ``rules`` limits the run to some rules (default: all that are not "off" in
    ``[checks.severity]``); ``tokenizer`` defaults to the one the config asks for.
    With ``ratchet`` (change mode), a finding the previous version already had is
    "existing" and does not block (`harnessgit.checks.ratchet`); without it (``--all``)
    every finding is judged as it stands. ``since`` describes the revision of the
    versions' ``reference`` content, for cumulative growth. ``others`` gives the
    change's other files (not harness files): content a shrinking file moved into
    them, or into another of ``files``, is not lost to collapse. It is called only
    when a file shrank enough to be a collapse. ``skill_folders``: the folders that hold
    a SKILL.md on the new side, whose other files are of the "skill-resource" kind.
    """
    notes: list[str] = []
    if tokenizer is None:
        tokenizer, notes = load_tokenizer(config)
    chosen = set(rules or RULES)
    wanted = [rule for rule in RULES if rule in chosen and config.severity.of(rule) != "off"]
    run = _Run(config, wanted, tokenizer, notes, ratchet=ratchet, since=since, change=(files, others))
    run.skill_folders = skill_folders
    for version in files:
        run.check(version)
    for rule in wanted:
        if BY_NAME[rule].whole:
            run.findings += judge(rule).whole(run.edits, config)
    return CheckReport(
        files=run.summaries,
        findings=run.findings,
        tokenizer=tokenizer.name,
        tokens_exact=tokenizer.exact,
        notes=notes,
        unread=run.unread,
        fixed=run.fixed,
    )


def _with_severity(
    config: ChecksSection, finding: Finding, levels: Mapping[Rule, str] | None = None
) -> Finding:
    level = (levels or {}).get(finding.rule) or config.severity.of(finding.rule)
    if level is None or level == "off" or level == finding.level:
        return finding
    return replace(finding, level=cast("Level", level))


class _Run:
    def __init__(
        self,
        config: ChecksSection,
        wanted: list[Rule],
        tokenizer: Tokenizer,
        notes: list[str],
        *,
        ratchet: bool,
        since: str | None,
        change: tuple[Sequence[FileVersion], Callable[[], Sequence[FileVersion]] | None] = ([], None),
    ) -> None:
        self.config = config
        self.skill_folders: Collection[str] = ()  # see check_files
        self.wanted = wanted  # in the order of RULES: the order of each file's findings
        self.tokenizer = tokenizer
        self.notes = notes
        self.ratchet = ratchet
        self.since = since
        self.findings: list[Finding] = []
        self.summaries: list[FileSummary] = []
        self.edits: list[Edit] = []
        self._sizes: dict[tuple[str, str], Size] = {}
        self.change = change  # the change's files, and its other files when asked for
        self._added: dict[str, Counter[str]] | None = None
        self.unread: list[Unread] = []
        self.fixed: list[Finding] = []

    def _moved(self, path: str) -> Moved:
        """The lines the change added to its files other than ``path``, read once."""

        def moved() -> Mapping[str, Counter[str]]:
            if self._added is None:
                files, others = self.change
                self._added = {
                    version.path: added_lines(version.old.text if version.old else None, version.new.text)
                    for version in [*files, *(others() if others else [])]
                    if version.new is not None
                    and version.new.text is not None
                    and version.status != "unchanged"
                }
            return {other: lines for other, lines in self._added.items() if other != path}

        return moved

    def _measure(self, text: str, kind: KindChecks) -> Size:
        # The summary and the length rule measure the same text: count its tokens once.
        key = (kind.measure, text)
        if key not in self._sizes:
            self._sizes[key] = measure(text, kind, self.tokenizer)
        return self._sizes[key]

    def _kind(self, path: str) -> tuple[str, KindChecks]:
        """The kind of ``path`` by name, with the limits its overrides set."""
        name = kind_of(path, self.config, self.skill_folders)
        return name, allow.with_limits(self.config.kinds[name], allow.matching(path, self.config.overrides))

    def check(self, version: FileVersion) -> None:
        """One file, in stages: its kind and summary; whether any rule reads it; the
        rules' verdicts (`_findings`: state, ratchet, change); what the kind's own limits
        would say where an override raised them (`_raised`); severity and suppression
        (`_suppressed`)."""
        path, new = version.path, version.new
        name = kind_of(path, self.config, self.skill_folders)
        overrides = allow.matching(path, self.config.overrides)
        plain = self.config.kinds[name]
        kind = allow.with_limits(plain, overrides)
        summary = FileSummary(path=path, kind=name, status=version.status, old_path=version.old_path)
        if new is not None and new.text is not None:
            size = self._measure(new.text, kind)
            summary = replace(summary, chars=size.chars, lines=size.lines, tokens=size.tokens)
        self.summaries.append(summary)
        if new is None or self._unread(path, name, new):
            return
        findings = self._findings(version, name, kind, record=True)
        self._fixed(version, findings)
        if kind is not plain:
            findings += self._raised(version, name, plain, findings)
        self.findings += self._suppressed(version, findings, overrides)

    def _unread(self, path: str, name: str, new: Content) -> bool:
        """Whether no rule reads the file (noted in the report, with why)."""
        reason = unread_reason(path, name)
        if reason is None and name in (FALLBACK_KIND, SKILL_RESOURCE) and new.binary:
            reason = "binary files, not prose"
        if reason is not None:
            self.unread.append(Unread(path, reason))
        return reason is not None

    def _raised(
        self, version: FileVersion, name: str, plain: KindChecks, findings: list[Finding]
    ) -> list[Finding]:
        """A limit an override raised hides nothing: what the kind's own limits would
        report, and the override's limits did not, is shown as suppressed."""
        seen = {pairing_key(finding) for finding in findings}
        raised = f"limit set by [[checks.overrides]] for {version.path} in harnessgit.toml"
        return [
            replace(finding, state="suppressed", details=[*finding.details, raised])
            for finding in self._findings(version, name, plain, record=False)
            if pairing_key(finding) not in seen
        ]

    def _suppressed(
        self, version: FileVersion, findings: list[Finding], overrides: list[tuple[int, CheckOverride]]
    ) -> list[Finding]:
        """The findings at the levels the configuration gives them, those allowed by an
        override or a comment marked suppressed, and the file's malformed comments
        (ratcheted: a comment the previous version had does not block)."""
        path, new, old = version.path, version.new, version.old
        assert new is not None
        levels = allow.levels(overrides)
        findings = [_with_severity(self.config, finding, levels) for finding in findings]
        comments = allow.comments(path, new.text) if new.text is not None else allow.Allowed({}, [])
        findings = allow.suppress(allow.suppress(findings, allow.configured(overrides)), comments.by)
        errors = [error for error in comments.errors if error.rule in self.wanted]
        if self.ratchet and old is not None and old.text is not None and errors:
            errors = ratchet(errors, allow.comments(path, old.text).errors)
        return findings + errors

    def _fixed(self, version: FileVersion, findings: list[Finding]) -> None:
        """The findings the previous version had and this one has not, of the rules
        that report fixes (`RuleSpec.reports_fixed`): what a fix fixed, for `review` and
        the hook to say so."""
        old = version.old
        rules = {rule for rule in self.wanted if BY_NAME[rule].reports_fixed}
        if not self.ratchet or old is None or old.text is None or version.status == "unchanged" or not rules:
            return
        before = version.old_path or version.path
        old_name, old_kind = self._kind(before)
        if unread_reason(before, old_name) is not None:
            return
        kept = {pairing_key(finding) for finding in findings}
        previous = self._state(before, old_name, old_kind, old, None, rules)
        self.fixed += [finding for finding in previous if pairing_key(finding) not in kept]

    def _findings(self, version: FileVersion, name: str, kind: KindChecks, *, record: bool) -> list[Finding]:
        """The findings of one file under ``kind``: its state, ratcheted against the
        previous version's, then what the change itself did."""
        path, new, old = version.path, version.new, version.old
        assert new is not None
        findings = self._ratchet(version, self._state(path, name, kind, new, version.reference))
        if old is None or version.status == "unchanged" or new.text is None:
            return findings
        if old.text is None:
            if record:
                self.notes.append(
                    f"{version.old_path or path}: the previous version is not readable text; "
                    "growth, collapse and edit size were not checked"
                )
            return findings
        return findings + self._against_previous(path, kind, old.text, new.text, record=record)

    def _ratchet(self, version: FileVersion, findings: list[Finding]) -> list[Finding]:
        """The ratchet: what the previous version already had is "existing", and blocks
        only when the change made it worse (`harnessgit.checks.ratchet`)."""
        old = version.old
        if not self.ratchet or old is None:
            return findings
        if version.status == "unchanged":
            return [replace(finding, state="existing") for finding in findings]
        if not findings:  # nothing to excuse, nothing to compute: most files, on most commits
            return findings
        # A renamed file is judged against its previous path, under that path's kind: a
        # rule the file was not under before is brought by the change.
        before = version.old_path or version.path
        old_name, old_kind = self._kind(before)
        rules = {finding.rule for finding in findings}
        previous = self._state(before, old_name, old_kind, old, version.reference, rules)
        return ratchet(findings, previous, self.config.over_limit_tolerance)

    def _state(
        self,
        path: str,
        name: str,
        kind: KindChecks,
        content: Content,
        reference: Content | None,
        rules: Collection[Rule] | None = None,
    ) -> list[Finding]:
        """What one version of a file is, whatever the change: the rules that judge a
        state (`RuleSpec.state`; only ``rules``, when given), in the order of RULES."""
        wanted = [rule for rule in self.wanted if BY_NAME[rule].state and (rules is None or rule in rules)]
        version = Version(
            path=path,
            kind_name=name,
            kind=kind,
            content=content,
            config=self.config,
            tokenizer=self.tokenizer,
            size=lambda text: self._measure(text, kind),
            reference=reference,
            since=self.since,
        )
        if content.text is None:  # too large to read, or not text: no verdict to keep
            return [finding for rule in wanted for finding in judge(rule).state(version)]
        # Judged rule by rule: the ratchet asks the previous version for the rules the new
        # one broke only, and finds what the whole judgment of that version said.
        facts = (path, name, repr(kind), self.tokenizer.name, digest(content.text))
        cached = [rule for rule in wanted if BY_NAME[rule].cached]
        known = [finding for rule in cached for finding in cached_state(rule, facts, version)]
        rest = [rule for rule in wanted if not BY_NAME[rule].cached]
        return known + [finding for rule in rest for finding in judge(rule).state(version)]

    def _against_previous(
        self, path: str, kind: KindChecks, old: str, new: str, *, record: bool
    ) -> list[Finding]:
        """What the change did to one file: the rules that judge a change (`RuleSpec.change`)."""
        rules = [rule for rule in self.wanted if BY_NAME[rule].change]
        if not rules:
            return []
        edit = Edit(path, kind, old, new, compare(old, new), self._moved(path))
        if record:
            self.edits.append(edit)
        return [finding for rule in rules for finding in judge(rule).change(edit)]
