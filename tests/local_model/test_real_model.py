"""A real LLM end to end: the pinned Qwen2.5-Coder-0.5B-Instruct served by xllamacpp on
127.0.0.1 (templates/local_model/), driving the triage evaluator and the openai proposer.

Nothing here is simulated. The model's answers are whatever it says: the tests assert
that harnessgit records them correctly, never what the scores are. They skip, saying
why, when xllamacpp is missing or the weights are not fetched (.ci/run fetches them:
`python3 templates/local_model/fetch_weights.py`). Slow: a CPU model.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import git, snapshot
from tests.local_model.templates import load

pytestmark = pytest.mark.slow

fetch_weights = load("fetch_weights")
serve = load("serve")
run_example = load("run_example")
# Read now: the tests' own HOME (conftest's hermetic_seal) is not where the weights are.
WEIGHTS = fetch_weights.weights_path()
SANITY_CODES = "|".join(
    (
        "empty",
        "unchanged",
        "truncated",
        "unclosed_fence",
        "no_fence",
        "invalid_operations",
        "anchor_not_found",
        "anchor_ambiguous",
        "over_limit",
    )
)  # docs/proposers.md, "Checks before adoption"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("xllamacpp is not installed: pip install 'harnessgit[local-model]'")
    if not fetch_weights.is_fetched(WEIGHTS.parent):
        pytest.skip(
            f"the pinned weights are not in {WEIGHTS}: run python3 templates/local_model/fetch_weights.py"
        )
    # Replies capped at 64 tokens (a CPU model is slow): a proposal cut there comes back as finish_reason
    # "length", which the proposer must refuse as truncated.
    handle, url = serve.start(free_port(), WEIGHTS, max_tokens=64)
    yield url
    del handle


def example(tmp_path: Path, *, train: list[str], proposer: str | None = None) -> Path:
    """The local-model triage example, with small splits (and another proposer)."""
    repo = tmp_path / "triage"
    run_example.build(repo)
    splits = {"train": train, "selection": ["t001", "t003", "t004"], "test": ["t005"]}
    (repo / "splits.json").write_text(json.dumps(splits))
    config = (repo / "harnessgit.toml").read_text().replace("minibatch = 4", "minibatch = 2")
    config = config.replace("min_instances = 20", "min_instances = 3")
    if proposer is not None:
        config = config.split("[proposer]")[0] + proposer + "\n[evolve]" + config.split("[evolve]")[1]
    (repo / "harnessgit.toml").write_text(config)
    git(repo, "commit", "-qam", "Small splits for the test")
    return repo


def harnessgit(repo: Path, *args: str, url: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), *args],
        env={**os.environ, "LOCAL_MODEL_URL": url, **env},
        capture_output=True,
        text=True,
        timeout=1800,
    )


def test_the_evaluator_records_what_the_real_model_answered(server: str, tmp_path: Path) -> None:
    repo = example(tmp_path, train=["t000"])
    result = harnessgit(repo, "eval", "main", "--json", url=server)
    assert result.returncode == 0, result.stderr
    evaluation = json.loads(result.stdout)
    assert evaluation["model"] == "qwen2.5-coder-0.5b-instruct-q4"
    assert evaluation["summary"]["n"] == 3 and evaluation["summary"]["missing"] == []
    assert re.search(r"eval\.py: 3/3 t\d+: \w+ in [\d.]+ s", result.stderr)  # progress, per ticket
    shown = harnessgit(repo, "trajectory", "main", "t004", url=server)
    assert shown.returncode == 0, shown.stderr
    # The reply the model gave is on record, with the feedback made from it.
    assert '"reply"' in shown.stdout
    assert re.search(
        r"correct: routed to account|routed to \w+, expected account|no queue in the reply", shown.stdout
    )


def test_a_server_that_does_not_answer_in_time_fails_the_batch_and_records_nothing(
    server: str, tmp_path: Path
) -> None:
    repo = example(tmp_path, train=["t000"])
    before = snapshot(repo)
    result = harnessgit(repo, "eval", "main", url=server, LOCAL_MODEL_TIMEOUT="0.001")
    assert result.returncode == 3, result.stderr
    assert "no answer from" in result.stderr and "within 0.001 s, twice" in result.stderr
    assert snapshot(repo) == before


def test_the_openai_proposer_through_the_real_model_is_recorded_whatever_it_says(
    server: str, tmp_path: Path
) -> None:
    # The base misroutes t000 (account) and t002 (bug) as billing: the minibatch is not
    # perfect, so the proposer is asked. Whatever it replies, the iteration must be on
    # record: a refused reply with its sanity code, or a candidate commit.
    proposer = (
        f'[proposer]\nkind = "openai"\nbase_url = "{server}"\nmodel = "local"\n'
        "timeout = 900\nmax_retries = 1\n"
    )
    repo = example(tmp_path, train=["t000", "t002"], proposer=proposer)
    result = harnessgit(repo, "evolve", "--max-proposals", "1", "--json", url=server)
    assert result.returncode in (0, 1), result.stderr
    report = json.loads(result.stdout[result.stdout.index("{") :])  # after the iteration line
    assert report["proposals"] == 1
    (iteration,) = report["iterations"]
    if iteration["outcome"] == "skipped-perfect":
        pytest.fail(f"the model solved the minibatch this time: {iteration}")
    assert iteration["proposer"]
    if iteration["proposer_seconds"] > 35:  # a slow model: evolve said it was still waiting
        assert "still waiting for the proposer's edit to SKILL.md" in result.stderr
    if iteration["outcome"] == "rejected-proposal":
        assert re.match(rf"({SANITY_CODES})\b", iteration["reason"]), iteration["reason"]
        assert iteration["commit"] is None
    else:
        assert iteration["commit"], iteration
        changed = git(repo, "diff", "--name-only", "main", iteration["commit"]).split()
        assert changed == ["SKILL.md"]
    assert git(repo, "status", "--porcelain") == ""
