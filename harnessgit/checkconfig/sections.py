"""The [harness] and [checks] sections of harnessgit.toml, as frozen dataclasses: what
`harnessgit check` reads (`harnessgit.checkconfig`), without the other sections.

Each field's annotation is its type and its metadata its rules; `harnessgit.checkconfig.reader`
reads every section the same way. Sources of the default numbers are in docs/checks.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from harnessgit.check_rules import BY_NAME, RULES, Rule
from harnessgit.checkconfig.reader import (
    SettingError,
    read_table,
    read_value,
)
from harnessgit.names import ref_name_problem

# Where harness text usually lives, when harnessgit.toml names no paths and `harnessgit
# init` found none of its own (config.detect). A skill is its folder: ``skills/<name>/``
# holds the references, prompts and scripts its SKILL.md loads.
DEFAULT_HARNESS_PATHS = [
    "**/SKILL.md",
    "**/skills/*/**",
    "**/AGENTS.md",
    "**/CLAUDE.md",
    "prompts/**",
    "tools/**/*.json",
]

Severity = Literal["failure", "warning", "off"]
FileFormat = Literal["skill", "markdown", "tool-json", "none"]


def _ref_name(value: str) -> None:
    """A branch name as git-check-ref-format takes it: `[harness] base = "-main"` was
    passed to git as an option-shaped revision (issue 28)."""
    problem = ref_name_problem(value)
    if problem:
        raise ValueError(f"{value!r} is not a branch name: {problem}")


def _globs(paths: list[str]) -> None:
    for glob in paths:
        if not glob or glob.startswith("/") or "\\" in glob or ".." in glob.split("/"):
            raise ValueError(f"{glob!r} is not a repository-relative glob")


@dataclass(frozen=True)
class HarnessSection:
    """[harness]: which paths are harness files, and the branch changes are judged against."""

    paths: list[str] = field(
        default_factory=lambda: list(DEFAULT_HARNESS_PATHS), metadata={"nonempty": True, "check": _globs}
    )
    base: str = field(default="main", metadata={"check": _ref_name})


@dataclass(frozen=True)
class KindChecks:
    """The limits for one kind of harness file (docs/checks.md explains each key)."""

    paths: list[str] = field(default_factory=list, metadata={"check": _globs})
    format: FileFormat = "markdown"
    # "body" measures what follows the YAML frontmatter, as the Agent Skills spec does.
    measure: Literal["file", "body"] = "file"
    max_chars: int | None = field(default=None, metadata={"ge": 1})
    max_lines: int | None = field(default=None, metadata={"ge": 1})
    max_tokens: int | None = field(default=None, metadata={"ge": 1})
    # ESPO (arXiv 2609.04197): prompts three times longer were not more accurate.
    growth_warn: float | None = field(default=1.5, metadata={"gt": 1})
    growth_fail: float | None = field(default=2.0, metadata={"gt": 1})
    # Growth and collapse ignore files smaller than this before the edit: doubling a
    # two-line prompt is not bloat.
    small_file_chars: int = field(default=400, metadata={"ge": 0})
    # ACE (arXiv 2510.04618): 18,282 tokens rewritten to 122 in one step.
    collapse: bool = True
    collapse_min_size: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    collapse_min_kept_lines: float = field(default=0.25, metadata={"ge": 0, "le": 1})
    collapse_min_kept_sections: float = field(default=0.5, metadata={"ge": 0, "le": 1})
    duplication: bool = True
    max_duplicates: int = field(default=0, metadata={"ge": 0})
    near_duplicate: float = field(
        default=0.85, metadata={"gt": 0, "le": 1}
    )  # Jaccard similarity of word sets
    # SkillOpt (arXiv 2605.23904): the accepted edits were few (1-4 per benchmark).
    max_hunks: int | None = field(default=10, metadata={"ge": 1})
    max_changed_lines: int | None = field(default=150, metadata={"ge": 1})


# The built-in kinds, in the order a file is matched against them (user-defined kinds
# come first). Sources of the numbers are in docs/checks.md.
BUILTIN_KINDS: dict[str, dict[str, Any]] = {
    # Agent Skills specification: name/description frontmatter, body under 500 lines
    # and about 5,000 tokens.
    "skill": {
        "paths": ["**/SKILL.md"],
        "format": "skill",
        "measure": "body",
        "max_lines": 500,
        "max_tokens": 5000,
    },
    # Common guidance for AGENTS.md / CLAUDE.md: under ~200-300 lines.
    "agents": {"paths": ["**/AGENTS.md", "**/CLAUDE.md", "**/GEMINI.md"], "max_lines": 300},
    # Tool descriptions travel with every request, like a prompt: the same cap.
    "tool": {"paths": ["tools/**/*.json"], "format": "tool-json", "max_chars": 5000, "duplication": False},
    # Decagon: production GEPA prompts grew past 5,000 characters; ~1,000 lost little.
    "prompt": {"paths": ["prompts/**"], "max_chars": 5000},
    # The other files of a skill folder (references, prompts, scripts), claimed by no
    # glob but by being beside a SKILL.md (`checks.core.kind_of`). Growth only warns:
    # moving detail out of SKILL.md into files loaded on demand is what the skill
    # limit's own hint asks for (on anthropics/skills, 4 reference updates grew 1.5-8x).
    # Their prose is read as Markdown (an unclosed fence in references/*.md is one still).
    "skill-resource": {"growth_fail": None},
    # Harness files no kind claims (a custom [harness] paths glob, Cursor's rules/*.mdc):
    # prose read as Markdown, no length limit.
    "other": {},
}
_KIND_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")


@dataclass(frozen=True)
class SeverityOverrides:
    """Per-rule severity: "failure", "warning" or "off" instead of the rule's default.
    Its keys are the rules of `harnessgit.check_rules`; ``severity.edit_size`` reads one."""

    levels: dict[Rule, Severity] = field(default_factory=dict)

    def of(self, rule: Rule) -> Severity | None:
        return self.levels.get(rule)

    def __getattr__(self, name: str) -> Severity | None:
        rule = name.replace("_", "-")
        if rule not in BY_NAME:  # also the "__deepcopy__" a copy looks for
            raise AttributeError(name)
        return self.levels.get(rule)


def _read_severity(table: Any, key: str) -> SeverityOverrides:
    """``[checks.severity]`` (or an override's ``severity``): a level for some rules."""
    if not isinstance(table, dict):
        raise SettingError(key, "must be a table")
    levels: dict[Rule, Severity] = {}
    for name, value in table.items():
        if name not in BY_NAME:
            raise SettingError(f"{key}.{name}", "unknown key")
        levels[cast("Rule", name)] = read_value(value, Severity, f"{key}.{name}")
    return SeverityOverrides(levels)


def _read_kinds(kinds: Any, key: str) -> dict[str, KindChecks]:
    # A table such as [checks.kinds.skill] changes only the keys it names; a new
    # kind starts from the generic defaults and needs its own paths.
    if not isinstance(kinds, dict):
        raise SettingError(key, "must be a table")
    merged: dict[str, KindChecks] = {}
    for name, values in kinds.items():
        if name in BUILTIN_KINDS:
            continue
        if not _KIND_NAME.fullmatch(name):
            raise SettingError(key, f"{name!r}: kind names use lowercase letters, digits and hyphens")
        if isinstance(values, dict) and not values.get("paths"):
            raise SettingError(key, f"{name}: a new kind needs paths")
        merged[name] = read_table(KindChecks, values, f"{key}.{name}")
    for name, defaults in BUILTIN_KINDS.items():
        values = kinds.get(name, {})
        if not isinstance(values, dict):
            raise SettingError(f"{key}.{name}", "must be a table")
        merged[name] = read_table(KindChecks, {**defaults, **values}, f"{key}.{name}")
    return merged


def _builtin_kinds() -> dict[str, KindChecks]:
    return _read_kinds({}, "checks.kinds")


def _rule_names(names: list[str]) -> None:
    for name in names:
        if name not in BY_NAME:
            raise ValueError(f"{name!r} is not a rule (rules: {', '.join(RULES)})")


@dataclass(frozen=True)
class CheckOverride:
    """One ``[[checks.overrides]]`` table: files matching ``paths`` keep their kind,
    with the limits it names changed, the rules in ``allow`` suppressed and the
    levels of ``severity`` ("off": suppressed). Suppressed findings are still
    reported (state "suppressed"), never dropped."""

    paths: list[str] = field(metadata={"nonempty": True, "check": _globs})
    allow: list[str] = field(default_factory=list, metadata={"check": _rule_names})
    severity: SeverityOverrides = field(default_factory=SeverityOverrides, metadata={"read": _read_severity})
    # The kind keys this override sets (checked as [checks.kinds] keys are); the
    # others keep the file's kind's values.
    limits: dict[str, Any] = field(default_factory=dict, metadata={"toml": False})


_OVERRIDE_KEYS = {"paths", "allow", "severity"}


def _read_overrides(tables: Any, key: str) -> list[CheckOverride]:
    if not isinstance(tables, list):
        raise SettingError(key, "must be an array of tables ([[checks.overrides]])")
    overrides = []
    for index, table in enumerate(tables):
        where = f"{key}[{index}]"
        if not isinstance(table, dict):
            raise SettingError(where, "must be a table")
        limits = {name: value for name, value in table.items() if name not in _OVERRIDE_KEYS}
        # Read as a kind's keys: every key known and valid, with the kind's own messages.
        read = read_table(KindChecks, limits, where)
        own = read_table(CheckOverride, {k: v for k, v in table.items() if k in _OVERRIDE_KEYS}, where)
        overrides.append(replace(own, limits={name: getattr(read, name) for name in limits}))
    return overrides


def _growth_since(value: str) -> None:
    if value in ("auto", "merge-base", "none"):
        return
    if value.startswith("label:") and len(value) > len("label:"):
        problem = ref_name_problem(value[len("label:") :])
        if problem:
            raise ValueError(f"{value!r} does not name a label: {problem}")
        return
    raise ValueError(f"must be 'auto', 'merge-base', 'label:NAME' or 'none', not {value!r}")


@dataclass(frozen=True)
class ChecksSection:
    """[checks]: the limits, kinds, severities and overrides the check rules read."""

    # "auto": tiktoken when installed (the `tokens` extra), else the estimate below.
    tokenizer: Literal["auto", "estimate", "tiktoken"] = "auto"
    encoding: str = "o200k_base"
    # OpenAI's rule of thumb: one token is about 4 characters of English text.
    chars_per_token: float = field(default=4.0, metadata={"gt": 0})
    # Larger files are not read at all (bounded memory): they fail the length rule.
    max_file_bytes: int = field(default=1024 * 1024, metadata={"ge": 1})
    change_max_hunks: int | None = field(default=25, metadata={"ge": 1})
    change_max_changed_lines: int | None = field(default=400, metadata={"ge": 1})
    # A file already over a limit that a change takes further by at most this share of
    # the limit gets a warning, not a failure (issue 27: a +10 -2 edit to a 354-line
    # AGENTS.md failed every pull request that touched it); further still fails.
    over_limit_tolerance: float = field(default=0.05, metadata={"ge": 0})
    severity: SeverityOverrides = field(default_factory=SeverityOverrides, metadata={"read": _read_severity})
    kinds: dict[str, KindChecks] = field(default_factory=_builtin_kinds, metadata={"read": _read_kinds})
    overrides: list[CheckOverride] = field(default_factory=list, metadata={"read": _read_overrides})
    # Growth is also measured against a reference ("auto": the merge base with
    # [harness] base, or on that branch the newest label behind it; "merge-base";
    # "label:NAME"; "none": off), so many small steps are seen like one big one
    # (docs/checks.md, cumulative growth).
    growth_since: str = field(default="auto", metadata={"check": _growth_since})

    def globs(self) -> list[str]:
        return [glob for kind in self.kinds.values() for glob in kind.paths]
