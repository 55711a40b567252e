"""The growth rule: a file grown past its kind's ratios in one change, or since the
reference revision (cumulative growth, `harnessgit.checks.cumulative`)."""

from __future__ import annotations

from harnessgit.check_findings import Finding
from harnessgit.checks.cumulative import check_since
from harnessgit.checks.growth import check_growth
from harnessgit.checks.rules import Edit, Judge, Version


class Growth(Judge):
    def state(self, version: Version) -> list[Finding]:
        text, reference = version.content.text, version.reference
        if text is None or not version.since or reference is None or reference.text is None:
            return []
        return check_since(version.path, version.kind, reference.text, text, version.since)

    def change(self, edit: Edit) -> list[Finding]:
        return check_growth(edit.path, edit.kind, edit.old, edit.new)


JUDGE = Growth()
