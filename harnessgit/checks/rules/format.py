"""The format rule: readable UTF-8 text, then what the kind's format asks (a SKILL.md's
frontmatter, closed fences, a tool's JSON)."""

from __future__ import annotations

from harnessgit.check_findings import Finding
from harnessgit.checks.formats import check_encoding, check_fences, check_tool_json
from harnessgit.checks.rules import Judge, Version
from harnessgit.checks.skill_format import check_skill


class Format(Judge):
    def state(self, version: Version) -> list[Finding]:
        path, text, form = version.path, version.content.text, version.kind.format
        if version.content.too_large:
            return []
        if text is None:
            return check_encoding(path, version.content)
        if form == "skill":
            return check_skill(path, text) + check_fences(path, text)
        if form == "markdown":
            return check_fences(path, text)
        if form == "tool-json":
            return check_tool_json(path, text)
        return []


JUDGE = Format()
