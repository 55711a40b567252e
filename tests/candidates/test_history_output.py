"""The history audit's caches never change what it says (issue 27): on a history shaped
like a public prompt collection (flat ``system-prompts/*.md``, release syncs touching
most files, a merge, renames, deletions, a binary file, a label), the audit with its
caches cold, warm, and off gives the same result, text and JSON; a repeat `log
--all-history` over unchanged refs and settings prints the last output without auditing,
and anything it depends on moving makes it audit again."""

from __future__ import annotations

import random
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from harnessgit.candidates import history, history_output
from harnessgit.candidates.history import harness_history
from harnessgit.candidates.history_cache import NAME as CACHE
from harnessgit.candidates.history_output import NAME as OUTPUT
from harnessgit.candidates.history_render import history_text
from harnessgit.config import load_config
from harnessgit.readstore.inflight import JOURNAL_DIR
from harnessgit.render import to_json
from harnessgit.store import Store
from harnessgit.store import repo as repo_module
from harnessgit.store.index import index_path
from tests.candidates.test_history_cache import judged
from tests.cli.runner import run
from tests.conftest import git, write
from tests.store.kill_fixtures import left_lock

TOML = """\
[harness]
paths = ["**/CLAUDE.md", "system-prompts/**/*.md"]
base = "main"
"""

WORDS = ["agent", "tool", "file", "read", "write", "search", "plan", "task", "user", "answer"]
WORDS += ["code", "test", "commit", "review", "shell"]


def prose(rng: random.Random, lines: int) -> str:
    return "".join(f"- {' '.join(rng.sample(WORDS, 7))}.\n" for _ in range(lines))


def prompt(rng: random.Random, name: str, sections: int) -> str:
    """A system prompt: a frontmatter comment, sections of bullets, a fenced example."""
    out = [f"<!--\nname: {name}\nccVersion: 2.1.{rng.randint(1, 300)}\n-->\n# {name}\n\n"]
    for number in range(sections):
        out.append(f"## Part {number}\n\n{prose(rng, rng.randint(2, 6))}\n")
    out.append("```bash\ngit status\n```\n")
    return "".join(out)


def commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


@pytest.fixture
def collection(make_repo: Callable[..., Path]) -> Path:
    rng = random.Random(27)
    repo = make_repo({"CLAUDE.md": "# Notes for agents\n\nRun the tests first.\n"}, config=TOML)
    names = [f"agent-prompt-{number}" for number in range(14)]
    for name in names:
        write(repo, f"system-prompts/{name}.md", prompt(rng, name, 3))
    commit(repo, "v2.1.1 (+4,000 tokens)")
    for release in range(2, 9):  # release syncs: most files rewritten a little
        for name in rng.sample(names, 10):
            write(repo, f"system-prompts/{name}.md", prompt(rng, name, rng.randint(2, 5)))
        commit(repo, f"v2.1.{release}")
    repeated = prompt(rng, "repeat", 2)
    write(repo, "system-prompts/agent-prompt-0.md", repeated + repeated)  # duplication, fence
    write(repo, "system-prompts/agent-prompt-1.md", "# Cut\n\n```python\nprint('never closed'\n")
    commit(repo, "v2.1.9: a truncated prompt")
    git(repo, "mv", "system-prompts/agent-prompt-2.md", "system-prompts/tool-prompt-2.md")
    git(repo, "rm", "-q", "system-prompts/agent-prompt-3.md")
    (repo / "system-prompts" / "logo.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00binary")
    commit(repo, "v2.1.10: renames, a deletion, a binary")
    git(repo, "checkout", "-q", "-b", "sync")
    for name in names[5:9]:
        write(repo, f"system-prompts/{name}.md", prompt(rng, name, 6))
        commit(repo, f"sync {name}")
    git(repo, "checkout", "-q", "main")
    git(repo, "merge", "-q", "--no-ff", "-m", "Merge the sync", "sync")
    git(repo, "update-ref", "refs/harnessgit/labels/v2", "HEAD~1")
    write(repo, "README.md", "# Prompts\n")
    commit(repo, "README only")
    return repo


def audit(repo: Path, *, cache: bool = True) -> history.HistoryResult:
    with Store.discover(repo) as store:
        return harness_history(store, load_config(repo), cache=cache)


def path_of(repo: Path, name: str) -> Path:
    with Store.discover(repo) as store:
        return index_path(store, name)


def test_cold_warm_and_off_say_the_same(collection: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    off = audit(collection, cache=False)
    assert not path_of(collection, CACHE).exists()
    assert off.harness_commits >= 12 and off.findings_by_rule and off.unread
    cold = audit(collection)
    assert path_of(collection, CACHE).is_file()
    calls = judged(monkeypatch)
    warm = audit(collection)
    assert calls == []  # every commit read back
    assert off == cold == warm
    assert history_text(off) == history_text(warm) and to_json(off) == to_json(warm)


def test_a_repeat_run_prints_the_last_output(collection: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    expected = history_text(audit(collection, cache=False))
    first = run(collection, "log", "--all-history")
    assert first.exit_code == 0 and first.stdout == expected + "\n"
    assert path_of(collection, OUTPUT).is_file()

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("audited again")

    monkeypatch.setattr(history, "harness_history", refuse)
    assert run(collection, "log", "--all-history").stdout == first.stdout
    monkeypatch.undo()
    path_of(collection, OUTPUT).unlink()  # the per-commit cache alone gives the same
    assert run(collection, "log", "--all-history").stdout == first.stdout
    data = run(collection, "log", "--all-history", "--json", "-n", "3").stdout
    assert data == to_json(harness_history_of(collection, limit=3)) + "\n"
    assert run(collection, "log", "--all-history", "--json", "-n", "3").stdout == data


def harness_history_of(repo: Path, limit: int) -> history.HistoryResult:
    with Store.discover(repo) as store:
        return harness_history(store, load_config(repo), limit=limit, cache=False)


@pytest.mark.parametrize("change", ["commit", "label", "settings", "damage"])
def test_what_the_output_depends_on_makes_it_audit_again(
    collection: Path, monkeypatch: pytest.MonkeyPatch, change: str
) -> None:
    run(collection, "log", "--all-history")
    if change == "commit":
        write(collection, "system-prompts/agent-prompt-4.md", "# Four\n\nShort now.\n")
        commit(collection, "v2.1.11")
    elif change == "label":
        git(collection, "update-ref", "refs/harnessgit/labels/v3", "HEAD~2")
    elif change == "settings":
        text = (collection / "harnessgit.toml").read_text()
        write(collection, "harnessgit.toml", text + "\n[checks.kinds.prompt]\nmax_chars = 300\n")
    else:
        path = path_of(collection, OUTPUT)
        path.write_bytes(path.read_bytes()[:-20] + b"x" * 20)
    audits: list[object] = []
    real = history.harness_history

    def counting(*args: Any, **kwargs: Any) -> history.HistoryResult:
        audits.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(history, "harness_history", counting)
    again = run(collection, "log", "--all-history")
    assert again.exit_code == 0 and len(audits) == 1
    monkeypatch.undo()
    assert again.stdout == history_text(audit(collection, cache=False)) + "\n"


def test_a_repeat_run_under_a_stale_lock_warns_as_every_reader_does(collection: Path) -> None:
    """The repeat run reads the refs without the store; a lock a killed git left makes
    it open the store first, whose preflight names the lock (and the output is the same)."""
    first = run(collection, "log", "--all-history")
    left_lock(collection, "refs/heads/main.lock", 125)
    again = run(collection, "log", "--all-history")
    assert again.exit_code == 0 and again.stdout == first.stdout
    assert "stale lock" in again.stderr and "refs/heads/main.lock" in again.stderr


def test_a_repeat_run_with_a_journal_lets_the_store_recover_first(
    collection: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A transaction journal (a write interrupted, or under way) is the store's to roll
    forward before anything reads the refs: the repeat run goes through it."""
    first = run(collection, "log", "--all-history")
    recoveries: list[object] = []
    monkeypatch.setattr(repo_module, "recover", lambda refs: recoveries.append(refs) or [])
    assert run(collection, "log", "--all-history").stdout == first.stdout
    assert recoveries == []  # settled: the last output, the store never opened
    journal = collection / ".git" / JOURNAL_DIR
    journal.mkdir(parents=True, exist_ok=True)
    (journal / "left-by-a-killed-writer.json").write_text("{}\n")
    assert run(collection, "log", "--all-history").stdout == first.stdout
    assert len(recoveries) == 1


def test_an_edited_rule_judges_every_commit_again(
    collection: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The same harnessgit version with a rule's source edited (a checkout between
    releases) is another output and another per-commit cache: judged again, not the
    verdicts of the rule before the edit."""
    first = run(collection, "log", "--all-history")
    package = tmp_path / "harnessgit"
    for name in history_output.AUDIT_SOURCES:
        source = history_output._PACKAGE / name
        if source.is_dir():
            shutil.copytree(source, package / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, package / name)
    monkeypatch.setattr(history_output, "_PACKAGE", package)
    calls = judged(monkeypatch)
    assert run(collection, "log", "--all-history").stdout == first.stdout  # the same source
    assert calls == []
    rule = package / "checks" / "duplication.py"
    rule.write_text(rule.read_text() + "\n# edited\n")
    assert run(collection, "log", "--all-history").stdout == first.stdout  # same verdicts here
    assert len(calls) >= 12  # every commit that changed a harness file, judged again
