"""The split manifest: refused before anything runs when it is malformed."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.config import load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import evaluate
from harnessgit.evaluation.splits import ManifestError, load_manifest
from harnessgit.store import Store
from tests.conftest import snapshot

# A real evaluator: scores an instance 1 when the SKILL.md mentions the instance's
# keyword, and counts its own calls in a file outside the repository.
from tests.evaluation.conftest import EVALUATOR, calls


@pytest.mark.parametrize(
    ("manifest", "message"),
    [
        ({"train": ["a", "a"], "selection": ["b"]}, "appears twice"),
        ({"train": ["a"], "selection": ["a"]}, "splits must be disjoint"),
        ({"train": "a"}, "must be a list"),
        ({"selection": [1]}, "invalid instance id"),
        ([], "JSON object"),
    ],
)
def test_bad_manifests_are_refused_before_anything_runs(
    make_repo: Callable[..., Path],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    manifest: object,
    message: str,
) -> None:
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    repo = make_repo({"eval.py": EVALUATOR, "splits.json": json.dumps(manifest)})
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(HarnessgitError, match=message):
        evaluate(store, load_config(repo), "main")
    assert calls(tmp_path) == 0 and snapshot(repo) == before


def outside_manifest(tmp_path: Path) -> Path:
    """A valid manifest outside the repository: read, it would be believed."""
    path = tmp_path / "outside" / "splits.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"selection": ["alpha-1"]}))
    return path


def test_a_manifest_linked_out_of_the_repository_is_refused(
    make_repo: Callable[..., Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 15, defect 14: splits.json -> a file outside was read and evaluated.
    monkeypatch.setenv("CALLS_FILE", str(tmp_path / "calls.txt"))
    repo = make_repo({"eval.py": EVALUATOR})
    (repo / "splits.json").symlink_to(outside_manifest(tmp_path))
    before = snapshot(repo)
    with Store.discover(repo) as store, pytest.raises(HarnessgitError) as info:
        evaluate(store, load_config(repo), "main")
    assert str(info.value) == (
        f"split manifest splits.json leads out of the repository through a symbolic link "
        f"(to {tmp_path / 'outside' / 'splits.json'}): keep the manifest inside the repository"
    )
    assert calls(tmp_path) == 0 and snapshot(repo) == before


@pytest.mark.parametrize("where", ["absolute", "../outside/splits.json"])
def test_load_manifest_stays_in_the_repository(tmp_path: Path, where: str) -> None:
    # The config reader refuses these names (tests/config); a Config built in Python
    # does not go through it, so the loader refuses them too.
    outside = outside_manifest(tmp_path)
    root = tmp_path / "repo"
    root.mkdir()
    with pytest.raises(ManifestError, match="is not a path inside the repository"):
        load_manifest(root, str(outside) if where == "absolute" else where)


def test_a_manifest_linked_inside_the_repository_is_read(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "data").mkdir(parents=True)
    (root / "data" / "splits.json").write_text(json.dumps({"selection": ["a"]}))
    (root / "splits.json").symlink_to(Path("data", "splits.json"))
    assert load_manifest(root, "splits.json").ids("selection") == ["a"]
