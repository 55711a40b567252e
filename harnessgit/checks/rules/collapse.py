"""The collapse rule: a file that lost most of its content in one change, unless the
content moved to the change's other files."""

from __future__ import annotations

from harnessgit.check_findings import Finding
from harnessgit.checks.growth import check_collapse
from harnessgit.checks.rules import Edit, Judge


class Collapse(Judge):
    def change(self, edit: Edit) -> list[Finding]:
        return check_collapse(edit.path, edit.kind, edit.old, edit.new, edit.comparison, edit.moved)


JUDGE = Collapse()
