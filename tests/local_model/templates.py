"""templates/local_model/'s scripts, loaded as modules (they are scripts, not a package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

LOCAL = Path(__file__).resolve().parents[2] / "templates" / "local_model"


def load(name: str) -> ModuleType:
    sys.path.insert(0, str(LOCAL))  # serve.py imports fetch_weights beside it
    try:
        spec = importlib.util.spec_from_file_location(f"local_model_{name}", LOCAL / f"{name}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module
    finally:
        sys.path.remove(str(LOCAL))
