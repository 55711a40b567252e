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

from harnessgit.check_rules import SPECS

PACKAGE = Path(__file__).resolve().parent.parent / "harnessgit"

LAYERS = [
    # leaves: import nothing of harnessgit (the package's face, errors, formats, layout)
    {
        "__init__",
        "errors",
        "canonical",
        "render",
        "objects",
        "layout",
        "globs",
        "fences",
        "scrub",
        "check_rules",
    },
    # shared pieces built on the leaves: records, names, evidence files, processes
    {"records", "names", "evidence", "processes", "confine", "object_ids", "check_findings"},
    {"stats"},  # pure: numbers in, decisions out
    {"readstore"},  # runs git to read: opening a repository, its objects, refs, index, diffs
    {"store"},  # the store: readstore's parts, with writes, transactions and notes
    {"checkconfig"},  # [harness] and [checks] of harnessgit.toml, and the reader of every section
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
    ("harnessgit/candidates/render.py", "harnessgit.candidates.edits"),
    ("harnessgit/gate/render.py", "harnessgit.gate.checkout"),
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


# Modules loaded by name at run time (importlib): edges the import graph cannot see, so
# kept to the edges as deferred imports are, each with why.
DYNAMIC_HERE = {
    "harnessgit/cli/_base.py": "each command's module on its first use (`--help` stays fast)",
    "harnessgit/checks/rules/__init__.py": "a check rule's module when the rule first runs "
    "(harnessgit.check_rules names it): `check FILE` loads only the rules that run",
    "harnessgit/evaluation/ray_executor.py": "ray, an optional extra",
    "harnessgit/processes/functions.py": "the evaluator or adapter harnessgit.toml names",
}


def dynamic_imports(path: Path) -> list[int]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Call):
            name = ast.unparse(node.func)
            if name in ("importlib.import_module", "import_module", "__import__"):
                found.append(node.lineno)
    return found


def test_modules_loaded_by_name_only_at_the_edges() -> None:
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = str(path.relative_to(PACKAGE.parent))
        if relative not in DYNAMIC_HERE:
            wrong += [f"{relative}:{line}: loads a module by name" for line in dynamic_imports(path)]
    assert not wrong, "\n".join(wrong)


def test_the_check_rules_load_modules_of_the_checks() -> None:
    assert all(spec.module.startswith("harnessgit.checks.rules.") for spec in SPECS)
    assert all((PACKAGE.parent / (spec.module.replace(".", "/") + ".py")).is_file() for spec in SPECS)


def module_graph() -> dict[str, set[str]]:
    """Every module's imports of other harnessgit modules, at any depth of the file
    (type-checking imports too: a cycle of types is still a cycle for a reader).
    ``from package import module`` is an edge to the module, not to the package."""
    modules = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                subs = [f"{node.module}.{a.name}" for a in node.names if f"{node.module}.{a.name}" in modules]
                targets = subs + ([node.module] if len(subs) < len(node.names) else [])
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            graph[name] |= {target for target in targets if target in modules and target != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph[node]:
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycles() -> None:
    assert not cycles(module_graph())


def test_the_cycle_finder_finds_one() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
