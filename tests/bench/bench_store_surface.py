"""How many doors the store has: public methods of `Store` and of each of its parts, and
how many core functions take the whole store against one part (issue 26, item 1).

    python tests/bench/bench_store_surface.py [PACKAGE_DIR]

Reads the source (ast), so it measures any checkout: pass another tree's ``harnessgit``
directory to measure it (e.g. ``git worktree add /tmp/before main`` first, for the
figures before the split). A public method is a ``def`` directly in a class body (with
the mixins it inherits from), not starting with ``_``. "Reachable through ``store``" is
what a function given the store can call: the Store's own methods and every part's.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "harnessgit"


def classes(store_dir: Path) -> dict[str, ast.ClassDef]:
    found = {}
    for path in sorted(store_dir.glob("*.py")):
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, ast.ClassDef):
                found[node.name] = node
    return found


def public_methods(name: str, known: dict[str, ast.ClassDef]) -> list[str]:
    """Public ``def``s of a class and of the classes it inherits from in the store."""
    cls = known[name]
    names = [
        item.name
        for item in cls.body
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_")
    ]
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in known:
            names += public_methods(base.id, known)
    return sorted(set(names))


def parts(known: dict[str, ast.ClassDef]) -> dict[str, str]:
    """Store attribute -> class, for attributes set in `Store.__init__` to an instance of
    a class defined in the store package (``self.refs = Refs(...)``)."""
    init = next(
        item for item in known["Store"].body if isinstance(item, ast.FunctionDef) and item.name == "__init__"
    )
    found = {}
    for node in ast.walk(init):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            for target in node.targets:
                if (
                    isinstance(target, ast.Attribute)
                    and not target.attr.startswith("_")
                    and isinstance(func, ast.Name)
                    and func.id in known
                ):
                    found[target.attr] = func.id
    return found


def signatures(package: Path, part_classes: set[str]) -> tuple[int, int]:
    """(functions outside the store taking a ``Store``, functions taking one part)."""
    whole = narrow = 0
    for path in package.rglob("*.py"):
        if path.parent.name == "store":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            annotations = {
                ast.unparse(arg.annotation).strip("'\"")
                for arg in [*node.args.args, *node.args.kwonlyargs]
                if arg.annotation is not None
            }
            whole += "Store" in annotations
            narrow += bool(annotations & part_classes)
    return whole, narrow


def main() -> None:
    package = Path(sys.argv[1]) if len(sys.argv) > 1 else PACKAGE
    known = classes(package / "store")
    own = public_methods("Store", known)
    found = parts(known)
    print(f"{package}")
    print(f"Store's own public methods: {len(own)}")
    reachable = len(own)
    for attr, cls in sorted(found.items()):
        methods = public_methods(cls, known)
        reachable += len(methods)
        print(f"  store.{attr} ({cls}): {len(methods)}")
    whole, narrow = signatures(package, set(found.values()) - {"Git"})
    print(f"reachable through one `store`: {reachable}")
    print(f"functions outside store/ taking a Store: {whole}; taking one part: {narrow}")


if __name__ == "__main__":
    main()
