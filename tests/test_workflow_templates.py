"""Every shipped GitHub workflow template passes zizmor's audit, offline (issue 28,
defect 10: the review workflow kept the checkout's token in .git/config, `artipacked`,
and used actions by tag, `unpinned-uses`).

zizmor (a dev dependency) reads the YAML only: no network, no GitHub token. The
"auditor" persona reports everything, its false positives included: a template a user
copies unread should leave nothing to explain.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
WORKFLOWS = sorted(
    path for path in TEMPLATES.rglob("*.y*ml") if path.parent.name == "github" or "workflows" in path.parts
)


def zizmor() -> str | None:
    beside = Path(sys.executable).parent / "zizmor"
    return str(beside) if beside.exists() else shutil.which("zizmor")


def test_there_are_workflow_templates() -> None:
    assert [path.name for path in WORKFLOWS] == ["harnessgit-review.yml"]


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=lambda path: path.name)
def test_zizmor_finds_nothing(workflow: Path, tmp_path: Path) -> None:
    program = zizmor()
    if program is None:
        # The dev extra installs it on Python 3.11 and later (zizmor 1.32 needs 3.11).
        pytest.skip("zizmor is not installed (pip install -e '.[dev]' installs it on Python 3.11+)")
    env = {key: value for key, value in os.environ.items() if key not in ("GH_TOKEN", "GITHUB_TOKEN")}
    done = subprocess.run(
        [program, "--offline", "--persona", "auditor", "--format", "json", str(workflow)],
        cwd=tmp_path,  # no zizmor.yml of ours or anyone's: the defaults
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    findings = json.loads(done.stdout or "[]")
    assert findings == [], [(f["ident"], f["desc"]) for f in findings]
    assert done.returncode == 0, done.stderr[-2000:]
