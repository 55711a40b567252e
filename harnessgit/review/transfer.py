"""`harnessgit transfer`: does a harness edit carry over from one model to another?

A harness x model table of selection means, and each harness's paired difference
against the base per model, from the scores on record (nothing is evaluated: run
`harnessgit eval REV --model M` for an empty cell). The same edit can help one model
and hurt another: GEPA's merge step gave +1.1 on GPT-4.1 mini and -2.4 on Qwen3-8B,
while a prompt tuned on Qwen3-8B gave +9.0 on GPT-4.1 mini (arXiv 2507.19457).

"Significant" here is descriptive, as in `review`'s table: the two-sided 95% interval
of the paired difference (the gate's own method, `review.scores.score_row`) lies wholly
above zero (a gain) or wholly below (a loss). A harness is *flagged* when it has a
significant gain on one model and a significant loss on another. Nothing decides from
this table; the gate's `[gate] models` is the test with error control (`gate.models`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from harnessgit.config import Config, require_evaluator
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.context import eval_context
from harnessgit.evaluation.models import for_model, requested_models
from harnessgit.evaluation.scores import TEST_SPLIT, ScoreBook, ScoreSummary
from harnessgit.evaluation.splits import load_manifest
from harnessgit.render import points, short, table
from harnessgit.review.scores import ScoreRow, score_row
from harnessgit.store import Objects, Store
from harnessgit.targets import base_tip, resolve

_Z95 = NormalDist().inv_cdf(0.975)


@dataclass(frozen=True, kw_only=True)
class TransferCell:
    model: str
    n: int  # instances of the split with a score
    mean: float | None
    ci_low: float | None  # 95% normal interval of the mean (mean +- 1.96 SE)
    ci_high: float | None
    paired: int = 0  # instances scored on both this harness and the base
    difference: float | None = None  # this harness - base, per instance, averaged
    difference_low: float | None = None  # two-sided 95% interval of the difference
    difference_high: float | None = None
    p_value: float | None = None  # one-sided, of "no gain" (as in `review`)
    effect: str = ""  # "gain", "loss" or "none"; "" for the base or without scores


@dataclass(frozen=True, kw_only=True)
class TransferRow:
    name: str  # as given on the command line
    commit: str
    harness: str  # harness tree id
    base: bool
    cells: list[TransferCell]
    gains: list[str]  # models with a significant gain
    losses: list[str]  # models with a significant loss
    flagged: bool  # a significant gain on one model and a significant loss on another


@dataclass(frozen=True, kw_only=True)
class TransferTable:
    split: str
    models: list[str]
    rows: list[TransferRow]  # the base first
    flagged: list[str]  # names of flagged harnesses
    missing: list[str]  # commands that would fill the empty cells


def transfer_table(
    store: Store,
    config: Config,
    revs: Sequence[str],
    *,
    base: str | None = None,
    models: Sequence[str] = (),
    split: str = "selection",
) -> TransferTable:
    """The table for ``revs`` against ``base`` (default: the tip of [harness] base), for
    ``models`` (default: [evaluator] models and the other models with scores on record
    for these harnesses), from the scores on record. A REV that resolves to the base is
    the base's row."""
    config = require_evaluator(config, "`harnessgit transfer`")
    if split == TEST_SPLIT:
        raise HarnessgitError("the test split is held out: transfer reads the selection or train split")
    if not revs:
        raise HarnessgitError("name at least one revision to compare with the base")
    manifest = load_manifest(store.root, config.splits.manifest)
    ids = manifest.ids(split)
    if not ids:
        raise HarnessgitError(f"split {split!r} has no instances")
    base_name = base or config.harness.base
    base_sha = resolve(store.refs, base).sha if base else base_tip(store.refs, base_name)
    book = ScoreBook.load(store)
    named = [(base_name, base_sha)]
    for rev in revs:  # a REV that is the base (or one named before) is its row already
        sha = resolve(store.refs, rev).sha
        if all(sha != seen for _name, seen in named):
            named.append((rev, sha))
    labels = (
        requested_models(config, models) if models else _default_models(store.objects, config, book, named)
    )
    summaries: dict[tuple[str, str], ScoreSummary] = {}
    missing = []
    for name, sha in named:
        for model in labels:
            context = eval_context(store.objects, for_model(config, model), sha)
            summary = book.summary(context.key, split, ids)
            summaries[(sha, model)] = summary
            if summary.missing:
                missing.append(f"harnessgit eval {name} --split {split} --model {model}")
    rows = []
    for index, (name, sha) in enumerate(named):
        cells = [
            _cell(summaries[(base_sha, m)], summaries[(sha, m)], config, len(ids), compared=index > 0)
            for m in labels
        ]
        gains = [c.model for c in cells if c.effect == "gain"]
        losses = [c.model for c in cells if c.effect == "loss"]
        harness = summaries[(sha, labels[0])].harness
        flagged = bool(gains and losses)
        rows.append(TransferRow(name=name, commit=sha, harness=harness, base=index == 0, cells=cells,
                                gains=gains, losses=losses, flagged=flagged))  # fmt: skip
    return TransferTable(
        split=split,
        models=labels,
        rows=rows,
        flagged=[row.name for row in rows if row.flagged],
        missing=list(dict.fromkeys(missing)),
    )


def _default_models(
    objects: Objects, config: Config, book: ScoreBook, named: list[tuple[str, str]]
) -> list[str]:
    """[evaluator] models, then every other model with scores on record for one of these
    harnesses under this evaluator: a table of models nobody evaluated would be empty."""
    labels = list(config.evaluator.labels)
    for _name, sha in named:
        key = eval_context(objects, config, sha).key
        labels += sorted(k.model for k in book.keys_of(key.harness) if k.fingerprint == key.fingerprint)
    return list(dict.fromkeys(labels))


def _cell(
    base: ScoreSummary, head: ScoreSummary, config: Config, size: int, *, compared: bool
) -> TransferCell:
    mean, se = head.mean, head.stderr
    interval = (mean - _Z95 * se, mean + _Z95 * se) if mean is not None and se is not None else (None, None)
    cell = TransferCell(model=head.model, n=head.n, mean=mean, ci_low=interval[0], ci_high=interval[1])
    if not compared:
        return cell
    row: ScoreRow = score_row(
        base.split, base, head, config.gate, split_size=size, current=True, held_out=False
    )
    if row.difference is None:
        return cell
    assert row.ci_low is not None and row.ci_high is not None
    effect = "gain" if row.ci_low > 0 else "loss" if row.ci_high < 0 else "none"
    return TransferCell(
        model=cell.model,
        n=cell.n,
        mean=cell.mean,
        ci_low=cell.ci_low,
        ci_high=cell.ci_high,
        paired=row.n,
        difference=row.difference,
        difference_low=row.ci_low,
        difference_high=row.ci_high,
        p_value=row.p_value,
        effect=effect,
    )


def transfer_text(result: TransferTable) -> str:
    """The table as text: per harness and model, the mean [95% CI], and for every
    harness but the base the paired difference [95% CI] and its effect."""
    headers = ["harness", *result.models]
    lines = []
    for row in result.rows:
        values = [f"{row.name} ({short(row.commit, 8)})" + (" base" if row.base else "")]
        for c in row.cells:
            if c.mean is None:
                values.append("-")
                continue
            text = f"{points(c.mean, False)} [{points(c.ci_low, False)}, {points(c.ci_high, False)}]"
            if c.difference is not None:
                mark = {"gain": " +", "loss": " -"}.get(c.effect, "")
                interval = f"[{points(c.difference_low)}, {points(c.difference_high)}]"
                text += f"  {points(c.difference)} {interval}{mark}"
            values.append(text)
        lines.append(values)
    out = [
        f"transfer on the {result.split} split: mean [95% CI], then the paired difference with the "
        "base [95% CI] (+ significant gain, - significant loss), in points",
        table(lines, headers),
    ]
    for row in result.rows:
        if row.flagged:
            out.append(
                f"FLAG {row.name}: helps {', '.join(row.gains)} and hurts {', '.join(row.losses)} "
                "(95% intervals of the paired differences exclude 0 on both sides)"
            )
    if result.missing:
        out.append("not on record (run to fill the table):")
        out += [f"  {command}" for command in result.missing]
    return "\n".join(out)
