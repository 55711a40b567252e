"""The history audit's cache (issue 27): each commit judged once per fingerprint, the
same result read back, a damaged file rebuilt, another setting judged anew."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.candidates import history
from harnessgit.candidates.history import harness_history
from harnessgit.candidates.history_cache import NAME
from harnessgit.config import load_config
from harnessgit.store import Store
from harnessgit.store.index import index_path
from tests.conftest import git, write
from tests.harness_text import prompt


@pytest.fixture
def audited(make_repo: Callable[..., Path]) -> Path:
    repo = make_repo({"prompts/long.md": prompt(4)})
    for step in range(5, 9):  # each commit grows the prompt; the last one cuts it back
        write(repo, "prompts/long.md", prompt(step))
        git(repo, "commit", "-qam", f"prompt: part {step}")
    write(repo, "prompts/long.md", prompt(2) + "```python\nprint('cut'\n")
    git(repo, "commit", "-qam", "prompt: cut")
    return repo


def judged(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The commits the audit judges (runs the checks on) from now on."""
    calls: list[str] = []
    real = history.check_change

    def counting(store: Store, config: object, old: str | None, new: str) -> object:
        calls.append(new)
        return real(store, config, old, new)  # type: ignore[arg-type]

    monkeypatch.setattr(history, "check_change", counting)
    return calls


def audit(repo: Path, limit: int | None = None) -> history.HistoryResult:
    with Store.discover(repo) as store:
        return harness_history(store, load_config(repo), limit=limit)


def test_a_repeat_audit_reads_every_verdict_back(audited: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = judged(monkeypatch)
    first = audit(audited)
    assert len(calls) == 6 and first.findings_by_rule  # the initial commit and five edits
    assert index_path_of(audited).is_file()
    calls.clear()
    assert audit(audited) == first and calls == []
    # The running totals are the cached steps added up from wherever the range starts.
    newest = audit(audited, limit=2)
    assert newest.entries == first.entries[:2] and calls == []


def test_a_damaged_cache_is_rebuilt(audited: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = audit(audited)
    path = index_path_of(audited)
    data = path.read_bytes()
    path.write_bytes(data[:-40] + b"x" * 40)  # the body no longer matches its sha256
    calls = judged(monkeypatch)
    assert audit(audited) == first and len(calls) == 6
    path.write_bytes(b"not json\n")
    calls.clear()
    assert audit(audited) == first and len(calls) == 6


def test_other_settings_are_judged_anew(audited: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    audit(audited)
    config = (audited / "harnessgit.toml").read_text()
    write(audited, "harnessgit.toml", config + "\n[checks.kinds.prompt]\nmax_chars = 100\n")
    calls = judged(monkeypatch)
    assert audit(audited).findings_by_rule and len(calls) == 6


def index_path_of(repo: Path) -> Path:
    with Store.discover(repo) as store:
        return index_path(store, NAME)
