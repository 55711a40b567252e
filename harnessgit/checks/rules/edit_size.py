"""The edit-size rule: each file's edit within its kind's budget, and the change's
edits together within ``[checks] change_max_hunks`` and ``change_max_changed_lines``."""

from __future__ import annotations

from collections.abc import Sequence

from harnessgit.check_findings import Finding
from harnessgit.checkconfig.sections import ChecksSection
from harnessgit.checks.edits import check_change_edit, check_file_edit
from harnessgit.checks.rules import Edit, Judge


def _edited(edit: Edit) -> bool:
    # A file that was empty is being written, not edited: judged like a new file by its
    # length (held out: 64 empty agent files filled in one commit, each flagged as a
    # 250-300-line edit, while a file created in the same commit was not).
    return bool(edit.old.strip())


class EditSize(Judge):
    def change(self, edit: Edit) -> list[Finding]:
        if not _edited(edit):
            return []
        return check_file_edit(edit.path, edit.comparison, edit.kind.max_hunks, edit.kind.max_changed_lines)

    def whole(self, edits: Sequence[Edit], config: ChecksSection) -> list[Finding]:
        budgets = [(e.comparison, e.kind.max_hunks, e.kind.max_changed_lines) for e in edits if _edited(e)]
        return check_change_edit(budgets, config.change_max_hunks, config.change_max_changed_lines)


JUDGE = EditSize()
