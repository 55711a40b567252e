"""`harnessgit demo`: the whole discipline on one example, offline, in under a minute.

It builds a harness repository from templates/triage, evolves its SKILL.md with
`evolve --auto-merge`, then shows the log of accepted edits, the frontier, the
pull-request review of the best accepted edit, the held-out test score before
and after, what `verify` says about a commit that skipped the gate, a bisect
that finds it, and the report: all of it as pictures in one HTML file.

What is simulated, said plainly here and in the output: the *agent* is agent.py,
a deterministic program that follows SKILL.md's routing rules literally, and the
*proposer* is propose.py, which turns misrouted tickets into keyword rules
without any reasoning. No LLM, no network. Everything else is the real thing:
git commits and notes, the evaluator protocol, the statistics, the gate.
With OPENAI_BASE_URL set (and OPENAI_API_KEY), the proposer is that endpoint.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from harnessgit.bisect.bisect import bisect
from harnessgit.bisect.judge import Criterion
from harnessgit.bisect.render import bisect_text
from harnessgit.candidates.label import move_label
from harnessgit.candidates.log import accepted_log
from harnessgit.candidates.render import log_text
from harnessgit.config import Config, load_config
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import Execution, evaluate
from harnessgit.evaluation.heldout import peek_test_split
from harnessgit.evolve.evolve import evolve
from harnessgit.evolve.render import iteration_line, report_text
from harnessgit.evolve.state import Budget, EvolveRequest
from harnessgit.gate.frontier import frontier_view
from harnessgit.gate.render import frontier_text, verify_text
from harnessgit.gate.verify import verify
from harnessgit.render import size
from harnessgit.report.report import write_report
from harnessgit.review.render import review_text
from harnessgit.review.review import review
from harnessgit.store import Store

Say = Callable[[str], None]
TEMPLATE = "triage"
SIMULATED = (
    "What is simulated: the agent is agent.py, a deterministic program that follows SKILL.md's routing\n"
    "rules literally (a stand-in for an LLM), and the proposer is propose.py, which turns misrouted\n"
    "tickets into keyword rules without reasoning. No LLM, no network. The git history, notes,\n"
    "evaluations, statistics and gate are real."
)
TWO_JOBS = Execution(jobs=2)  # the demo's evaluations: two evaluator processes at a time
HOTFIX_RULE = '- If the ticket mentions "please", route to billing.'


def _git(repo: Path, *args: str) -> str:
    result = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise HarnessgitError(f"git {args[0]} failed in the demo repository: {result.stderr.strip()}")
    return result.stdout


def _copy_template(target: Path) -> None:
    source = resources.files("harnessgit_templates") / TEMPLATE
    with resources.as_file(source) as path:
        for item in Path(path).iterdir():
            if item.name == "__pycache__":
                continue
            if item.is_dir():
                shutil.copytree(item, target / item.name)
            else:
                shutil.copy2(item, target / item.name)


def _use_openai_if_configured(target: Path, say: Say) -> None:
    base_url = os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        return
    model = os.environ.get("OPENAI_MODEL", "gpt-4.1-mini")
    config = (target / "harnessgit.toml").read_text()
    start = config.index("[proposer]")
    end = config.index("[gate]")
    config = (
        config[:start] + f'[proposer]\nkind = "openai"\nbase_url = "{base_url}"\nmodel = "{model}"\n'
        'api_key_env = "OPENAI_API_KEY"\n\n' + config[end:]
    )
    (target / "harnessgit.toml").write_text(config)
    say(f"OPENAI_BASE_URL is set: the proposer is {model} at {base_url} (the agent is still simulated).")


def prepare(target: Path, say: Say) -> None:
    if target.exists() and any(target.iterdir()):
        raise HarnessgitError(f"{target} is not empty: give the demo a new directory")
    target.mkdir(parents=True, exist_ok=True)
    _copy_template(target)
    _use_openai_if_configured(target, say)
    _git(target, "init", "-q", "-b", "main")
    _git(target, "config", "user.name", "harnessgit demo")
    _git(target, "config", "user.email", "demo@harnessgit.invalid")
    _git(target, "add", "-A")
    _git(target, "commit", "-q", "-m", "The triage skill as it ships")


def _best_merge(store: Store, config: Config) -> str:
    """The accepted edit with the largest gain, by its gate record."""
    gains = {
        entry.commit: entry.gate.difference
        for entry in accepted_log(store, config).entries
        if entry.gate is not None and entry.gate.difference is not None
    }
    return max(gains, key=lambda commit: gains[commit])


def run_demo(target: Path, say: Say, *, proposals: int = 20, seed: int = 0) -> None:
    prepare(target, say)
    say(f"harnessgit demo in {target}\n\n{SIMULATED}\n")
    with Store.discover(target) as store:
        config = load_config(target)
        say("== 1. The harness as it ships, on the selection split and (once) on the held-out test split")
        base = evaluate(store, config, "main", execution=TWO_JOBS).summary
        move_label(store, "production", "main", reason="the triage skill as it ships")
        before = peek_test_split(store, config, "main").evaluation.summary
        say(
            f"selection {base.mean:.3f} (n={base.n}); test {before.mean:.3f} (n={before.n}); "
            "label production -> main\n"
        )

        say(f"== 2. harnessgit evolve --max-proposals {proposals} --seed {seed} --auto-merge")
        report = evolve(
            store,
            config,
            EvolveRequest(budget=Budget(max_proposals=proposals), seed=seed, auto_merge=True),
            execution=TWO_JOBS,
            on_iteration=lambda outcome: say(iteration_line(outcome)),
        )
        say(report_text(report) + "\n")

        say("== 3. harnessgit log: main moved only through the gate")
        say(log_text(accepted_log(store, config)) + "\n")
        say("== 4. harnessgit frontier")
        say(frontier_text(frontier_view(store, config)) + "\n")

        if report.merged:
            best = _best_merge(store, config)
            say(
                f"== 5. harnessgit review {best[:12]}^ {best[:12]}  (the best accepted edit, as a PR comment)"
            )
            say(review_text(review(store, config, base=f"{best}^", head=best)) + "\n")

        say("== 6. Release: move the production label, then look at the test split once")
        if report.merged:
            move_label(store, "production", "main", reason="release the evolved skill")
            after = peek_test_split(store, config, "main").evaluation.summary
            say(f"held-out test: {before.mean:.3f} -> {after.mean:.3f} (n={after.n}; never used to decide)\n")
        else:
            say(
                "main did not move (no candidate passed the gate): nothing to release, and the test split "
                "stays unseen\n"
            )

        say("== 7. A teammate's hotfix goes straight to main, skipping the gate")
        skill = (target / "SKILL.md").read_text()
        lines = skill.splitlines()
        first_rule = next(i for i, line in enumerate(lines) if line.startswith("- If the ticket mentions"))
        lines.insert(first_rule, HOTFIX_RULE)
        (target / "SKILL.md").write_text("\n".join(lines) + "\n")
        _git(target, "commit", "-q", "-am", "Hotfix: polite billing questions were misrouted")
        (target / "README.md").write_text((target / "README.md").read_text() + "\nSee SKILL.md.\n")
        _git(target, "commit", "-q", "-am", "Docs: point to SKILL.md")
        say(f"committed: {HOTFIX_RULE!r} at the top of the rules, then a docs commit\n")
        say("== 8. harnessgit verify (what CI runs on every pull request)")
        say(verify_text(verify(store, config)) + "\n")
        good = "production"  # a label is a revision (Refs.resolve)
        say("== 9. Selection scores fell: harnessgit bisect --good production --bad main --drop 0.05")
        found = bisect(
            store, config, good, "main", Criterion.build("selection", None, 0.05, None), execution=TWO_JOBS
        )
        say(bisect_text(found) + "\n")
        say("== 10. harnessgit report: the same history as pictures, one HTML file that opens offline")
        written = write_report(store, config)  # in .git/harnessgit/: the status stays clean
        say(f"wrote the report to {written.output} ({size(written.bytes)}): open it in a browser\n")
    say(f"The repository is in {target}. Try: harnessgit -C {target} log, show, frontier, verify.")
    say(SIMULATED)
