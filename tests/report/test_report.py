"""`harnessgit report`: what the page holds, read back from the HTML, on real repositories."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from harnessgit.candidates.propose import propose
from harnessgit.checks import check_change
from harnessgit.config import load_config
from harnessgit.evaluation.eval import with_batches
from harnessgit.gate.gate import GateRequest
from harnessgit.gate.merge import merge
from harnessgit.render import sparkline
from harnessgit.report.page import CSP
from harnessgit.report.report import build_report
from harnessgit.report.tree import TreeNode
from harnessgit.report.treeview import layout
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, snapshot
from tests.gating_fixtures import skill

BATCHES = with_batches()  # the runner the gate takes from its caller

HOSTILE = "</script><img src=x onerror=alert(1)><script>alert(2)</script>"


def landed_and_rejected(repo: Path) -> tuple[str, str]:
    """main gains one gated merge; a second candidate, with a hostile rationale, fails the gate."""
    with Store.discover(repo) as store:
        config = load_config(repo)
        good = propose(store, config, {"SKILL.md": skill(30)}, rationale="Raise the level")
        assert merge(store, config, GateRequest(good.candidate), execution=BATCHES, check=check_change).merge
        bad = propose(store, config, {"SKILL.md": skill(30, "break s-1", "break s-2")}, rationale=HOSTILE)
        assert (
            merge(
                store, load_config(repo), GateRequest(bad.candidate), execution=BATCHES, check=check_change
            ).merge
            is None
        )
    return good.candidate, bad.candidate


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_page_draws_each_merge_each_candidate_and_escapes_what_records_say(gate_repo: Path) -> None:
    good, bad = landed_and_rejected(gate_repo)
    git(gate_repo, "commit", "-q", "--allow-empty", "-m", "a commit that skipped the gate")
    (gate_repo / "SKILL.md").write_text(skill(30, "a hotfix nobody scored"))
    git(gate_repo, "commit", "-q", "-am", "a hotfix, never evaluated")
    before = snapshot(gate_repo)
    out = gate_repo.parent / "report.html"
    result = run(gate_repo, "report", "--output", str(out))
    assert result.exit_code == 0, result.output
    assert "1 gated merge, 2 candidates" in result.output
    assert snapshot(gate_repo) == before  # reads only
    page = out.read_text()
    assert len(re.findall(r'<circle class="merge-point"', page)) == 1
    assert len(re.findall(r'<circle class="ungated-point"', page)) == 2  # the initial commit, the empty one
    # the hotfix has no score: a mark in the "not scored" band under the axis, never on
    # the 0 line where it would read as a zero score
    unscored = re.findall(
        r'<line class="unscored-mark" data-commit="\w+" x1="[\d.]+" x2="[\d.]+" y1="([\d.]+)"',
        page,
    )
    zero_line = float(re.findall(r'<line class="grid" [^>]*y1="([\d.]+)"', page)[0])  # the 0 tick comes first
    assert len(unscored) == 1 and all(float(y) > zero_line + 20 for y in unscored)
    assert "not scored" in page
    nodes = re.findall(r'<g class="node outcome-([a-z-]+)" data-node="(\d+)"', page)
    # each candidate, and the two base commits they were proposed on
    assert sorted(o for o, _ in nodes) == ["base", "base", "gate-inconclusive", "merged"]
    assert len(re.findall(r'<section class="node-detail"', page)) == 4
    # the hostile rationale is text, never markup: one <script> element, ours
    assert HOSTILE not in page and "&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;" in page
    assert page.count("<script>") == 1 and "<img" not in page
    assert f'content="{CSP}"' in page and "default-src 'none'" in CSP
    assert "http://" not in page and "https://" not in page
    assert "s-10 failed" in page and 'id="flip-merge"' in page  # a flip of the merge, with its feedback
    assert 'class="class-bar"' in page and "missing-rule" in page
    assert good in page and bad in page and "landed by " in page


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_report_of_a_range_and_a_bad_range(gate_repo: Path) -> None:
    landed_and_rejected(gate_repo)
    with Store.discover(gate_repo) as store:
        report = build_report(store, load_config(gate_repo), "main~1..main")
    assert [p.gated for p in report.points] == [True]
    assert report.points[0].mean is not None and report.points[0].ci_low is not None
    assert report.points[0].ci_low <= report.points[0].mean <= (report.points[0].ci_high or 0)
    git(gate_repo, "checkout", "-q", "-b", "side", "main~1")
    git(gate_repo, "commit", "-q", "--allow-empty", "-m", "off the base branch")
    out = gate_repo.parent / "bad.html"
    line = one_error_line(run(gate_repo, "report", "main..side", "-o", str(out)))
    assert "not on main's first-parent chain" in line and not out.exists()


def test_a_repository_without_scores_still_gets_lengths_and_its_tree(make_repo: Callable[..., Path]) -> None:
    repo = make_repo()  # an evaluator, but no split manifest
    with Store.discover(repo) as store:
        propose(store, load_config(repo), {"SKILL.md": "# Skill\n\nBe brief.\n"}, rationale="shorter")
    out = repo.parent / "plain.html"
    result = run(repo, "report", "-o", str(out))
    assert result.exit_code == 0, result.output
    assert "note: no scores, frontier or flips: split manifest splits.json not found" in result.output
    page = out.read_text()
    assert 'class="length-line"' in page and len(re.findall(r'<g class="node ', page)) == 2
    written = json.loads(run(repo, "report", "-o", str(out), "--json").output)
    assert (
        written["bytes"] == len(page.encode()) and written["candidates"] == 1 and written["gated_merges"] == 0
    )


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_page_goes_where_it_cannot_be_committed_by_accident(gate_repo: Path) -> None:
    landed_and_rejected(gate_repo)
    before = snapshot(gate_repo)
    result = run(gate_repo, "report")
    assert result.exit_code == 0, result.output
    written = gate_repo / ".git" / "harnessgit" / "report.html"
    assert result.output.startswith(f"wrote {written} (") and written.exists()
    assert git(gate_repo, "status", "--porcelain") == "" and snapshot(gate_repo) == before
    # Into the working tree only where git ignores (or tracks) the file.
    line = one_error_line(run(gate_repo, "report", "-o", "report.html"))
    assert "report.html is in the working tree and not ignored" in line and "--output" in line
    assert not (gate_repo / "report.html").exists() and snapshot(gate_repo) == before
    (gate_repo / ".git" / "info" / "exclude").write_text("/out/\n")
    assert run(gate_repo, "report", "-o", "out/report.html").exit_code == 0
    assert (gate_repo / "out" / "report.html").exists() and git(gate_repo, "status", "--porcelain") == ""


def node(name: str, *parents: str) -> TreeNode:
    return TreeNode(
        id=name, commit=None, parents=list(parents), outcome="accepted", state="live", subject="", created=""
    )


def test_tree_layout_puts_parents_over_their_children_and_each_leaf_apart() -> None:
    where = layout([node("r"), node("a", "r"), node("b", "r"), node("c", "a"), node("m", "c", "b")])
    assert where["r"][1] == 0 and where["a"][1] == 1 and where["c"][1] == 2 and where["m"][1] == 3
    assert where["b"][0] != where["m"][0]  # two leaves, two slots
    assert where["r"][0] == (where["a"][0] + where["b"][0]) / 2
    deep = [node("n0"), *[node(f"n{i}", f"n{i - 1}") for i in range(1, 3000)]]
    assert layout(deep)["n2999"] == (0.0, 2999)  # no recursion limit on a long chain


def test_sparkline_spans_the_score_range() -> None:
    assert sparkline([0.0, 0.5, 1.0]) == "▁▅█"
    assert sparkline([-1.0, 2.0]) == "▁█"
