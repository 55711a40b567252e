"""How evaluations and scores look, and the progress display while evaluating."""

from __future__ import annotations

import json
import sys
import time
from typing import TYPE_CHECKING, TextIO

from harnessgit.render import short, table

# Named for type checking only: `scores` should not import the evaluation runner (its
# executors, process groups and adapters) to print stored scores (issue 17).
if TYPE_CHECKING:
    from harnessgit.evaluation.eval import Evaluation
    from harnessgit.evaluation.heldout import HeldOutResult
    from harnessgit.evaluation.scores import ScoreSummary
    from harnessgit.evaluation.trajectory import Trajectories


class ProgressDisplay:
    """A bar redrawn in place on a terminal; a plain line per step otherwise."""

    def __init__(self, label: str, stream: TextIO | None = None, width: int = 30) -> None:
        # sys.stderr as it is now, not as it was at import: a caller may have replaced it.
        self.stream = stream if stream is not None else sys.stderr
        self.label, self.width = label, width
        self.tty = self.stream.isatty()
        self.started = time.monotonic()
        self._last = -1

    def __call__(self, done: int, total: int) -> None:
        if total == 0 or done == self._last:
            return
        self._last = done
        elapsed = time.monotonic() - self.started
        if self.tty:
            filled = int(self.width * done / total)
            bar = "#" * filled + "." * (self.width - filled)
            end = "\n" if done >= total else ""
            self.stream.write(f"\r{self.label} [{bar}] {done}/{total} {elapsed:5.1f}s{end}")
        elif done:
            self.stream.write(f"{self.label}: {done}/{total} instances ({elapsed:.1f}s)\n")
        self.stream.flush()


def _mean(summary: ScoreSummary) -> str:
    if summary.mean is None:
        return "no scores"
    se = f" ± {summary.stderr:.3f} (SE)" if summary.stderr is not None else ""
    return f"mean {summary.mean:.3f}{se}, n={summary.n}"


def evaluation_text(evaluation: Evaluation) -> str:
    e = evaluation
    ran = f"{e.evaluated} run in {e.batches} evaluator batch{'es' if e.batches != 1 else ''}"
    lines = [
        f"{e.split} on {short(e.commit)} (model {e.model}"
        + (f", {short(e.grader)}'s evaluator" if e.grader else "")
        + f"): {_mean(e.summary)}",
        f"  {e.requested} results: {e.cached} from the record, {ran}, {e.wall_time:.1f}s",
    ]
    if e.summary.missing:
        lines.append(f"  {len(e.summary.missing)} instances without a score")
    return "\n".join(lines)


def scores_text(summary: ScoreSummary, commit: str) -> str:
    rows = [
        [
            item.instance,
            f"{item.mean:.3f}",
            " ".join(f"{s:g}" for s in item.scores),
            item.cluster or "-",
            item.failure_class or "-",
        ]
        for item in summary.instances
    ]
    lines = [
        f"{summary.split} scores of {short(commit)} (model {summary.model}, "
        f"evaluator {short(summary.fingerprint)}, harness {short(summary.harness)})"
    ]
    if rows:
        lines.append(table(rows, ["instance", "mean", "score per repeat", "cluster", "failure class"]))
    lines.append(_mean(summary))
    if summary.missing:
        lines.append(
            f"{len(summary.missing)} instances have no score: "
            f"run `harnessgit eval {short(commit)} --split {summary.split}`"
        )
    if summary.records:
        lines.append(
            f"from {len(summary.records)} evaluation records on "
            + ", ".join(short(c) for c in summary.commits)
        )
    return "\n".join(lines)


def heldout_text(result: HeldOutResult) -> str:
    text = evaluation_text(result.evaluation)
    note = " (forced: the test split had been seen for another harness)" if result.peek.forced else ""
    return text + f"\n  recorded as a test-split peek{note}; no automatic decision reads it"


def trajectory_text(found: Trajectories) -> str:
    lines = []
    for repeat in found.repeats:
        lines.append(
            f"{found.instance} repeat {repeat.repeat}: score {repeat.score:g}"
            + (f", {repeat.failure_class}" if repeat.failure_class else "")
        )
        if repeat.feedback:
            lines.append(f"  feedback: {repeat.feedback}")
        if repeat.trajectory is not None:
            text = repeat.trajectory
            lines.append("  trajectory: " + (text if isinstance(text, str) else json.dumps(text, indent=2)))
    return "\n".join(lines)
