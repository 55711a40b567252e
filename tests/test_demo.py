"""The README's main job: `harnessgit demo`, offline, end to end."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import git


@pytest.mark.slow
def test_demo_runs_offline_and_says_what_is_simulated(tmp_path: Path) -> None:
    env = {**os.environ}
    env.pop("OPENAI_BASE_URL", None)
    result = subprocess.run(
        [sys.executable, "-m", "harnessgit", "demo", str(tmp_path / "demo")],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert out.count("What is simulated") == 2  # at the start and at the end
    for section in (
        "harnessgit evolve",
        "harnessgit log",
        "harnessgit frontier",
        "held-out test",
        "harnessgit verify",
    ):
        assert section in out
    assert "gate: PASS, merged" in out  # the evolved skill reached main through the gate
    assert "failure classes on train" not in out  # no failure on train both sides scored: no table
    repo = tmp_path / "demo"
    log = json.loads(
        subprocess.run(
            [sys.executable, "-m", "harnessgit", "-C", str(repo), "log", "--json"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    merges = [entry for entry in log["entries"] if entry["kind"] == "merge"]
    assert merges and all(entry["gate"]["passed"] for entry in merges)
    assert len(log["test_peeks"]) == 2
    assert "without the gate" in out  # verify caught the hotfix
    assert (
        "the first bad edit is" in out and "Hotfix" in out.split("the first bad edit is")[1].splitlines()[0]
    )
    assert git(repo, "status", "--porcelain") == ""


@pytest.mark.slow
def test_demo_uses_an_openai_compatible_endpoint_when_configured(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """OPENAI_BASE_URL switches the demo's proposer to the openai kind, for real, over HTTP
    (a chat-completions server on 127.0.0.1 plays the model; its answers are scripted)."""
    from harnessgit import layout
    from harnessgit.demo import run_demo
    from harnessgit.records import IterationRecord, ProposalRecord
    from harnessgit.store import Store
    from tests.proposers.test_openai_chat import ChatServer, Reply, completion

    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # a loopback endpoint needs no key
    chat = ChatServer()
    anchor = '- If the ticket mentions "password", route to account.'
    for word, queue in [
        ("invoice", "billing"),
        ("login", "account"),
        ("error", "bug"),
        ("charged", "billing"),
        ("locked", "account"),
        ("broken", "bug"),
    ]:
        operations = {
            "operations": [
                {
                    "op": "insert_after",
                    "anchor": anchor,
                    "text": f'- If the ticket mentions "{word}", route to {queue}.',
                }
            ]
        }
        chat.replies.append(
            Reply(completion(f"Route {word} to {queue}.\n```json\n{json.dumps(operations)}\n```\n"))
        )
    chat.thread.start()
    monkeypatch.setenv("OPENAI_BASE_URL", chat.base_url)
    monkeypatch.setenv("OPENAI_MODEL", "served-model-2026")
    lines: list[str] = []
    try:
        run_demo(tmp_path / "demo", lines.append, proposals=6)
    finally:
        chat.httpd.shutdown()
        chat.httpd.server_close()
    out = "\n".join(lines)
    assert "the proposer is served-model-2026" in out
    assert len(chat.requests) >= 1
    assert all(request["path"] == "/v1/chat/completions" for request in chat.requests)
    with Store.discover(tmp_path / "demo") as store:
        records = [r for rs in store.notes.records(layout.NOTES_EVIDENCE).values() for r in rs]
    iterations = [r for r in records if isinstance(r, IterationRecord) and r.outcome != "skipped-perfect"]
    assert iterations and all(r.proposer == "openai:served-model-2026" for r in iterations)
    assert any(isinstance(r, ProposalRecord) and r.source == "evolve" for r in records)
