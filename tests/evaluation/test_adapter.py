"""``[evaluator] adapter``: a real GEPA adapter (gepa's EvaluationBatch) as the evaluator
of eval, gate and evolve, its scores those of calling the adapter directly."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.checkconfig.reader import SettingError
from harnessgit.config import load_config
from harnessgit.config.sections import EvaluatorSection
from harnessgit.evaluation.adapter import excerpt_of
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.scores import ScoreBook
from harnessgit.records import EvalRecord
from harnessgit.store import Store
from tests.cli.runner import one_error_line, run
from tests.conftest import git, write
from tests.gepa_fixtures import ADAPTER_CONFIG, SPLITS, TASK

PROMPTS = {"prompts/system.md": "Mention alpha and beta.\n", "prompts/style.md": "Be kind.\n"}
TUNER = """\
import re

def propose(request):
    words = sorted({w for e in request["examples"] for w in re.findall(r"mention (\\w+)", e["feedback"])})
    return {"operations": [{"op": "append", "text": "Mention " + " ".join(words) + ".\\n"}]}
"""


@pytest.fixture(autouse=True)
def forget_task() -> Iterator[None]:
    """Each repository has its own `task` package: no test may see another's."""
    path = list(sys.path)
    yield
    for name in [name for name in sys.modules if name.split(".")[0] in ("task", "tuner")]:
        del sys.modules[name]
    sys.path[:] = path


def adapter_repo(make_repo: Callable[..., Path], config: str = ADAPTER_CONFIG, **files: str) -> Path:
    contents = {
        "task/__init__.py": "",
        "task/gepa_task.py": TASK,
        "splits.json": json.dumps(SPLITS),
        **PROMPTS,
        **{path.replace("__", "/"): text for path, text in files.items()},
    }
    return make_repo(contents, config=config)


def records(repo: Path) -> list[EvalRecord]:
    with Store.discover(repo) as store:
        return [
            r
            for rs in store.notes.records(layout.NOTES_EVALS).values()
            for r in rs
            if isinstance(r, EvalRecord)
        ]


def direct_scores(repo: Path, rev: str) -> dict[str, float]:
    """The adapter called directly, as GEPA would: the valset, the candidate's texts."""
    sys.path.insert(0, str(repo))
    task = importlib.import_module("task.gepa_task")
    adapter, dataset = task.factory()
    candidate = {
        name: git(repo, "show", f"{rev}:prompts/{file}")
        for name, file in (("system_prompt", "system.md"), ("style", "style.md"))
    }
    ids = SPLITS["selection"]
    result = adapter.evaluate([dataset[i] for i in ids], candidate, capture_traces=False)
    return dict(zip(ids, result.scores, strict=True))


def test_eval_scores_equal_calling_the_adapter(make_repo: Callable[..., Path]) -> None:
    repo = adapter_repo(make_repo)
    result = run(repo, "eval", "main")
    assert result.exit_code == 0, result.output
    found = {i: s for r in records(repo) for i, s in zip(r.instances, r.scores, strict=True)}
    assert found == direct_scores(repo, "main")
    assert sorted(found.values()) == [0.0] * 4 + [1.0] * 2  # alpha and beta of six words
    assert {len(r.instances) for r in records(repo)} == {3}  # batch_size = 4: two even batches
    # Feedback from the adapter's reflective dataset, trajectories as JSON excerpts.
    trajectory = run(repo, "trajectory", "main", "2", "--json")
    (shown,) = json.loads(trajectory.output)["repeats"]
    assert shown["feedback"] == "mention gamma"
    assert shown["trajectory"]["trajectory"] == {"word": "gamma", "prompt_chars": 33}
    assert shown["trajectory"]["output"] == {"said": "?"}
    assert shown["trajectory"]["reflective"]["style"]["Feedback"] == "mention gamma"


def test_gate_test_and_evolve_run_with_the_adapter(make_repo: Callable[..., Path]) -> None:
    config = (
        ADAPTER_CONFIG
        + '\n[gate]\nmin_instances = 6\n\n[proposer]\nkind = "python"\nfunction = "tuner:propose"\n'
    )
    repo = adapter_repo(make_repo, config, **{"tuner.py": TUNER})
    write(repo, "prompts/system.md", "Mention alpha, beta, gamma, delta, epsilon and zeta.\n")
    proposed = run(repo, "propose", "-m", "name every word", "--json")
    assert proposed.exit_code == 0, proposed.output
    candidate = json.loads(proposed.output)["candidate"]
    git(repo, "checkout", "-q", "--", "prompts/system.md")
    gated = run(repo, "gate", candidate)
    assert gated.exit_code == 0, gated.output
    with Store.discover(repo) as store:
        config_now = load_config(repo)
        book = ScoreBook.load(store)
        tip = store.refs.resolve(f"{layout.candidate_ref(candidate)}")
        key = eval_context(store.objects, config_now, tip).key
        assert {
            i: s for (i, _r), s in ((k, row.score) for k, row in book.rows(key).items())
        } == direct_scores(repo, tip)
    tested = run(repo, "test", "main", "--json")  # the held-out split, through the adapter too
    assert tested.exit_code == 0, tested.output
    assert json.loads(tested.output)["summary"]["mean"] == 0.5  # alpha, not omega
    evolved = run(repo, "evolve", "--max-proposals", "2", "--seed", "1")
    assert evolved.exit_code == 0, evolved.output
    # The proposer read the adapter's reflective feedback ("mention gamma") on the train
    # split and the adapter scored its edit: better on the minibatch, best on selection.
    assert "minibatch 0.67 -> 1.00" in evolved.output and "selection 1.000" in evolved.output, evolved.output


def test_uncommitted_adapter_edits_are_refused(make_repo: Callable[..., Path]) -> None:
    repo = adapter_repo(make_repo)
    write(repo, "task/gepa_task.py", TASK + "\n# an edit\n")
    line = one_error_line(run(repo, "eval", "main"))
    assert "task/gepa_task.py in the working tree differ from" in line
    assert records(repo) == []


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (
            TASK.replace("return KeywordAdapter(), dataset", "return KeywordAdapter()"),
            "evaluator task.gepa_task:factory returned KeywordAdapter, not (adapter, dataset)",
        ),
        (
            TASK.replace("text = candidate", "raise RuntimeError('no model')\n        text = candidate"),
            "evaluator task.gepa_task:factory: evaluate raised RuntimeError: no model",
        ),
        (
            TASK.replace(
                "return EvaluationBatch(outputs=outputs, scores=scores,",
                "return EvaluationBatch(outputs=outputs, scores=scores[:1],",
            ),
            "evaluator task.gepa_task:factory: evaluate returned scores of 1 for a batch of 3",
        ),
        (
            TASK.replace("1.0 if example", "2.0 if example"),
            "evaluator task.gepa_task:factory: ",
        ),
    ],
)
def test_a_broken_adapter_is_one_line_and_records_nothing(
    make_repo: Callable[..., Path], source: str, message: str
) -> None:
    repo = adapter_repo(make_repo, **{"task__gepa_task.py": source})
    line = one_error_line(run(repo, "eval", "main"))
    assert line.startswith(f"harnessgit: error: {message}")
    assert records(repo) == []


def test_a_component_that_is_no_harness_file_is_refused(make_repo: Callable[..., Path]) -> None:
    config = ADAPTER_CONFIG.replace('"prompts/style.md"', '"notes/style.md"')
    repo = adapter_repo(make_repo, config)
    line = one_error_line(run(repo, "eval", "main"))
    assert line.endswith(
        "notes/style.md ([evaluator] components) not a harness file of " + git(repo, "rev-parse", "main")[:12]
    )


def test_the_fingerprint_covers_the_adapter_and_its_components(make_repo: Callable[..., Path]) -> None:
    repo = adapter_repo(make_repo)
    with Store.discover(repo) as store:
        fingerprints = set()
        for config in (ADAPTER_CONFIG, ADAPTER_CONFIG.replace("system_prompt =", "system =")):
            (repo / "harnessgit.toml").write_text(config)
            fingerprints.add(eval_context(store.objects, load_config(repo), "main").key.fingerprint)
        write(repo, "task/gepa_task.py", TASK + "# an edit\n")
        git(repo, "commit", "-qam", "edit the adapter")
        head = git(repo, "rev-parse", "main").strip()
        fingerprints.add(eval_context(store.objects, load_config(repo), head).key.fingerprint)
    assert len(fingerprints) == 3


def test_exactly_one_evaluator_and_components_need_an_adapter() -> None:
    with pytest.raises(SettingError, match="set either python or adapter, not both"):
        EvaluatorSection(python="a:b", adapter="c:d")
    with pytest.raises(SettingError, match="set either command or adapter, not both"):
        EvaluatorSection(command=["x"], adapter="c:d")
    with pytest.raises(SettingError, match="components: names the components of an adapter"):
        EvaluatorSection(python="a:b", components={"a": "b.md"})


def test_excerpts_are_json_and_short() -> None:
    class Client:
        def __repr__(self) -> str:
            return "<client>"

    value = {"text": "x" * 5000, "nan": float("nan"), "items": list(range(60)), "client": Client(), 1: {2}}
    excerpt = excerpt_of(value)
    json.dumps(excerpt, allow_nan=False)
    assert excerpt["text"].endswith("... [1000 chars cut]") and excerpt["nan"] == "nan"
    assert len(excerpt["items"]) == 51 and excerpt["client"] == "<client>" and excerpt["1"] == [2]


OBJECTIVES_TASK = """\
from gepa.core.adapter import EvaluationBatch

from task.gepa_task import KeywordAdapter, factory as plain


class Objectives(KeywordAdapter):
    def evaluate(self, batch, candidate, capture_traces=False):
        result = super().evaluate(batch, candidate, capture_traces)
        brevity = 1.0 - min(len(candidate["system_prompt"]) // 8, 16) / 16
        found = [{"found": score, "brevity": brevity} for score in result.scores]
        return EvaluationBatch(outputs=result.outputs, scores=result.scores,
                               trajectories=result.trajectories, objective_scores=found)


def factory():
    return Objectives(), plain()[1]
"""


def test_the_adapters_objective_scores_are_recorded_and_make_the_objective_frontier(
    make_repo: Callable[..., Path],
) -> None:
    """An evaluator's ``objective_scores`` (here a GEPA adapter's) are recorded per
    instance, and `frontier --type objective` keeps a front per objective: the short
    base is best on brevity, the long candidate on words found."""
    config = ADAPTER_CONFIG.replace("task.gepa_task:factory", "task.objectives:factory")
    repo = adapter_repo(make_repo, config, **{"task/objectives.py": OBJECTIVES_TASK})
    write(repo, "prompts/system.md", "Mention alpha, beta, gamma, delta, epsilon and zeta.\n")
    proposed = run(repo, "propose", "-m", "name every word", "--json")
    candidate = json.loads(proposed.output)["candidate"]
    git(repo, "checkout", "-q", "--", "prompts/system.md")
    evaluated = run(repo, "eval", "main")
    assert evaluated.exit_code == 0, evaluated.output
    assert run(repo, "eval", candidate).exit_code == 0
    base = [r for r in records(repo) if r.commit == git(repo, "rev-parse", "main").strip()]
    brevity = 1.0 - min(len(PROMPTS["prompts/system.md"]) // 8, 16) / 16
    assert {i: o for r in base for i, o in zip(r.instances, r.objective_scores or [], strict=True)} == {
        i: {"found": s, "brevity": brevity} for i, s in direct_scores(repo, "main").items()
    }
    by_instance = json.loads(run(repo, "frontier", "--json").output)
    assert [row["candidate"] for row in by_instance["rows"]] == [candidate]  # it finds every word
    by_objective = json.loads(run(repo, "frontier", "--type", "objective", "--json").output)
    assert sorted(row["candidate"] for row in by_objective["rows"]) == sorted([candidate, "main"])
