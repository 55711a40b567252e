"""The demo's report in a real headless Chromium: it renders, it is not blank, it has one
node per candidate and one point per gated merge, and it asks the network for nothing."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from harnessgit.report.page import CSP
from tests.conftest import git
from tests.report.browser import chromium, ink, measure, network_urls, screenshot, visit
from tests.report.large_repo import build


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    chromium()  # skip before the demo runs when there is no browser
    repo = tmp_path_factory.mktemp("demo") / "triage"
    result = subprocess.run(
        [sys.executable, "-m", "harnessgit", "demo", str(repo)], capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    found = re.search(r"wrote the report to (\S+) \(", result.stdout)
    assert found, result.stdout[-2000:]
    return repo, Path(found.group(1))


def harnessgit_json(repo: Path, *args: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), *args, "--json"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return json.loads(out)  # type: ignore[no-any-return]


@pytest.mark.slow
def test_the_demo_report_renders_offline_in_chromium(demo_report: tuple[Path, Path], tmp_path: Path) -> None:
    repo, page = demo_report
    assert page == repo / ".git" / "harnessgit" / "report.html" and git(repo, "status", "--porcelain") == ""
    assert page.stat().st_size < 2 * 1024 * 1024
    seen = visit(page, tmp_path)
    assert 'data-rendered="yes"' in seen.dom  # the page's script ran to its end
    candidates = git(
        repo, "for-each-ref", "--format=%(refname)", "refs/heads/harnessgit/cand", "refs/harnessgit/archive"
    )
    outcomes = re.findall(r'<g class="node outcome-([a-z-]+)[ a-z]*"', seen.dom)  # "selected" too
    assert len([o for o in outcomes if o not in ("base", "rejected-proposal")]) == len(candidates.split()) > 0
    log = harnessgit_json(repo, "log")
    merges = [e for e in log["entries"] if e["kind"] == "merge" and e["gate"]["passed"]]  # type: ignore[index,union-attr]
    assert len(re.findall(r'<circle class="merge-point"', seen.dom)) == len(merges) > 0
    assert len(re.findall(r'<path class="peek-point"', seen.dom)) == len(log["test_peeks"])  # type: ignore[arg-type]
    # The failure-class shift per model: one panel per merge the flips show, and the
    # script (allowed by its hash) shows exactly one, the menu's first.
    flips = re.findall(r'<div class="flips" id="flips-\d+"( hidden="")?>', seen.dom)
    shifts = re.findall(r'<div class="shifts" id="(shifts-\d+)"( hidden="")?>', seen.dom)
    assert len(shifts) == len(flips) > 0 and [panel for panel, hidden in shifts if not hidden] == ["shifts-0"]
    shown = seen.dom.split('id="shifts-0">')[1].split("</div>")[0]
    assert re.search(r'<rect class="class-bar"', shown) and ": before</text>" in shown
    assert network_urls(seen.urls, page) == [], "the report asked the network for something"
    assert "Content Security Policy" not in seen.console  # nothing on the page tried to load
    shot = tmp_path / "report.png"
    screenshot(page, tmp_path, shot, width=1000, height=1600)
    assert ink(shot) > 0.01  # not a blank page: charts and text drawn


@pytest.mark.slow
def test_the_network_check_sees_a_request_and_the_policy_stops_it(tmp_path: Path) -> None:
    """The checks above have teeth: an image from elsewhere shows in the net log, and
    under the report's policy it is refused before any request."""
    leaky = tmp_path / "leaky.html"
    leaky.write_text('<!doctype html><img src="http://cdn.example.invalid/chart.js.png">')
    seen = visit(leaky, tmp_path / "a")
    assert any("cdn.example.invalid" in url for url in network_urls(seen.urls, leaky))
    guarded = tmp_path / "guarded.html"
    guarded.write_text(
        f'<!doctype html><meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<img src="http://cdn.example.invalid/chart.js.png">'
    )
    seen = visit(guarded, tmp_path / "b")
    assert network_urls(seen.urls, guarded) == [] and "Content Security Policy" in seen.console


@pytest.fixture(scope="module")
def large_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The report of a synthetic collection of 700 prompts over 500 commits, none scored."""
    chromium()
    repo = build(tmp_path_factory.mktemp("large") / "prompts")
    result = subprocess.run(
        [sys.executable, "-m", "harnessgit", "-C", str(repo), "report"], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    return repo / ".git" / "harnessgit" / "report.html"


@pytest.mark.slow
@pytest.mark.parametrize("width", [1000, 1400, 1920])
def test_nothing_of_a_large_report_is_cut_off_at_common_widths(
    large_report: Path, tmp_path: Path, width: int
) -> None:
    """Issue 27: the newest points of the score chart were cut off at 1400 px."""
    seen = measure(large_report, tmp_path, width)
    assert seen["pageWidth"] <= seen["width"]  # no sideways scrolling of the page
    charts = [c for c in seen["charts"] if "tree" not in c["css"]]
    assert {c["css"] for c in charts} >= {"chart scores", "chart lengths lengths-chars"}
    for chart in charts:
        assert chart["left"] >= 0 and chart["right"] <= seen["width"] and not chart["scrolls"], chart
    scores = next(c for c in charts if c["css"] == "chart scores")
    assert len(scores["marks"]) == 500  # every commit drawn, the newest included
    assert all(
        chart_left <= m["left"] and m["right"] <= scores["right"]
        for m in scores["marks"]
        for chart_left in [scores["left"]]
    )


@pytest.mark.slow
def test_a_large_report_stays_small_and_its_legend_short(large_report: Path, tmp_path: Path) -> None:
    page = large_report.read_text()
    assert large_report.stat().st_size < 400 * 1024  # 142 KiB when written (docs/benchmarks.md)
    legend = page.split('id="lengths"')[1].split("</ul>")[0]
    assert legend.count("<li>") == 10 and "and 690 more files" in page
    assert (
        page.count('<line class="unscored-mark"') == 500 and page.count('<circle class="ungated-point"') == 0
    )
