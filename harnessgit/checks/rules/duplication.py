"""The duplication rule: passages, sections and headings a file repeats."""

from __future__ import annotations

from harnessgit.check_findings import Finding
from harnessgit.checks.duplication import check_duplication
from harnessgit.checks.rules import Judge, Version


class Duplication(Judge):
    def state(self, version: Version) -> list[Finding]:
        text, kind = version.content.text, version.kind
        if text is None or not kind.duplication:
            return []
        return check_duplication(version.path, text, kind.near_duplicate, kind.max_duplicates)


JUDGE = Duplication()
