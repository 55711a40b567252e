"""`GitRecorder`'s keyword options, and the defaults two of them take.

The defaults are functions of GEPA's data a caller may replace: how a valset example
gets its instance id (`content_instance_id`), and where the text `review` shows for
an example's output comes from (`output_feedback`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypedDict

from harnessgit.api import jsonable
from harnessgit.canonical import sha256_canonical


def content_instance_id(index: Any, example: Any) -> str:
    """The default instance id: GEPA's val id and 12 hex digits of the example's content,
    so that scores of a changed valset never pair with the old ones."""
    digest = sha256_canonical(jsonable(example))[:12]
    return f"{index}-{digest}"


def output_feedback(output: Any) -> str | None:
    """The default feedback of a valset output: its ``feedback`` (a key of a mapping,
    or an attribute, as a DSPy ``Prediction`` from a GEPA metric has), when it is text."""
    said = output.get("feedback") if isinstance(output, Mapping) else getattr(output, "feedback", None)
    return said if isinstance(said, str) and said else None


class RecorderOptions(TypedDict, total=False):
    """`GitRecorder`'s keyword arguments, each optional (its docstring says what each does)."""

    adapter: Any  # the GEPAAdapter, or its "package.module:factory"
    model: str
    valset: Any
    instance_id: Callable[[Any, Any], str]  # default `content_instance_id`
    evaluator: str  # "auto" (default), "own" or "repository"
    parent: str | None  # default: the base branch tip
    split: str  # default "selection"
    reflection_lm: Any
    feedback: Callable[[Any], str | None]  # default `output_feedback`
    settings: Mapping[str, Any] | None
