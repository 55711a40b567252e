"""Epoch-shuffled minibatches of the train split (GEPA's sampler), pure and resumable.

Minibatch k of a run with seed s is a pure function of (s, k, the train ids):
each epoch is a fresh seeded shuffle and consecutive minibatches walk through it,
so an evolve run that stops and starts again continues the same sequence.
"""

from __future__ import annotations

import random


def epoch_order(train: list[str], seed: int, epoch: int) -> list[str]:
    order = sorted(train)
    random.Random(f"harnessgit-minibatch:{seed}:{epoch}").shuffle(order)
    return order


def minibatch(train: list[str], seed: int, iteration: int, size: int) -> list[str]:
    """The ``iteration``-th minibatch (from 0): ``size`` distinct ids, epoch by epoch."""
    if not train:
        raise ValueError("the train split is empty")
    size = min(size, len(train))
    per_epoch = len(train) // size
    epoch, slot = divmod(iteration, per_epoch)
    order = epoch_order(train, seed, epoch)
    return order[slot * size : (slot + 1) * size]
