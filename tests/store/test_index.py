"""The notes index (issue 17): derived, keyed by the notes commit, never trusted blindly.

A ScoreBook read through the index must equal one read from every note
(`ScoreBook.load_all`), whatever happened to the index file or the notes ref.
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.evaluation.context import Key
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import EvalRecord, Record, RetireRecord, TestPeekRecord
from harnessgit.repair.doctor import CHECKS, diagnose
from harnessgit.store import Store, Transaction
from harnessgit.store.index import check_index, index_path, read_index
from harnessgit.store.index_file import FORMAT, parse_index
from harnessgit.store.retired import REASONS, archived_reasons, check_reasons, retire_reasons
from tests.conftest import git

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)
index_check = next(check for check in CHECKS if check.name == "index")
HARNESSES = [f"{n:040x}" for n in range(1, 5)]
FINGERPRINTS = ["f" * 64, "e" * 64]
INSTANCES = ["a", "b", "c", "d", "e"]


def evaluation(rng: random.Random, commit: str, **given: object) -> EvalRecord:
    instances = rng.sample(INSTANCES, rng.randint(1, len(INSTANCES)))
    fields: dict[str, object] = {
        "ts": T0 + timedelta(seconds=rng.randrange(4)),  # few distinct times: ties happen
        "commit": commit,
        "harness": rng.choice(HARNESSES),
        "fingerprint": rng.choice(FINGERPRINTS),
        "model": "sim-1",
        "split": "selection",
        "split_hash": "s" * 64,
        "manifest": "m" * 64,
        "instances": instances,
        "repeats": [rng.randrange(2) for _ in instances],
        "scores": [rng.choice([0.0, 0.5, 1.0]) for _ in instances],
        "clusters": [rng.choice([None, "x"]) for _ in instances],
        "wall_time": 1.0,
        "worker": "test:1",
    }
    fields.update(given)
    return EvalRecord.model_validate(fields)


def peek(rng: random.Random, commit: str) -> TestPeekRecord:
    return TestPeekRecord(
        ts=T0 + timedelta(seconds=rng.randrange(100)),
        commit=commit,
        harness=rng.choice(HARNESSES),
        fingerprint=FINGERPRINTS[0],
        model="sim-1",
        n=3,
        mean=0.5,
    )


def commits(store: Store, n: int) -> list[str]:
    tip = store.refs.resolve("main")
    tree = store.objects.commit_info(tip).tree
    return [store.objects.write_commit(tree, [tip], f"commit {i}") for i in range(n)]


def append(store: Store, target: str, records: list[Record]) -> None:
    txn = Transaction("test")
    txn.append(layout.NOTES_EVALS, target, records)
    store.refs.commit(txn)


def assert_same(store: Store) -> None:
    """Every question a command asks, through the index and from every note."""
    lazy, full = ScoreBook.load(store), ScoreBook.load_all(store)
    fetched = ScoreBook.load(store)  # the frontier's way: many harnesses in one read
    fetched.prefetch([*HARNESSES, *(f"{n:040x}" for n in range(100, 120))])
    for harness in HARNESSES:
        assert [r.id for r in fetched.records_for(Key(harness, FINGERPRINTS[0], "sim-1"))] == [
            r.id for r in full.records_for(Key(harness, FINGERPRINTS[0], "sim-1"))
        ]
        assert lazy.keys_of(harness) == full.keys_of(harness)
        for fingerprint in FINGERPRINTS:
            key = Key(harness, fingerprint, "sim-1")
            assert lazy.rows(key) == full.rows(key)
            assert [r.id for r in lazy.records_for(key)] == [r.id for r in full.records_for(key)]
            assert lazy.summary(key, "selection", INSTANCES) == full.summary(key, "selection", INSTANCES)
            assert lazy.complete_means(key, ("a", "b"), "s") == full.complete_means(key, ("a", "b"), "s")
    assert [p.id for p in lazy.peeks] == [p.id for p in full.peeks]
    assert set(lazy.cache_keys()) == set(full.cache_keys())
    assert set(lazy.records) == set(full.records)


@pytest.fixture
def store(repo: Path) -> Store:
    return Store.discover(repo)


def test_reading_one_harness_reads_only_its_notes(store: Store, caplog: pytest.LogCaptureFixture) -> None:
    """Fails without the index: the book read every note and warned about a broken
    record on an unrelated commit."""
    rng = random.Random(1)
    one, other = commits(store, 2)
    append(store, one, [evaluation(rng, one, harness=HARNESSES[0])])
    git(store.root, "notes", f"--ref={layout.NOTES_EVALS}", "add", "-m", '{"kind": "eval", "v": 1}', other)
    ScoreBook.load(store)  # builds the index
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="harnessgit"):
        assert len(ScoreBook.load(store).keys_of(HARNESSES[0])) == 1
    assert "skipped" not in caplog.text
    with caplog.at_level(logging.WARNING, logger="harnessgit"):
        ScoreBook.load(store).cache_keys()  # every note: the broken one is said
    assert "skipped 1 record" in caplog.text


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data[:-2] + bytes([data[-2] ^ 1]) + data[-1:],  # edited body
        lambda data: b"",  # emptied
        lambda data: data.split(b"\n", 1)[1],  # no header
        lambda data: data.replace(f'"format": {FORMAT}'.encode(), b'"format": 9'),  # another format
    ],
    ids=["truncated", "edited", "empty", "headless", "format"],
)
def test_a_damaged_index_is_rebuilt(store: Store, damage: Callable[[bytes], bytes]) -> None:
    rng = random.Random(2)
    for target in commits(store, 6):
        append(store, target, [evaluation(rng, target), peek(rng, target)])
    good = read_index(store, layout.NOTES_EVALS)
    path = index_path(store, layout.NOTES_EVALS)
    path.write_bytes(damage(path.read_bytes()))
    assert check_index(store, layout.NOTES_EVALS) is not None
    assert_same(store)
    assert parse_index(path.read_bytes(), layout.NOTES_EVALS).entries == good.entries
    assert check_index(store, layout.NOTES_EVALS) is None


def test_a_forged_entry_is_found_by_doctor(store: Store) -> None:
    """An index edited with its checksum recomputed names the right notes commit: only a
    rebuild can tell (`doctor`), and it does."""
    rng = random.Random(3)
    first, second = commits(store, 2)
    append(store, first, [evaluation(rng, first, harness=HARNESSES[0])])
    append(store, second, [evaluation(rng, second, harness=HARNESSES[1])])
    index = read_index(store, layout.NOTES_EVALS)
    del index.entries[first]
    index_path(store, layout.NOTES_EVALS).write_bytes(index.dump())
    assert "does not match" in str(check_index(store, layout.NOTES_EVALS))
    (finding,) = diagnose(store, checks=(index_check,)).findings
    assert finding.subject == ".git/harnessgit/index/harnessgit-evals" and finding.fixable
    (fixed,) = diagnose(store, fix=True, checks=(index_check,)).findings
    assert fixed.fixed and fixed.outcome == "rebuilt it from 2 notes"
    assert check_index(store, layout.NOTES_EVALS) is None
    assert diagnose(store).findings == ()
    assert_same(store)


def test_lookups_by_binary_search_agree_with_a_scan_and_doctor_checks_the_order(store: Store) -> None:
    """A tag's line is found by a binary search of the sorted lines: every tag, tags that
    are prefixes of others, tags before the first and after the last, and none missed.
    An index whose lines were put out of order (checksum redone) is a `doctor` finding."""
    rng = random.Random(8)
    tags = sorted({"".join(rng.choice("ab*-/0") for _ in range(rng.randint(1, 4))) for _ in range(300)})
    target = "1" * 40
    body = "".join(f"{tag} {target}:{hashlib.sha1(tag.encode()).hexdigest()}\n" for tag in tags).encode()
    index = parse_index(header(body) + body, layout.NOTES_EVALS)
    for probe in [
        *tags,
        "",
        "~",
        "a" * 5,
        *(tag + "a" for tag in tags[:50]),
        *(tag[:-1] for tag in tags),
    ]:
        expected = {target: hashlib.sha1(probe.encode()).hexdigest()} if probe in tags else {}
        assert index._tagged(probe) == expected, probe
    rng.shuffle(tags)
    body = "".join(f"{tag} {target}:{hashlib.sha1(tag.encode()).hexdigest()}\n" for tag in tags).encode()
    path = index_path(store, layout.NOTES_EVALS)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(header(body) + body)
    assert "out of order" in str(check_index(store, layout.NOTES_EVALS))


def header(body: bytes) -> bytes:
    head = {"format": FORMAT, "ref": layout.NOTES_EVALS, "commit": None, "tree": None}
    return json.dumps({**head, "sha256": hashlib.sha256(body).hexdigest()}).encode() + b"\n"


def test_a_forged_line_is_rebuilt_when_read(store: Store) -> None:
    """A line of the wrong shape under a redone checksum passes the first look; the
    lookup that meets it rebuilds the index (for the same notes commit) instead of failing."""
    rng = random.Random(5)
    (target,) = commits(store, 1)
    append(store, target, [evaluation(rng, target, harness=HARNESSES[0])])
    read_index(store, layout.NOTES_EVALS)
    path = index_path(store, layout.NOTES_EVALS)
    header, body = path.read_bytes().split(b"\n", 1)
    body = body.replace(HARNESSES[0].encode() + b" ", HARNESSES[0].encode() + b" junk ")
    fields = json.loads(header) | {"sha256": hashlib.sha256(body).hexdigest()}
    path.write_bytes(json.dumps(fields).encode() + b"\n" + body)
    assert_same(store)
    assert check_index(store, layout.NOTES_EVALS) is None


def test_an_index_of_another_notes_commit_is_brought_up_to_date(store: Store) -> None:
    rng = random.Random(4)
    targets = commits(store, 4)
    append(store, targets[0], [evaluation(rng, targets[0])])
    read_index(store, layout.NOTES_EVALS)
    built = store.refs.value(layout.NOTES_EVALS)
    append(store, targets[1], [evaluation(rng, targets[1])])
    append(store, targets[0], [evaluation(rng, targets[0])])
    index = read_index(store, layout.NOTES_EVALS)
    assert index.commit == store.refs.value(layout.NOTES_EVALS) != built
    assert_same(store)
    # The notes ref moves sideways (a fetch that replaced it): a sibling of the indexed commit.
    git(store.root, "update-ref", layout.NOTES_EVALS, str(built))
    append(store, targets[2], [evaluation(rng, targets[2])])
    assert_same(store)
    # No notes at all.
    git(store.root, "update-ref", "-d", layout.NOTES_EVALS)
    assert read_index(store, layout.NOTES_EVALS).entries == {}
    assert_same(store)


@pytest.mark.parametrize("seed", [0, *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(1, 6))])
def test_results_with_and_without_the_index_are_identical(store: Store, seed: int) -> None:
    """Random histories: appends, corrections, peeks, the ref moved back and merged
    with cat_sort_uniq (what sync does), the index file damaged; after every step the
    book through the index equals the book from every note."""
    rng = random.Random(seed)
    targets = commits(store, 5)
    saved: list[str] = []
    for _step in range(25):
        op = rng.random()
        tip = store.refs.value(layout.NOTES_EVALS)
        target = rng.choice(targets)
        if op < 0.5 or tip is None:
            append(store, target, [evaluation(rng, target) for _ in range(rng.randint(1, 3))])
        elif op < 0.6:
            on = [r for r in store.notes.records_on(layout.NOTES_EVALS, target) if isinstance(r, EvalRecord)]
            if on:
                old = rng.choice(on)
                append(store, target, [evaluation(rng, target, harness=old.harness, supersedes=old.id)])
        elif op < 0.7:
            append(store, target, [peek(rng, target)])
        elif op < 0.8 and saved:
            # Another clone's notes, merged in as sync merges them.
            git(store.root, "update-ref", "refs/notes/other", rng.choice(saved))
            git(
                store.root,
                "notes",
                f"--ref={layout.NOTES_EVALS}",
                "merge",
                "-q",
                "-s",
                "cat_sort_uniq",
                "refs/notes/other",
            )
        elif op < 0.9 and saved:
            git(store.root, "update-ref", layout.NOTES_EVALS, rng.choice(saved))  # moved back
        else:
            path = index_path(store, layout.NOTES_EVALS)
            if path.exists():
                data = path.read_bytes()
                path.write_bytes(data[: rng.randrange(len(data))])
        if tip is not None:
            saved.append(tip)
        assert_same(store)


def test_retire_reasons_are_the_newest_retire_record_of_each_candidate(store: Store) -> None:
    """`status` counts archived candidates from the evidence index: each candidate's
    newest retire record on its own commit, as the records say, odd reasons, records of
    other candidates on the same commit and corrections included."""
    targets = commits(store, 3)
    reasons = ["dominated", "rejected: a/b c%2F\u00e9", "merged"]
    for n, target in enumerate(targets):
        records: list[Record] = [
            RetireRecord(ts=T0 + timedelta(seconds=k), candidate=f"c{n}", commit=target, reason=reason)
            for k, reason in enumerate(reasons[: n + 1])
        ]
        records.append(RetireRecord(ts=T0 + timedelta(hours=1), candidate="other", commit=target, reason="x"))
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, target, records)
        store.refs.commit(txn)
    archived = {f"c{n}": target for n, target in enumerate(targets)}

    def from_records() -> dict[str, str]:
        notes = store.notes.records(layout.NOTES_EVIDENCE)
        found = {}
        for cid, sha in archived.items():
            own = [r for r in notes.get(sha, []) if isinstance(r, RetireRecord) and r.candidate == cid]
            if own:
                found[cid] = max(own, key=lambda r: r.ts).reason
        return found

    assert retire_reasons(store, layout.NOTES_EVIDENCE, archived) == from_records()
    assert retire_reasons(store, layout.NOTES_EVIDENCE, archived)["c2"] == "merged"
    txn = Transaction("test")
    later = T0 + timedelta(minutes=5)
    txn.append(
        layout.NOTES_EVIDENCE,
        targets[0],
        [RetireRecord(ts=later, candidate="c0", commit=targets[0], reason="y")],
    )
    store.refs.commit(txn)  # an update of the index, not a rebuild
    assert retire_reasons(store, layout.NOTES_EVIDENCE, archived) == {**from_records(), "c0": "y"}
    assert retire_reasons(store, layout.NOTES_EVIDENCE, {"c1": targets[0]}) == {}  # not on its commit


def test_archived_counts_are_kept_until_the_archive_or_its_notes_change(store: Store) -> None:
    """`status` keeps its counts of archived candidates by reason beside the indexes, for
    the evidence notes commit and the archive they were counted from: a new retire record
    or a new archived candidate recounts; an edited file is a `doctor` finding."""
    targets = commits(store, 2)
    txn = Transaction("test")
    for n, target in enumerate(targets):
        txn.append(
            layout.NOTES_EVIDENCE,
            target,
            [RetireRecord(ts=T0, candidate=f"c{n}", commit=target, reason="dominated")],
        )
    store.refs.commit(txn)
    archived = {"c0": targets[0], "c1": targets[1], "c2": targets[1]}
    assert archived_reasons(store, layout.NOTES_EVIDENCE, archived) == {"dominated": 2, "unknown": 1}
    saved = index_path(store, REASONS)
    assert saved.exists() and check_reasons(store, layout.NOTES_EVIDENCE, archived) is None
    txn = Transaction("test")
    txn.append(
        layout.NOTES_EVIDENCE,
        targets[1],
        [RetireRecord(ts=T0, candidate="c2", commit=targets[1], reason="merged")],
    )
    store.refs.commit(txn)
    assert archived_reasons(store, layout.NOTES_EVIDENCE, archived) == {"dominated": 2, "merged": 1}
    assert archived_reasons(store, layout.NOTES_EVIDENCE, {"c0": targets[0]}) == {"dominated": 1}
    archived_reasons(store, layout.NOTES_EVIDENCE, archived)
    data = json.loads(saved.read_bytes())
    saved.write_text(json.dumps({**data, "counts": {"merged": 3}}))  # trusted by readers
    assert archived_reasons(store, layout.NOTES_EVIDENCE, archived) == {"merged": 3}
    assert "do not match" in str(check_reasons(store, layout.NOTES_EVIDENCE, archived))


WRITER = """
import random, sys
from pathlib import Path
from harnessgit import layout
from harnessgit.evaluation.context import Key
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.store import Store, Transaction
from tests.store.test_index import evaluation

me = int(sys.argv[2])
rng = random.Random(me)
with Store.discover(Path(sys.argv[1])) as store:
    target = store.refs.resolve("main")
    for i in range(8):
        harness = f"{me:020x}{i:020x}"
        record = evaluation(rng, target, harness=harness, fingerprint="f" * 64)
        txn = Transaction("test")
        txn.append(layout.NOTES_EVALS, target, [record])
        store.refs.commit(txn)
        book = ScoreBook.load(store)  # reads, updates and saves the index while others do
        assert record.id in {r.id for r in book.records_for(Key(harness, "f" * 64, "sim-1"))}
"""


@pytest.mark.slow
def test_concurrent_writers_and_readers_keep_the_index_true(store: Store) -> None:
    """Four processes append and read at once, each saving the index it brought up to
    date: every reader sees its own record, and the index left equals a rebuild."""
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, str(store.root), str(n)], cwd=root) for n in range(4)
    ]
    assert [proc.wait(timeout=120) for proc in procs] == [0] * 4
    assert check_index(store, layout.NOTES_EVALS) is None
    assert len(ScoreBook.load(store).records) == 32
    assert_same(store)
