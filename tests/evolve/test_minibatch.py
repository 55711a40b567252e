from __future__ import annotations

import pytest

from harnessgit.evolve.minibatch import minibatch


def test_minibatches_cover_each_epoch_and_resume_identically() -> None:
    train = [f"t{i}" for i in range(10)]
    first_epoch = [minibatch(train, 3, i, 3) for i in range(3)]
    assert all(len(batch) == 3 for batch in first_epoch)
    assert len({x for batch in first_epoch for x in batch}) == 9  # no repeats within an epoch
    assert minibatch(train, 3, 4, 3) == minibatch(list(reversed(train)), 3, 4, 3)  # order-free
    assert minibatch(train, 3, 0, 3) != minibatch(train, 4, 0, 3)
    assert minibatch(train, 3, 3, 3) != first_epoch[0]  # a new epoch reshuffles


def test_a_minibatch_larger_than_the_train_split_is_the_whole_split() -> None:
    assert sorted(minibatch(["a", "b"], 0, 5, 3)) == ["a", "b"]
    with pytest.raises(ValueError, match="train split is empty"):
        minibatch([], 0, 0, 3)
