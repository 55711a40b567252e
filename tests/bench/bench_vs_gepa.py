"""harnessgit evolve against the real gepa package (issue 13), on a SIMULATED task.

    python tests/bench/bench_vs_gepa.py [--seeds 10] [--budgets 600,1500]
                                        [--regime helpful,hard] [--jobs 1] [--quick]
                                        [--wiring command|python] [--task prompt|judge]
                                        [--policy NAME|NAME:Q|:Q] [--out RUNS.jsonl]
    python tests/bench/bench_vs_gepa.py --table RUNS.jsonl [RUNS.jsonl ...]

Nothing here calls a model. The task (tests/bench/sim_prompt_task.py, `--task prompt`) is a
simulated code-review agent whose system prompt is built from rules, and the
"reflection LM" is a seeded function proposing one rule edit, right, distracting
or harmful with the regime's shares ("helpful": 55/30/15%, "hard": 15/35/50%).
`--task judge` (tests/bench/sim_judge_task.py) is a second SIMULATED task of another
shape: the same prompt and LM, scored with partial credit by a noisy judge on
instances clustered by repository. Both tools get the same task, the same splits
(150 train, 36 selection = GEPA's valset, 300 held-out test), the same LM and the
same budget in rollouts:

- GEPA 0.1.4 (`gepa.optimize`, its defaults, max_metric_calls = budget) with an
  in-process adapter and the LM as `reflection_lm`; adopted = `best_candidate`;
- `harnessgit evolve --auto-merge` (the Python API, `--max-rollouts` = budget) with
  the evaluator and proposer as commands calling the same module (`wire`), or with
  `--wiring python` as in-process functions (needs the i13-speed branch); adopted =
  main's tip.

Before the runs, `check_wirings` asserts that both wirings give identical scores and
identical proposals on the same inputs. The held-out test gain is the TRUE mean
score change on the 300 test instances (the simulation knows each instance's
success probability: no outcome noise), in points. A gate false accept is a merge
whose true test gain is <= 0. Overhead per iteration is wall time minus the time
spent inside the simulated task and LM (measured inside the commands for harnessgit,
so process start-up counts as overhead).

`--policy NAME` runs evolve with `[gate] policy = NAME` (none: evolve's own default,
bayes with one gate at the end; `:Q` sets only `[gate] q`, NAME:Q both); `--out FILE`
appends every run as a JSON line, and `--table FILE...` prints the table of runs saved
by several invocations (one per policy, say) together.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import sim_prompt_task as sim

# --task: the module that simulates the task (rebound in main, before the pool forks).
TASKS = {"prompt": "sim_prompt_task", "judge": "sim_judge_task"}
TASK = "prompt"
POLICY: str | None = None  # --policy: [gate] policy for evolve; None leaves the default

HERE = Path(__file__).resolve().parent
PYTHON = sys.executable


# --- one run's outcome ---------------------------------------------------------------


@dataclass
class Run:
    tool: str
    regime: str
    budget: int
    seed: int
    gain: float  # true held-out test gain, points
    adopted: bool  # main / best_candidate moved off the seed prompt
    iterations: int
    overhead_ms: float  # per iteration: wall minus time in the simulated task and LM
    merges: list[dict[str, float]] = field(default_factory=list)  # harnessgit: per merge
    withheld: list[dict[str, float]] = field(default_factory=list)  # not gated, would have passed
    rollouts: int = 0
    task: str = "prompt"
    policy: str | None = None  # harnessgit's [gate] policy; None: the default

    @property
    def label(self) -> str:
        return self.tool if self.policy is None else f"{self.tool} ({self.policy})"


# --- GEPA ----------------------------------------------------------------------------


class SimAdapter:
    """gepa's GEPAAdapter over the simulated task (duck-typed, as gepa allows)."""

    def __init__(self, world: sim.World, clock: list[float]) -> None:
        self.world, self.clock = world, clock
        self.iterations = 0  # gepa evaluates with traces once per iteration: the parent's minibatch

    def evaluate(self, batch: list[str], candidate: dict[str, str], capture_traces: bool = False) -> Any:
        from gepa.core.adapter import EvaluationBatch

        self.iterations += capture_traces
        start = time.perf_counter()
        rules = sim.rules_of(candidate["prompt"])
        scores = [self.world.outcome(i, rules) for i in batch]
        traces = [
            {"instance": i, "feedback": self.world.feedback(i, rules, s)}
            for i, s in zip(batch, scores, strict=True)
        ]
        self.clock[0] += time.perf_counter() - start
        return EvaluationBatch(outputs=traces, scores=scores, trajectories=traces if capture_traces else None)

    def make_reflective_dataset(
        self, candidate: dict[str, str], eval_batch: Any, components_to_update: list[str]
    ) -> dict[str, list[dict[str, Any]]]:
        rows = [
            {"Inputs": t["instance"], "Generated Outputs": "a review", "Feedback": t["feedback"]}
            for t in eval_batch.trajectories
        ]
        return {name: rows for name in components_to_update}

    propose_new_texts = None  # gepa's own reflective proposer, calling reflection_lm


class SimLM:
    """The simulated reflection LM as gepa's `reflection_lm` (prompt in, text out)."""

    def __init__(self, seed: int, regime: str, clock: list[float]) -> None:
        self.seed, self.regime, self.clock = seed, regime, clock

    def __call__(self, prompt: str | list[dict[str, Any]]) -> str:
        start = time.perf_counter()
        text = prompt if isinstance(prompt, str) else "\n".join(str(m.get("content", "")) for m in prompt)
        answer = "```\n" + sim.reflect(text, seed=self.seed, regime=self.regime) + "```"
        self.clock[0] += time.perf_counter() - start
        return answer


class Quiet:
    def log(self, message: str) -> None:
        pass


def run_gepa_result(seed: int, regime: str, budget: int, adapter: SimAdapter | None = None) -> Any:
    """gepa.optimize at its defaults on the simulated task: its GEPAResult."""
    import gepa

    adapter = adapter or SimAdapter(sim.world(seed), [0.0])
    return gepa.optimize(
        seed_candidate={"prompt": sim.seed_prompt()},
        trainset=adapter.world.splits["train"],
        valset=adapter.world.splits["selection"],
        adapter=adapter,  # type: ignore[arg-type]
        reflection_lm=SimLM(seed, regime, adapter.clock),
        max_metric_calls=budget,
        logger=Quiet(),
        seed=seed,
    )


def run_gepa(seed: int, regime: str, budget: int) -> Run:
    world = sim.world(seed)
    adapter = SimAdapter(world, [0.0])
    started = time.perf_counter()
    result = run_gepa_result(seed, regime, budget, adapter)
    wall = time.perf_counter() - started
    best = result.best_candidate
    assert isinstance(best, dict)
    gain = 100 * (world.expected(best["prompt"]) - world.expected(sim.seed_prompt()))
    iterations = max(1, adapter.iterations)
    return Run(
        "GEPA",
        regime,
        budget,
        seed,
        gain,
        result.best_idx != 0,
        iterations,
        1000 * (wall - adapter.clock[0]) / iterations,
        rollouts=result.total_metric_calls or 0,
        task=TASK,
    )


# --- harnessgit ----------------------------------------------------------------------

EVALUATOR = """\
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
start = time.perf_counter()
import sim_task
task = json.load(open("task.json"))
world = sim_task.world(task["seed"])
rules = sim_task.rules_of(open("prompt.md").read())
out = []
for line in sys.stdin:
    iid = line.strip()
    if iid:
        score = world.outcome(iid, rules)
        result = {"instance": iid, "score": score, "feedback": world.feedback(iid, rules, score)}
        if hasattr(world, "cluster"):
            result["cluster"] = world.cluster(iid)
        out.append(json.dumps(result))
print("\\n".join(out))
with open(task["clock"], "a") as clock:
    clock.write(f"{time.perf_counter() - start}\\n")
"""

PROPOSER = """\
import json, os, sys, time
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
start = time.perf_counter()
import sim_task
task = json.load(open("task.json"))
request = json.load(sys.stdin)
prompt = request["current_text"] + "\\n" + "\\n".join(e.get("feedback") or "" for e in request["examples"])
new = sim_task.reflect(prompt, seed=task["seed"], regime=task["regime"])
print(json.dumps({"text": new, "rationale": "one rule edit (simulated LM)"}))
with open(task["clock"], "a") as clock:
    clock.write(f"{time.perf_counter() - start}\\n")
"""

IN_PROCESS = """\
import json, time
from pathlib import Path
import sim_task
TASK = json.loads((Path(__file__).parent / "task.json").read_text())
WORLD = sim_task.world(TASK["seed"])
def _clock(start):
    with open(TASK["clock"], "a") as clock:
        clock.write(f"{time.perf_counter() - start}\\n")
def evaluate(request):
    start = time.perf_counter()
    rules = sim_task.rules_of(request.harness["prompt.md"])
    out = []
    for iid in request.instances:
        score = WORLD.outcome(iid, rules)
        result = {"instance": iid, "score": score, "feedback": WORLD.feedback(iid, rules, score)}
        if hasattr(WORLD, "cluster"):
            result["cluster"] = WORLD.cluster(iid)
        out.append(result)
    _clock(start)
    return out
def propose(request):
    start = time.perf_counter()
    feedback = [e.get("feedback") or "" for e in request["examples"]]
    prompt = request["current_text"] + "\\n" + "\\n".join(feedback)
    new = sim_task.reflect(prompt, seed=TASK["seed"], regime=TASK["regime"])
    _clock(start)
    return {"text": new, "rationale": "one rule edit (simulated LM)"}
"""

CONFIG = """\
[harness]
paths = ["prompt.md"]
[evaluator]
{evaluator}
batch_size = 300
jobs = 1
[splits]
manifest = "splits.json"
[proposer]
{proposer}
[checks.kinds.simprompt]
paths = ["prompt.md"]
format = "none"
growth_warn = 100
growth_fail = 100
collapse = false
duplication = false
max_hunks = 100
max_changed_lines = 10000
{gate}"""

# "command": an evaluator and a proposer command per call (the protocol on main);
# "python": in-process functions ([evaluator] python, [proposer] kind = "python"),
# which need the in-process evaluator of issue 13 (branch i13-speed).
WIRING = "command"


def wire(repo: Path, seed: int, regime: str, clock: Path) -> None:
    """The harnessgit side of the task in ``repo``: the one place that says how
    evolve reaches the simulation (`WIRING`)."""
    if WIRING == "python":
        files = '["simwire.py", "sim_task.py", "sim_prompt_task.py", "task.json"]'
        evaluator = f'python = "simwire:evaluate"\nfiles = {files}'
        proposer = 'kind = "python"\nfunction = "simwire:propose"'
    else:
        evaluator = (
            f'command = ["{PYTHON}", "-S", "eval.py"]\n'
            'files = ["eval.py", "sim_task.py", "sim_prompt_task.py", "task.json"]'
        )
        proposer = f'kind = "command"\ncommand = ["{PYTHON}", "-S", "propose.py"]'
    files = {
        "harnessgit.toml": CONFIG.format(evaluator=evaluator, proposer=proposer, gate=gate_section(POLICY)),
        "eval.py": EVALUATOR,
        "propose.py": PROPOSER,
        "simwire.py": IN_PROCESS,
        "sim_task.py": (HERE / f"{TASKS[TASK]}.py").read_text(),
        "sim_prompt_task.py": (HERE / "sim_prompt_task.py").read_text(),
        "task.json": json.dumps({"seed": seed, "regime": regime, "clock": str(clock)}),
        "prompt.md": sim.seed_prompt(),
    }
    for name, text in files.items():
        (repo / name).write_text(text)


def gate_section(policy: str | None) -> str:
    """The [gate] section for ``--policy``: NAME, or NAME:Q to set q too, or :Q to set
    only q (evolve's own default policy, at that q)."""
    if not policy:
        return ""
    name, _, q = policy.partition(":")
    return "[gate]\n" + (f'policy = "{name}"\n' if name else "") + (f"q = {float(q)}\n" if q else "")


def make_repo(root: Path, seed: int, regime: str) -> tuple[Path, Path]:
    repo, clock = root / "repo", root / "clock.txt"
    repo.mkdir(parents=True)
    world = sim.world(seed)
    (repo / "splits.json").write_text(json.dumps(world.splits))
    wire(repo, seed, regime, clock)
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "bench"],
        ["config", "user.email", "bench@bench.invalid"],
        ["add", "-A"],
        ["commit", "-q", "-m", "seed prompt"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo, clock


def run_harnessgit(seed: int, regime: str, budget: int) -> Run:
    from harnessgit.config import load_config
    from harnessgit.evolve.evolve import evolve
    from harnessgit.evolve.state import Budget, EvolveRequest
    from harnessgit.store import Store
    from harnessgit.targets import base_tip

    world = sim.world(seed)
    with tempfile.TemporaryDirectory(prefix="hg-vs-gepa-") as tmp:
        repo, clock = make_repo(Path(tmp), seed, regime)
        for module in ("simwire", "sim_task"):  # each repository imports its own copy
            sys.modules.pop(module, None)
        with Store.discover(repo) as store:
            started = time.perf_counter()
            report = evolve(
                store,
                load_config(repo),
                EvolveRequest(budget=Budget(max_rollouts=budget), seed=seed, auto_merge=True),
            )
            wall = time.perf_counter() - started
            tip = base_tip(store.refs, "main")
            text = (store.objects.file_at(store.objects.commit_info(tip).tree, "prompt.md") or b"").decode()

            def text_at(commit: str) -> str:
                return (
                    store.objects.file_at(store.objects.commit_info(commit).tree, "prompt.md") or b""
                ).decode()

            merges, withheld = diagnose(world, report.iterations, text_at)
        inside = sum(float(x) for x in clock.read_text().split()) if clock.exists() else 0.0
    iterations = max(1, len(report.iterations))
    return Run(
        "harnessgit",
        regime,
        budget,
        seed,
        100 * (world.expected(text) - world.expected(sim.seed_prompt())),
        tip_moved(text),
        iterations,
        1000 * (wall - inside) / iterations,
        merges,
        withheld,
        report.spend.rollouts,
        task=TASK,
        policy=POLICY,
    )


def tip_moved(text: str) -> bool:
    return sim.rules_of(text) != sim.rules_of(sim.seed_prompt())


def diagnose(
    world: sim.World, records: Sequence[Any], text_at: Any
) -> tuple[list[dict[str, float]], list[dict[str, float]]]:
    """From one run's iteration records: per merge, the gain on the selection split
    (what the merge reports) and the true test gain; per candidate not sent to the
    gate although the gate would have passed it at the next attempt, its true test
    gain. Scores are recomputed from the simulation, which is deterministic."""
    from harnessgit.config import GateSection
    from harnessgit.stats.decision import decide
    from harnessgit.stats.pairing import PairedScores

    selection = world.splits["selection"]
    base = sim.seed_prompt()
    attempts = 0
    merges: list[dict[str, float]] = []
    withheld: list[dict[str, float]] = []
    for record in records:
        if record.selection_mean is None or record.commit is None:
            continue
        text = text_at(record.commit)
        before, after = sim.rules_of(base), sim.rules_of(text)
        base_scores = [world.outcome(i, before) for i in selection]
        cand_scores = [world.outcome(i, after) for i in selection]
        true_gain = 100 * (world.expected(text) - world.expected(base))
        observed = 100 * (statistics.fmean(cand_scores) - statistics.fmean(base_scores))
        if record.outcome in ("merged", "gate-rejected", "gate-failed", "gate-inconclusive", "gate-passed"):
            attempts += 1
            if record.outcome == "merged":
                merge = {"selection_gain": observed, "test_gain": true_gain}
                corrected = re.search(r"([+-]\d+\.\d) corrected", record.reason)
                if corrected:  # the policy's gain corrected for selection (since issue 13)
                    merge["corrected_gain"] = float(corrected.group(1))
                merges.append(merge)
                base = text
            continue
        if record.outcome != "not-gated" or "passed the gate" in record.reason:
            continue
        scores = PairedScores(instances=list(selection), base=base_scores, candidate=cand_scores)
        if decide(scores, GateSection(), attempt=attempts + 1).passed:
            withheld.append({"selection_gain": observed, "test_gain": true_gain})
    return merges, withheld


# --- the wirings agree ---------------------------------------------------------------


def check_wirings(seed: int = 0, regime: str = "helpful", cases: int = 12) -> int:
    """Same scores and same proposals through gepa's adapter and LM as through
    harnessgit's evaluator and proposer commands, on random prompts and minibatches;
    the number of cases checked (raises on the first difference)."""
    import random

    from gepa.strategies.instruction_proposal import InstructionProposalSignature

    world = sim.world(seed)
    rng = random.Random(seed)
    catalogue = [f"{k}{n:02d}" for k, count in (("U", 24), ("D", 12), ("H", 8)) for n in range(count)]
    with tempfile.TemporaryDirectory(prefix="hg-vs-gepa-check-") as tmp:
        repo, _clock = make_repo(Path(tmp), seed, regime)
        adapter, lm = SimAdapter(world, [0.0]), SimLM(seed, regime, [0.0])
        for _ in range(cases):
            text = sim.render(frozenset(rng.sample(catalogue, rng.randint(1, 10))))
            batch = rng.sample(world.splits["train"], 3)
            (repo / "prompt.md").write_text(text)
            ran = subprocess.run(
                [PYTHON, "-S", "eval.py"],
                cwd=repo,
                input="\n".join(batch),
                capture_output=True,
                text=True,
                check=True,
            )
            lines = [json.loads(line) for line in ran.stdout.splitlines() if line]
            gepa_batch = adapter.evaluate(batch, {"prompt": text}, capture_traces=True)
            assert [x["score"] for x in lines] == gepa_batch.scores, "scores differ"
            dataset = adapter.make_reflective_dataset({"prompt": text}, gepa_batch, ["prompt"])
            prompt = InstructionProposalSignature.prompt_renderer(
                {"current_instruction_doc": text, "dataset_with_feedback": dataset["prompt"]}
            )
            gepa_text = InstructionProposalSignature.output_extractor(lm(prompt))["new_instruction"]
            failed = sorted(lines, key=lambda x: x["score"])  # harnessgit sends failures first
            request = {"current_text": text, "examples": [{"feedback": x["feedback"]} for x in failed]}
            ran = subprocess.run(
                [PYTHON, "-S", "propose.py"],
                cwd=repo,
                input=json.dumps(request),
                capture_output=True,
                text=True,
                check=True,
            )
            hg_text = json.loads(ran.stdout)["text"]
            assert sim.rules_of(gepa_text) == sim.rules_of(hg_text), "proposals differ"
            assert gepa_text.strip() == hg_text.strip(), "proposal texts differ"
    return cases


# --- the table -----------------------------------------------------------------------


def one(job: tuple[str, int, str, int]) -> Run:
    tool, seed, regime, budget = job
    return (run_gepa if tool == "GEPA" else run_harnessgit)(seed, regime, budget)


def summary(runs: list[Run]) -> dict[str, str]:
    gains = [r.gain for r in runs]
    sd = statistics.stdev(gains) if len(gains) > 1 else 0.0
    worst = min(gains)
    regressions = [g for g in gains if g < -1e-9]
    merges = [m for r in runs for m in r.merges]
    false = sum(1 for m in merges if m["test_gain"] <= 0)
    tool = runs[0].tool
    return {
        "gain": f"{statistics.fmean(gains):+.1f} ± {sd:.1f}",
        "adopted": f"{sum(1 for r in runs if r.adopted)}/{len(runs)}",
        "regressions": f"{len(regressions)}/{len(runs)}",
        "worst": f"{worst:+.2f}",
        "false": f"{false}/{len(merges)} merges" if tool == "harnessgit" else "n/a (no gate)",
        "overhead": f"{statistics.median(r.overhead_ms for r in runs):.1f} ms",
    }


def _order(key: tuple[str, str, int, str]) -> tuple[bool, bool, int, bool, str]:
    task, regime, budget, label = key
    return (task != "prompt", regime != "helpful", budget, label != "GEPA", label)


def print_table(runs: list[Run]) -> None:
    print(
        "| task | regime | rollouts | tool (policy) | seeds | held-out test gain (points) | runs that adopted"
        " | regressions | worst run | gate false accepts | overhead per iteration (median) |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    keys = sorted({(r.task, r.regime, r.budget, r.label) for r in runs}, key=_order)
    for task, regime, budget, label in keys:
        group = [r for r in runs if (r.task, r.regime, r.budget, r.label) == (task, regime, budget, label)]
        s = summary(group)
        print(
            f"| {task} | {regime} | {budget} | {label} | {len(group)} | {s['gain']} | {s['adopted']}"
            f" | {s['regressions']} | {s['worst']} | {s['false']} | {s['overhead']} |"
        )


def print_targets(runs: list[Run]) -> None:
    """Issue 25's item 6 per task, budget and harnessgit policy, against GEPA's runs of
    the same seeds: where proposals mostly help, a mean held-out gain at least GEPA's;
    where they mostly hurt, no more regressions, a better worst run, and a mean gain at
    least GEPA's minus 1 point."""
    print("\nissue 25, item 6 (against GEPA on the same seeds):")
    keys = sorted({(r.task, r.budget, r.label) for r in runs if r.tool != "GEPA"})
    for task, budget, label in keys:
        said = []
        for regime in ("helpful", "hard"):
            ours = {
                r.seed: r
                for r in runs
                if (r.task, r.budget, r.label, r.regime) == (task, budget, label, regime)
            }
            gepa = {
                r.seed: r
                for r in runs
                if (r.task, r.budget, r.tool, r.regime) == (task, budget, "GEPA", regime) and r.seed in ours
            }
            if not ours or set(gepa) != set(ours):
                continue
            mine, theirs = [ours[s].gain for s in sorted(ours)], [gepa[s].gain for s in sorted(ours)]
            mean, other = statistics.fmean(mine), statistics.fmean(theirs)
            if regime == "helpful":
                said.append(
                    f"helpful: gain {mean:+.1f} vs {other:+.1f} {'met' if mean >= other else 'NOT met'}"
                )
                continue
            regress = sum(g < -1e-9 for g in mine), sum(g < -1e-9 for g in theirs)
            checks = [regress[0] <= regress[1], min(mine) > min(theirs), mean >= other - 1]
            said.append(
                f"hard: regressions {regress[0]} vs {regress[1]},"
                f" worst {min(mine):+.2f} vs {min(theirs):+.2f},"
                f" gain {mean:+.1f} vs {other:+.1f} {'met' if all(checks) else 'NOT met'}"
            )
        seeds = len({r.seed for r in runs if (r.task, r.budget, r.label) == (task, budget, label)})
        print(f"- {task}, {budget} rollouts, {label} ({seeds} seeds): " + "; ".join(said))


def print_diagnosis(runs: list[Run]) -> None:
    print("\nharnessgit's decisions (issue 13's diagnosis, recomputed from the records):")
    keys = sorted({(r.task, r.label, r.regime, r.budget) for r in runs if r.tool == "harnessgit"})
    for task, label, regime, budget in keys:
        group = [
            r
            for r in runs
            if r.tool == "harnessgit"
            and (r.task, r.label, r.regime, r.budget) == (task, label, regime, budget)
        ]
        withheld = [w for r in group for w in r.withheld]
        merges = [m for r in group for m in r.merges]
        stuck = sum(1 for r in group if r.withheld and not r.merges)
        over = [m["selection_gain"] - m["test_gain"] for m in merges]
        corrected = [m["corrected_gain"] - m["test_gain"] for m in merges if "corrected_gain" in m]
        print(
            f"- {task}, {label}, {regime}, {budget} rollouts: {len(withheld)} candidates in"
            f" {sum(1 for r in group if r.withheld)}/{len(group)} runs were not gated but would have passed"
            f" (true test gain {_mean(w['test_gain'] for w in withheld)} points on average,"
            f" {sum(1 for w in withheld if w['test_gain'] <= 0)} of them <= 0); in {stuck} of those runs main"
            f" never moved; {len(merges)} merges, whose selection gain overstated the true test gain by"
            f" {_mean(over)} points on average"
            + (
                f" (the corrected gain in the record and merge message by {_mean(corrected)})"
                if corrected
                else ""
            )
        )


def _mean(values: Iterator[float] | list[float]) -> str:
    values = list(values)
    return f"{statistics.fmean(values):+.1f}" if values else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument(
        "--first-seed", type=int, default=0, help="seeds first-seed .. first-seed + seeds - 1"
    )
    parser.add_argument("--budgets", default="600,1500")
    parser.add_argument("--regime", default="helpful,hard", help="helpful, hard or both (comma-separated)")
    parser.add_argument("--tools", default="GEPA,harnessgit")
    parser.add_argument("--jobs", type=int, default=1, help="runs in parallel (processes)")
    parser.add_argument(
        "--wiring", choices=["command", "python"], default="command", help="how evolve calls the simulation"
    )
    parser.add_argument("--task", choices=sorted(TASKS), default="prompt", help="the simulated task")
    parser.add_argument(
        "--policy", help="[gate] policy for evolve, NAME or NAME:Q to set q (default: the configuration's)"
    )
    parser.add_argument("--out", type=Path, help="append every run to this file as a JSON line")
    parser.add_argument("--table", type=Path, nargs="+", help="print the table of runs saved with --out")
    parser.add_argument(
        "--quick", action="store_true", help="2 seeds, 300 rollouts, helpful only: a smoke run"
    )
    args = parser.parse_args()
    if args.table:
        saved = [
            Run(**json.loads(line)) for path in args.table for line in path.read_text().splitlines() if line
        ]
        print_table(saved)
        print_targets(saved)
        print_diagnosis(saved)
        return
    if args.quick:
        args.seeds, args.budgets, args.regime = 2, "300", "helpful"
    global WIRING, TASK, POLICY, sim
    # The pool's processes are forked: they see these.
    WIRING, TASK, POLICY = args.wiring, args.task, args.policy
    sim = importlib.import_module(TASKS[TASK])
    budgets = [int(b) for b in args.budgets.split(",")]
    regimes = args.regime.split(",")
    tools = args.tools.split(",")
    print(f"wirings agree on scores and proposals: {check_wirings()} cases checked", flush=True)
    seeds = range(args.first_seed, args.first_seed + args.seeds)
    jobs = [(t, s, g, b) for g in regimes for b in budgets for s in seeds for t in tools]
    started = time.perf_counter()
    runs = []
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for r in pool.map(one, jobs):
            runs.append(r)
            print(
                f"  {r.task:6} {r.regime:8} {r.label:10} {r.budget:5} seed {r.seed:2}: gain {r.gain:+6.2f}"
                f" adopted {r.adopted!s:5} iterations {r.iterations:4} rollouts {r.rollouts:5}"
                f" overhead {r.overhead_ms:7.1f} ms merges {[round(m['test_gain'], 1) for m in r.merges]}"
                f" withheld {len(r.withheld)}",
                flush=True,
            )
            if args.out:
                with args.out.open("a") as out:
                    out.write(json.dumps(dataclasses.asdict(r)) + "\n")
    print()
    print_table(runs)
    print_targets(runs)
    print_diagnosis(runs)
    print(f"\n{len(runs)} runs in {time.perf_counter() - started:.0f} s (--jobs {args.jobs})")


if __name__ == "__main__":
    main()
