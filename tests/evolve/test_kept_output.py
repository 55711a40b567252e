"""What evolve keeps of a proposer's output: a bounded excerpt, its size and its hash
(issue 15, defect 7: a rejected 100 MB proposal was stored whole, pinned and pushed)."""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.config import load_config
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.proposers.protocol import MAX_KEPT_OUTPUT_BYTES, MAX_RATIONALE_CHARS
from harnessgit.records import EvidenceRecord, ProposalRecord
from harnessgit.store import Store
from tests.conftest import CONFIG, git
from tests.evolve.evolve_fixtures import records
from tests.gating_fixtures import EVALUATOR, SPLITS, skill

# Prints the answer it is given (a JSON object, as a Python expression over `request`)
# and keeps a copy of its exact output outside the repository, for the test to compare.
PROPOSER = """
import json, sys
request = json.load(sys.stdin)
current = request["current_text"]
answer = json.dumps({answer}, ensure_ascii=False)
open({copy!r}, "w", encoding="utf-8").write(answer + "\\n")
print(answer)
"""
# About 1.6 MB, non-ASCII throughout (2 bytes per character), with marked ends.
BIG = '"BEGIN-OF-REPLY " + "".join(f"{i:06d}é " for i in range(200_000)) + " END-OF-REPLY"'


@pytest.fixture
def small_repo(make_repo: Callable[..., Path], tmp_path: Path) -> Callable[[str], tuple[Path, Path]]:
    """A harness repository whose proposer answers ``answer``; the copy of its output."""

    def make(answer: str) -> tuple[Path, Path]:
        copy = tmp_path / "reply.txt"
        proposer = f'\n[proposer]\ncommand = ["{sys.executable}", "proposer.py"]\n'
        repo = make_repo(
            {
                "eval.py": EVALUATOR,
                "splits.json": json.dumps(SPLITS),
                "SKILL.md": skill(0),
                "proposer.py": PROPOSER.format(answer=answer, copy=str(copy)),
            },
            config=CONFIG + "batch_size = 20\n" + proposer,
        )
        return repo, copy

    return make


def blob_size(repo: Path, blob: str) -> int:
    return int(git(repo, "cat-file", "-s", blob))


def evolve_once(repo: Path) -> Store:
    store = Store.discover(repo)
    evolve(store, load_config(repo), EvolveRequest(budget=Budget(max_proposals=1), seed=1))
    return store


def rejected_evidence(store: Store, parent: str) -> tuple[EvidenceRecord, dict[str, object]]:
    (record,) = [
        r
        for r in store.notes.records_on(layout.NOTES_EVIDENCE, parent)
        if isinstance(r, EvidenceRecord) and r.label == "rejected-proposal"
    ]
    (item,) = [json.loads(line) for line in store.objects.read_blob(record.blob).decode("utf-8").splitlines()]
    return record, item


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_huge_rejected_proposal_keeps_a_bounded_excerpt(
    small_repo: Callable[[str], tuple[Path, Path]],
) -> None:
    # An unclosed fence: rejected.
    repo, copy = small_repo('{"text": current + "```python\\n" + ' + BIG + ', "rationale": "r"}')
    with evolve_once(repo) as store:
        (iteration,) = records(store)
        assert iteration.outcome == "rejected-proposal" and "unclosed_fence" in iteration.reason
        record, item = rejected_evidence(store, iteration.parent)
    output = copy.read_bytes()
    assert len(output) > 1_500_000
    # What is stored: the excerpt and what describes the whole output, within the cap.
    assert record.bytes == blob_size(repo, record.blob) < MAX_KEPT_OUTPUT_BYTES + 4096
    assert item["raw_output_bytes"] == len(output) and item["raw_output_truncated"] is True
    assert item["raw_output_sha256"] == hashlib.sha256(output).hexdigest()  # nothing to scrub in it
    excerpt = str(item["raw_output"])
    assert excerpt.startswith('{"text": ') and "BEGIN-OF-REPLY" in excerpt
    assert excerpt.endswith('END-OF-REPLY", "rationale": "r"}\n')
    assert "left out]" in excerpt and len(excerpt.encode("utf-8")) <= MAX_KEPT_OUTPUT_BYTES + 100
    assert (item["code"], item["component"], item["rationale"]) == ("unclosed_fence", "SKILL.md", "r")


def test_the_bytes_of_a_rejected_proposal_count_bytes(
    small_repo: Callable[[str], tuple[Path, Path]],
) -> None:
    repo, copy = small_repo('{"text": current + "```\\n" + "é€" * 500}')
    with evolve_once(repo) as store:
        (iteration,) = records(store)
        record, item = rejected_evidence(store, iteration.parent)
    assert record.bytes == blob_size(repo, record.blob)  # bytes, not characters
    assert item["raw_output"] == copy.read_text(encoding="utf-8")  # under the cap: whole
    assert item["raw_output_truncated"] is False and item["raw_output_bytes"] == len(copy.read_bytes())


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_an_adopted_edit_keeps_a_bounded_output_and_rationale(
    small_repo: Callable[[str], tuple[Path, Path]],
) -> None:
    rationale = '"WHY " + "".join(f"{i:06d}ü " for i in range(100_000))'  # about 0.9 MB
    repo, _copy = small_repo(
        '{"text": current.replace("Read the task.", "Read the task twice."), "rationale": ' + rationale + "}"
    )
    with evolve_once(repo) as store:
        (iteration,) = records(store)
        assert iteration.commit is not None
        message = store.objects.commit_info(iteration.commit).message
        notes = store.notes.records_on(layout.NOTES_EVIDENCE, iteration.commit)
    (proposal,) = [r for r in notes if isinstance(r, ProposalRecord)]
    assert proposal.rationale.startswith("WHY 000000ü") and len(proposal.rationale) == MAX_RATIONALE_CHARS
    assert len(message.encode("utf-8")) < 2 * MAX_RATIONALE_CHARS + 200
    (evidence,) = [r for r in notes if isinstance(r, EvidenceRecord)]
    assert evidence.bytes == blob_size(repo, evidence.blob) < MAX_KEPT_OUTPUT_BYTES + 8192
    (_dataset, output) = [json.loads(line) for line in store.objects.read_blob(evidence.blob).splitlines()]
    assert output["kind"] == "proposer-output" and output["raw_output_truncated"] is True
    assert output["raw_output_bytes"] > 900_000
