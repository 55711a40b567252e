from __future__ import annotations

import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_for_setuptools() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(path.parent.relative_to(ROOT).parts) for path in (ROOT / "harnessgit").rglob("__init__.py")
    }
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
    assert "harnessgit_templates" in listed


def test_the_demo_template_ships_with_the_package() -> None:
    from importlib import resources

    triage = resources.files("harnessgit_templates") / "triage"
    for name in (
        "SKILL.md",
        "eval.py",
        "agent.py",
        "propose.py",
        "tickets.jsonl",
        "splits.json",
        "harnessgit.toml",
    ):
        assert (triage / name).is_file(), name
