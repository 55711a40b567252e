"""The statistics are a pure core: numbers in, decisions out (issue 11).

Each module of harnessgit.stats is imported alone, in a fresh interpreter, and must not
load the store, GitPython, the configuration, pydantic or numpy (the bootstrap imports
numpy when it runs, not when it is imported). A module that grew such an import would
make every caller of the statistics pay for it, and tie a decision to the repository.
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import pytest

import harnessgit.stats

MODULES = sorted(f"harnessgit.stats.{m.name}" for m in pkgutil.iter_modules(harnessgit.stats.__path__))
FORBIDDEN = ("harnessgit.store", "harnessgit.config", "harnessgit.records", "git", "pydantic", "numpy")


def test_every_stats_module_is_covered() -> None:
    assert {"harnessgit.stats.decision", "harnessgit.stats.frontier", "harnessgit.stats.pairing"} <= set(
        MODULES
    )


@pytest.mark.parametrize("module", MODULES)
def test_importing_a_stats_module_loads_nothing_impure(module: str) -> None:
    code = f"import sys, {module}; print(sorted(m for m in sys.modules if m.startswith({FORBIDDEN!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines()[-1] == "[]", module
