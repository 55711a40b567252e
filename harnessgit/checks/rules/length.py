"""The length rule: a file over its kind's limits, or too large to read at all."""

from __future__ import annotations

from harnessgit.check_findings import Finding
from harnessgit.checks.length import check_length, too_large
from harnessgit.checks.rules import Judge, Version


class Length(Judge):
    def state(self, version: Version) -> list[Finding]:
        content = version.content
        if content.too_large:
            return [too_large(version.path, content.size, version.config.max_file_bytes)]
        if content.text is None:
            return []
        size = version.size(content.text)
        return check_length(version.path, version.kind_name, version.kind, size, version.tokenizer)


JUDGE = Length()
