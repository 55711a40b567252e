"""The sections of harnessgit.toml, as frozen dataclasses: [evaluator], [splits], [gate],
[evolve] and [scrub] (the ``[proposer]`` kinds are in `harnessgit.config.proposer`;
[harness] and [checks], which `harnessgit check` reads alone, in `harnessgit.checkconfig.sections`).

Each field's annotation is its type and its metadata its rules; `harnessgit.checkconfig.reader`
reads every section the same way. Sources of the default numbers are in docs/checks.md
and docs/gate.md.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from harnessgit.checkconfig.reader import (
    MAX_BYTES,
    SettingError,
    check_function_spec,
    read_argv,
)
from harnessgit.config.proposer import OpenAIProposerSection, ProposerSection
from harnessgit.confine import check_relative
from harnessgit.names import ref_name_problem
from harnessgit.processes.environment import check_names
from harnessgit.scrub import DEFAULT_PATTERNS, DEFAULT_SECRET_ENV, Scrubber, secret_values

# Upper bounds of counts (docs/config.md); of sizes, reader.MAX_BYTES.
MAX_BATCH_SIZE = 100_000  # instances per evaluator process
MAX_JOBS = 1024  # evaluator processes at a time


def _remote_name(value: str) -> None:
    problem = ref_name_problem(value)
    if problem:
        raise ValueError(f"{value!r} is not a remote name: {problem}")


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
