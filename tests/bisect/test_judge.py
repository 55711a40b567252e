from __future__ import annotations

import pytest

from harnessgit.bisect.judge import DEFAULT_DROP, Baseline, Criterion, verdict
from harnessgit.errors import HarnessgitError
from harnessgit.evaluation.scores import InstanceScore, ScoreSummary
from harnessgit.evaluation.splits import Manifest


def summary(scores: dict[str, float]) -> ScoreSummary:
    values = list(scores.values())
    return ScoreSummary(
        split="selection",
        harness="h",
        fingerprint="f",
        model="m",
        n=len(values),
        missing=[],
        mean=sum(values) / len(values),
        stderr=None,
        instances=[InstanceScore(instance=i, mean=v, scores=[v]) for i, v in scores.items()],
        records=[],
        commits=[],
    )


BASE = Baseline(mean=0.5, scores={"a": 1.0, "b": 0.5, "c": 0.0, "d": 0.5})


def test_defaults_depend_on_what_is_judged() -> None:
    mean = Criterion.build("selection", None, None, None)
    assert mean.drop == DEFAULT_DROP and mean.threshold is None and not mean.per_instance
    one = Criterion.build("selection", ["a", "a"], None, None)
    assert one.instances == ["a"] and one.threshold == 1.0 and one.drop is None
    assert one.describe() == "instance a fails (scores under 1)"
    assert "more than 5.0 points below good's" in mean.describe()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("selection", None, 0.1, 0.5), "exclude each other"),
        (("selection", None, 1.5, None), "outside"),
        (("selection", None, None, -0.1), "outside"),
        (("test", None, None, None), "held out"),
    ],
)
def test_bad_criteria_are_refused(args: tuple[str, None, float | None, float | None], message: str) -> None:
    with pytest.raises(HarnessgitError, match=message):
        Criterion.build(*args)


def test_instances_must_be_in_the_split() -> None:
    manifest = Manifest({"selection": ["a", "b"], "train": ["t"]}, "hash")
    assert Criterion.build("selection", None, None, None).ids(manifest) == ["a", "b"]
    with pytest.raises(HarnessgitError, match="'t' is not in split 'selection'"):
        Criterion.build("selection", ["t"], None, None).ids(manifest)


def test_a_drop_is_measured_against_good() -> None:
    drop = Criterion.build("selection", None, 0.1, None)
    # 0.5 -> 0.4 is exactly the allowed drop: still good; 0.375 is more than 0.1 below.
    assert verdict(drop, summary({"a": 1, "b": 0.6, "c": 0, "d": 0}), BASE) == ("good", [])
    assert verdict(drop, summary({"a": 1, "b": 0.5, "c": 0, "d": 0}), BASE) == ("bad", [])


def test_a_threshold_is_absolute() -> None:
    threshold = Criterion.build("selection", None, None, 0.5)
    assert verdict(threshold, summary({"a": 0.5, "b": 0.5}), None) == ("good", [])
    assert verdict(threshold, summary({"a": 0.5, "b": 0.4}), None) == ("bad", [])


def test_per_instance_names_the_failing_ones() -> None:
    fails = Criterion.build("selection", ["a", "b"], None, None)
    assert verdict(fails, summary({"a": 1.0, "b": 0.5}), None) == ("bad", ["b"])
    dropped = Criterion.build("selection", ["a", "b"], 0.25, None)
    # a fell by 0.5 (more than 0.25), b by 0.25 (not more): only a is bad.
    assert verdict(dropped, summary({"a": 0.5, "b": 0.25}), BASE) == ("bad", ["a"])
    assert verdict(dropped, summary({"a": 1.0, "b": 0.25}), BASE) == ("good", [])
