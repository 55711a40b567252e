"""`harnessgit bisect --good-model OLD --bad-model NEW`: which checkpoint broke it?

The same search as over commits (`bisect.search`), along the other axis: the harness
stays fixed (default: the base branch's tip) and the points are the registered
checkpoint lineage from NEW back to OLD (`harnessgit model add NAME --parent ...`,
`evaluation.lineage`), each judged for its own model label (the evaluator hears it as
HARNESSGIT_MODEL). Stored scores come first; N checkpoints cost at most
ceil(log2 N) + 2 evaluations. The first bad checkpoint is named with its lineage
note: the weights change that caused the regression at this harness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from harnessgit.bisect.explain import OwnEffect, own_effect
from harnessgit.bisect.judge import Criterion, Judge, Step
from harnessgit.bisect.search import Point, bound, judge_ends, judge_stored, search
from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.eval import Execution
from harnessgit.evaluation.lineage import check_label, lineage, registered
from harnessgit.evaluation.splits import load_manifest
from harnessgit.records import ModelRecord
from harnessgit.store import Store
from harnessgit.targets import resolve

Outcome = Literal["found", "ambiguous", "bad is good", "good is bad"]


@dataclass(frozen=True)
class FirstBadCheckpoint:
    model: str
    position: int
    parent: str  # the checkpoint just before it in the lineage: judged good
    note: str  # what changed in the weights, as registered
    author: str
    registered: str  # the base tip when it was registered
    before: Step
    after: Step
    own: OwnEffect  # the checkpoint against its parent, at the fixed harness


@dataclass(frozen=True)
class CheckpointBisectResult:
    harness: str  # the commit whose harness every checkpoint was judged with
    good_model: str
    bad_model: str
    lineage: list[str]  # good_model, ..., bad_model: the checkpoints searched, oldest first
    criterion: Criterion
    description: str  # what "bad" means here, in words
    checkpoints: int  # N: checkpoints after good_model, up to bad_model
    evaluations: int  # checkpoints whose scores had to be evaluated
    bound: int  # ceil(log2 N) + 2
    outcome: Outcome
    message: str
    steps: list[Step]  # every checkpoint judged, in the order judged (``model`` names it)
    first_bad: FirstBadCheckpoint | None
    suspects: list[str]  # when skipped checkpoints hide the answer: the checkpoints it is among


def bisect_models(
    store: Store,
    config: Config,
    good_model: str,
    bad_model: str,
    harness: str,
    criterion: Criterion,
    *,
    execution: Execution = Execution(),
) -> CheckpointBisectResult:
    """The first bad checkpoint from good_model to bad_model along the lineage, at a fixed harness."""
    config = require_evaluator(config, "`harnessgit bisect`")
    known_models = registered(store.notes)
    chain = checkpoint_chain(known_models, good_model, bad_model)
    commit = resolve(store.refs, harness).sha
    manifest = load_manifest(store.root, config.splits.manifest)
    judge = Judge(store, config, criterion, criterion.ids(manifest), execution=execution)
    line = [Point(commit, model) for model in chain]
    known = judge_ends(
        judge, line, (f"{commit[:12]} for model {good_model}", f"{commit[:12]} for model {bad_model}")
    )

    def result(
        outcome: Outcome,
        message: str,
        first: FirstBadCheckpoint | None = None,
        suspects: list[str] | None = None,
    ) -> CheckpointBisectResult:
        return CheckpointBisectResult(
            harness=commit,
            good_model=good_model,
            bad_model=bad_model,
            lineage=chain,
            criterion=criterion,
            description=criterion.describe(),
            checkpoints=len(chain) - 1,
            evaluations=judge.evaluations,
            bound=bound(len(chain) - 1),
            outcome=outcome,
            message=message,
            steps=list(known.values()),
            first_bad=first,
            suspects=suspects or [],
        )

    at = f"at harness {commit[:12]}"
    if known[0].state == "bad":
        return result(
            "good is bad",
            f"good model {good_model} is itself bad {at} ({criterion.describe()}): pick an older checkpoint",
        )
    if known[len(chain) - 1].state == "good":
        return result(
            "bad is good",
            f"bad model {bad_model} is not bad {at}: {criterion.describe()} does not hold there, "
            "so no weights change on this lineage is the regression (bisect over commits for a harness edit)",
        )
    judge_stored(judge, line, known)
    last_good, first_bad = search(judge, line, known)
    if first_bad - last_good > 1:
        suspects = chain[last_good + 1 : first_bad + 1]
        message = (
            f"the first bad checkpoint is one of {len(suspects)}: the evaluator failed on "
            f"{first_bad - last_good - 1} of them"
        )
        return result("ambiguous", message, suspects=suspects)
    first = _first_bad(judge, known_models[chain[first_bad]], known[last_good], known[first_bad])
    note = f" ({first.note})" if first.note else ""
    message = (
        f"the first bad checkpoint is {first.model}, tuned from {first.parent}{note}: a weights change {at}"
    )
    return result("found", message, first)


def checkpoint_chain(known: dict[str, ModelRecord], good: str, bad: str) -> list[str]:
    """good, then each checkpoint after it on bad's lineage, up to bad (oldest first)."""
    for name in (good, bad):
        check_label(name)
        if name not in known:
            raise HarnessgitError(
                f"model {name!r} is not registered: bisect over checkpoints walks the lineage "
                f"`harnessgit model add NAME --parent OLD` records (see `harnessgit model list`)"
            )
    if good == bad:
        raise HarnessgitError(f"good and bad are the same model {good!r}: there is nothing to bisect")
    ancestors = lineage(known, bad)
    if good not in ancestors:
        chain = " <- ".join([bad, *ancestors])
        raise HarnessgitError(
            f"model {good!r} is not an ancestor of {bad!r} in the checkpoint lineage ({chain}): "
            "bisect walks from the good checkpoint to the bad one"
        )
    return [*reversed(ancestors[: ancestors.index(good) + 1]), bad]


def _first_bad(judge: Judge, record: ModelRecord, before: Step, after: Step) -> FirstBadCheckpoint:
    """The first bad checkpoint named: its lineage record and its effect against its parent."""
    old = judge.stored(before.commit, before.model)
    new = judge.stored(after.commit, after.model)
    assert old is not None and new is not None  # both were judged, so both are on record
    return FirstBadCheckpoint(
        model=record.name,
        position=after.position,
        parent=before.model,
        note=record.note,
        author=record.author,
        registered=record.commit,
        before=before,
        after=after,
        own=own_effect(old, new),
    )
