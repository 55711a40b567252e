"""Notes: readable by git and back, any fanout, kept through gc, no write lost to a race."""

from __future__ import annotations

import logging
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.records import EvidenceRecord, ProposalRecord
from harnessgit.records.lines import dump_record
from harnessgit.store import EVIDENCE_STORE, PINS_PREFIX, Store, Transaction
from tests.conftest import git
from tests.store.store_fixtures import TS, record


def test_notes_are_readable_by_git_and_back(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, head, [record(1)])
        store.refs.commit(txn)
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, head, [record(2)])
        store.refs.commit(txn)
        shown = git(repo, "notes", f"--ref={layout.NOTES_EVIDENCE}", "show", head)
        assert shown.count("\n") == 2 and '"candidate":"c1"' in shown
        # git's own writer on the same ref; then we append again on top of it.
        git(repo, "notes", f"--ref={layout.NOTES_EVIDENCE}", "append", "-m", "", "HEAD")
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, head, [record(3)])
        store.refs.commit(txn)
        records = store.notes.records_on(layout.NOTES_EVIDENCE, head)
        assert [r.candidate for r in records if isinstance(r, ProposalRecord)] == ["c1", "c2", "c3"]
        assert store.notes.records(layout.NOTES_EVIDENCE)[head] == records
        assert git(repo, "rev-parse", f"{PINS_PREFIX}{head}").strip() == head


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_notes_written_by_git_with_fanout_are_found(repo: Path) -> None:
    # 300 notes make git use a fanout layout; we must find and extend them in place.
    shas = []
    for i in range(300):
        shas.append(git(repo, "commit-tree", "HEAD^{tree}", "-m", f"c{i}").strip())
    subprocess.run(
        ["git", "fast-import", "--quiet"], cwd=repo, check=True, input=_notes_import(shas).encode()
    )
    tree = git(repo, "ls-tree", layout.NOTES_EVIDENCE)
    assert "\ttree" not in tree and " tree " in tree  # git chose a fanout
    with Store.discover(repo) as store:
        txn = Transaction("test")
        txn.append(layout.NOTES_EVIDENCE, shas[7], [record(7)])
        store.refs.commit(txn)
        text = git(repo, "notes", f"--ref={layout.NOTES_EVIDENCE}", "show", shas[7])
        assert text.startswith("note7\n") and '"candidate":"c7"' in text
        assert len(store.notes.texts(layout.NOTES_EVIDENCE)) == 300


def _notes_import(shas: list[str]) -> str:
    lines = [f"commit {layout.NOTES_EVIDENCE}", "committer T <t@e> 0 +0000", "data 0", ""]
    for i, sha in enumerate(shas):
        body = f"note{i}\n"
        lines += [f"N inline {sha}", f"data {len(body)}", body.rstrip("\n")]
    return "\n".join(lines) + "\n\n"


def test_kept_blobs_and_pinned_commits_survive_gc(repo: Path) -> None:
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        tree = store.objects.commit_info(head).tree
        orphan = store.objects.write_commit(tree, [head], "an evaluated commit no branch holds")
        blob = store.objects.write_blob(b"a trajectory nobody else references\n")
        txn = Transaction("test")
        txn.append(layout.NOTES_EVALS, orphan, [EvidenceRecord(ts=TS, blob=blob, items=1, bytes=10)])
        txn.keep(blob)
        store.refs.commit(txn)
    git(repo, "gc", "-q", "--prune=now")
    assert git(repo, "cat-file", "-t", orphan).strip() == "commit"
    assert git(repo, "cat-file", "-p", blob) == "a trajectory nobody else references\n"
    assert git(repo, "rev-parse", EVIDENCE_STORE)


APPENDER = """
import sys
from datetime import datetime, timezone
from harnessgit.records import ProposalRecord
from harnessgit.store import Store, Transaction
repo, target, who = sys.argv[1], sys.argv[2], sys.argv[3]
with Store.discover(__import__("pathlib").Path(repo)) as store:
    for i in range(50):
        txn = Transaction("append")
        txn.append("refs/notes/harnessgit/evals", target, [ProposalRecord(
            ts=datetime.now(timezone.utc), candidate=f"{who}-{i}", parent="0" * 40,
            components=[], rationale="", source="api")])
        store.refs.commit(txn)
"""


@pytest.mark.slow
def test_concurrent_writers_lose_nothing(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD").strip()
    procs = [subprocess.Popen([sys.executable, "-c", APPENDER, str(repo), head, f"w{n}"]) for n in range(8)]
    assert [proc.wait(timeout=300) for proc in procs] == [0] * 8
    with Store.discover(repo) as store:
        records = store.notes.records_on(layout.NOTES_EVALS, head)
    names = {r.candidate for r in records if isinstance(r, ProposalRecord)}
    assert len(records) == 400 and len(names) == 400


def test_identical_notes_on_two_commits_are_both_read(repo: Path) -> None:
    # Issue 15, defect 12: notes were read keyed by blob id, so of two commits with
    # byte-identical notes (`git notes copy`, a rebase that copies notes, a notes merge)
    # one was dropped, and `verify` called a gated merge ungated.
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        others = [
            git(repo, "commit-tree", "HEAD^{tree}", "-p", head, "-m", f"c{i}").strip() for i in range(2)
        ]
        written = record(1)
        txn = Transaction("test")
        txn.append(layout.NOTES_GATE, head, [written])
        store.refs.commit(txn)
        for other in others:
            git(repo, "notes", f"--ref={layout.NOTES_GATE}", "copy", head, other)
        blobs = {
            line.split()[0] for line in git(repo, "notes", f"--ref={layout.NOTES_GATE}", "list").splitlines()
        }
        assert len(blobs) == 1  # one blob, three commits
        notes = store.notes.records(layout.NOTES_GATE)
        assert set(notes) == {head, *others}
        assert all(records == [written] for records in notes.values())
        assert sorted(target for target, _text in store.notes.iter_texts(layout.NOTES_GATE)) == sorted(
            [head, *others]
        )


BAD_LINES = [
    '{"v":99,"kind":"proposal","id":"a","ts":"2026-01-01T00:00:00Z","candidate":"x","parent":"p",'
    '"components":[],"rationale":"","source":"api"}',
    '{"v":1,"kind":"evidence","id":"b","ts":"2026-01-01T00:00:00Z","blob":"0","items":-1,"bytes":0}',
]


def test_malformed_records_written_with_git_are_skipped_once_per_kind(
    repo: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # Issue 15, defect 11: hand-written notes (git's own writer) with a newer version and
    # an impossible count, on two commits: read past, one warning per kind, naming both.
    with Store.discover(repo) as store:
        head = store.refs.resolve("HEAD")
        other = git(repo, "commit-tree", "HEAD^{tree}", "-p", head, "-m", "other").strip()
        good = dump_record(record(1)).decode()
        for n, target in enumerate([head, other]):
            lines = [line.replace('"id":"a"', f'"id":"a{n}"') for line in BAD_LINES]
            git(
                repo,
                "notes",
                f"--ref={layout.NOTES_EVIDENCE}",
                "add",
                "-f",
                "-m",
                "\n".join([*lines, good]),
                target,
            )
        with caplog.at_level(logging.WARNING, logger="harnessgit"):
            notes = store.notes.records(layout.NOTES_EVIDENCE)
            again = store.notes.records_on(layout.NOTES_EVIDENCE, head)
            store.notes.records(layout.NOTES_EVIDENCE)  # a command reads a ref more than once
        assert [len(notes[head]), len(notes[other]), len(again)] == [1, 1, 1]
        messages = [r.getMessage() for r in caplog.records]
        both = ", ".join(sorted(sha[:12] for sha in (head, other)))
        assert messages == [
            f"skipped 2 records of schema version 99 in {layout.NOTES_EVIDENCE} on {both} "
            "(a newer harnessgit wrote them; this one reads versions up to 1)",
            f"skipped 2 records with an impossible value in {layout.NOTES_EVIDENCE} on {both} "
            "(evidence items: Input should be greater than or equal to 0)",
            f"skipped 1 record of schema version 99 in {layout.NOTES_EVIDENCE} on {head[:12]} "
            "(a newer harnessgit wrote them; this one reads versions up to 1)",
            f"skipped 1 record with an impossible value in {layout.NOTES_EVIDENCE} on {head[:12]} "
            "(evidence items: Input should be greater than or equal to 0)",
        ]
