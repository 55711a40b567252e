"""Accepted history for review and bisect tests, built fast and with known effects.

The evaluator follows SKILL.md exactly, like tests/gating_fixtures.py (``LEVEL: N``
passes s-0..s-N-1, ``fix s-N`` passes s-N, ``break s-N`` fails it), and adds what a
review shows: feedback, a trajectory, and a failure class (``broken-rule`` for a
broken instance, ``missing-rule`` otherwise). When CALLS_FILE is set it appends the
evaluated commit to it, once per evaluator process, so tests count evaluations.

`build_history` writes N accepted edits straight through the store (commits, merge
commits, gate and override records in one transaction): building 64 through the
gate would run it 64 times, and no 64 real improvements fit one selection set.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from harnessgit import layout
from harnessgit.config import Config, load_config, parse_config
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.splits import parse_manifest
from harnessgit.records import GateRecord, OverrideRecord, ProposalRecord
from harnessgit.stats.decision import alpha_for_attempt, alpha_spent
from harnessgit.store import Blob, Store, Transaction
from tests.conftest import CONFIG, git
from tests.gating_fixtures import SPLITS, skill

EVALUATOR = """\
import json, os, re, sys
from pathlib import Path
calls = os.environ.get("CALLS_FILE")
if calls:
    with open(calls, "a") as handle:
        handle.write(os.environ["HARNESSGIT_COMMIT"] + "\\n")
skill = Path("SKILL.md").read_text()
level = int(re.search(r"LEVEL: (\\d+)", skill).group(1)) if "LEVEL:" in skill else 0
fixed = set(re.findall(r"fix (\\S+)", skill))
broken = set(re.findall(r"break (\\S+)", skill))
for line in sys.stdin:
    instance = line.strip()
    if not instance:
        continue
    number = int(instance.split("-")[1])
    good = (number < level or instance in fixed) and instance not in broken
    kind = None if good else ("broken-rule" if instance in broken else "missing-rule")
    print(json.dumps({"instance": instance, "score": 1.0 if good else 0.0,
                      "feedback": "ok" if good else f"{instance} failed: {kind}",
                      "failure_class": kind,
                      "trajectory": {"steps": ["read SKILL.md", f"looked up {instance}",
                                               "answered" if good else "gave up"]}}))
"""

# One evaluator process per commit (batch_size 60 > every split), so CALLS_FILE
# counts evaluations of commits, not batches.
HISTORY_CONFIG = (
    CONFIG.replace(
        'paths = ["SKILL.md", "prompts/*.md", "skills/**/SKILL.md"]',
        'paths = ["SKILL.md", "prompts/**", "skills/**/SKILL.md", "assets/**"]',
    )
    + "batch_size = 60\njobs = 1\n"
)


def history_files() -> dict[str, str | bytes]:
    return {"eval.py": EVALUATOR, "splits.json": json.dumps(SPLITS), "SKILL.md": skill(10)}


@pytest.fixture
def review_repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo(history_files(), config=HISTORY_CONFIG)


@dataclass(frozen=True)
class History:
    repo: Path
    good: str  # the initial commit, before harnessgit was set up
    chain: list[str]  # the first-parent chain after good, oldest first: chain[i - 1] is edit i


def edit_text(i: int, breaks_one: int, breaks_many: int) -> str:
    """SKILL.md after edit i: a new revision line each time; from edit ``breaks_one`` on,
    s-30..s-35 fixed and s-9 broken (a net gain that hides one regression); from edit
    ``breaks_many`` on, s-0..s-7 broken too (the planted regression of the mean)."""
    extra = [f"Revision {i}."]
    if i >= breaks_one:
        extra += [f"fix s-{n}" for n in range(30, 36)] + ["break s-9"]
    if i >= breaks_many:
        extra += [f"break s-{n}" for n in range(8)]
    return skill(10, *extra)


def build_history(
    repo: Path,
    count: int = 64,
    *,
    breaks_one: int = 20,
    breaks_many: int = 41,
    override_at: int | None = 41,
    direct: int = 3,
) -> History:
    """``count`` commits after the initial one: ``direct`` plain commits made before
    harnessgit was set up, one that adds harnessgit.toml, then merges of candidates
    with gate records (edit ``override_at`` lands as an ungated override instead)."""
    git(repo, "rm", "-q", "--cached", "harnessgit.toml")
    git(repo, "commit", "-q", "-m", "The harness before harnessgit")
    good = git(repo, "rev-parse", "HEAD").strip()
    config = parse_config(HISTORY_CONFIG.encode())
    chain: list[str] = []
    txn = Transaction("test history")
    with Store.discover(repo) as store:
        tip = good
        for i in range(1, count + 1):
            changes = {
                "SKILL.md": Blob(store.objects.write_blob(edit_text(i, breaks_one, breaks_many).encode()))
            }
            if i == direct + 1:
                changes["harnessgit.toml"] = Blob(store.objects.write_blob(HISTORY_CONFIG.encode()))
            tree = store.objects.edit_tree(store.objects.commit_info(tip).tree, changes)
            if i <= direct + 1:
                tip = store.objects.write_commit(tree, [tip], f"Edit {i} by hand")
                chain.append(tip)
                continue
            candidate = f"{i:012x}"
            rationale = f"Edit {i}\n\nThe trajectories asked for revision {i}."
            cand = store.objects.write_commit(
                tree, [tip], f"{rationale}\n\n{layout.CANDIDATE_TRAILER}: {candidate}"
            )
            merge = store.objects.write_commit(tree, [tip, cand], f"Merge candidate {candidate}: Edit {i}")
            txn.append(
                layout.NOTES_EVIDENCE,
                cand,
                [
                    ProposalRecord(
                        ts=store.clock(),
                        candidate=candidate,
                        parent=tip,
                        components=["SKILL.md"],
                        rationale=rationale,
                        source="api",
                    )
                ],
            )
            if i == override_at:
                record: GateRecord | OverrideRecord = OverrideRecord(
                    ts=store.clock(),
                    commit=merge,
                    candidate=candidate,
                    action="hotfix",
                    reason="production incident",
                    author="Test Author <test@example.com>",
                )
            else:
                record = _gate_record(store, config, tip, cand, merge, candidate, i, breaks_one)
            txn.append(layout.NOTES_GATE, merge, [record])
            tip = merge
            chain.append(merge)
        txn.move(layout.branch_ref("main"), tip, good)
        store.refs.commit(txn)
    git(repo, "reset", "-q", "--hard", "main")
    assert load_config(repo).present
    return History(repo, good, chain)


def _gate_record(
    store: Store, config: Config, base: str, cand: str, merge: str, candidate: str, i: int, breaks_one: int
) -> GateRecord:
    """A passing gate record with the numbers the evaluator gives: a +12.5-point net
    gain with s-9 regressed at ``breaks_one``, a small gain elsewhere."""
    base_ctx, cand_ctx = eval_context(store.objects, config, base), eval_context(store.objects, config, cand)
    net = i == breaks_one
    return GateRecord(
        ts=store.clock(),
        candidate=candidate,
        commit=cand,
        tree=store.objects.commit_info(cand).tree,
        base=base,
        base_branch="main",
        harness=cand_ctx.key.harness,
        base_harness=base_ctx.key.harness,
        fingerprint=cand_ctx.key.fingerprint,
        model=cand_ctx.key.model,
        split="selection",
        split_hash=parse_manifest(json.dumps(SPLITS).encode()).split_hash("selection"),
        passed=True,
        reasons=[],
        method="bootstrap",
        attempt=1,
        alpha=0.05,
        alpha_k=alpha_for_attempt(0.05, 1),
        alpha_spent=alpha_spent(0.05, 1),
        min_effect=0.0,
        min_instances=30,
        allow_small=False,
        seed=0,
        resamples=10_000,
        n=40,
        base_mean=0.25 if net else 0.4,
        candidate_mean=0.375 if net else 0.45,
        difference=0.125 if net else 0.05,
        ci_low=0.02,
        ci_high=0.2,
        lower_bound=0.03,
        p_value=0.01,
        mde=0.19,
        wins=6 if net else 2,
        losses=1 if net else 0,
        ties=33 if net else 38,
        regressed=["s-9"] if net else [],
        regressed_count=1 if net else 0,
        merge=merge,
    )


def expected_score(skill_text: str, instance: str) -> float:
    """What EVALUATOR scores ``instance`` on a SKILL.md (a mirror, checked against it in
    tests/test_bisect.py)."""
    import re

    found = re.search(r"LEVEL: (\d+)", skill_text)
    level = int(found.group(1)) if found else 0
    fixed = set(re.findall(r"fix (\S+)", skill_text))
    broken = set(re.findall(r"break (\S+)", skill_text))
    number = int(instance.split("-")[1])
    return 1.0 if (number < level or instance in fixed) and instance not in broken else 0.0


def store_scores(repo: Path, commits: list[str], split: str = "selection") -> None:
    """Record the scores EVALUATOR would give every commit, without running it: what
    a teammate's evaluations fetched from the remote look like."""
    from harnessgit.records import EvalRecord

    config = load_config(repo)
    manifest = parse_manifest((repo / "splits.json").read_bytes())
    ids = manifest.ids(split)
    txn = Transaction("test scores")
    with Store.discover(repo) as store:
        for commit in commits:
            context = eval_context(store.objects, config, commit)
            text = (store.objects.file_at(context.tree, "SKILL.md") or b"").decode()
            scores = [expected_score(text, instance) for instance in ids]
            record = EvalRecord(
                ts=store.clock(),
                commit=commit,
                harness=context.key.harness,
                fingerprint=context.key.fingerprint,
                model=context.key.model,
                split=split,
                split_hash=manifest.split_hash(split),
                manifest=manifest.hash,
                instances=ids,
                repeats=[0] * len(ids),
                scores=scores,
                wall_time=0.0,
                worker="test",
            )
            txn.append(layout.NOTES_EVALS, commit, [record])
        store.refs.commit(txn)
