"""Models as a dimension: one configuration per model label.

The model label is part of the cache key (`context.Key`), and every evaluator hears
it (HARNESSGIT_MODEL in a command's environment, ``request.model`` in process), so
evaluating a harness for another model is evaluating it under a configuration whose
``[evaluator] model`` names that model. Commands that take ``--model`` (repeatable)
run once per label; without it they run for ``[evaluator] models``, the primary first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from harnessgit.config import Config
from harnessgit.errors import HarnessgitError


def for_model(config: Config, model: str) -> Config:
    """``config`` with ``model`` as the label evaluations are keyed by and run for."""
    if model == config.evaluator.model:
        return config
    # ``models`` dropped: this configuration evaluates one label, which need not be listed
    # (a new checkpoint is evaluated before anyone writes it into harnessgit.toml).
    evaluator = dataclasses.replace(config.evaluator, model=model, models=None)
    return dataclasses.replace(config, evaluator=evaluator)


def requested_models(config: Config, models: Sequence[str]) -> list[str]:
    """The labels a command runs for: those given (in order, once each), else the
    configured ones, the primary first."""
    if any(not model.strip() for model in models):
        raise HarnessgitError("--model needs a label, not an empty string")
    return list(dict.fromkeys(models)) or config.evaluator.labels
