"""The check rules, each defined once: its name, what it judges and where it is implemented.

Every list of rules reads this table: the command line's ``--rule`` choices, the
configuration reader (``[checks.severity]`` keys, ``allow`` in ``[[checks.overrides]]``),
the ``<!-- harnessgit: allow RULE -->`` comments and ``Harness-Allow`` trailers, and the
engine (`harnessgit.checks.core`), which runs each rule through its module in
`harnessgit.checks.rules` (one module per rule, one interface: pre-commit's
``languages/``). A leaf: it imports nothing of harnessgit, so the configuration (a layer
below the checks) and the CLI's ``--help`` read it for nothing.

A rule's module is imported the first time the rule runs (`harnessgit.checks.rules.judge`),
so a command that runs some rules loads only their tables and regular expressions.
"""

from __future__ import annotations

from typing import Literal, NamedTuple, get_args

# The names, in the order every list shows them. Spelt here for the type checker only:
# RULES below is read from the table, and the assert at the end keeps the two equal.
Rule = Literal["length", "growth", "collapse", "format", "duplication", "edit-size"]


# Records the hook builds at start-up are NamedTuples: immutable like a frozen dataclass,
# without the methods a dataclass generates (and compiles) when its class is created.
class RuleSpec(NamedTuple):
    """One rule. ``name`` is also its key everywhere a user writes one: ``[checks.severity]``,
    ``[[checks.overrides]]`` ``allow`` and ``severity``, comments, trailers, ``--rule``."""

    name: Rule
    summary: str  # one line: what the rule finds
    kinds: str  # which kinds of file it judges, and the [checks.kinds] key that turns it off
    module: str  # the module of harnessgit.checks.rules that implements it
    # What it reads: one version of a file alone ("state"), a file against its previous
    # version ("change"), and the change as a whole ("whole"; after every file).
    state: bool = False
    change: bool = False
    whole: bool = False
    # Its verdict on one version depends only on the path, kind, tokenizer and text
    # (judged once per process: `checks.core` keeps the verdicts by digest).
    cached: bool = False
    # When the previous version had a finding of it and this one has not, the report
    # says what the change fixed (`CheckReport.fixed`).
    reports_fixed: bool = False

    @property
    def attribute(self) -> str:
        """The Python spelling of the name (``edit-size`` -> ``edit_size``)."""
        return self.name.replace("-", "_")


SPECS: tuple[RuleSpec, ...] = (
    RuleSpec(
        "length",
        "a file over its kind's max_chars, max_lines or max_tokens (or over max_file_bytes)",
        "every kind with a limit set (max_chars, max_lines, max_tokens)",
        "harnessgit.checks.rules.length",
        state=True,
        cached=True,
        reports_fixed=True,
    ),
    RuleSpec(
        "growth",
        "a file that grew past growth_warn / growth_fail in one change or since the reference",
        "every kind (growth_warn and growth_fail unset: off)",
        "harnessgit.checks.rules.growth",
        state=True,
        change=True,
    ),
    RuleSpec(
        "collapse",
        "a file that lost most of its size, lines or sections in one change",
        "every kind with collapse = true",
        "harnessgit.checks.rules.collapse",
        change=True,
    ),
    RuleSpec(
        "format",
        "bad encoding, unclosed fences, a SKILL.md's frontmatter, a tool's JSON",
        'every kind by its format ("none": only the encoding)',
        "harnessgit.checks.rules.format",
        state=True,
        cached=True,
        reports_fixed=True,
    ),
    RuleSpec(
        "duplication",
        "repeated passages, sections and headings within a file",
        "every kind with duplication = true",
        "harnessgit.checks.rules.duplication",
        state=True,
        cached=True,
    ),
    RuleSpec(
        "edit-size",
        "an edit of more hunks or changed lines than a file's or the change's budget",
        "every kind (max_hunks, max_changed_lines; [checks] change_max_*)",
        "harnessgit.checks.rules.edit_size",
        change=True,
        whole=True,
    ),
)
RULES: tuple[Rule, ...] = tuple(spec.name for spec in SPECS)
BY_NAME: dict[Rule, RuleSpec] = {spec.name: spec for spec in SPECS}

assert get_args(Rule) == RULES, "check_rules.Rule and SPECS name the same rules, in one order"
