"""The rules' one interface: each rule of `harnessgit.check_rules` is a module here with
a ``JUDGE`` that reads one version of a file (`Judge.state`), one file's change
(`Judge.change`) and the change as a whole (`Judge.whole`).

`judge` imports a rule's module the first time the rule runs, by the module path the
table names (importlib, not an import statement): an edge of the same kind as the
CLI's lazy commands, registered in tests/test_layers.py. A hook that judges one
SKILL.md loads the tables of the rules that run on it, a ``--rule length`` run only
the length rule's.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from functools import cache
from typing import NamedTuple

from harnessgit.check_findings import Content, Finding
from harnessgit.check_rules import BY_NAME, Rule
from harnessgit.checkconfig.sections import ChecksSection, KindChecks
from harnessgit.checks.compare import Comparison
from harnessgit.checks.growth import Moved
from harnessgit.checks.length import Size
from harnessgit.checks.tokens import Tokenizer


class Version(NamedTuple):
    """One version of a file under its kind: what a rule judges of it alone."""

    path: str
    kind_name: str
    kind: KindChecks
    content: Content
    config: ChecksSection
    tokenizer: Tokenizer
    size: Callable[[str], Size]  # the text's measure under ``kind`` (counted once per run)
    # The file at the revision cumulative growth is measured against, and that revision's
    # description ("the merge base with main (1a2b3c4d5e6f)"); None: no reference.
    reference: Content | None = None
    since: str | None = None


class Edit(NamedTuple):
    """One file's change, both sides readable text: what a rule judges of the change."""

    path: str
    kind: KindChecks
    old: str
    new: str
    comparison: Comparison
    moved: Moved  # the lines the change added to its other files


class Judge:
    """A rule's verdicts; each stage it does not judge finds nothing."""

    def state(self, version: Version) -> list[Finding]:
        return []

    def change(self, edit: Edit) -> list[Finding]:
        return []

    def whole(self, edits: Sequence[Edit], config: ChecksSection) -> list[Finding]:
        """The change as a whole, after every file (``edits``: every file's change)."""
        return []


@cache
def judge(rule: Rule) -> Judge:
    """The rule's judge, its module imported on first use."""
    module = importlib.import_module(BY_NAME[rule].module)
    found: Judge = module.JUDGE
    return found
