"""templates/github/harnessgit-review.yml, run locally against a bare repository.

The workflow's shell steps are taken from the YAML as GitHub would run them (bash,
in a fresh clone checked out at the pull request's head, the step's env set). The
remote is a bare repository with harnessgit history pushed to it. GitHub's API is
unreachable here, so the comment step talks to a stand-in `gh` on PATH that keeps
the pull request's comments in a JSON file: the API part is simulated, the
step's own logic (find the sticky comment by its marker, edit it or create it) is real.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from harnessgit.candidates.propose import propose
from harnessgit.config import load_config
from harnessgit.evaluation.eval import evaluate
from harnessgit.store import Store
from tests.conftest import git, write
from tests.gating_fixtures import skill
from tests.review.review_fixtures import edit_skills, skills_collection

WORKFLOW = Path(__file__).parent.parent / "templates" / "github" / "harnessgit-review.yml"
MARKER = "<!-- harnessgit-review -->"

# A stand-in for the GitHub CLI's `gh api`: the comments of one pull request, in a file.
FAKE_GH = """\
#!{python}
import json, os, sys
args = sys.argv[1:]
assert args[0] == "api" and os.environ.get("GH_TOKEN"), args
state_file = os.environ["FAKE_GH_STATE"]
state = json.load(open(state_file))
method, path, body = "GET", None, None
i = 1
while i < len(args):
    if args[i] == "--method":
        method = args[i + 1]; i += 2
    elif args[i] == "-F":
        key, _, value = args[i + 1].partition("=")
        assert key == "body" and value.startswith("@")
        body = open(value[1:], encoding="utf-8").read(); i += 2
    elif args[i] == "--paginate":
        i += 1
    else:
        path = args[i]; i += 1
state["calls"].append([method, path])
if method == "GET":
    # Two pages, printed back to back as `gh api --paginate` does.
    half = len(state["comments"]) // 2
    print(json.dumps(state["comments"][:half]) + json.dumps(state["comments"][half:]))
elif method == "POST":
    assert path == f"repos/{{os.environ['REPO']}}/issues/{{os.environ['PR_NUMBER']}}/comments", path
    state["comments"].append({{"id": 1000 + len(state["comments"]), "body": body}})
elif method == "PATCH":
    comment_id = int(path.rsplit("/", 1)[1])
    (comment,) = [c for c in state["comments"] if c["id"] == comment_id]
    comment["body"] = body
json.dump(state, open(state_file, "w"))
"""


def steps() -> dict[str, dict[str, Any]]:
    data = yaml.safe_load(WORKFLOW.read_text())
    assert "pull_request" in data.get("on", data.get(True))  # YAML 1.1 reads a bare `on` as true
    assert data["permissions"] == {} and data["jobs"]["review"]["permissions"]["pull-requests"] == "write"
    return {step["name"]: step for step in data["jobs"]["review"]["steps"] if "name" in step}


def run_step(step: dict[str, Any], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a step's `run:` with bash, its env's ${{ }} expressions filled from ``env``."""
    step_env = {}
    for key, value in step.get("env", {}).items():
        expressions = re.findall(r"\$\{\{\s*([^}]+?)\s*\}\}", str(value))
        for expression in expressions:
            assert expression in env, f"the test does not provide {expression}"
        step_env[key] = re.sub(r"\$\{\{\s*([^}]+?)\s*\}\}", lambda m: env[m.group(1)], str(value))
    full = {**os.environ, **step_env, "PATH": env["PATH"]}
    return subprocess.run(
        ["bash", "-c", step["run"]], cwd=cwd, env=full, capture_output=True, text=True, check=False
    )


@pytest.fixture
def remote(review_repo: Path, tmp_path: Path) -> tuple[Path, str]:
    """A bare repository with main, an evaluated candidate pushed as a PR branch, and
    every harnessgit ref; returns it and the PR head."""
    with Store.discover(review_repo) as store:
        config = load_config(review_repo)
        cand = propose(store, config, {"SKILL.md": skill(30)}, rationale="Raise the level\n\nIt helps.")
        evaluate(store, config, "main")
        evaluate(store, config, cand.candidate)
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(
        review_repo,
        "push",
        "-q",
        str(bare),
        "main",
        f"{cand.commit}:refs/heads/feature",
        "refs/notes/harnessgit/*",
        "refs/harnessgit/*",
        "refs/heads/harnessgit/*",
    )
    return bare, cand.commit


def checkout(bare: Path, head: str, where: Path) -> Path:
    """What actions/checkout does for a pull request: a clone at the head, detached."""
    git(where.parent, "clone", "-q", str(bare), str(where))
    git(where, "checkout", "-q", "--detach", head)
    return where


def github_env(tmp_path: Path) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    gh = bin_dir / "gh"
    gh.write_text(FAKE_GH.format(python=sys.executable))
    gh.chmod(0o755)
    harnessgit_bin = Path(sys.executable).parent  # the venv's `harnessgit` entry point
    return {
        "PATH": f"{bin_dir}{os.pathsep}{harnessgit_bin}{os.pathsep}{os.environ['PATH']}",
        "github.event.pull_request.base.ref": "main",
        "github.event.pull_request.number": "7",
        "github.repository": "acme/harness",
        "github.token": "test-token",
    }


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_workflow_fetches_the_notes_reviews_and_keeps_one_sticky_comment(
    remote: tuple[Path, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, head = remote
    env = github_env(tmp_path)
    work = checkout(bare, head, tmp_path / "work")
    workflow = steps()
    fetched = run_step(workflow["Fetch harnessgit's refs"], work, env)
    assert fetched.returncode == 0, fetched.stderr
    assert "refs/notes/harnessgit/evals" in fetched.stdout
    reviewed = run_step(workflow["Review"], work, env)
    assert reviewed.returncode == 0, reviewed.stderr
    md = (work / "harnessgit-review.md").read_text()
    assert md.startswith(MARKER) and "**Gate: PASS.** Chance the edit is better" in md
    assert "Observed +50.0 points on 40 selection instances" in md
    assert "It helps." in md  # the rationale came with the evidence notes

    state = tmp_path / "gh-state.json"
    others = [{"id": 1, "body": "LGTM"}, {"id": 2, "body": "nit: typo"}, {"id": 3, "body": "another"}]
    state.write_text(json.dumps({"comments": others, "calls": []}))
    monkeypatch.setenv("FAKE_GH_STATE", str(state))
    first = run_step(workflow["Post or update the review comment"], work, env)
    assert first.returncode == 0 and "created the review comment" in first.stdout, first.stderr
    (work / "harnessgit-review.md").write_text(md.replace("PASS", "PASS (again)"))
    second = run_step(workflow["Post or update the review comment"], work, env)
    assert second.returncode == 0 and "updated the review comment 1003" in second.stdout, second.stderr
    comments = json.loads(state.read_text())["comments"]
    ours = [c for c in comments if c["body"].startswith(MARKER)]
    assert len(comments) == 4 and len(ours) == 1 and "PASS (again)" in ours[0]["body"]
    assert comments[:3] == others


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_without_the_fetch_step_the_scores_are_not_there(remote: tuple[Path, str], tmp_path: Path) -> None:
    bare, head = remote
    work = checkout(bare, head, tmp_path / "plain")
    reviewed = run_step(steps()["Review"], work, github_env(tmp_path))
    assert reviewed.returncode == 0, reviewed.stderr
    md = (work / "harnessgit-review.md").read_text()
    assert "**Gate: not evaluated.**" in md and "harnessgit eval" in md


def level2_remote(tmp_path: Path, *, harness_edit: bool) -> tuple[Path, str]:
    """A skills collection with checks and review only (no evaluator, no splits.json,
    no harnessgit refs) pushed to a bare repository, with a pull request branch that
    edits a skill (``harness_edit``) or only the README; returns it and the PR head."""
    repo = skills_collection(tmp_path / "skills")
    if harness_edit:
        head = edit_skills(repo)
    else:
        git(repo, "checkout", "-q", "-b", "edit")
        write(repo, "README.md", "# A skills collection\n\nHow to install.\n")
        git(repo, "commit", "-qam", "Document the install")
        head = git(repo, "rev-parse", "HEAD").strip()
    bare = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(repo, "push", "-q", str(bare), "main", f"{head}:refs/heads/feature")
    return bare, head


def run_workflow(
    bare: Path, head: str, tmp_path: Path, comments: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch
) -> tuple[Path, list[str], dict[str, Any]]:
    """Every shell step on a fresh checkout; returns it, each step's stdout, the gh state."""
    env = github_env(tmp_path)
    work = checkout(bare, head, tmp_path / "work")
    state = tmp_path / "gh-state.json"
    state.write_text(json.dumps({"comments": comments, "calls": []}))
    monkeypatch.setenv("FAKE_GH_STATE", str(state))
    outputs = []
    workflow = steps()
    for name in ("Fetch harnessgit's refs", "Review", "Post or update the review comment"):
        done = run_step(workflow[name], work, env)
        assert done.returncode == 0, (name, done.stderr)
        outputs.append(done.stdout)
    return work, outputs, json.loads(state.read_text())


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_at_level_2_a_skills_collection_gets_a_comment_that_is_not_evaluated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 20: checks and review only, no evaluator and no splits.json."""
    bare, head = level2_remote(tmp_path, harness_edit=True)
    _work, outputs, state = run_workflow(bare, head, tmp_path, [{"id": 1, "body": "LGTM"}], monkeypatch)
    assert "created the review comment" in outputs[2]
    (ours,) = [c["body"] for c in state["comments"] if c["body"].startswith(MARKER)]
    assert "**Not evaluated:** no evaluator is configured" in ours
    assert "REJECT" not in ours and "Gate:" not in ours and "#### Scores" not in ours
    assert "`skills/subagent-driven-development/SKILL.md`" in ours and "**Checks:**" in ours
    assert "Reviewers missed regressions in fixes." in ours  # the rationale


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_pull_request_without_harness_changes_gets_no_comment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bare, head = level2_remote(tmp_path, harness_edit=False)
    work, outputs, state = run_workflow(bare, head, tmp_path, [{"id": 1, "body": "LGTM"}], monkeypatch)
    assert "no harness file changed: no review comment" in outputs[1]
    assert not (work / "harnessgit-review.md").exists()
    assert "nothing posted" in outputs[2]
    assert state["comments"] == [{"id": 1, "body": "LGTM"}]
    assert [method for method, _path in state["calls"]] == ["GET"]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_stale_review_is_updated_when_the_harness_changes_are_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An earlier push changed a skill and got a review; this one changes only the README."""
    bare, head = level2_remote(tmp_path, harness_edit=False)
    stale = {"id": 5, "body": f"{MARKER}\n**Not evaluated:** ... `skills/brainstorming/SKILL.md` ..."}
    _work, outputs, state = run_workflow(bare, head, tmp_path, [stale], monkeypatch)
    assert "updated the review comment 5" in outputs[2]
    (ours,) = state["comments"]
    assert ours["body"].startswith(MARKER) and "no longer changes harness files" in ours["body"]
    assert "SKILL.md" not in ours["body"]
