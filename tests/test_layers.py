"""The dependency rule of docs/design.md, checked on every import in harnessgit/.

Each top-level module or package of harnessgit sits in a layer; a module may import
its own package and anything in a lower layer, never a higher one or a neighbour of
its own layer. Imports inside functions count too (they are how commands load
lazily, and they must point down like the rest). The layers are the module map of
docs/design.md; a test, so that the map stays true.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "harnessgit"

LAYERS = [
    # shared pieces that import only one another: records, names, formats, errors, the
    # package's face (__version__)
    {"__init__", "errors", "names", "layout", "records", "objects", "render", "globs"}
    | {"scrub"}
    | {"fences", "processes", "evidence", "confine"},
    {"stats"},  # pure: numbers in, decisions out
    {"store"},  # the only package that runs git
    {"config", "targets", "sync"},  # sync: below the gate, which takes attempt numbers through it
    {"checks", "evaluation", "proposers"},
    {"candidates"},
    {"gate"},
    {"review", "bisect", "evolve", "repair", "calibrate"},
    {"report"},  # pictures of what review, the frontier and the history audit read
    {"api"},  # the documented Python API: a facade over the commands' functions
    {"integrations"},  # optimisers' hooks (GEPA's callbacks), written against the API
    {"demo"},
    {"cli"},  # the only package that imports click
    {"__main__"},
]
LAYER = {name: number for number, names in enumerate(LAYERS) for name in names}


def unit_of(module: str) -> str:
    """harnessgit.gate.merge -> "gate"; harnessgit.render -> "render"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "harnessgit":  # a module of the package, or its face (__version__)
                found += [f"harnessgit.{a.name}" if a.name in LAYER else "harnessgit" for a in node.names]
            elif node.module.startswith("harnessgit."):
                found.append(node.module)
        elif isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("harnessgit.")]
    return found


def test_every_unit_has_a_layer() -> None:
    units = {
        p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir() if not p.name.startswith("__py")
    }
    assert units <= set(LAYER), f"not in the layer map: {sorted(units - set(LAYER))}"


def test_imports_point_down() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent).with_suffix("")
        unit = unit_of(".".join(relative.parts))
        for target in imports(path):
            other = unit_of(target)
            if other != unit and LAYER[other] >= LAYER[unit] and not (LAYER[unit] == 0 == LAYER[other]):
                wrong.append(f"{relative}: imports {target} ({other} is not below {unit})")
    assert not wrong, "\n".join(wrong)
