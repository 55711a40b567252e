"""Which commit of harnessgit's own source is running, for ``harnessgit --version``."""

from __future__ import annotations

from pathlib import Path

from harnessgit.readstore.git import Git


def source_revision(package: Path) -> str | None:
    """``git describe`` of the checkout that ``package`` (harnessgit's folder) sits in,
    ``-dirty`` when it has uncommitted changes; None when harnessgit was installed
    from a wheel (no checkout of harnessgit around it) or git cannot say."""
    root = package.parent
    pyproject = root / "pyproject.toml"
    if not (root / ".git").exists() or not pyproject.is_file():
        return None
    if 'name = "harnessgit"' not in pyproject.read_text(encoding="utf-8", errors="replace"):
        return None  # harnessgit's folder copied into another project's checkout
    result = Git(root).run(["describe", "--always", "--dirty", "--abbrev=12"], check=False)
    described = result.stdout.decode("utf-8", "replace").strip()
    return described if result.returncode == 0 and described else None
