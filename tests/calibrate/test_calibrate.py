"""`harnessgit calibrate` on real temporary repositories, with a real evaluator
process whose scores are noisy but seeded (tests/calibrate: the A/A test)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.records import CalibrationRecord
from harnessgit.records.lines import Skipped, parse_note
from tests.cli.runner import one_error_line, run
from tests.conftest import CONFIG, git, snapshot
from tests.gating_fixtures import skill

# Instance s-N succeeds with probability 0.2 + 0.6 * (N % 7) / 6; each run of the
# evaluator draws afresh (a call counter outside the repository is part of the seed),
# as a sampled LLM would, but the whole test repeats exactly.
NOISY = """\
import json, os, random, sys
from pathlib import Path
calls = Path(os.environ["CALLS_FILE"])
count = len(calls.read_text().splitlines()) if calls.exists() else 0
with calls.open("a") as handle:
    handle.write("call\\n")
repeat = os.environ["HARNESSGIT_REPEAT"]
for line in sys.stdin:
    instance = line.strip()
    number = int(instance.split("-")[1])
    p = 0.2 + 0.6 * (number % 7) / 6
    rng = random.Random(f"{instance}:{repeat}:{count}")
    print(json.dumps({"instance": instance, "score": 1.0 if rng.random() < p else 0.0}))
"""

# Scores follow the text exactly: no noise at all.
EXACT = """\
import json, sys
for line in sys.stdin:
    instance = line.strip()
    print(json.dumps({"instance": instance, "score": float(int(instance.split("-")[1]) % 2)}))
"""

SPLITS = {"train": [f"t-{i}" for i in range(4)], "selection": [f"s-{i}" for i in range(36)], "test": ["x-0"]}


@pytest.fixture
def calls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "calls.txt"
    monkeypatch.setenv("CALLS_FILE", str(path))
    return path


def noisy_repo(make_repo: Callable[..., Path], evaluator: str = NOISY, gate: str = "") -> Path:
    return make_repo(
        {"eval.py": evaluator, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(10)},
        config=CONFIG + "batch_size = 36\n" + gate,
    )


def calibrations(repo: Path) -> list[CalibrationRecord]:
    found = []
    for line in git(repo, "notes", "--ref", layout.NOTES_CALIBRATION, "list").splitlines():
        note = git(repo, "cat-file", "-p", line.split()[0])
        found += [r for r in parse_note(note.encode(), "", Skipped()) if isinstance(r, CalibrationRecord)]
    return found


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_calibrate_runs_fresh_repeats_and_leaves_the_cache_alone(
    make_repo: Callable[..., Path], calls: Path
) -> None:
    repo = noisy_repo(make_repo)
    assert run(repo, "eval", "main", "--repeats", "4").exit_code == 0
    before = git(repo, "rev-parse", layout.NOTES_EVALS)
    evaluated = len(calls.read_text().splitlines())
    result = run(repo, "calibrate", "--repeats", "4", "--json")
    assert result.exit_code == 0, result.output
    # four fresh evaluator runs (one batch of 36 per repeat), although all four repeats
    # were on record; and the cache did not move (a gate reads what it read before)
    assert len(calls.read_text().splitlines()) == evaluated + 4
    assert git(repo, "rev-parse", layout.NOTES_EVALS) == before
    data = json.loads(result.stdout)
    assert data["instances"] == 36 and data["repeats"] == 4
    assert 0.2 < data["noise"]["flip_rate"] < 0.6
    assert data["false_passes"]["rate"] <= 0.05 and data["holds"] is True
    assert data["needed"][0]["repeats"] == 1 and data["needed"][0]["instances"] > 36
    [record] = calibrations(repo)
    assert record.commit == git(repo, "rev-parse", "main").strip()
    assert len(record.scores) == 36 and all(len(row) == 4 for row in record.scores)
    assert record.flip_rate == data["noise"]["flip_rate"]
    # the draws are not the cache's: four repeats on record, four fresh ones, differing
    cached = run(repo, "scores", "main", "--json")
    assert cached.exit_code == 0


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_calibrate_text_names_every_number(make_repo: Callable[..., Path], calls: Path) -> None:
    repo = noisy_repo(make_repo)
    result = run(repo, "calibrate", "--repeats", "3", "--effect", "10", "--draws", "50")
    assert result.exit_code == 0, result.output
    for words in ("flip rate", "repeat agreement", "per-instance sd", "false-pass rate", "holds"):
        assert words in result.stdout
    for policy in ("strict (configured)", "bayes", "elond"):
        assert policy in result.stdout
    assert "true gain of 10 points" in result.stdout


def test_every_policy_is_checked_and_the_configured_one_decides(
    make_repo: Callable[..., Path], calls: Path
) -> None:
    repo = noisy_repo(make_repo, gate='\n[gate]\npolicy = "elond"\nq = 0.2\n')
    result = run(repo, "calibrate", "--repeats", "3", "--draws", "40", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    checks = {check["policy"]: check for check in data["policies"]}
    assert sorted(checks) == ["bayes", "elond", "strict"]
    assert data["policy"] == "elond" and data["false_passes"] == checks["elond"]["false_passes"]
    assert (checks["strict"]["limit"], checks["elond"]["limit"], checks["bayes"]["limit"]) == (0.05, 0.2, 0.2)
    [record] = calibrations(repo)
    assert record.policy == "elond" and record.policies is not None
    assert record.policies["strict"] == checks["strict"]["false_passes"]["rate"]


def test_a_deterministic_evaluator_calibrates_to_no_noise(
    make_repo: Callable[..., Path], calls: Path
) -> None:
    repo = noisy_repo(make_repo, EXACT)
    result = run(repo, "calibrate", "--repeats", "2", "--draws", "20", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["noise"]["flip_rate"] == 0.0 and data["noise"]["agreement"] == 1.0
    assert data["false_passes"]["passes"] == 0
    assert all(row["instances"] is None for row in data["needed"])


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--repeats", "1"], "--repeats must be between 2 and 50"),
        (["--effect", "0"], "--effect must be above 0"),
        (["--effect", "150"], "--effect must be above 0"),
        (["--draws", "5"], "--draws must be between 20"),
        (["no-such-rev"], "no-such-rev"),
    ],
)
def test_bad_input_is_one_line_exit_3_and_nothing_written(
    make_repo: Callable[..., Path], calls: Path, args: list[str], words: str
) -> None:
    repo = noisy_repo(make_repo)
    before = snapshot(repo)
    line = one_error_line(run(repo, "calibrate", *args))
    assert words in line
    assert snapshot(repo) == before
    assert not calls.exists()  # refused before the evaluator ran


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_gate_and_review_say_whether_a_calibration_is_on_record(
    make_repo: Callable[..., Path], calls: Path
) -> None:
    repo = noisy_repo(make_repo)
    git(repo, "checkout", "-q", "-b", "edit")
    (repo / "SKILL.md").write_text(skill(11))
    git(repo, "commit", "-qam", "level 11")
    assert "calibration: none on record" in run(repo, "review", "main", "edit").stdout
    assert "calibration: none on record" in run(repo, "gate", "edit", "--allow-small").stdout
    assert run(repo, "calibrate", "--repeats", "3", "--draws", "40").exit_code == 0
    [record] = calibrations(repo)
    shown = f"flip rate {record.flip_rate * 100:.1f}%"
    assert shown in run(repo, "review", "main", "edit").stdout
    assert shown in run(repo, "gate", "edit", "--allow-small").stdout


def test_calibrate_writes_only_its_own_notes_ref(make_repo: Callable[..., Path], calls: Path) -> None:
    """Older harnessgit versions never read refs/notes/harnessgit/calibration, so a
    calibration cannot break them: calibrate moves that ref and the commit's pin,
    nothing they read (a reader that did meet the kind skips it: docs/design.md)."""
    repo = noisy_repo(make_repo)
    refs = "--format=%(refname) %(objectname)"
    before = set(git(repo, "for-each-ref", refs).splitlines())
    assert run(repo, "calibrate", "--repeats", "2", "--draws", "20").exit_code == 0
    changed = {line.split()[0] for line in set(git(repo, "for-each-ref", refs).splitlines()) - before}
    main = git(repo, "rev-parse", "main").strip()
    assert changed == {layout.NOTES_CALIBRATION, f"refs/harnessgit/pins/{main}"}
