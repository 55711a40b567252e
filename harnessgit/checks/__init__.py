"""Harness checks: length, growth, collapse, format, duplication and edit size.

Bloat, collapse and large rewrites are how text optimisers fail (docs/checks.md);
these rules stop them before a commit (the pre-commit hook) and before a merge
(the gate). Rules apply by kind of file, chosen by glob in ``[checks.kinds]``.

The interface (stable; the gate and the CLI use nothing else):

- ``check_change(store, config, old, new=None, request=CheckRequest()) -> CheckReport``:
  the harness files that differ between ``old`` (None: every file is new) and a commit or
  tree (``new``), the index (``CheckRequest(source="index")``) or the working tree
  (``source="worktree"``); the request also narrows the paths and rules, checks every
  file (``all_files``), drops the ratchet and names the growth reference. ``config`` is
  anything with ``harness`` and ``checks`` sections: the full `harnessgit.config.Config`,
  or the lighter `harnessgit.checkconfig.CheckConfig` that `harnessgit check` loads
  without pydantic. The gate calls ``check_change(store, config, base_sha, candidate_sha)``
  and passes only when ``report.failed`` is False. With the ratchet (the default), a
  failure a file already had at ``old`` is "existing" and does not block (`checks.ratchet`).
- ``check_files(files: Sequence[FileVersion], config: ChecksSection, *, rules=None,
  tokenizer=None, ratchet=True, since=None) -> CheckReport``: the pure core, no git and no I/O (except
  loading tiktoken when it is installed and asked for). A `FileVersion` is one
  path with its ``old`` and ``new`` `Content` (None: absent); ``Content`` carries
  the byte size, the text when it is UTF-8, and flags for binary, invalid UTF-8
  and too-large files. ``FileVersion.from_text(path, old, new)`` builds one.
- `CheckReport`: ``files`` (`FileSummary`: path, kind, status, sizes), ``findings``
  (`Finding`: path (None for the whole change), rule, level "failure" or
  "warning", measure, value, limit, one-line message and hint, details, line and
  end_line, state "new" | "existing" | "suppressed"; ``blocks``: a new failure),
  ``tokenizer`` and ``tokens_exact``, ``notes``, and ``failed`` (a finding blocks).

The rules are listed once, in `harnessgit.check_rules` (``RULES`` here is its tuple of
names), and each is implemented by one module of `harnessgit.checks.rules`, imported
when the rule first runs. Rendering (``path:line:`` text, JSON, GitHub annotations)
lives in `harnessgit.checks.render`; nothing here prints.
"""

from __future__ import annotations

from harnessgit.check_findings import RULES, CheckReport, Content, FileSummary, FileVersion, Finding, Rule
from harnessgit.checks.check import CheckRequest, check_change
from harnessgit.checks.core import check_files, kind_of

__all__ = [
    "RULES",
    "CheckReport",
    "CheckRequest",
    "Content",
    "FileSummary",
    "FileVersion",
    "Finding",
    "Rule",
    "check_change",
    "check_files",
    "kind_of",
]
