"""The checks' findings and report: `harnessgit.check_findings`, kept outside this package
so that a gate reading back a proposal's verdict imports no rule (issue 26)."""

from __future__ import annotations

from harnessgit.check_findings import RULES as RULES
from harnessgit.check_findings import CheckReport as CheckReport
from harnessgit.check_findings import Content as Content
from harnessgit.check_findings import FileSummary as FileSummary
from harnessgit.check_findings import FileVersion as FileVersion
from harnessgit.check_findings import Finding as Finding
from harnessgit.check_findings import FindingState as FindingState
from harnessgit.check_findings import Level as Level
from harnessgit.check_findings import Rule as Rule
from harnessgit.check_findings import Status as Status
from harnessgit.check_findings import Unread as Unread
from harnessgit.check_findings import failure as failure
