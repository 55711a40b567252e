"""The sections of harnessgit.toml, as frozen dataclasses (the ``[proposer]`` kinds
are in `harnessgit.config.proposer`).

Each field's annotation is its type and its metadata its rules; `harnessgit.config.reader`
reads every section the same way. Sources of the default numbers are in docs/checks.md
and docs/gate.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

from harnessgit.check_rules import BY_NAME, RULES, Rule
from harnessgit.config.proposer import OpenAIProposerSection, ProposerSection
from harnessgit.config.reader import (
    MAX_BYTES,
    SettingError,
    check_function_spec,
    read_argv,
    read_table,
    read_value,
)
from harnessgit.confine import check_relative
from harnessgit.names import ref_name_problem
from harnessgit.processes.environment import check_names
from harnessgit.scrub import DEFAULT_PATTERNS, DEFAULT_SECRET_ENV, Scrubber, secret_values

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


# Upper bounds of counts (docs/config.md); of sizes, reader.MAX_BYTES.
MAX_BATCH_SIZE = 100_000  # instances per evaluator process
MAX_JOBS = 1024  # evaluator processes at a time


def _ref_name(value: str) -> None:
    """A branch name as git-check-ref-format takes it: `[harness] base = "-main"` was
    passed to git as an option-shaped revision (issue 28)."""
    problem = ref_name_problem(value)
    if problem:
        raise ValueError(f"{value!r} is not a branch name: {problem}")


def _remote_name(value: str) -> None:
    problem = ref_name_problem(value)
    if problem:
        raise ValueError(f"{value!r} is not a remote name: {problem}")


def _globs(paths: list[str]) -> None:
    for glob in paths:
        if not glob or glob.startswith("/") or "\\" in glob or ".." in glob.split("/"):
            raise ValueError(f"{glob!r} is not a repository-relative glob")


@dataclass(frozen=True)
class HarnessSection:
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


def _read_components(value: Any, key: str) -> dict[str, str]:
    """``{name = "path"}``: each GEPA component's harness file, one file per component."""
    if not isinstance(value, dict) or not value:
        raise SettingError(key, 'must be a table of component name = "harness file"')
    components: dict[str, str] = {}
    for name, path in value.items():
        if not isinstance(path, str):
            raise SettingError(f"{key}.{name}", f"must be a file path, not {path!r}")
        try:
            check_relative(path)
        except ValueError as exc:
            raise SettingError(f"{key}.{name}", str(exc)) from None
        if path in components.values():
            raise SettingError(f"{key}.{name}", f"{path} is the file of another component too")
        components[name] = path
    return components


def _check_labels(labels: list[str]) -> None:
    if any(not label.strip() for label in labels):
        raise ValueError("model labels must not be empty")
    if len(set(labels)) != len(labels):
        raise ValueError("names a model twice")


@dataclass(frozen=True)
class EvaluatorSection:
    """One of ``command`` (argv run per batch, or once with ``persistent``), ``python``
    (a function called in harnessgit's own process) and ``adapter`` (a GEPA adapter
    called in process, its candidate's ``components`` mapped to files): docs/evaluator.md."""

    command: list[str] | None = field(default=None, metadata={"read": read_argv})
    python: str | None = field(default=None, metadata={"check": check_function_spec})
    # A factory returning (GEPAAdapter, dataset); docs/evaluator.md, "GEPA adapters".
    adapter: str | None = field(default=None, metadata={"check": check_function_spec})
    # GEPA component name -> harness file; unset: each harness file is a component
    # named by its path.
    components: dict[str, str] | None = field(default=None, metadata={"read": _read_components})
    # The command is started once per harnessgit command and answers many batches
    # over stdin/stdout (docs/evaluator.md, "Persistent evaluators").
    persistent: bool = False
    # Where a command evaluator's batches run: "local" (processes beside harnessgit,
    # `jobs` at a time) or "ray" (each batch a Ray task: docs/evaluator.md, "On Ray").
    executor: Literal["local", "ray"] = "local"
    model: str = "default"
    # Model labels `eval`, `test` and `gate` evaluate for, the primary (``model``) among
    # them; the evaluator reads the label as HARNESSGIT_MODEL (docs/coevolution.md).
    models: list[str] | None = field(default=None, metadata={"check": _check_labels})
    timeout: float = field(default=600.0, metadata={"gt": 0})  # seconds per batch
    batch_size: int = field(default=10, metadata={"ge": 1, "le": MAX_BATCH_SIZE})
    jobs: int = field(default=1, metadata={"ge": 1, "le": MAX_JOBS})
    # One line of evaluator output, at most.
    max_line_bytes: int = field(default=16 * 1024 * 1024, metadata={"ge": 1024, "le": MAX_BYTES})
    # All of one batch's standard output, at most: one byte more and the batch is killed
    # and fails. Reading costs about 2x this in memory (issue 15: 200 MiB of output took
    # 985 MB of RSS, now 162 MB; docs/benchmarks.md).
    max_output_bytes: int = field(default=64 * 1024 * 1024, metadata={"ge": 1024, "le": MAX_BYTES})
    # Standard error shown (or logged) per batch; the rest is read and dropped. Lines
    # longer than 2,000 bytes are cut either way.
    max_stderr_bytes: int = field(default=16 * 1024 * 1024, metadata={"ge": 0, "le": MAX_BYTES})
    # Environment variables (names or globs) passed to the evaluator besides the defaults
    # of harnessgit.processes.environment (PATH, HOME, locale, Python's): secrets on purpose.
    env: list[str] = field(default_factory=list, metadata={"check": check_names})
    # Files whose content is part of the evaluator fingerprint. Default: every
    # file outside the harness paths, so an edit to the grader invalidates the cache.
    files: list[str] | None = None

    def __post_init__(self) -> None:
        named = [key for key in ("command", "python", "adapter") if getattr(self, key)]
        if len(named) > 1:
            raise SettingError(f"evaluator.{named[1]}", f"set either {named[0]} or {named[1]}, not both")
        if self.persistent and not self.command:
            raise SettingError("evaluator.persistent", "needs a command (a python evaluator stays loaded)")
        if self.executor == "ray" and (problem := self.local_only()):
            raise SettingError("evaluator.executor", problem)
        if self.components is not None and not self.adapter:
            raise SettingError("evaluator.components", "names the components of an adapter: set adapter too")
        if self.models and self.model not in self.models:
            if self.model != "default":
                raise SettingError("evaluator.models", f"must name the primary model {self.model!r} too")
            # ``models`` alone: its first label is the primary (the one single-model
            # commands such as `scores` and `review` read).
            object.__setattr__(self, "model", self.models[0])

    @property
    def labels(self) -> list[str]:
        """Every model label evaluated by default, the primary first."""
        return [self.model, *(m for m in self.models or () if m != self.model)]

    @property
    def configured(self) -> bool:
        """Whether an evaluator is named at all (adoption level 3, docs/design.md)."""
        return bool(self.command or self.python or self.adapter)

    def local_only(self) -> str | None:
        """Why this evaluator cannot run on Ray, if it cannot: Ray runs a per-batch
        command; an in-process or persistent evaluator lives beside harnessgit."""
        kind = (
            "python"
            if self.python
            else "adapter"
            if self.adapter
            else "persistent"
            if self.persistent
            else None
        )
        if kind is None:
            return None
        return f'"ray" runs a per-batch command; a {kind} evaluator runs only here (executor = "local")'

    @property
    def in_process(self) -> str | None:
        """The ``package.module:function`` called in harnessgit's process, if any."""
        return self.python or self.adapter


@dataclass(frozen=True)
class SplitsSection:
    # A file of the repository: "/etc/passwd" or "../x.json" would read outside it.
    manifest: str = field(default="splits.json", metadata={"check": check_relative})


@dataclass(frozen=True)
class GateSection:
    alpha: float = field(default=0.05, metadata={"gt": 0, "lt": 1})
    min_effect: float = field(default=0.0, metadata={"ge": -1, "le": 1})
    min_instances: int = field(default=30, metadata={"ge": 1})
    method: Literal["bootstrap", "sign"] = "bootstrap"
    resamples: int = field(default=10_000, metadata={"ge": 100})
    seed: int = 0
    # Gating on several clones: take each attempt number k through this git remote
    # (`harnessgit sync` before counting, the record published with a lease before it
    # counts), so no two clones ever test at the same k (issue 17).
    remote: str | None = field(default=None, metadata={"nonempty": True, "check": _remote_name})
    # Models besides the primary on which a candidate must show no significant loss
    # (Holm over these models at the attempt's alpha_k; docs/coevolution.md).
    models: list[str] = field(default_factory=list, metadata={"check": _check_labels})
    # How a stream of candidates is decided (docs/gate.md, "Policies"): "strict" keeps
    # the family-wise false-pass rate per selection set at most alpha; "bayes" passes
    # when the chance of a gain beyond min_effect, under the prior learned from the
    # repository's recorded gains, is at least 1 - q; "elond" keeps the expected share
    # of false passes among passes at most q over any stream (e-LOND on e-values).
    policy: Literal["strict", "bayes", "elond"] = "strict"
    q: float = field(default=0.1, metadata={"gt": 0, "lt": 1})
    # policy elond: evaluate the selection split this many instances at a time and stop
    # once the e-values settle the verdict (0: the whole split at once; docs/gate.md).
    batch: int = field(default=0, metadata={"ge": 0})
    # A selection pool larger than one gate's sample (docs/gate.md, "A selection pool"):
    # the gate reads the first `sample` selection instances in the e-process's reading
    # order and, when its verdict there is inconclusive, reads more of the selection
    # split (the pool) and decides on the e-process. None: the whole split is the sample.
    sample: int | None = field(default=None, metadata={"ge": 1})
    # What the frontier keeps a front for, as GEPA's ``frontier_type``: each selection
    # instance, each objective (GEPA's ``objective_scores``), both, or each pair of them.
    frontier_type: Literal["instance", "objective", "hybrid", "cartesian"] = "instance"
    # The keys harnessgit.toml's [gate] table sets (not a key itself): evolve applies its
    # own default policy only when `policy` is not among them (docs/gate.md, "Evolve's
    # default").
    given: frozenset[str] = field(default=frozenset(), metadata={"toml": False})


@dataclass(frozen=True)
class EvolveSection:
    minibatch: int = field(default=3, metadata={"ge": 1})  # GEPA's minibatch check uses 3 examples
    # Which harness file an iteration edits: in turn, or the one the failures name most.
    component: Literal["round-robin", "most-failures"] = "round-robin"
    form: Literal["delta", "replace"] = "delta"  # delta operations make small, reviewable diffs
    # Excerpt per example in the reflective dataset.
    trajectory_chars: int = field(default=2000, metadata={"ge": 100})
    max_examples: int = field(default=8, metadata={"ge": 1})
    # GEPA's merge proposal (use_merge): combine two frontier candidates through their
    # common ancestor, up to max_merges accepted merges per run (GEPA's
    # max_merge_invocations, 5).
    merge: bool = False
    max_merges: int = field(default=5, metadata={"ge": 1})
    # Components one proposal edits, one proposer call each (GEPA's component selector
    # "all" edits every one); 1 is GEPA's default, round-robin.
    components: int = field(default=1, metadata={"ge": 1})
    # When evolve gates (docs/gate.md, "Evolve's default"): "each" look as it comes,
    # "end" (bayes only) once, the frontier's best when the run ends; "auto": "end"
    # under bayes, "each" under strict and elond.
    adopt: Literal["auto", "each", "end"] = "auto"


def _regular_expressions(patterns: list[str]) -> None:
    for pattern in patterns:
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ValueError(f"{pattern!r} is not a valid regular expression: {exc}") from None


@dataclass(frozen=True)
class ScrubSection:
    # Regular expressions redacted from evidence before it is written, in addition
    # to the built-in ones (API keys, bearer tokens, AWS keys, private key blocks).
    patterns: list[str] = field(default_factory=list, metadata={"check": _regular_expressions})
    # Environment variables (names or globs) whose values are redacted literally,
    # whatever their shape, in addition to DEFAULT_SECRET_ENV and [proposer] api_key_env.
    env: list[str] = field(default_factory=list, metadata={"check": check_names})
    defaults: bool = True

    def all_patterns(self) -> list[str]:
        return (list(DEFAULT_PATTERNS) if self.defaults else []) + self.patterns

    def scrubber(
        self, proposer: ProposerSection | None = None, environ: Mapping[str, str] | None = None
    ) -> Scrubber:
        """The one scrubber for what comes from evaluators and proposers: the patterns,
        and the values of the secret variables in ``environ`` (default: this process's
        environment), ``proposer``'s api_key_env among them."""
        names = (list(DEFAULT_SECRET_ENV) if self.defaults else []) + self.env
        if isinstance(proposer, OpenAIProposerSection):
            names.append(proposer.api_key_env)
        secrets = secret_values(names, os.environ if environ is None else environ)
        return Scrubber(self.all_patterns(), secrets)
