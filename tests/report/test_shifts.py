"""`harnessgit report` shows each merge's failure-class shift per model (issue 19, part 3).

The evaluator of tests/coevolution/ with its failure classes made to differ by model:
a failure is `wrong-total`, except beta's under a SKILL.md that says STRICT PLAN, which
are `planning`. The STRICT PLAN edit (gated on alpha alone) leaves alpha's failures all
`wrong-total` and turns every one of beta's into `planning`.
"""

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
from harnessgit.report.page import CSP
from harnessgit.store import Store
from tests.cli.runner import run
from tests.coevolution.fixtures import EVALUATOR, MODELS_CONFIG, SPLITS, skill

BATCHES = with_batches()  # the runner the gate takes from its caller

CLASSED = EVALUATOR.replace(
    '"failure_class": None if good else "planning"',
    '"failure_class": None if good else ("planning" if model == "beta" and "STRICT PLAN" in skill '
    'else "wrong-total")',
)


@pytest.fixture
def classed_repo(make_repo: Callable[..., Path]) -> Path:
    assert CLASSED != EVALUATOR
    return make_repo(
        {"eval.py": CLASSED, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(20)},
        config=MODELS_CONFIG,
    )


def shift_rows(page: str, panel: int) -> list[tuple[str, ...]]:
    """(model, split, class, before, after) of one merge's table in the shifts section."""
    section = page.split('<section id="shifts">')[1].split("</section>")[0]
    body = section.split(f'id="shifts-{panel}"')[1].split("</table>")[0]
    cells = [re.findall(r"<td[^>]*>([^<]*)</td>", row) for row in body.split("<tr>")]
    return [tuple(row) for row in cells if row]


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_the_report_shows_each_models_failure_classes_before_and_after_a_merge(classed_repo: Path) -> None:
    with Store.discover(classed_repo) as store:
        config = load_config(classed_repo)
        cand = propose(store, config, {"SKILL.md": skill(20, "STRICT PLAN")}, rationale="Plan").candidate
        assert merge(
            store, config, GateRequest(cand), execution=BATCHES, check=check_change
        ).merge  # alpha, the primary, gains: it lands
    for rev in ("main^", "main"):
        assert run(classed_repo, "eval", rev, "--model", "beta").exit_code == 0
    out = classed_repo.parent / "report.html"
    assert run(classed_repo, "report", "-o", str(out)).exit_code == 0
    page = out.read_text()
    assert shift_rows(page, 0) == [
        ("alpha", "selection", "wrong-total", "20 (100.0%)", "5 (100.0%)"),
        ("beta", "selection", "planning", "0 (0.0%)", "35 (100.0%)"),
        ("beta", "selection", "wrong-total", "20 (100.0%)", "0 (0.0%)"),
    ]
    bars = page.split('<section id="shifts">')[1].split("</svg>")[0]
    labels = re.findall(r'text-anchor="end">([^<]*)</text>', bars)
    assert labels == ["alpha: before", "alpha: after", "beta: before", "beta: after"]
    assert "planning: 35 of 35 failures (100%)" in bars
    # The merge menu drives the panels through the page's one script, still under the policy.
    assert 'id="shift-merge" class="merge-pick" data-panels="shifts"' in page
    assert f'content="{CSP}"' in page and page.count("<script>") == 1 and "https://" not in page


@pytest.mark.slow  # over half a second idle: the fast tier leaves it out
def test_a_report_without_failure_classes_says_so(make_repo: Callable[..., Path]) -> None:
    unclassed = EVALUATOR.replace('"failure_class"', '"no_class"')
    repo = make_repo(
        {"eval.py": unclassed, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(20)}, config=MODELS_CONFIG
    )
    with Store.discover(repo) as store:
        config = load_config(repo)
        cand = propose(store, config, {"SKILL.md": skill(30)}, rationale="Raise").candidate
        assert merge(store, config, GateRequest(cand), execution=BATCHES, check=check_change).merge
    out = repo.parent / "report.html"
    assert run(repo, "report", "-o", str(out)).exit_code == 0
    section = out.read_text().split('<section id="shifts">')[1].split("</section>")[0]
    assert "No gated merge in the range with failure classes" in section and "<svg" not in section
