"""Judging one commit for bisect: is it good or bad, by the scores of its harness?

A commit is bad when its mean on the split falls more than ``drop`` below the good
commit's, or under ``threshold``; with ``instances``, when any of them fails:
scores under ``threshold`` (default 1: anything short of full marks fails) or
more than ``drop`` below its score at the good commit. Stored, comparable scores
(the same cache key: harness tree, evaluator fingerprint, model) are used when
every judged instance has one; otherwise the commit's own tree is evaluated
through the cache (`harnessgit.evaluation.eval.evaluate`), which runs only what is
missing. `bisect` and `bisect-judge` share this. With a ``grader`` commit, every
commit's harness is scored with that commit's evaluator, so that scores on either
side of a regrade compare (docs/bisect.md, "Across a regrade").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError, UnknownRevision
from harnessgit.evaluation.batch import EvaluatorError
from harnessgit.evaluation.context import EvalContext, eval_context
from harnessgit.evaluation.eval import EvalRequest, Execution, evaluate
from harnessgit.evaluation.models import for_model
from harnessgit.evaluation.scores import TEST_SPLIT, ScoreBook, ScoreSummary
from harnessgit.evaluation.splits import Manifest, load_manifest
from harnessgit.render import points
from harnessgit.store import Refs, Store
from harnessgit.targets import resolve

# A drop of 5 points by default: below that, a selection set of a few hundred
# instances cannot tell a change from noise (docs/gate.md: the gate's minimum
# detectable effect is 6.4 points at n = 300, 11 at n = 100).
DEFAULT_DROP = 0.05
EPSILON = 1e-9  # means of 0/1 scores are exact fractions; this absorbs float rounding only

StepState = Literal["good", "bad", "skip"]
Source = Literal["stored", "evaluated", "failed"]


@dataclass(frozen=True)
class Criterion:
    """What "bad" means: a drop below good, or a threshold, on a split's mean or on instances."""

    split: str = "selection"
    instances: list[str] = field(default_factory=list)  # empty: judge the split's mean
    drop: float | None = None
    threshold: float | None = None

    @classmethod
    def build(
        cls, split: str, instances: list[str] | None, drop: float | None, threshold: float | None
    ) -> Criterion:
        if drop is not None and threshold is not None:
            raise HarnessgitError("--drop and --threshold exclude each other: give one")
        for name, value in (("--drop", drop), ("--threshold", threshold)):
            if value is not None and not 0 <= value <= 1:
                raise HarnessgitError(f"{name} {value} is outside [0, 1] (scores are in [0, 1])")
        if split == TEST_SPLIT:
            raise HarnessgitError(
                "the test split is held out: bisect on the selection or train split "
                "(add the failing instances to train if they are only in test)"
            )
        ids = list(dict.fromkeys(instances or []))
        if drop is None and threshold is None:
            if ids:
                threshold = 1.0
            else:
                drop = DEFAULT_DROP
        return cls(split=split, instances=ids, drop=drop, threshold=threshold)

    @property
    def per_instance(self) -> bool:
        return bool(self.instances)

    def ids(self, manifest: Manifest) -> list[str]:
        """The instances judged; an error for one that is not in the split."""
        ids = manifest.ids(self.split)
        if not self.instances:
            if not ids:
                raise HarnessgitError(f"split {self.split!r} has no instances")
            return ids
        known = set(ids)
        for instance in self.instances:
            if instance not in known:
                raise HarnessgitError(f"instance {instance!r} is not in split {self.split!r}")
        return list(self.instances)

    def describe(self) -> str:
        if self.per_instance:
            names = ", ".join(self.instances[:5])
            if len(self.instances) > 5:
                names += f" and {len(self.instances) - 5} more"
            subject = f"instance {names}" if len(self.instances) == 1 else f"any of instances {names}"
            if self.threshold == 1:
                return f"{subject} fails (scores under 1)"
            if self.threshold is not None:
                return f"{subject} scores under {self.threshold:g}"
            return f"{subject} scores more than {self.drop:g} below its score at good"
        if self.threshold is not None:
            return f"the {self.split} mean is under {points(self.threshold, False)} points"
        assert self.drop is not None
        return f"the {self.split} mean falls more than {points(self.drop, False)} points below good's"


@dataclass(frozen=True)
class Step:
    """One judged commit."""

    commit: str
    position: int  # 0 = good; 1..N = the first-parent chain after it, oldest first
    state: StepState
    source: Source  # stored scores, evaluated now, or the evaluation failed
    mean: float | None = None  # over the judged instances
    scores: dict[str, float] = field(default_factory=dict)  # per judged instance (with --instance)
    failing: list[str] = field(default_factory=list)  # the instances that make it bad (with --instance)
    reason: str = ""  # why it could not be judged
    model: str = ""  # the model label the scores are for


@dataclass(frozen=True)
class Baseline:
    """Good's scores, which a drop is measured from."""

    mean: float
    scores: dict[str, float]


def instance_scores(summary: ScoreSummary) -> dict[str, float]:
    """instance -> its mean over repeats, as the summary holds it."""
    return {instance: mean for instance, (mean, _cluster) in summary.scored().items()}


def verdict(
    criterion: Criterion, summary: ScoreSummary, baseline: Baseline | None
) -> tuple[StepState, list[str]]:
    """good or bad, and the failing instances; the summary must hold every judged instance."""
    assert summary.mean is not None
    if criterion.per_instance:
        failing = []
        for item in summary.instances:
            if criterion.threshold is not None:
                bad = item.mean < criterion.threshold - EPSILON
            else:
                assert criterion.drop is not None and baseline is not None
                bad = baseline.scores[item.instance] - item.mean > criterion.drop + EPSILON
            if bad:
                failing.append(item.instance)
        return ("bad" if failing else "good"), failing
    if criterion.threshold is not None:
        return ("bad" if summary.mean < criterion.threshold - EPSILON else "good"), []
    assert criterion.drop is not None and baseline is not None
    return ("bad" if baseline.mean - summary.mean > criterion.drop + EPSILON else "good"), []


class Judge:
    """Judges commits against one criterion, evaluating through the cache when
    scores are missing, and counts the evaluations it ran."""

    def __init__(
        self,
        store: Store,
        config: Config,
        criterion: Criterion,
        ids: list[str],
        *,
        book: ScoreBook | None = None,
        execution: Execution = Execution(),
        grader: str | None = None,
    ) -> None:
        self.store, self.config, self.criterion, self.ids = store, config, criterion, ids
        self.grader = grader  # every commit is scored with this commit's evaluator (`eval_context`)
        self.book = book if book is not None else ScoreBook.load(store)
        self.execution = execution
        self.evaluations = 0  # commits whose harness had to be evaluated
        self.baseline: Baseline | None = None

    def model_config(self, model: str | None) -> Config:
        """The configuration that evaluates for ``model`` (None: the judge's own)."""
        return self.config if model is None else for_model(self.config, model)

    def stored(self, commit: str, model: str | None = None) -> ScoreSummary | None:
        """The commit's scores on every judged instance, if they are all on record."""
        context = self.context(commit, model)
        summary = self.book.summary(context.key, self.criterion.split, self.ids)
        return None if summary.missing else summary

    def context(self, commit: str, model: str | None = None) -> EvalContext:
        """What judging ``commit`` evaluates: its harness, with the judge's grader, for ``model``."""
        return eval_context(self.store.objects, self.model_config(model), commit, grader=self.grader)

    def scores(self, commit: str, model: str | None = None) -> tuple[ScoreSummary, Source]:
        found = self.stored(commit, model)
        if found is not None:
            return found, "stored"
        result = evaluate(
            self.store,
            self.model_config(model),
            commit,
            EvalRequest(split=self.criterion.split, instances=self.ids, grader=self.grader),
            execution=self.execution,
            book=self.book,
        )
        if result.evaluated:
            self.evaluations += 1
        return result.summary, "evaluated"

    def set_baseline(self, summary: ScoreSummary) -> None:
        assert summary.mean is not None
        self.baseline = Baseline(mean=summary.mean, scores=instance_scores(summary))

    def judge(
        self,
        commit: str,
        position: int,
        *,
        summary: ScoreSummary | None = None,
        source: Source = "stored",
        model: str | None = None,
    ) -> Step:
        """Judge a commit for ``model`` (evaluating it if needed); an evaluator failure is a skip."""
        label = self.model_config(model).evaluator.model
        if summary is None:
            try:
                summary, source = self.scores(commit, model)
            except EvaluatorError as exc:
                return Step(
                    commit=commit,
                    position=position,
                    state="skip",
                    source="failed",
                    reason=str(exc),
                    model=label,
                )
        state, failing = verdict(self.criterion, summary, self.baseline)
        return Step(
            commit=commit,
            position=position,
            state=state,
            source=source,
            mean=summary.mean,
            scores=instance_scores(summary) if self.criterion.per_instance else {},
            failing=failing,
            model=label,
        )


def judged_commit(refs: Refs) -> str:
    """The commit `git bisect` asks about: BISECT_HEAD with --no-checkout, else HEAD."""
    try:
        return refs.resolve("BISECT_HEAD")
    except UnknownRevision:
        return refs.resolve("HEAD")


def judge_one(
    store: Store,
    config: Config,
    good: str,
    commit: str,
    criterion: Criterion,
    *,
    execution: Execution = Execution(),
    grader: str | None = None,
) -> Step:
    """`bisect-judge`: one commit against good's baseline (good evaluated once, then
    cached), each scored with ``grader``'s evaluator when one is given."""
    config = require_evaluator(config, "`harnessgit bisect`")
    manifest = load_manifest(store.root, config.splits.manifest)
    grader = resolve(store.refs, grader).sha if grader is not None else None
    judge = Judge(store, config, criterion, criterion.ids(manifest), execution=execution, grader=grader)
    if criterion.drop is not None:
        baseline, _source = judge.scores(good)
        judge.set_baseline(baseline)
    return judge.judge(commit, -1)
