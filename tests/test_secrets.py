"""Planted secrets never reach the repository or the terminal (issue 15, defect 8).

Secrets are planted everywhere an evaluator or a proposer can put them: the
evaluator's feedback, trajectory, failure class, cluster, cost names and stderr
(and a crash quoting its stderr); a command proposer's rationale, raw output, new
text and a crash; an openai-compatible server's replies (rationale, raw output,
operations) and a 401 whose body echoes the key; a user's ``propose -m`` and
``--evidence``. Real runs (`python -m harnessgit` in a subprocess: eval, propose,
evolve with both proposer kinds, against a chat-completions server on 127.0.0.1),
then every object of the repository (``git cat-file --batch-all-objects``, loose
and packed), every other file under .git and everything printed is searched for
each secret: as it is, JSON-escaped, as a Python literal, and any 12 characters of it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.batch import EvaluatorError
from harnessgit.evaluation.eval import EvalRequest, Execution, evaluate
from harnessgit.records import EvalRecord, ProposalRecord
from harnessgit.store import Store
from tests.conftest import git, write
from tests.proposers.chat_server import ChatServer, Reply, completion, error

ROOT = Path(__file__).resolve().parent.parent

# Each of a kind the scrubber must know by a different rule.
SECRETS = {
    # [proposer] api_key_env, a name no default covers, a value of no known shape (it is
    # sent as a header, so ASCII), with regular-expression and quoting characters.
    "HG_LLM_CREDENTIAL": "k3y with spaces \"q'\\ $(x)*+?[a]{2}|^ end",
    # [scrub] env: non-ASCII, so that JSON writes it escaped (\u00e4).
    "HG_DB_CREDENTIAL": "pässwörd-ø-4242-Ωmega",
    # DEFAULT_SECRET_ENV (*_TOKEN).
    "HG_SERVICE_TOKEN": "svc.7f3a9c2e.b18d44e0.token",
}
SK = "sk-" + "Ab3dEf6hIj9kLm2nOp5qRs8t"  # the built-in patterns
GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
CORP = "CORP-31415926"  # [scrub] patterns
KEY, DB, TOKEN = SECRETS.values()
ALL = [*SECRETS.values(), SK, GHP, CORP]
WHY = "Because " + " | ".join(ALL)

CONFIG = f"""\
[harness]
paths = ["SKILL.md"]
base = "main"

[evaluator]
command = ["{sys.executable}", "eval.py"]
model = "sim-1"
batch_size = 40

[scrub]
patterns = ["CORP-[0-9]{{8}}"]
env = ["HG_DB_CREDENTIAL"]
"""
COMMAND_PROPOSER = f"""
[proposer]
command = ["{sys.executable}", "proposer.py"]
"""
OPENAI_PROPOSER = """
[proposer]
kind = "openai"
model = "test-model"
base_url = "{url}"
api_key_env = "HG_LLM_CREDENTIAL"
max_retries = 0
"""
SPLITS = {
    "train": [f"t-{i}" for i in range(6)],
    "selection": [f"s-{i}" for i in range(30)],
    "test": [f"x-{i}" for i in range(3)],
}
SKILL = "---\nname: demo\ndescription: A demo skill.\n---\n# Demo\n\n1. Read the task.\n"

# The evaluator and the proposer read the secrets from a file outside the repository
# (a secret written into the repository's own files would be committed by the test).
EVALUATOR = """
import json, pathlib, sys
S = json.loads(pathlib.Path({secrets!r}).read_text())
mode = pathlib.Path({mode!r}).read_text()
level = pathlib.Path("SKILL.md").read_text().count("fixed")
# the secrets with their letter case changed, as a tool that shouts or folds prints them
case = [f(S[k]) for k in ("key", "db", "token") for f in (str.upper, str.lower, str.swapcase)]
case = case if mode == "case" else []
print("evaluator sees", S["key"], S["db"], S["token"], file=sys.stderr)
if mode == "evaluator-crash":
    print("Traceback: connect(" + S["key"] + ") failed with " + S["sk"], file=sys.stderr)
    sys.exit(2)
for line in sys.stdin:
    instance = line.strip()
    print(json.dumps({{
        "instance": instance,
        "score": min(1.0, 0.25 * level),
        "feedback": "wrong; the agent printed " + S["key"] + " and " + S["sk"],
        "trajectory": {{"env": {{S["token"]: S["db"]}}, "steps": [S["corp"], S["ghp"]], "case": case}},
        "failure_class": "leaked " + S["key"],
        "cluster": "db " + S["db"],
        "cost": {{"usd": 0.0, S["token"]: 1.0}},
    }}))
"""
PROPOSER = """
import json, pathlib, sys
S = json.loads(pathlib.Path({secrets!r}).read_text())
mode = pathlib.Path({mode!r}).read_text()
calls = pathlib.Path({calls!r})
n = int(calls.read_text()) if calls.exists() else 0
calls.write_text(str(n + 1))
request = json.load(sys.stdin)
if mode == "proposer-crash":
    print("proposer: auth failed for " + S["key"] + " / " + S["token"], file=sys.stderr)
    sys.exit(1)
why = S["why"]
if n == 0:  # an unclosed fence: rejected, its raw output kept
    print(json.dumps({{"text": request["current_text"] + "```python\\n" + why, "rationale": why}}))
else:
    text = request["current_text"] + "fixed by " + S["key"] + " " + S["db"] + "\\n"
    print(json.dumps({{"text": text, "rationale": why}}))
"""


def forms(secret: str) -> set[bytes]:
    """How a secret can read in a file: as it is, JSON-escaped (both ways), as a literal."""
    texts = [
        secret,
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
        repr(secret)[1:-1],
    ]
    return {text.encode("utf-8") for text in texts}


def needles(secret: str, width: int = 12) -> set[bytes]:
    """Every form of the secret, and any ``width`` characters of each: a cut key leaks too."""
    found = set()
    for form in forms(secret):
        text = form.decode("utf-8")
        found |= {text[i : i + width].encode("utf-8") for i in range(max(1, len(text) - width + 1))}
    return found


def objects(repo: Path) -> Iterator[tuple[str, str, bytes]]:
    """Every object in the repository, loose or packed: (id, type, content)."""
    data = subprocess.run(
        ["git", "cat-file", "--batch-all-objects", "--batch"], cwd=repo, capture_output=True, check=True
    ).stdout
    at = 0
    while at < len(data):
        end = data.index(b"\n", at)
        sha, kind, size = data[at:end].decode().split()
        yield sha, kind, data[end + 1 : end + 1 + int(size)]
        at = end + 1 + int(size) + 1


def leaks(repo: Path, printed: str) -> list[str]:
    """Where any secret is found: objects, other files under .git, the printed output."""
    places = [(f"{kind} {sha}", content) for sha, kind, content in objects(repo)]
    places += [
        (f".git/{path.relative_to(repo / '.git')}", path.read_bytes())
        for path in (repo / ".git").rglob("*")
        if path.is_file() and "objects" not in path.relative_to(repo / ".git").parts[:1]
    ]
    places.append(("the printed output", printed.encode("utf-8")))
    found = []
    for secret in ALL:
        wanted = needles(secret)
        for where, content in places:
            hit = next((needle for needle in wanted if needle in content), None)
            if hit is not None:
                at = content.index(hit)
                found.append(f"{secret!r} in {where}: ...{content[max(0, at - 60) : at + 60]!r}...")
    return found


def run_cli(repo: Path, *args: str, code: int = 0) -> str:
    """`python -m harnessgit` in a subprocess, with the secrets in its environment."""
    env = {**os.environ, **SECRETS, "PYTHONPATH": str(ROOT), "NO_PROXY": "127.0.0.1,localhost"}
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy"):
        env.pop(name, None)
    result = subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == code, f"{args}: exit {result.returncode}\n{result.stdout}\n{result.stderr}"
    return f"$ harnessgit {args[0]}\n{result.stdout}{result.stderr}"  # argv holds secrets: not echoed


@pytest.fixture
def planted(tmp_path: Path, make_repo: Callable[..., Path]) -> tuple[Path, Path]:
    """A repository whose evaluator and proposer leak the secrets; the mode file outside it."""
    outside = tmp_path / "outside"
    outside.mkdir()
    secrets = outside / "secrets.json"
    secrets.write_text(
        json.dumps({"key": KEY, "db": DB, "token": TOKEN, "sk": SK, "ghp": GHP, "corp": CORP, "why": WHY})
    )
    mode = outside / "mode"
    mode.write_text("")
    paths = {"secrets": str(secrets), "mode": str(mode), "calls": str(outside / "calls")}
    repo = make_repo(
        {
            "SKILL.md": SKILL,
            "eval.py": EVALUATOR.format(**paths),
            "proposer.py": PROPOSER.format(**paths),
            "splits.json": json.dumps(SPLITS),
        },
        config=CONFIG + COMMAND_PROPOSER,
    )
    return repo, mode


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRETS.items():
        monkeypatch.setenv(name, value)


def openai_config(repo: Path) -> None:
    """The openai proposer (it names the key's variable); the port is never contacted."""
    write(repo, "harnessgit.toml", CONFIG + OPENAI_PROPOSER.format(url="http://127.0.0.1:9/v1"))


@pytest.mark.usefixtures("secret_env")
def test_what_the_evaluator_says_is_scrubbed(planted: tuple[Path, Path]) -> None:
    repo, mode = planted
    openai_config(repo)
    shown: list[str] = []
    with Store.discover(repo) as store:
        evaluate(store, load_config(repo), "HEAD", execution=Execution(on_stderr=shown.append))
        (record,) = [
            r
            for rs in store.notes.records(layout.NOTES_EVALS).values()
            for r in rs
            if isinstance(r, EvalRecord)
        ]
    assert set(record.failure_classes or []) == {"leaked [REDACTED]"}
    assert set(record.clusters or []) == {"db [REDACTED]"}
    assert record.cost == {"usd": 0.0, "[REDACTED]": 30.0}
    assert shown == ["evaluator sees [REDACTED] [REDACTED] [REDACTED]"]
    mode.write_text("evaluator-crash")
    with Store.discover(repo) as store, pytest.raises(EvaluatorError) as info:
        evaluate(store, load_config(repo), "HEAD", EvalRequest(no_cache=True))
    assert "last stderr: evaluator sees [REDACTED]" in str(info.value)
    assert leaks(repo, "\n".join([*shown, str(info.value)])) == []


@pytest.mark.usefixtures("secret_env")
def test_a_secret_in_another_case_is_not_recorded(planted: tuple[Path, Path]) -> None:
    """An upper-cased copy of an allow-listed variable's value was stored in evidence
    and trajectory blobs (issue 28, defect 7)."""
    repo, mode = planted
    openai_config(repo)
    mode.write_text("case")
    with Store.discover(repo) as store:
        evaluate(store, load_config(repo), "HEAD")
    stored = b"\n".join(content for _sha, _kind, content in objects(repo))
    assert stored.count(b"[REDACTED]") > 9  # the trajectory was stored, redacted
    for secret in (KEY, DB, TOKEN):
        for changed in (secret.upper(), secret.lower(), secret.swapcase()):
            wanted = needles(changed)
            assert not [needle for needle in wanted if needle in stored], changed


@pytest.mark.usefixtures("secret_env")
def test_a_proposal_is_scrubbed(planted: tuple[Path, Path]) -> None:
    repo, _mode = planted
    openai_config(repo)
    with Store.discover(repo) as store:
        made = propose(
            store,
            load_config(repo),
            {"SKILL.md": SKILL + "2. Check it.\n"},
            rationale=f"Subject {KEY}\n\n{WHY}",
            evidence=[{"kind": "critique", "text": WHY}],
            proposer=f"command:x {TOKEN}",
            source="evolve",
        )
        message = store.objects.commit_info(made.commit).message
        (record,) = [
            r
            for r in store.notes.records_on(layout.NOTES_EVIDENCE, made.commit)
            if isinstance(r, ProposalRecord)
        ]
    assert message.startswith("Subject [REDACTED]\n\nBecause [REDACTED] | [REDACTED]")
    assert record.rationale.startswith("Subject [REDACTED]") and record.proposer == "command:x [REDACTED]"
    assert leaks(repo, "") == []


@pytest.mark.slow
def test_no_planted_secret_is_recorded_or_printed(planted: tuple[Path, Path], tmp_path: Path) -> None:
    repo, mode = planted
    chat = ChatServer()
    chat.thread.start()
    try:
        # The openai proposer first: its api_key_env is what makes the key a secret.
        write(repo, "harnessgit.toml", CONFIG + OPENAI_PROPOSER.format(url=chat.base_url))
        printed = [run_cli(repo, "eval", "HEAD")]
        evidence = write(tmp_path, "evidence.jsonl", json.dumps({"kind": "critique", "text": WHY}) + "\n")
        new_skill = write(tmp_path, "SKILL.md", SKILL + "2. Check it.\n")
        propose = ["propose", "-m", WHY, "--file", f"SKILL.md={new_skill}", "--evidence", str(evidence)]
        printed.append(run_cli(repo, *propose))
        mode.write_text("evaluator-crash")
        printed.append(run_cli(repo, "eval", "HEAD", "--no-cache", code=3))
        mode.write_text("")
        operations = {"operations": [{"op": "append", "text": f"fixed by {KEY}"}], "rationale": WHY}
        chat.replies += [
            Reply(completion(f"I would rather not. {WHY}\n(no block here)")),  # rejected: no fence
            Reply(completion(f"{WHY}\n\n```json\n{json.dumps(operations)}\n```\n")),
            error(401, f"Incorrect API key provided: {KEY}. {SK}"),
        ]
        printed.append(run_cli(repo, "evolve", "--max-proposals", "2", "--auto-merge", "--seed", "1"))
        printed.append(run_cli(repo, "evolve", "--max-proposals", "1", "--seed", "2", code=3))
        assert not chat.replies  # every scripted reply was asked for
        assert chat.requests[0]["headers"]["authorization"] == f"Bearer {KEY}"  # the real key was used
    finally:
        chat.httpd.shutdown()
        chat.httpd.server_close()
        chat.thread.join(timeout=5)
    git(repo, "repack", "-q", "-d")  # what follows stays loose: both kinds are searched

    # The command proposer: a rejected proposal, an edit that passes the gate and merges,
    # a crash. No api_key_env now: [scrub] env names the key's variable instead.
    config = CONFIG.replace('env = ["HG_DB_CREDENTIAL"]', 'env = ["HG_DB_CREDENTIAL", "HG_LLM_CREDENTIAL"]')
    write(repo, "harnessgit.toml", config + COMMAND_PROPOSER)
    printed.append(run_cli(repo, "evolve", "--max-proposals", "2", "--auto-merge", "--seed", "3"))
    mode.write_text("proposer-crash")
    printed.append(run_cli(repo, "evolve", "--max-proposals", "1", "--seed", "4", code=3))
    printed.append(run_cli(repo, "log"))
    output = "\n".join(printed)

    assert leaks(repo, output) == []
    # ... and not because the secrets went nowhere: each path was taken and redacted.
    assert "refused the key in $HG_LLM_CREDENTIAL (HTTP 401)" in output
    assert "failed with exit status 1" in output and "exited with status 2" in output
    stored = b"\n".join(content for _sha, _kind, content in objects(repo))
    for field in (
        b'"failure_classes":["leaked [REDACTED]"',
        b'"clusters":["db [REDACTED]"',
        b'"[REDACTED]":',
    ):
        assert field in stored
    assert stored.count(b"Because [REDACTED] | [REDACTED]") >= 4  # messages, proposal records, evidence
    assert b'"kind":"rejected-proposal"' in stored and b"no_fence" in stored and b"unclosed_fence" in stored
    assert b"fixed by [REDACTED]" in stored  # the new text itself
