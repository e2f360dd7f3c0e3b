"""All_reduces that write into their operands: only into values the per-device program never reads
again (`dead_operand_collectives`), and the values stay exact on the in-process mesh."""

from __future__ import annotations

import numpy as np
import pytest
from runtime.distributed_worker import in_place_expected, in_place_operand, in_place_program
from runtime.test_local_mesh import in_threads

from loom.ir import parse
from loom.runtime.communicator import operands_donated
from loom.runtime.executable import dead_operand_collectives
from loom.runtime.local import SLICED_REDUCE_MIN, ThreadCommunicator, run_spmd


@pytest.mark.parametrize(("donate", "in_place"), [((), ["w"]), ((0,), ["w", "arg0"])])
def test_only_operands_never_read_again_are_dead(donate, in_place):
    module = parse(in_place_program(2))
    ops = [op for op in module.walk() if op.name == "stablehlo.all_reduce"]
    dead = dead_operand_collectives(module, donate=donate)
    operand_of = {ops[0]: "y", ops[1]: "w", ops[2]: "arg0"}
    assert sorted(operand_of[op] for op in dead) == sorted(in_place)


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_an_operand_read_after_its_all_reduce_keeps_its_value(n, executor):
    args = [[in_place_operand(p)] for p in range(n)]
    outs = run_spmd(in_place_program(n), args, executor=executor, timeout=30)
    for p in range(n):
        np.testing.assert_array_equal(args[p][0], in_place_operand(p))  # the caller's argument is untouched
        for i, (got, want) in enumerate(zip(outs[p], in_place_expected(p, n), strict=True)):
            np.testing.assert_array_equal(got, want, err_msg=f"partition {p}, result {i}")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_donated_operand_holds_the_sum_and_a_held_one_is_untouched(n):
    """Each member reduces its slice of every operand in group order, into the donated operands."""
    comm = ThreadCommunicator(n, timeout=30)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(SLICED_REDUCE_MIN * 3 + 7).astype(np.float32) for _ in range(n)]
    want = xs[0].copy()
    for x in xs[1:]:
        want += x  # group order, as the communicator sums
    operands = [x.copy() for x in xs]

    def body(p):
        if p % 2:  # odd partitions donate their operand, even ones hold theirs
            with operands_donated():
                return comm.all_reduce(p, operands[p], range(n), "sum")
        return comm.all_reduce(p, operands[p], range(n), "sum")

    outs, errors = in_threads(n, body, timeout=30)
    assert not errors, errors
    for p in range(n):
        np.testing.assert_array_equal(outs[p], want, err_msg=f"partition {p}")
        assert (outs[p] is operands[p]) == bool(p % 2)
        if not p % 2:
            np.testing.assert_array_equal(operands[p], xs[p])
