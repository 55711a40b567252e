"""The file and folder names both the checks and `harnessgit init` (`detect`) know.

Apart from `detect` so that the hook, which reads these names on every commit, does not
load init's detection of harness text.
"""

from __future__ import annotations

SKILL_FILE = "SKILL.md"
# Copies of other projects: never harness text of this one.
VENDORED_FOLDERS = frozenset(
    {"node_modules", "vendor", ".venv", "venv", "site-packages", "dist", "build", ".git"}
)
