"""`harnessgit report` on a large repository (issue 27 item 7): page size and time.

    python tests/bench/bench_report.py [--files 700] [--commits 500] [--runs 3]

Builds the synthetic collection of tests/report/large_repo.py (FILES flat prompts,
COMMITS commits, every 50th an upstream sync of 120 files, no evaluator: no commit is
scored), then times the report as a user runs it (``python -m harnessgit report``,
start-up included) beside a baseline measured in the same run on the same repository:
``git log --first-parent --raw`` over the same chain (what reading every commit's changes
costs, drawing nothing). Prints the page's size, its largest chart's width, the legend's
rows, the wall times (median of ``--runs``) and their ratio.
"""

from __future__ import annotations

import argparse
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.report.large_repo import build  # noqa: E402  (a module of the test tree)


def timed(argv: list[str], cwd: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, cwd=cwd, check=True, capture_output=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=700)
    parser.add_argument("--commits", type=int, default=500)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo = build(Path(scratch) / "prompts", files=args.files, commits=args.commits)
        report = timed([sys.executable, "-m", "harnessgit", "report"], repo, args.runs)
        baseline = timed(["git", "log", "--first-parent", "--raw", "--format=%H", "main"], repo, args.runs)
        page = (repo / ".git" / "harnessgit" / "report.html").read_text()
    widths = [float(w) for w in re.findall(r'<svg class="chart [^"]*"[^>]* width="([\d.]+)"', page)]
    legend = page.split('id="lengths"')[1].split("</ul>")[0].count("<li>")
    size = len(page.encode())
    print(f"repository: {args.files} files, {args.commits} commits (synthetic, tests/report/large_repo.py)")
    print(f"page: {size:,} bytes ({size / 1024:.1f} KiB), {size / args.commits:,.0f} bytes per commit")
    print(f"widest chart: {max(widths):,.0f} px; length legend: {legend} files listed")
    print(f"harnessgit report: {report:.2f} s (median of {args.runs})")
    print(f"git log --first-parent --raw: {baseline:.3f} s; ratio {report / baseline:.0f}x")


if __name__ == "__main__":
    main()
