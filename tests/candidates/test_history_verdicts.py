"""The history audit's verdict cache (issue 27): each file version judged once per
fingerprint of the settings and rules, across runs; another setting judges again; a
damaged file is rebuilt with one warning; concurrent audits leave a file that reads."""

from __future__ import annotations

import logging
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.candidates import history_verdicts
from harnessgit.candidates.history_cache import NAME as PER_COMMIT
from harnessgit.candidates.history_output import NAME as OUTPUT
from harnessgit.candidates.history_verdicts import NAME, Verdicts
from harnessgit.check_findings import Finding
from harnessgit.check_rules import BY_NAME
from harnessgit.checks import verdicts as core  # where the rules' verdicts are judged and kept
from harnessgit.config import load_config
from harnessgit.store import Store
from harnessgit.store.index import index_path
from tests.candidates.test_history_cache import audit, audited  # noqa: F401  (its fixture)
from tests.cli.runner import run


@pytest.fixture
def history(audited: Path) -> Path:  # noqa: F811  (the imported fixture, by name)
    """test_history_cache's history: a prompt grown over four commits, then cut."""
    return audited


def cached_judgments(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The cached rules' verdicts judged from now on (not read from a cache), in a
    process whose own cache starts empty (as a new process's does)."""
    calls: list[str] = []
    real = core.judge

    def counting(rule: str) -> object:
        if BY_NAME[rule].cached:  # type: ignore[index]
            calls.append(rule)
        return real(rule)  # type: ignore[arg-type]

    monkeypatch.setattr(core, "_JUDGED", {})
    monkeypatch.setattr(core, "judge", counting)
    return calls


def forget_commits(repo: Path) -> None:
    """What a moved label or branch does to the per-commit cache and the last output."""
    for name in (PER_COMMIT, OUTPUT):
        path(repo, name).unlink(missing_ok=True)


def path(repo: Path, name: str = NAME) -> Path:
    with Store.discover(repo) as store:
        return index_path(store, name)


def test_each_version_is_judged_once_across_runs(history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls = cached_judgments(monkeypatch)
    first = audit(history)
    assert calls and path(history).is_file()
    # Each version once per rule: its judgment after the commit that wrote it is the
    # one the next commit's ratchet reads.
    assert len(calls) == len(set(core._JUDGED))
    forget_commits(history)
    monkeypatch.setattr(core, "_JUDGED", {})
    calls.clear()
    assert audit(history) == first and calls == []


def test_other_settings_judge_again(history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = audit(history)
    config = (history / "harnessgit.toml").read_text()
    (history / "harnessgit.toml").write_text(config + "\n[checks.kinds.prompt]\nmax_chars = 100\n")
    calls = cached_judgments(monkeypatch)
    second = audit(history)
    assert calls and second != first
    assert any(f.rule == "length" for e in second.entries for f in e.findings)
    # Back to the first settings: that fingerprint's file was replaced, so judged again,
    # and the result is the first one.
    (history / "harnessgit.toml").write_text(config)
    forget_commits(history)
    calls = cached_judgments(monkeypatch)
    assert audit(history) == first and calls


def test_another_rule_source_is_another_fingerprint(history: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_config(history)
    before = history_verdicts.fingerprint(config)
    monkeypatch.setattr(history_verdicts, "rules_digest", lambda: "edited")
    assert history_verdicts.fingerprint(config) != before


@pytest.mark.parametrize("damage", ["body", "header", "empty", "json"])
def test_a_damaged_file_is_rebuilt_with_one_warning(
    history: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, damage: str
) -> None:
    first = audit(history)
    file = path(history)
    data = file.read_bytes()
    head, _, body = data.partition(b"\n")
    damaged = {
        "body": head + b"\n" + body[:-20] + b"x" * 20,  # no longer its checksum
        "header": b"{not json\n" + body,
        "empty": b"",
        "json": history_verdicts.seal({"format": 1, "fingerprint": "f"}, b"[1, 2]"),
    }[damage]
    file.write_bytes(damaged)
    with Store.discover(history) as store:
        assert history_verdicts.check_file(store) is not None  # what doctor reports
    forget_commits(history)
    calls = cached_judgments(monkeypatch)
    with caplog.at_level(logging.WARNING, logger="harnessgit"):
        assert audit(history) == first
    warnings = [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1 and "\n" not in warnings[0].getMessage() and NAME in warnings[0].getMessage()
    assert calls  # judged again, and the file rebuilt
    with Store.discover(history) as store:
        assert history_verdicts.check_file(store) is None


def test_another_format_is_replaced_quietly(
    history: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    audit(history)
    path(history).write_bytes(history_verdicts.seal({"format": 99}, b"{}"))
    forget_commits(history)
    with caplog.at_level(logging.WARNING, logger="harnessgit"):
        audit(history)
    assert not caplog.records
    with Store.discover(history) as store:
        assert Verdicts(store, history_verdicts.fingerprint(load_config(history)))


def test_a_save_keeps_what_a_concurrent_audit_saved(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()
    finding = Finding("a.md", "format", "failure", "fences", 1, 0, "m", "h", details=["d"], line=3)
    with Store.discover(repo) as store:
        one, two = Verdicts(store, "key"), Verdicts(store, "key")
        one["a"], two["b"] = [finding], []
        one.save()
        two.save()  # read before `one` saved: merged with it, not written over it
        assert dict(Verdicts(store, "key")) == {"a": [finding], "b": []}
        assert dict(Verdicts(store, "other")) == {}


@pytest.mark.slow
def test_concurrent_audits_leave_a_file_that_reads(history: Path) -> None:
    argv = [sys.executable, "-m", "harnessgit", "log", "--all-history", "--json"]
    expected = run(history, "log", "--all-history", "--json").output
    for _ in range(2):
        path(history).unlink(missing_ok=True)
        forget_commits(history)
        runs = [subprocess.Popen(argv, cwd=history, stdout=subprocess.PIPE, text=True) for _ in range(4)]
        outputs = [process.communicate()[0] for process in runs]
        assert [process.returncode for process in runs] == [0] * 4
        assert outputs == [expected] * 4
        with Store.discover(history) as store:
            assert history_verdicts.check_file(store) is None
            assert Verdicts(store, history_verdicts.fingerprint(load_config(history)))


def test_doctor_finds_a_damaged_file_and_removes_it(history: Path) -> None:
    first = audit(history)
    data = path(history).read_bytes()
    path(history).write_bytes(data[:-10])  # truncated
    found = run(history, "doctor")
    assert found.exit_code == 1 and NAME in found.output, found.output
    assert run(history, "doctor", "--fix").exit_code == 0
    assert not path(history).exists() and run(history, "doctor").exit_code == 0
    forget_commits(history)
    assert audit(history) == first and path(history).is_file()
