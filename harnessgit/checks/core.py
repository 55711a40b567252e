"""Running every rule over a set of file versions: the pure heart of `harnessgit check`.

No git and no files here: callers hand in `FileVersion`s (see `collect` for the
ones read from a repository) and get a `CheckReport` back.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import replace
from typing import cast

from harnessgit import globs
from harnessgit.checks import allow
from harnessgit.checks.compare import Comparison, compare
from harnessgit.checks.cumulative import check_since
from harnessgit.checks.duplication import check_duplication
from harnessgit.checks.edits import check_change_edit, check_file_edit
from harnessgit.checks.formats import check_encoding, check_fences, check_skill, check_tool_json
from harnessgit.checks.growth import Moved, added_lines, check_collapse, check_growth
from harnessgit.checks.length import Size, check_length, measure, too_large
from harnessgit.checks.models import (
    RULES,
    CheckReport,
    Content,
    FileSummary,
    FileVersion,
    Finding,
    Level,
    Rule,
    Unread,
)
from harnessgit.checks.ratchet import pairing_key, ratchet
from harnessgit.checks.tokens import Tokenizer, load_tokenizer
from harnessgit.config.detect import VENDORED_FOLDERS
from harnessgit.config.sections import ChecksSection, KindChecks, Severity

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
    wanted = {rule for rule in (rules or RULES) if _severity(config, rule) != "off"}
    run = _Run(config, wanted, tokenizer, notes, ratchet=ratchet, since=since, change=(files, others))
    run.skill_folders = skill_folders
    for version in files:
        run.check(version)
    if "edit-size" in wanted:
        run.findings += check_change_edit(run.edits, config.change_max_hunks, config.change_max_changed_lines)
    return CheckReport(
        files=run.summaries,
        findings=run.findings,
        tokenizer=tokenizer.name,
        tokens_exact=tokenizer.exact,
        notes=notes,
        unread=run.unread,
        fixed=run.fixed,
    )


def _severity(config: ChecksSection, rule: Rule) -> Severity | None:
    value: Severity | None = getattr(config.severity, rule.replace("-", "_"))
    return value


def _with_severity(
    config: ChecksSection, finding: Finding, levels: Mapping[Rule, str] | None = None
) -> Finding:
    level = (levels or {}).get(finding.rule) or _severity(config, finding.rule)
    if level is None or level == "off" or level == finding.level:
        return finding
    return replace(finding, level=cast("Level", level))


class _Run:
    def __init__(
        self,
        config: ChecksSection,
        wanted: set[Rule],
        tokenizer: Tokenizer,
        notes: list[str],
        *,
        ratchet: bool,
        since: str | None,
        change: tuple[Sequence[FileVersion], Callable[[], Sequence[FileVersion]] | None] = ([], None),
    ) -> None:
        self.config = config
        self.skill_folders: Collection[str] = ()  # see check_files
        self.wanted = wanted
        self.tokenizer = tokenizer
        self.notes = notes
        self.ratchet = ratchet
        self.since = since
        self.findings: list[Finding] = []
        self.summaries: list[FileSummary] = []
        self.edits: list[tuple[Comparison, int | None, int | None]] = []
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

    def check(self, version: FileVersion) -> None:
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
        if new is None:
            return
        reason = unread_reason(path, name)
        if reason is None and name in (FALLBACK_KIND, SKILL_RESOURCE) and new.binary:
            reason = "binary files, not prose"
        if reason is not None:
            self.unread.append(Unread(path, reason))
            return
        findings = self._findings(version, name, kind, record=True)
        self._fixed(version, name, findings)
        by = allow.configured(overrides)
        if kind is not plain:
            # A limit an override raised hides nothing: what the kind's own limits
            # would report is shown as suppressed.
            seen = {pairing_key(finding) for finding in findings}
            raised = f"limit set by [[checks.overrides]] for {path} in harnessgit.toml"
            findings += [
                replace(finding, state="suppressed", details=[*finding.details, raised])
                for finding in self._findings(version, name, plain, record=False)
                if pairing_key(finding) not in seen
            ]
        levels = allow.levels(overrides)
        findings = [_with_severity(self.config, finding, levels) for finding in findings]
        comments = allow.comments(path, new.text) if new.text is not None else allow.Allowed()
        findings = allow.suppress(allow.suppress(findings, by), comments.by)
        errors = comments.errors if "format" in self.wanted else []
        if self.ratchet and version.old is not None and version.old.text is not None and errors:
            errors = ratchet(errors, allow.comments(path, version.old.text).errors)
        self.findings += findings + errors

    def _fixed(self, version: FileVersion, name: str, findings: list[Finding]) -> None:
        """The format and length findings the previous version had and this one has not:
        what a fix fixed, for `review` and the hook to say so."""
        old = version.old
        rules = self.wanted & {"format", "length"}
        if not self.ratchet or old is None or old.text is None or version.status == "unchanged" or not rules:
            return
        before = version.old_path or version.path
        old_name = kind_of(before, self.config, self.skill_folders)
        if unread_reason(before, old_name) is not None:
            return
        old_kind = allow.with_limits(
            self.config.kinds[old_name], allow.matching(before, self.config.overrides)
        )
        kept = {pairing_key(finding) for finding in findings}
        previous = self._state(before, old_name, old_kind, old, None, rules)
        self.fixed += [finding for finding in previous if pairing_key(finding) not in kept]

    def _findings(self, version: FileVersion, name: str, kind: KindChecks, *, record: bool) -> list[Finding]:
        """The findings of one file under ``kind``: its state, ratcheted against the
        previous version's, then what the change itself did."""
        path, new, old = version.path, version.new, version.old
        assert new is not None
        findings = self._state(path, name, kind, new, version.reference)
        if self.ratchet and old is not None:
            if version.status == "unchanged":
                findings = [replace(finding, state="existing") for finding in findings]
            elif findings:  # nothing to excuse, nothing to compute: most files, on most commits
                # A renamed file is judged against its previous path, under that path's
                # kind: a rule the file was not under before is brought by the change.
                before = version.old_path or path
                old_name = kind_of(before, self.config, self.skill_folders)
                old_kind = allow.with_limits(
                    self.config.kinds[old_name], allow.matching(before, self.config.overrides)
                )
                rules = {finding.rule for finding in findings}
                previous = self._state(before, old_name, old_kind, old, version.reference, rules)
                findings = ratchet(findings, previous, self.config.over_limit_tolerance)
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

    def _state(
        self,
        path: str,
        name: str,
        kind: KindChecks,
        content: Content,
        reference: Content | None,
        rules: Collection[Rule] | None = None,
    ) -> list[Finding]:
        """What one version of a file is, whatever the change: length, format,
        duplication and growth since the reference (only ``rules``, when given)."""
        wanted = self.wanted if rules is None else self.wanted & set(rules)
        findings: list[Finding] = []
        if content.too_large:
            if "length" in wanted:
                findings.append(too_large(path, content.size, self.config.max_file_bytes))
            return findings
        if content.text is None:
            return check_encoding(path, content) if "format" in wanted else []
        text = content.text
        # Judged rule by rule: the ratchet asks the previous version for the rules the new
        # one broke only, and finds what the whole judgment of that version said.
        facts = (path, name, repr(kind), self.tokenizer.name, _digest(text))
        for rule in _STATIC_ORDER:
            if rule in wanted:
                findings += self._static(rule, facts, kind, text)
        if "growth" in wanted and self.since and reference is not None and reference.text is not None:
            findings += check_since(path, kind, reference.text, text, self.since)
        return findings

    def _static(
        self, rule: Rule, facts: tuple[str, str, str, str, bytes], kind: KindChecks, text: str
    ) -> list[Finding]:
        key = (rule, *facts)
        known = _JUDGED.get(key)
        if known is None:
            path, name = facts[0], facts[1]
            if rule == "length":
                known = check_length(path, name, kind, self._measure(text, kind), self.tokenizer)
            elif rule == "format":
                known = _format(path, kind, text)
            elif kind.duplication:
                known = check_duplication(path, text, kind.near_duplicate, kind.max_duplicates)
            else:
                known = []
            if len(_JUDGED) >= _JUDGED_MAX:
                del _JUDGED[next(iter(_JUDGED))]
            _JUDGED[key] = known
        return known

    def _against_previous(
        self, path: str, kind: KindChecks, old: str, new: str, *, record: bool
    ) -> list[Finding]:
        comparison = compare(old, new)
        findings = []
        if "growth" in self.wanted:
            findings += check_growth(path, kind, old, new)
        if "collapse" in self.wanted:
            findings += check_collapse(path, kind, old, new, comparison, self._moved(path))
        # A file that was empty is being written, not edited: judged like a new file by its
        # length (held out: 64 empty agent files filled in one commit, each flagged as a
        # 250-300-line edit, while a file created in the same commit was not).
        if "edit-size" in self.wanted and old.strip():
            findings += check_file_edit(path, comparison, kind.max_hunks, kind.max_changed_lines)
            if record:
                self.edits.append((comparison, kind.max_hunks, kind.max_changed_lines))
        return findings


# What a version of a file is under the rules that read it alone (length, format,
# duplication) depends only on its path, kind, tokenizer and text: judged once per
# process. A history audit meets each version twice (after the commit that wrote it and
# before the next one that changes it), and a ratchet reads the previous side again.
_STATIC_ORDER: tuple[Rule, ...] = ("length", "format", "duplication")
_JUDGED: dict[tuple[Rule, str, str, str, str, bytes], list[Finding]] = {}
_JUDGED_MAX = 12288  # keys hold a digest, not the text: a few MB at most


def _digest(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def _format(path: str, kind: KindChecks, text: str) -> list[Finding]:
    if kind.format == "skill":
        return check_skill(path, text) + check_fences(path, text)
    if kind.format == "markdown":
        return check_fences(path, text)
    if kind.format == "tool-json":
        return check_tool_json(path, text)
    return []
