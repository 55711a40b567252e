"""`GitRecorder` under real DSPy (dspy 3.4.1): ``dspy.GEPA(..., gepa_kwargs={"callbacks":
[recorder]})`` optimising a program of a ``ChainOfThought`` and a ``Predict``, whose
``dspy.LM`` talks HTTP to an OpenAI-compatible server on 127.0.0.1.

The server is SIMULATED (written below, no model runs): a task call answers the word
it was asked about, in capitals when the predictor's instructions say UPPERCASE; a
reflection call (GEPA's proposal prompt) returns the current instruction with
"Always answer in UPPERCASE." added. Everything else is real: DSPy's adapters and
parsing, litellm's HTTP client, GEPA's engine, harnessgit's recorder, git.

Slow: importing dspy (litellm) takes 10-35 s. Skipped when dspy is not installed
(`pip install -e '.[dspy]'`).
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # no cost map fetched at import
dspy = pytest.importorskip("dspy")

from gepa.gepa_utils import find_dominator_programs  # noqa: E402

from harnessgit import layout  # noqa: E402
from harnessgit.api import Repository  # noqa: E402
from harnessgit.integrations.gepa import GitRecorder  # noqa: E402
from harnessgit.records import EvalRecord, EvidenceRecord, ProposalRecord  # noqa: E402
from harnessgit.store import Store  # noqa: E402
from tests.conftest import CONFIG, git  # noqa: E402

pytestmark = pytest.mark.slow

WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]
IDS = [f"v{i}" for i in range(6)]
SOLVE = "Given the fields `question`, produce the fields `answer`."
POLISH = "Given the fields `draft`, produce the fields `answer`."
COMPONENTS = {"solve.predict": "prompts/solve.md", "polish": "prompts/polish.md"}
GRADER = "def evaluate(request):\n    raise RuntimeError('GEPA scored these: never run')\n"


class Simulated(BaseHTTPRequestHandler):
    """A SIMULATED chat-completions endpoint (see the module's docstring)."""

    calls: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = body["messages"]
        text = "\n".join(str(m.get("content", "")) for m in messages)
        content = answer(messages)
        self.calls.append("reflect" if "new_instruction" in content else "task")
        reply = {
            "id": "sim",
            "object": "chat.completion",
            "created": 0,
            "model": body.get("model", "sim"),
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
            "usage": {"prompt_tokens": len(text) // 4, "completion_tokens": len(content) // 4,
                      "total_tokens": (len(text) + len(content)) // 4},
        }  # fmt: skip
        data = json.dumps(reply).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


def answer(messages: list[dict[str, Any]]) -> str:
    """The fields the system message asks for: a task's answer; or, for DSPy's
    instruction proposer (a JSONAdapter asking for ``new_instruction``), the current
    instruction with a rule added, as JSON."""
    system, user = str(messages[0]["content"]), str(messages[-1]["content"])
    outputs = system.split("Your output fields are:")[1].split("All interactions")[0]
    fields = re.findall(r"`(\w+)`", outputs)
    if "new_instruction" in fields:
        current = re.search(r"\[\[ ## current_instruction ## \]\]\s*(.*?)\s*\[\[ ##", user, re.S)
        rule = "Always answer in UPPERCASE."
        return json.dumps({"new_instruction": f"{current.group(1) if current else ''}\n{rule}"})
    word = re.search(r"\[\[ ## (?:question|draft) ## \]\]\s*(\S+)", user)
    said = word.group(1) if word else "unknown"
    said = said.upper() if "UPPERCASE" in system else said
    parts = [f"[[ ## {name} ## ]]\n{said if name == 'answer' else 'Thinking.'}" for name in fields]
    return "\n\n".join([*parts, "[[ ## completed ## ]]"])


@pytest.fixture
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Simulated)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def dspy_repo(make_repo: Callable[..., Path]) -> Path:
    config = CONFIG.replace('command = ["python3", "eval.py"]', 'python = "grader:evaluate"')
    return make_repo(
        {
            # main's files end with a newline; DSPy's instructions do not
            "prompts/solve.md": SOLVE + "\n",
            "prompts/polish.md": POLISH + "\n",
            "harnessgit.toml": config,
            "grader.py": GRADER,
            "splits.json": json.dumps({"selection": IDS, "train": ["t1"], "test": ["x1"]}),
        }
    )


class Program(dspy.Module):  # type: ignore[misc]
    def __init__(self, solve: str, polish: str) -> None:
        super().__init__()
        self.solve = dspy.ChainOfThought(dspy.Signature("question -> answer", solve))
        self.polish = dspy.Predict(dspy.Signature("draft -> answer", polish))

    def forward(self, question: str) -> Any:
        draft = self.solve(question=question).answer
        return self.polish(draft=draft)


def metric(gold: Any, pred: Any, trace: Any = None, pred_name: Any = None, pred_trace: Any = None) -> Any:
    right = str(pred.answer).strip() == gold.answer
    feedback = "right" if right else f"expected {gold.answer}, got {pred.answer}"
    return dspy.Prediction(score=1.0 if right else 0.0, feedback=feedback)


class Watch:
    def __init__(self) -> None:
        self.proposals, self.state = 0, None

    def on_proposal_end(self, event: Any) -> None:
        self.proposals += 1

    def on_merge_attempted(self, event: Any) -> None:
        self.proposals += 1

    def on_optimization_end(self, event: Any) -> None:
        self.state = event["final_state"]


def test_dspy_gepa_is_recorded_in_full(server: str, dspy_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(dspy_repo))
    task = dspy.LM("openai/sim-task", api_base=server, api_key="simulated", cache=False, num_retries=0)
    reflection = dspy.LM(
        "openai/sim-reflect", api_base=server, api_key="simulated", cache=False, num_retries=0
    )
    dspy.configure(lm=task)
    examples = [dspy.Example(question=w, answer=w.upper()).with_inputs("question") for w in WORDS]
    train, val = examples[:4], examples[4:]
    # the program reads its instructions from the harness files, as a user's would
    program = Program(*((dspy_repo / p).read_text().strip() for p in COMPONENTS.values()))
    assert [name for name, _ in program.named_predictors()] == list(COMPONENTS)
    watch = Watch()
    recorder = GitRecorder(
        str(dspy_repo), COMPONENTS, adapter="dspy", model="sim-1", valset=val,
        instance_id=lambda index, example: IDS[index], evaluator="repository", reflection_lm=reflection,
    )  # fmt: skip
    optimizer = dspy.GEPA(
        metric=metric, reflection_lm=reflection, max_metric_calls=60, num_threads=1, track_stats=True,
        seed=3, reflection_minibatch_size=2, gepa_kwargs={"callbacks": [watch, recorder]},
    )  # fmt: skip
    optimized = optimizer.compile(program, trainset=train, valset=val)
    recorder.close()
    result = optimized.detailed_results
    assert "reflect" in Simulated.calls and "task" in Simulated.calls
    assert len(result.candidates) > 1, "GEPA should keep a proposal"
    # the seed differs from main's files by the trailing newline only: it is main
    main = git(dspy_repo, "rev-parse", "main").strip()
    assert recorder.commits[0] == main
    with Store.discover(dspy_repo) as store:
        evidence = store.notes.records(layout.NOTES_EVIDENCE)
        evals = store.notes.records(layout.NOTES_EVALS)
        proposals = [r for rs in evidence.values() for r in rs if isinstance(r, ProposalRecord)]
        # one commit per proposal GEPA made
        assert watch.proposals == len(proposals) == recorder.recorded > 0
        # eval records equal GEPA's valset scores
        for idx, subscores in enumerate(result.val_subscores):
            got = {
                i: s
                for r in evals[recorder.commits[idx]]
                if isinstance(r, EvalRecord)
                for i, s in zip(r.instances, r.scores, strict=True)
            }
            assert got == {
                IDS[val_id]: score for val_id, score in dict(enumerate(subscores)).items()
            } or got == {IDS[val_id]: score for val_id, score in dict(subscores).items()}
        # what DSPy's proposer sent the reflection LM and what came back, per proposal
        kinds: dict[str, int] = {}
        for r in (r for rs in evidence.values() for r in rs if isinstance(r, EvidenceRecord)):
            for line in store.objects.read_blob(r.blob).decode().splitlines():
                item = json.loads(line)
                kinds[item.get("kind", "")] = kinds.get(item.get("kind", ""), 0) + 1
                if item.get("kind") == "reflection-exchange":
                    assert "current_instruction" in json.dumps(item["messages"])
                    assert "UPPERCASE" in json.dumps(item["outputs"])
        assert kinds.get("reflection-exchange", 0) >= 1 and kinds.get("reflection-usage", 0) >= 1
    # the component names are DSPy's: the ChainOfThought named solve is solve.predict
    for idx, candidate in enumerate(result.candidates):
        texts = {name: pred.signature.instructions for name, pred in candidate.named_predictors()}
        for name, path in COMPONENTS.items():
            shown = git(dspy_repo, "show", f"{recorder.commits[idx]}:{path}")
            assert shown in (texts[name], texts[name] + "\n")
    # harnessgit's frontier is GEPA's front
    state = watch.state
    expected = find_dominator_programs(state.get_pareto_front_mapping(), state.per_program_tracked_scores)
    with Repository.open(dspy_repo) as repo:
        view = repo.frontier()
        assert sorted({view.members[m].commit for m in view.frontier.members}) == sorted(
            {recorder.commits[idx] for idx in expected}
        )
