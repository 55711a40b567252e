"""The store as the objects it is (issue 26, item 1): `Store` keeps what is about the
repository as a whole and reaches everything else through parts with few doors."""

from __future__ import annotations

from pathlib import Path
from types import FunctionType

from harnessgit import layout
from harnessgit.store import History, Notes, Objects, Refs, Store, Transaction, Worktree
from tests.store.store_fixtures import record

PART_LIMIT = 20  # git-revise's whole Repository has 17
STORE_LIMIT = 8


def public_methods(cls: type) -> list[str]:
    """The public methods, class methods and properties of ``cls`` and what it inherits."""
    doors = (FunctionType, classmethod, staticmethod, property)
    return sorted(
        {
            name
            for klass in cls.__mro__[:-1]
            for name, value in vars(klass).items()
            if not name.startswith("_") and isinstance(value, doors)
        }
    )


def parts(store: Store) -> dict[str, type]:
    """Every public attribute of an open store that is an object of the store package
    (or of its reading half, harnessgit.readstore)."""
    return {
        name: type(value)
        for name, value in vars(store).items()
        if not name.startswith("_")
        and type(value).__module__.startswith(("harnessgit.store.", "harnessgit.readstore."))
    }


def test_the_counter_counts_what_a_caller_can_reach() -> None:
    wide = type("Wide", (), {f"m{i}": lambda self: None for i in range(21)} | {"_hidden": lambda self: None})
    narrow = type("Narrow", (wide,), {"extra": property(lambda self: 1)})
    assert len(public_methods(wide)) == 21 and len(public_methods(narrow)) == 22


def test_the_store_is_its_parts(repo: Path) -> None:
    with Store.discover(repo) as store:
        found = parts(store)
    assert {name: cls for name, cls in found.items() if name != "git"} == {
        "objects": Objects,
        "refs": Refs,
        "notes": Notes,
        "history": History,
        "worktree": Worktree,
    }


def test_no_part_has_more_than_twenty_doors(repo: Path) -> None:
    with Store.discover(repo) as store:
        found = parts(store)
    wide = {name: len(public_methods(cls)) for name, cls in found.items()}
    assert all(count <= PART_LIMIT for count in wide.values()), wide


def test_the_store_itself_keeps_few(repo: Path) -> None:
    own = public_methods(Store)
    assert len(own) <= STORE_LIMIT, own


def test_a_write_and_its_reads_go_through_the_parts(repo: Path) -> None:
    """A record written through `refs.commit` while staging is read back by `notes`
    before it lands (the one staging interface), and after it lands."""
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        with store.refs.staging("test", max_age=60):
            txn = Transaction("append a record")
            txn.append(layout.NOTES_EVIDENCE, head, [record(1)])
            store.refs.commit(txn)
            assert store.refs.value(layout.NOTES_EVIDENCE) is None  # staged, not applied
            assert len(store.notes.records_on(layout.NOTES_EVIDENCE, head)) == 1
            assert list(store.notes.records(layout.NOTES_EVIDENCE)) == [head]
        tip = store.refs.value(layout.NOTES_EVIDENCE)
        assert tip is not None and store.objects.commit_info(tip).parents == ()
        assert len(store.notes.records_on(layout.NOTES_EVIDENCE, head)) == 1
