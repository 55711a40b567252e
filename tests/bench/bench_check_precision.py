"""Precision of `harnessgit check` on real skill and prompt repositories (issue 14).

Replays real edits from the history of public skill/prompt repositories, each the way
the pre-commit hook or the gate sees it: `harnessgit check --rev C --json` in a clone,
the commit against its first parent. Then checks every harness file at the pinned head
(`--all --rev HEAD --against HEAD`: no history rules). Findings are matched against the
verdicts in tests/bench/check_judgments.jsonl (judged by reading the files); findings
without a verdict are counted as unjudged, never guessed.

Run from the repository root (the checked code is the one on PYTHONPATH, or --code):

    .venv/bin/python tests/bench/bench_check_precision.py                 # ~3-5 minutes
    .venv/bin/python tests/bench/bench_check_precision.py --limit 10      # quicker
    .venv/bin/python tests/bench/bench_check_precision.py --code /tmp/i14/flow --save out.json
    .venv/bin/python tests/bench/bench_check_precision.py --load out.json --unjudged todo.jsonl

The repositories are bare mirrors (the `fetch` tool's /work/.mirror/OWNER+NAME/repo, or
--mirrors); each is pinned to the commit below so the sample stays the same. Prints, per
rule: findings (failures, warnings), judged, judged false, false rate; edits blocked;
edits blocked only by failures their parent already had; collapse findings on edits that
keep at least half the characters; and the targets. Not a test: it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
JUDGMENTS = Path(__file__).with_name("check_judgments.jsonl")
JUDGMENTS_HELDOUT = Path(__file__).with_name("check_judgments_heldout.jsonl")
MIRRORS = Path("/work/.mirror")
RULES = ("length", "growth", "collapse", "format", "duplication", "edit-size")
STATIC_RULES = ("length", "format", "duplication")  # a parent can already have these

# A kind for agent, command and instruction files: Markdown structure and the history
# rules, but no length limit (no published limit for them, unlike SKILL.md and prompts).
AGENT_KIND = '[checks.kinds.agent-prompt]\nformat = "markdown"\npaths = [{paths}]\n'


@dataclass(frozen=True)
class Repo:
    name: str  # owner/name on GitHub
    head: str  # the pinned commit
    licence: str
    globs: tuple[str, ...]  # the harness files: git pathspec globs and [harness] paths
    toml: str = ""  # the rest of harnessgit.toml ([checks] kinds)
    heldout: bool = False  # never looked at while tuning: only in --sample heldout, all of it

    @property
    def mirror(self) -> str:
        return self.name.replace("/", "+")

    def config(self) -> str:
        paths = ", ".join(json.dumps(glob) for glob in self.globs)
        return f"[harness]\npaths = [{paths}]\n\n{self.toml}"


def _agent_kind(*globs: str) -> str:
    return AGENT_KIND.format(paths=", ".join(json.dumps(glob) for glob in globs))


# Harness globs per repository: the files an agent loads as instructions.
REPOS: tuple[Repo, ...] = (
    Repo(
        "anthropics/skills",
        "9d2f1ae187231d8199c64b5b762e1bdf2244733d",
        "Apache-2.0 per skill (LICENSE.txt in each folder); docx/pdf/pptx/xlsx source-available, not open",
        ("**/SKILL.md",),
    ),
    Repo(
        "obra/superpowers",
        "44c9b2d6e889982ac18c27d05a19fefe335194e1",
        "MIT",
        ("**/SKILL.md", "commands/*.md", "agents/*.md"),
        _agent_kind("commands/*.md", "agents/*.md"),
    ),
    Repo(
        "wshobson/agents",
        "367cb6a4a182cf7e9b0a17c9429f7411ddd9cf35",
        "MIT",
        ("**/SKILL.md", "agents/*.md", "plugins/*/agents/*.md", "plugins/*/commands/*.md", "workflows/*.md"),
        _agent_kind("agents/*.md", "plugins/*/agents/*.md", "plugins/*/commands/*.md", "workflows/*.md"),
    ),
    Repo(
        "github/awesome-copilot",
        "ab7544d03d4c49fdd07f5958e1888ad39c4118e2",
        "MIT",
        ("**/SKILL.md", "prompts/**", "instructions/*.md", "chatmodes/*.md", "agents/*.md"),
        _agent_kind("instructions/*.md", "chatmodes/*.md", "agents/*.md"),
    ),
    Repo(
        "K-Dense-AI/claude-scientific-skills",
        "899a51bfbd63218153b272c9459dcb4a7ae88da6",
        "MIT",
        ("**/SKILL.md",),
    ),
    Repo(
        "danielmiessler/fabric",
        "272f04dd3278f99bee49e94a7747b54708745a5d",
        "MIT",
        ("patterns/*/system.md", "data/patterns/*/system.md"),
        # fabric's patterns are system prompts: the built-in prompt kind, on their paths.
        '[checks.kinds.prompt]\npaths = ["patterns/*/system.md", "data/patterns/*/system.md"]\n',
    ),
    # Held out: fetched after the rules were tuned, judged only in the held-out sample.
    Repo(
        "VoltAgent/awesome-claude-code-subagents",
        "c9e51ec0b3d43f5dcdd0b558a6cd28ba6ada97c1",
        "MIT",
        ("categories/*/[a-z]*.md",),  # the subagents; not the category README.md listings
        _agent_kind("categories/*/[a-z]*.md"),
        heldout=True,
    ),
)


def git(repo: Path, *args: str, check: bool = True) -> str:
    done = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=False)
    if check and done.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def clone(repo: Repo, mirrors: Path, into: Path) -> Path:
    """A clone that shares the mirror's objects, no checkout, with our harnessgit.toml."""
    target = into / repo.mirror
    subprocess.run(
        [
            "git",
            "clone",
            "--quiet",
            "--shared",
            "--no-checkout",
            str(mirrors / repo.mirror / "repo"),
            str(target),
        ],
        check=True,
    )
    git(target, "checkout", "--quiet", "--detach", repo.head, "--", "harnessgit.toml", check=False)
    git(target, "update-ref", "--no-deref", "HEAD", repo.head)
    (target / "harnessgit.toml").write_text(repo.config())
    return target


def sample(path: Path, repo: Repo, limit: int, which: str = "dev") -> list[tuple[str, str]]:
    """Up to ``limit`` first-parent commits touching harness files, spread evenly over
    the history (oldest first), each with its first parent.

    "dev" is the development sample the rules were tuned on; "heldout" takes the
    midpoints between its commits instead (never one of them), so the held-out figures
    come from edits nobody looked at while tuning."""
    specs = [f":(glob){glob}" for glob in repo.globs]
    lines = git(path, "rev-list", "--first-parent", "--parents", repo.head, "--", *specs).splitlines()
    edits = [(parts[0], parts[1]) for line in lines if len(parts := line.split()) >= 2]
    edits.reverse()
    step = len(edits) / limit if len(edits) > limit else 1.0
    dev = [int(i * step) for i in range(min(limit, len(edits)))]
    if which == "dev":
        return [edits[i] for i in dev]
    taken = set(dev)
    mids = sorted({int((i + 0.5) * step) for i in range(min(limit, len(edits)))} - taken)
    return [edits[i] for i in mids if i < len(edits)]


def run_check(code: Path, cwd: Path, args: list[str]) -> tuple[int, dict[str, Any] | None, str]:
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, "-m", "harnessgit", "check", "--json", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    try:
        return done.returncode, json.loads(done.stdout), done.stderr.strip()
    except json.JSONDecodeError:
        return done.returncode, None, (done.stderr or done.stdout).strip()[-300:]


def blob_text(path: Path, rev: str, name: str) -> str | None:
    done = subprocess.run(["git", "-C", str(path), "show", f"{rev}:{name}"], capture_output=True, check=False)
    if done.returncode != 0:
        return None
    return done.stdout.decode("utf-8", "replace")


def _blocks(finding: dict[str, Any]) -> bool:
    # Before the ratchet every finding is "new"; "existing" and "suppressed" never block.
    return finding["level"] == "failure" and finding.get("state", "new") == "new"


def _worse(new: Any, old: Any) -> bool:
    if isinstance(new, (int, float)) and isinstance(old, (int, float)):
        return bool(new > old)
    return False


def replay_edit(code: Path, path: Path, repo: Repo, commit: str, parent: str) -> dict[str, Any]:
    """One commit as the hook sees it, plus what its blocking failures were in the parent."""
    rc, report, err = run_check(code, path, ["--rev", commit])
    edit: dict[str, Any] = {"repo": repo.name, "commit": commit, "parent": parent, "rc": rc}
    if report is None:
        edit["error"] = err
        return edit
    edit["report"] = report
    blocking = [f for f in report["findings"] if _blocks(f)]
    if blocking:
        edit["parent_failures"] = _parent_failures(code, path, report, parent, blocking)
    edit["sizes"] = _collapse_sizes(path, report, parent, commit)
    return edit


def _parent_failures(
    code: Path, path: Path, report: dict[str, Any], parent: str, blocking: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The static failures of the parent's version of each file that blocks now."""
    old_names = {f["path"]: f.get("old_path") or f["path"] for f in report["files"]}
    names = sorted(
        {old_names.get(f["path"], f["path"]) for f in blocking if f["path"] and f["rule"] in STATIC_RULES}
    )
    present = [name for name in names if _exists(path, parent, name)]
    if not present:
        return []
    rules = [arg for rule in STATIC_RULES for arg in ("--rule", rule)]
    _rc, old, _err = run_check(code, path, ["--rev", parent, "--against", parent, *rules, "--", *present])
    if old is None:
        return []
    return [f for f in old["findings"] if f["level"] == "failure"]


def _exists(path: Path, rev: str, name: str) -> bool:
    probe = ["git", "-C", str(path), "cat-file", "-e", f"{rev}:{name}"]
    return subprocess.run(probe, capture_output=True, check=False).returncode == 0


def _collapse_sizes(path: Path, report: dict[str, Any], parent: str, commit: str) -> dict[str, list[int]]:
    """Characters before and after for each file with a collapse finding."""
    sizes = {}
    old_names = {f["path"]: f.get("old_path") or f["path"] for f in report["files"]}
    for finding in report["findings"]:
        if finding["rule"] != "collapse" or not finding["path"]:
            continue
        name = finding["path"]
        old = blob_text(path, parent, old_names.get(name, name))
        new = blob_text(path, commit, name)
        if old is not None and new is not None:
            sizes[name] = [len(old), len(new)]
    return sizes


def check_all(code: Path, path: Path, repo: Repo) -> dict[str, Any]:
    rc, report, err = run_check(code, path, ["--all", "--rev", repo.head, "--against", repo.head])
    out: dict[str, Any] = {"repo": repo.name, "commit": repo.head, "rc": rc, "mode": "all"}
    if report is None:
        out["error"] = err
    else:
        out["report"] = report
    return out


# ---------------------------------------------------------------- judging and figures

_NUMBER = re.compile(r"\d[\d,.]*")


def message_key(finding: dict[str, Any]) -> str:
    """A short stable key for one finding of a file: rule, measure and the message with
    numbers dropped (so a judgment survives a file growing by a line)."""
    message = _NUMBER.sub("#", finding["message"].lower())
    return f"{finding['rule']}|{finding['measure']}|{' '.join(message.split())[:90]}"


def identity(repo: str, commit: str, finding: dict[str, Any]) -> tuple[str, str, str, str, str]:
    return (repo, commit[:12], finding["path"] or "", finding["rule"], message_key(finding))


def load_judgments(path: Path) -> dict[tuple[str, str, str, str, str], dict[str, Any]]:
    judged = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip():
                entry = json.loads(line)
                judged[(entry["repo"], entry["commit"][:12], entry["path"], entry["rule"], entry["key"])] = (
                    entry
                )
    return judged


@dataclass
class Tally:
    findings: Counter[tuple[str, str]] = field(default_factory=Counter)  # (rule, level)
    states: Counter[tuple[str, str, str]] = field(default_factory=Counter)  # (rule, level, state)
    judged: Counter[tuple[str, str]] = field(default_factory=Counter)
    false: Counter[tuple[str, str]] = field(default_factory=Counter)
    unjudged: list[dict[str, Any]] = field(default_factory=list)
    # The same finding on the same file recurs in every replayed edit of that file: also
    # count each (repo, path, rule, key) once, with its verdict (any "false" wins).
    distinct: dict[tuple[str, str], dict[tuple[str, ...], str | None]] = field(
        default_factory=lambda: defaultdict(dict)
    )

    def add(
        self, repo: str, commit: str, finding: dict[str, Any], judgments: dict[Any, Any], where: str
    ) -> None:
        key = (finding["rule"], finding["level"])
        self.findings[key] += 1
        self.states[(*key, finding.get("state", "new"))] += 1
        verdict = judgments.get(identity(repo, commit, finding))
        once = self.distinct[key]
        ident_once = identity(repo, "", finding)
        if verdict is not None or ident_once not in once:
            old = once.get(ident_once)
            now = verdict["verdict"] if verdict else None
            once[ident_once] = "false" if "false" in (old, now) else (now or old)
        if verdict is None:
            ident = identity(repo, commit, finding)
            self.unjudged.append(
                {
                    "where": where,
                    "repo": repo,
                    "commit": commit,
                    "path": ident[2],
                    "rule": ident[3],
                    "key": ident[4],
                    "finding": finding,
                }
            )
            return
        self.judged[key] += 1
        if verdict["verdict"] == "false":
            self.false[key] += 1


def score(results: dict[str, Any], judgments: dict[Any, Any]) -> dict[str, Any]:
    tally = Tally()
    edits = blocked = preexisting_only = worsened_only = errors = 0
    collapse_kept = collapse_total = 0
    preexisting_examples = []
    for edit in results["edits"]:
        if "report" not in edit:
            errors += 1
            continue
        edits += 1
        findings = edit["report"]["findings"]
        for finding in findings:
            tally.add(edit["repo"], edit["commit"], finding, judgments, "edit")
        blocking = [f for f in findings if _blocks(f)]
        if blocking:
            blocked += 1
            kind = _preexisting(edit, blocking)
            if kind == "same":
                preexisting_only += 1
                preexisting_examples.append(f"{edit['repo']} {edit['commit'][:12]}")
            elif kind == "worse":
                worsened_only += 1
        for finding in findings:
            if finding["rule"] == "collapse":
                collapse_total += 1
                old, new = edit["sizes"].get(finding["path"], [0, 0])
                if old and new * 2 >= old:
                    collapse_kept += 1
    for run in results["all"]:
        if "report" not in run:
            errors += 1
            continue
        for finding in run["report"]["findings"]:
            tally.add(run["repo"], run["commit"], finding, judgments, "all")
    return {
        "tally": tally,
        "edits": edits,
        "errors": errors,
        "blocked": blocked,
        "preexisting_only": preexisting_only,
        "preexisting_examples": preexisting_examples,
        "worsened_only": worsened_only,
        "collapse_total": collapse_total,
        "collapse_kept_half": collapse_kept,
    }


def _preexisting(edit: dict[str, Any], blocking: list[dict[str, Any]]) -> str:
    """ "same": every blocking failure is one the parent's file already had, no worse;
    "worse": the same, but at least one got worse; "": some failure is new."""
    old_names = {f["path"]: f.get("old_path") or f["path"] for f in edit["report"]["files"]}
    before = {(f["path"], f["rule"], f["measure"]): f["value"] for f in edit.get("parent_failures", [])}
    worse = False
    for finding in blocking:
        if finding["rule"] not in STATIC_RULES or not finding["path"]:
            return ""
        key = (old_names.get(finding["path"], finding["path"]), finding["rule"], finding["measure"])
        if key not in before:
            return ""
        worse = worse or _worse(finding["value"], before[key])
    return "worse" if worse else "same"


def _rate(false: int, judged: int) -> str:
    return f"{100 * false / judged:.0f}%" if judged else "-"


def print_figures(results: dict[str, Any], figures: dict[str, Any]) -> None:
    tally: Tally = figures["tally"]
    print(f"code: {results['code']}  sample: {results.get('sample', 'dev')}  ({results['seconds']:.0f} s)")
    for name, info in results["repos"].items():
        print(
            f"  {name} @ {info['head'][:12]} ({info['licence']}): {info['edits']} edits replayed, "
            f"{info['all_files']} harness files at head"
        )
    print()
    header = (
        f"{'rule':<12} {'level':<8} {'findings':>8} {'new':>5} {'exist':>5} {'suppr':>5} "
        f"{'judged':>6} {'false':>5} {'false%':>6} | {'distinct':>8} {'judged':>6} {'false':>5} {'false%':>6}"
    )
    print(header)
    print("-" * len(header))
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for rule in RULES:
        for level in ("failure", "warning"):
            key = (rule, level)
            if not tally.findings[key]:
                continue
            states = [tally.states[(rule, level, s)] for s in ("new", "existing", "suppressed")]
            judged, false = tally.judged[key], tally.false[key]
            counts = f"{tally.findings[key]:>8} {states[0]:>5} {states[1]:>5} {states[2]:>5}"
            once = list(tally.distinct[key].values())
            d_judged, d_false = sum(v is not None for v in once), once.count("false")
            distinct = f"{len(once):>8} {d_judged:>6} {d_false:>5} {_rate(d_false, d_judged):>6}"
            rates = f"{judged:>6} {false:>5} {_rate(false, judged):>6}"
            print(f"{rule:<12} {level:<8} {counts} {rates} | {distinct}")
            totals[f"distinct {level}"] = [
                a + b
                for a, b in zip(totals[f"distinct {level}"], (len(once), d_judged, d_false), strict=True)
            ]
            totals[level][0] += tally.findings[key]
            totals[level][1] += tally.judged[key]
            totals[level][2] += tally.false[key]
    print()
    fail, warn = totals["failure"], totals["warning"]
    unjudged = Counter((u["rule"], u["finding"]["level"]) for u in tally.unjudged)
    for level, (found, judged, false), target in (("failures", fail, "5%"), ("warnings", warn, "20%")):
        found_d, judged_d, false_d = totals[f"distinct {level[:-1]}"]
        print(
            f"{level}: {found} ({judged} judged, {false} false: {_rate(false, judged)}; target <= {target}); "
            f"distinct: {found_d} ({judged_d} judged, {false_d} false: {_rate(false_d, judged_d)})"
        )
    print(
        f"unjudged: {len(tally.unjudged)} "
        + ", ".join(f"{r} {lv} {n}" for (r, lv), n in sorted(unjudged.items()))
    )
    print(f"edits replayed: {figures['edits']} (errors: {figures['errors']}); blocked: {figures['blocked']}")
    print(
        f"blocked only by failures the parent already had (no worse): {figures['preexisting_only']} "
        f"(target 0); only by such failures made worse: {figures['worsened_only']}"
    )
    if figures["preexisting_examples"]:
        print("  e.g. " + ", ".join(figures["preexisting_examples"][:5]))
    print(
        f"collapse findings: {figures['collapse_total']}; on edits keeping >= half the characters: "
        f"{figures['collapse_kept_half']} (target 0)"
    )


def run_all(args: argparse.Namespace) -> dict[str, Any]:
    code = Path(args.code).resolve()
    results: dict[str, Any] = {"code": str(code), "sample": args.sample, "edits": [], "all": [], "repos": {}}
    start = time.perf_counter()
    wanted = [
        repo
        for repo in REPOS
        if (not args.repo or repo.name in args.repo) and (args.sample == "heldout" or not repo.heldout)
    ]
    with tempfile.TemporaryDirectory(prefix="hg-precision-") as tmp, ThreadPoolExecutor(args.jobs) as pool:
        for repo in wanted:
            if not (Path(args.mirrors) / repo.mirror / "repo").is_dir():
                print(f"skipped {repo.name}: no mirror under {args.mirrors}", file=sys.stderr)
                continue
            path = clone(repo, Path(args.mirrors), Path(tmp))
            edits = sample(path, repo, args.limit, "dev" if repo.heldout else args.sample)
            replayed = list(
                pool.map(replay_edit, *zip(*[(code, path, repo, *pair) for pair in edits], strict=True))
            )
            results["edits"] += replayed
            # The head's files are part of the development sample: held out, edits only.
            head = check_all(code, path, repo) if args.sample == "dev" or repo.heldout else {}
            if head:
                results["all"].append(head)
            results["repos"][repo.name] = {
                "head": repo.head,
                "licence": repo.licence,
                "edits": len(replayed),
                "all_files": len(head.get("report", {}).get("files", [])),
            }
            print(f"{repo.name}: {len(replayed)} edits, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    results["seconds"] = time.perf_counter() - start
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--code",
        default=os.environ.get("PYTHONPATH", "").split(":")[0] or str(ROOT),
        help="the harnessgit checkout to measure (default: PYTHONPATH, else this one)",
    )
    parser.add_argument("--mirrors", default=str(MIRRORS), help="where OWNER+NAME/repo mirrors are")
    parser.add_argument("--limit", type=int, default=40, help="edits replayed per repository")
    parser.add_argument("--repo", action="append", help="only this repository (owner/name; repeatable)")
    parser.add_argument("--jobs", type=int, default=2, help="checks run at once")
    parser.add_argument(
        "--sample",
        choices=("dev", "heldout"),
        default="dev",
        help="dev: the commits the rules were tuned on (and the head); heldout: the midpoints "
        "between them, edits only",
    )
    parser.add_argument(
        "--judgments",
        action="append",
        help="the verdicts (JSON lines; repeatable; default: check_judgments.jsonl for dev, "
        "check_judgments_heldout.jsonl for heldout)",
    )
    parser.add_argument("--save", help="write the raw results here (JSON)")
    parser.add_argument("--load", help="score saved results instead of running")
    parser.add_argument("--unjudged", help="write the unjudged findings here (JSON lines)")
    args = parser.parse_args()
    results = json.loads(Path(args.load).read_text()) if args.load else run_all(args)
    if args.save:
        Path(args.save).write_text(json.dumps(results))
    default = JUDGMENTS if results.get("sample", "dev") == "dev" else JUDGMENTS_HELDOUT
    judgments: dict[Any, Any] = {}
    for name in args.judgments or [str(default)]:
        judgments.update(load_judgments(Path(name)))
    figures = score(results, judgments)
    print_figures(results, figures)
    if args.unjudged:
        with open(args.unjudged, "w") as out:
            for entry in figures["tally"].unjudged:
                out.write(json.dumps(entry) + "\n")


if __name__ == "__main__":
    main()
