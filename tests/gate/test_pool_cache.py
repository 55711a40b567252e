"""The frontier's derived cache (harnessgit/gate/pool_cache.py): never the source of
truth. The frontier read through it equals the frontier read from every record, warm,
cold, after new evaluations and archive moves, and from a damaged file."""

from __future__ import annotations

import hashlib
import json
import random
import struct
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.gate.frontier import Known, frontier_view, proposals_by_commit, update_frontier
from harnessgit.gate.pool_cache import NAME, check_pool
from harnessgit.render import to_json
from harnessgit.store import Store
from harnessgit.store.index import index_path
from tests.cli.runner import run
from tests.gating_fixtures import skill


def from_records(store: Store, config: object) -> str:
    """The frontier without the cache: every record read, nothing derived."""
    known = Known(ScoreBook.load_all(store), proposals_by_commit(store.notes), {})
    view = frontier_view(store, config, known=known)  # type: ignore[arg-type]
    return to_json(view)


@pytest.mark.slow
def test_cache_equals_the_records_over_a_random_history(gate_repo: Path) -> None:
    rng = random.Random(5)
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        evaluate(store, config, "main")
        cache = index_path(store, NAME)
        for step in range(6):
            for _ in range(rng.randint(1, 3)):
                level = rng.randint(1, 39)
                made = propose(store, config, {"SKILL.md": skill(level, f"v{step}-{rng.random()}")})
                if rng.random() < 0.8:
                    evaluate(store, config, made.candidate)
            warm = to_json(frontier_view(store, config))  # refreshed from the last step's file
            assert cache.exists()
            assert warm == from_records(store, config)
            if step % 2:
                update_frontier(store, config, frontier_view(store, config))  # archive moves
                assert to_json(frontier_view(store, config)) == from_records(store, config)
            if step == 3:
                cache.unlink()  # cold: rebuilt, same answer
                assert to_json(frontier_view(store, config)) == from_records(store, config)


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_damaged_or_foreign_cache_is_rebuilt_not_trusted(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        evaluate(store, config, "main")
        for level in (30, 20, 10):
            evaluate(store, config, propose(store, config, {"SKILL.md": skill(level, f"v{level}")}).candidate)
        expected = from_records(store, config)
        assert to_json(frontier_view(store, config)) == expected
        cache = index_path(store, NAME)
        data = cache.read_bytes()
        for damaged in (
            data[: len(data) // 2],
            data[:-8] + b"\0" * 8,
            b"nonsense\n",
            data.replace(b'"format": 1', b'"format": 9'),
        ):
            cache.write_bytes(damaged)
            assert to_json(frontier_view(store, config)) == expected
            assert cache.read_bytes() == data  # rewritten from the records


def forged(data: bytes) -> bytes:
    """The cache with its first mean changed and its checksum redone: readers trust it."""
    head, _, body = data.partition(b"\n")
    meta, _, values = body.partition(b"\n")
    values = struct.pack("<d", 0.123) + values[8:]
    body = meta + b"\n" + values
    header = json.loads(head)
    header["sha256"] = hashlib.sha256(body).hexdigest()
    return json.dumps(header, sort_keys=True).encode() + b"\n" + body


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_doctor_finds_a_forged_cache_that_readers_trust_and_fix_rebuilds_it(gate_repo: Path) -> None:
    with Store.discover(gate_repo) as store:
        config = load_config(gate_repo)
        evaluate(store, config, "main")
        for level in (30, 20):
            evaluate(store, config, propose(store, config, {"SKILL.md": skill(level, f"v{level}")}).candidate)
        expected = from_records(store, config)
        assert to_json(frontier_view(store, config)) == expected
        assert check_pool(store, config) is None
        cache = index_path(store, NAME)
        cache.write_bytes(forged(cache.read_bytes()))
        assert to_json(frontier_view(store, config)) != expected  # trusted: only a rebuild tells
        assert "its means differ" in str(check_pool(store, config))
    found = run(gate_repo, "doctor")
    assert found.exit_code == 1, found.output
    assert "frontier-pool" in found.output and "its means differ" in found.output
    fixed = run(gate_repo, "doctor", "--fix")
    assert fixed.exit_code == 0, fixed.output
    with Store.discover(gate_repo) as store:
        assert check_pool(store, config) is None
        assert to_json(frontier_view(store, config)) == expected
