"""ThreadCommunicator hands a partition's large results out again once nothing holds them: a result
the program still holds is never overwritten, and reused arrays carry the new values."""

from __future__ import annotations

import threading

import numpy as np
import pytest
from runtime.test_local_mesh import in_threads

from loom.runtime.local import REUSE_MIN_BYTES, ThreadCommunicator

N = 2
ELEMENTS = REUSE_MIN_BYTES // 4  # float32 operands of 1 MiB: every result below is large enough to be reused


def oracle(call: str, xs: list[np.ndarray], p: int) -> np.ndarray:
    if call == "all_gather":
        return np.concatenate(xs)
    total = np.sum(xs, axis=0, dtype=np.float32)
    return total if call == "all_reduce" else np.split(total, N)[p]


def run(comm: ThreadCommunicator, call: str, p: int, x: np.ndarray) -> np.ndarray:
    if call == "all_gather":
        return comm.all_gather(p, x, range(N), 0)
    if call == "all_reduce":
        return comm.all_reduce(p, x, range(N), "sum")
    return comm.reduce_scatter(p, np.concatenate([x, x + 1]), range(N), 0, "sum")


@pytest.mark.parametrize("call", ["all_gather", "all_reduce", "reduce_scatter"])
def test_held_results_keep_their_values_and_dropped_ones_are_reused(call):
    comm = ThreadCommunicator(N, timeout=10)
    rng = np.random.default_rng(0)
    rounds = [[rng.standard_normal(ELEMENTS, np.float32) for _ in range(N)] for _ in range(4)]
    if call == "reduce_scatter":  # each partition's operand: x then x + 1
        operands = [[np.concatenate([x, x + 1]) for x in xs] for xs in rounds]
    else:
        operands = rounds
    # passed once every partition's second call has returned: a peer still inside its all_reduce
    # holds this partition's result, which is then (rightly) not reused
    returned = threading.Barrier(N, timeout=10)

    def body(p: int) -> list:
        first = run(comm, call, p, rounds[0][p])
        second = run(comm, call, p, rounds[1][p])  # `first` is held: a new array
        held = [first.copy(), second.copy(), np.shares_memory(first, second)]
        address = second.__array_interface__["data"][0]
        del second
        returned.wait()
        third = run(comm, call, p, rounds[2][p])  # `second`'s array, free again
        return [first, held, third, third.__array_interface__["data"][0] == address]

    checks, errors = in_threads(N, body, timeout=30)
    assert not errors, errors
    for p, (first, (first_then, second_then, shared), third, reused) in checks.items():
        np.testing.assert_array_equal(first_then, oracle(call, operands[0], p))
        np.testing.assert_array_equal(second_then, oracle(call, operands[1], p))
        np.testing.assert_array_equal(first, first_then)  # untouched by the two later calls
        np.testing.assert_array_equal(third, oracle(call, operands[2], p))
        assert not shared and not np.shares_memory(first, third)
        assert reused, f"partition {p}: the dropped result's array was not handed out again"
