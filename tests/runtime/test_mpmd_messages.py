"""What the gloo processes of a partitioned program send each other: the bytes of each value only
(its dtype and shape come from the program), the loop's decider no iteration tokens (its predicate
says it reached the iteration), its predicate inside the data it sends in the iteration before
(with more than one iteration in flight), and receives posted ahead only inside loops."""

from __future__ import annotations

import numpy as np
import pytest
from mpmd_programs import mixed_types, operands, pipeline
from test_mpmd import assert_bitwise_equal

import loom
from loom.runtime.mpmd import _AHEAD

pytest.importorskip("torch")


@pytest.fixture(scope="module")
def outcomes() -> dict[int, tuple]:
    from mpmd_worker import launch
    got = launch("messages", 2, deadline_s=120)
    assert all(got[r][0] == "ok" for r in range(2)), got
    return got


def test_values_of_several_types_cross_processes_as_bytes_and_equal_one_device(outcomes: dict[int, tuple]) -> None:
    x, n = operands()
    want = loom.jit(mixed_types)(x, n)
    for rank in range(2):
        for p in (1, 2):
            got = outcomes[rank][1][f"mixed{p}"]
            assert [np.asarray(g).dtype for g in got] == [np.asarray(w).dtype for w in want]
            assert_bitwise_equal(got, want)


def test_each_run_sends_the_values_the_tokens_of_the_window_and_the_fillers_of_the_posted_receives(
        outcomes: dict[int, tuple]) -> None:
    x, _ = operands()
    want = loom.jit(pipeline)(x, np.int32(5))
    trips = int(want[0])
    assert trips > 0
    for p in (1, 2, 4):
        # rank 0 decides and sends no token. With one iteration in flight: a predicate per
        # iteration and the last one, the state of each iteration, and both streams' fillers. With
        # more, each iteration's state carries the next predicate (the last one too): the first
        # predicate alone (not posted for ahead: no fillers), a message per iteration, its fillers
        joined = p > 1
        assert outcomes[0][1][f"sent{p}"] == (1 + trips + _AHEAD if joined else (trips + 1) + trips + 2 * _AHEAD), p
        # rank 1: a token every max(1, p // 2) iterations it starts, and their fillers
        every = max(1, p // 2)
        assert outcomes[1][1][f"sent{p}"] == -(-trips // every) + _AHEAD, p
        for rank in range(2):  # the results each rank holds
            got = outcomes[rank][1][f"pipeline{p}"]
            assert_bitwise_equal(tuple(got.values()), tuple(want[k] for k in got))
