"""`verify` after `sync` with a non-deterministic evaluator re-checks what the gate saw.

Two clones evaluate one harness (same cache key: harness tree, evaluator fingerprint,
model) and draw different scores; `sync` unions both eval records on every clone. The
gate on clone a decided from a's record alone, so verify must re-check the decision
from that record, not from whatever record of the same key the clone holds now.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.records import EvalRecord, GateRecord
from harnessgit.store import Store
from tests.cli.runner import run
from tests.conftest import CONFIG, git
from tests.gating_fixtures import SPLITS, skill
from tests.sync.test_sync import clones

# gating_fixtures' evaluator with noise: each run draws a score in [0.8, 1] for a
# solved instance and in [0, 0.2] otherwise, from EVAL_SEED and the instance, so two
# clones with different seeds score one harness differently (an LLM judge, a sampled
# agent), and a test run repeats exactly.
NOISY_EVALUATOR = """\
import json, os, random, re, sys
from pathlib import Path
skill = Path("SKILL.md").read_text()
level = int(re.search(r"LEVEL: (\\d+)", skill).group(1))
seed = os.environ["EVAL_SEED"]
for line in sys.stdin:
    instance = line.strip()
    draw = random.Random(f"{seed}:{instance}").random() * 0.2
    good = int(instance.split("-")[1]) < level
    print(json.dumps({"instance": instance, "score": 0.8 + draw if good else draw}))
"""


@pytest.fixture
def noisy_repo(make_repo: Callable[..., Path]) -> Path:
    config = CONFIG.replace('env = ["CALLS_FILE"]', 'env = ["EVAL_SEED"]') + "batch_size = 20\n"
    return make_repo(
        {"eval.py": NOISY_EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(10)},
        config=config,
    )


def harnessgit(repo: Path, *args: str) -> str:
    result = run(repo, *args)
    assert result.exit_code == 0, result.output + result.stderr
    return result.output


def proposed(repo: Path, level: int) -> str:
    (repo / "new-skill.md").write_text(skill(level))
    return json.loads(
        harnessgit(repo, "propose", "--file", "SKILL.md=new-skill.md", "-m", f"level {level}", "--json")
    )["candidate"]


def gate_records(repo: Path) -> list[GateRecord]:
    with Store.discover(repo) as store:
        notes = store.notes.records(layout.NOTES_GATE)
    return [r for rs in notes.values() for r in rs if isinstance(r, GateRecord)]


def eval_records(repo: Path) -> list[EvalRecord]:
    with Store.discover(repo) as store:
        notes = store.notes.records(layout.NOTES_EVALS)
    return [r for rs in notes.values() for r in rs if isinstance(r, EvalRecord)]


@pytest.mark.slow
def test_verify_after_sync_rechecks_the_eval_records_the_gate_used(
    noisy_repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remote, (a, b) = clones(noisy_repo, tmp_path)
    monkeypatch.setenv("EVAL_SEED", "a")
    on_a = proposed(a, 30)
    harnessgit(a, "eval", on_a, "--split", "selection")
    # b proposes the same text (the same harness tree: one cache key) and evaluates it
    # with other draws, after a did and before a gates.
    monkeypatch.setenv("EVAL_SEED", "b")
    on_b = proposed(b, 30)
    harnessgit(b, "eval", on_b, "--split", "selection")
    monkeypatch.setenv("EVAL_SEED", "a")
    merged = harnessgit(a, "merge", on_a)
    assert "merged into main" in merged, merged
    assert run(a, "verify").exit_code == 0  # before the sync: only the records the gate read
    git(a, "push", "-q", "origin", "main")  # sync never moves the base branch: git does
    git(b, "pull", "-q", "--ff-only", "origin", "main")
    for repo in (a, b, a):
        harnessgit(repo, "sync")
    (gate,) = [r for r in gate_records(a) if r.merge]
    same_key = [r for r in eval_records(a) if r.harness == gate.harness]
    # a's records and b's of one cache key, on two commits, with other draws
    assert len({r.commit for r in same_key}) == 2 and len({tuple(r.scores) for r in same_key}) == 4
    # Both clones now hold b's draws too, newer than a's and older than the gate: verify
    # used to recompute from them ("recorded lower bound +0.2742 (pass), recomputed
    # +0.2548 (pass)") and failed a merge that was gated properly, on either clone.
    for repo in (a, b):
        result = run(repo, "verify")
        assert result.exit_code == 0, result.output
        assert "does not recompute" not in result.output
