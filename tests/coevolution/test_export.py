"""`harnessgit export failures`: failing trajectories as chat JSONL (issue 19, part 4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.evaluation.turns import chat_messages, failing_turn
from harnessgit.records import ExportRecord
from harnessgit.records.lines import dump_record, parse_record
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.coevolution.fixtures import models_repo
from tests.coevolution.test_models import strict_candidate
from tests.conftest import git

__all__ = ["models_repo"]


def test_the_failing_turn_rule() -> None:
    say = [{"role": "user", "content": "go"}, {"role": "assistant", "content": "view a"}]
    loop = [*say, {"role": "tool", "content": "x"}, {"role": "assistant", "content": "view a"}]
    messages = chat_messages({"messages": loop})
    assert messages is not None
    assert failing_turn(messages, {}, "planning").__dict__ == {"index": 3, "rule": "repeat"}
    assert failing_turn(messages, {}, "wrong-total").__dict__ == {"index": 3, "rule": "last-assistant"}
    assert failing_turn(messages, {"failing_turn": 1}, "planning").__dict__ == {
        "index": 1,
        "rule": "evaluator",
    }
    assert failing_turn(messages, {"failing_turn": 0}, None).rule == "last-assistant"  # 0 is the user's
    steps = chat_messages(["plan", {"tool": "view", "path": "a"}])
    assert steps == [
        {"role": "assistant", "content": "plan"},
        {"role": "assistant", "content": '{"path":"a","tool":"view"}'},
    ]
    assert chat_messages({"score": 1}) is None and failing_turn([say[0]], {}, None) is None


def test_export_writes_chat_jsonl_with_the_failing_turn_last_and_marked(models_repo: Path) -> None:
    assert run(models_repo, "eval", "main", "--split", "train").exit_code == 0
    out = models_repo.parent / "failures.jsonl"
    result = run(
        models_repo, "export", "failures", "--split", "train", "--model", "beta", "-o", str(out), "--json"
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["conversations"] == 20 and summary["failures"] == 20 and summary["record"] is None
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(lines) == 20
    first = lines[0]
    meta = first["metadata"]
    assert meta["model"] == "beta" and meta["failure_class"] == "planning" and meta["split"] == "train"
    assert meta["harness_commit"] == git(models_repo, "rev-parse", "main").strip()
    assert meta["instance"].startswith("t-") and int(meta["instance"][2:]) >= 20
    # The loop starts at the second "view payroll.csv": message 4 of 5, the last one kept.
    assert meta["failing_turn"] == 4 and meta["failing_turn_rule"] == "repeat" and meta["turns"] == 5
    roles = [m["role"] for m in first["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant"]
    assert first["messages"][-1] == {"role": "assistant", "content": "view payroll.csv", "weight": 0}
    assert all(set(m) <= {"role", "content", "weight"} for line in lines for m in line["messages"])


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_pairs_take_the_passing_trajectory_of_a_later_harness(models_repo: Path) -> None:
    cand = strict_candidate(models_repo)  # alpha solves t-20..t-34 there
    for rev in ("main", cand):
        run(models_repo, "eval", rev, "--split", "train", "--model", "alpha")
    result = run(models_repo, "export", "failures", "--model", "alpha", "--pairs")
    assert result.exit_code == 0, result.output
    pairs = [json.loads(line) for line in result.stdout.splitlines()]
    # 20 failures on main and 5 on the candidate (t-35..t-39 fail on both): 15 pairs.
    assert len(pairs) == 15 and "from 25 failures" in result.stderr
    assert "10 left out: no passing trajectory of a later harness" in result.stderr
    pair = next(p for p in pairs if p["metadata"]["instance"] == "t-20")
    assert (
        pair["metadata"]["chosen_commit"] == git(models_repo, "rev-parse", f"harnessgit/cand/{cand}").strip()
    )
    assert pair["chosen"][-1] == {"role": "assistant", "content": "answer: 346", "weight": 1}
    assert pair["rejected"][-1]["content"] == "view payroll.csv"


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_selection_split_needs_force_and_a_forced_export_is_recorded(models_repo: Path) -> None:
    run(models_repo, "eval", "main", "--model", "alpha")
    before = git(models_repo, "for-each-ref")
    line = one_error_line(run(models_repo, "export", "failures", "--split", "selection"))
    assert "selection split decides what is accepted" in line and "--force" in line
    assert git(models_repo, "for-each-ref") == before  # refused: nothing written
    forced = run(models_repo, "export", "failures", "--split", "selection", "--force")
    assert forced.exit_code == 0 and len(forced.stdout.splitlines()) == 20
    assert "recorded as export" in forced.stderr
    with Store.discover(models_repo) as store:
        tip = git(models_repo, "rev-parse", "main").strip()
        (record,) = [
            r for r in store.notes.records_on(layout.NOTES_EVALS, tip) if isinstance(r, ExportRecord)
        ]
    assert record.split == "selection" and record.conversations == 20 and record.forced
    assert parse_record(dump_record(record)) == record  # a reader reads it back


def test_an_unknown_model_is_a_one_line_error(models_repo: Path) -> None:
    run(models_repo, "eval", "main", "--split", "train", "--model", "alpha")
    line = one_error_line(run(models_repo, "export", "failures", "--model", "gamma"))
    assert "no evaluation on record for model 'gamma'" in line


def test_a_forced_test_split_export_is_a_test_peek(models_repo: Path) -> None:
    cand = strict_candidate(models_repo)  # beta solves x-0..x-4 there
    assert run(models_repo, "test", cand, "--model", "beta").exit_code == 0
    line = one_error_line(run(models_repo, "export", "failures", "--split", "test"))
    assert "test split is held out" in line
    forced = run(models_repo, "export", "failures", "--split", "test", "--force")
    assert forced.exit_code == 0 and len(forced.stdout.splitlines()) == 5
    with Store.discover(models_repo) as store:
        peeks = ScoreBook.load(store).peeks
    assert [(p.model, p.n, p.mean, p.forced) for p in peeks] == [
        ("beta", 10, 0.5, False),
        ("beta", 10, 0.5, True),
    ]
    assert "forced" in run(models_repo, "log").stdout  # listed with `harnessgit test`'s peeks


def test_log_lists_each_forced_export_with_its_split_model_count_and_author(models_repo: Path) -> None:
    assert run(models_repo, "eval", "main", "--split", "selection").exit_code == 0
    assert "exports of guarded splits" not in run(models_repo, "log").stdout
    options = ("export", "failures", "--split", "selection", "--force", "-o", str(models_repo.parent / "x"))
    assert run(models_repo, *options, "--model", "beta").exit_code == 0
    assert run(models_repo, "export", "failures", "--split", "train").exit_code == 0  # not guarded: no record
    text = run(models_repo, "log").stdout
    tip = git(models_repo, "rev-parse", "main").strip()
    section = text.split("exports of guarded splits as training data")[1]
    (line,) = [row for row in section.splitlines() if tip[:10] in row]
    assert line.split()[1:] == [tip[:10], "selection", "beta", "20", "Test", "Author", "<test@example.com>"]
    logged = json.loads(run(models_repo, "log", "--json").stdout)["exports"]
    assert [(e["split"], e["model"], e["conversations"], e["commit"]) for e in logged] == [
        ("selection", "beta", 20, tip)
    ]
    with Store.discover(models_repo) as store:  # the index finds what reading every note finds
        assert ScoreBook.load(store).exports == ScoreBook.load_all(store).exports
