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
    # leaves: import nothing of harnessgit (the package's face, errors, formats, layout)
    {"__init__", "errors", "canonical", "render", "objects", "layout", "globs", "fences", "scrub"},
    # shared pieces built on the leaves: records, names, evidence files, processes
    {"records", "names", "evidence", "processes", "confine"},
    {"stats"},  # pure: numbers in, decisions out
    {"store"},  # the only package that runs git
    {"config", "targets", "sync"},  # sync: below the gate, which takes attempt numbers through it
    {"checks", "evaluation", "proposers"},
    {"candidates"},
    {"gate"},
    {"review", "bisect", "evolve", "repair"},
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
            if other != unit and LAYER[other] >= LAYER[unit]:
                wrong.append(f"{relative}: imports {target} ({other} is not below {unit})")
    assert not wrong, "\n".join(wrong)


# Imports inside functions: only at the edges. The CLI loads each command's code on first
# use (`harnessgit --help` stays fast), and a few optional or heavy libraries load where
# they are first needed. Anywhere else a deferred import hides a cycle or a design problem
# (issue 26 found four cycles behind them).
DEFERRED_OK = {"numpy", "ray", "openai", "tiktoken", "markdown_it", "gepa", "dspy", "xllamacpp"}
# Heavy libraries that most commands never need (30-50 ms each at import): the hook's
# `check` prints no table and reads no frontmatter of a file without one.
DEFERRED_OK |= {"yaml", "tabulate", "unidiff"}
# Our own modules still loaded late, each with why. Shrink this list; never grow it.
DEFERRED_HERE = {
    # The store parses records only when it reads or writes notes; `check` does neither,
    # and the record models cost about 100 ms at import. Splitting the notes part out of
    # the store (issue 26, item 1) is what removes these.
    ("harnessgit/store/index.py", "harnessgit.records"),
    ("harnessgit/store/index.py", "harnessgit.records.lines"),
    ("harnessgit/store/notes.py", "harnessgit.records.lines"),
    ("harnessgit/store/transaction.py", "harnessgit.records.lines"),
    # Renderers that reach another package's text only on one path.
    ("harnessgit/candidates/render.py", "harnessgit.checks.render"),
    ("harnessgit/candidates/render.py", "harnessgit.candidates.edits"),
    ("harnessgit/gate/render.py", "harnessgit.gate.checkout"),
    ("harnessgit/report/report.py", "harnessgit.report.page"),
}


def deferred_imports(path: Path) -> list[tuple[int, str]]:
    found = []
    for function in ast.walk(ast.parse(path.read_text())):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.append((node.lineno, node.module))
            elif isinstance(node, ast.Import):
                found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_imports_inside_functions_only_at_the_edges() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE.parent)
        if relative.parts[1] == "cli":
            continue
        for line, module in deferred_imports(path):
            if module.split(".")[0] not in DEFERRED_OK and (str(relative), module) not in DEFERRED_HERE:
                wrong.append(f"{relative}:{line}: imports {module} inside a function")
    assert not wrong, "\n".join(sorted(set(wrong)))
