"""What the gloo processes of a partitioned program send each other: the bytes of each value only
(its dtype and shape come from the program), no iteration tokens between the loop's decider and
the others (its predicate says it reached the iteration; the completion of its sends says how far
the others got), and its predicate inside the data it sends in the iteration before (with more
than one iteration in flight)."""

from __future__ import annotations

import numpy as np
import pytest
from mpmd_programs import mixed_types, operands, pipeline
from test_mpmd import assert_bitwise_equal

import loom
from loom.runtime.mpmd import _posted_ahead

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


def test_each_run_sends_the_values_and_nothing_back_to_the_decider(outcomes: dict[int, tuple]) -> None:
    x, _ = operands()
    for state in (x, np.full(2048, -0.5, np.float32)):
        want = loom.jit(pipeline)(state, np.int32(5))
        trips = int(want[0])
        assert trips > 1
        for p in (1, 2, 4, 8):
            # rank 0 decides. With one iteration in flight: a predicate per iteration and the last
            # one, and the state of each iteration. With more, each iteration's state carries the
            # next predicate (the last one too), the first predicate goes alone (not posted for
            # ahead), and fillers for the receives rank 1 posted past the last message
            ahead = _posted_ahead(p, state.nbytes + 1)
            assert ahead == (min(4, (p - 1) // 2) if state.size > 8 else 0)
            sent = outcomes[0][1][f"sent{p}-{state.size}"]
            assert sent == (1 + trips + ahead if p > 1 else (trips + 1) + trips), (p, state.size)
            # rank 1 sends nothing: the decider learns how far it got from its own sends' completions
            assert outcomes[1][1][f"sent{p}-{state.size}"] == 0, (p, state.size)
            for rank in range(2):  # the results each rank holds
                got = outcomes[rank][1][f"pipeline{p}-{state.size}"]
                assert_bitwise_equal(tuple(got.values()), tuple(want[k] for k in got))
