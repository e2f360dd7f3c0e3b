"""All_reduces that write into their operands: only into values the per-device program never reads
again (`dead_operand_collectives`), and the values stay exact on the in-process mesh."""

from __future__ import annotations

import numpy as np
import pytest
from runtime.distributed_worker import in_place_expected, in_place_operand, in_place_program
from runtime.test_local_mesh import in_threads
from support.spmd_programs import CHANNEL, binary_reducer, groups_attr, ids, module, tensor

from loom.ir import parse
from loom.runtime.executable import dead_operand_collectives
from loom.runtime.local import SLICED_REDUCE_MIN, ThreadCommunicator, run_spmd


@pytest.mark.parametrize(("donate", "in_place"), [((), ["w"]), ((0,), ["w", "arg0"])])
def test_only_operands_never_read_again_are_dead(donate, in_place):
    module = parse(in_place_program(2))
    ops = [op for op in module.walk() if op.name == "stablehlo.all_reduce"]
    dead = dead_operand_collectives(module, donate=donate)
    operand_of = {ops[0]: "y", ops[1]: "w", ops[2]: "arg0"}
    assert sorted(operand_of[op] for op in dead) == sorted(in_place)


@pytest.mark.parametrize("earlier", ["all_gather", "collective_permute"])
def test_an_operand_an_earlier_collective_read_is_not_overwritten(earlier):
    """On the in-process mesh a peer may still read an earlier collective's operand after its
    owner has left it: the all_reduce of that value copies."""
    t, g = tensor((8,), "f32"), tensor((16,), "f32")
    first = {"all_gather": f'%e = "stablehlo.all_gather"(%w) <{{all_gather_dim = 0 : i64, {groups_attr([[0, 1]])}}}> '
                           f": ({t}) -> {g}",
             "collective_permute": f'%e = "stablehlo.collective_permute"(%w) <{{{CHANNEL}, source_target_pairs = '
                                   f"{ids([[0, 1], [1, 0]])}}}> : ({t}) -> {t}"}[earlier]
    text = module(2, [t], [t], [
        f'%w = "stablehlo.negate"(%arg0) : ({t}) -> {t}',
        first,
        f'%s = "stablehlo.all_reduce"(%w) <{{{groups_attr([[0, 1]])}}}> {binary_reducer("add", "f32")} : ({t}) -> {t}',
        f'"func.return"(%s) : ({t}) -> ()',
    ])
    assert dead_operand_collectives(parse(text)) == set()
    assert len(dead_operand_collectives(parse(text.replace("(%w) <{all_gather", "(%arg0) <{all_gather")
                                              .replace("permute\"(%w)", "permute\"(%arg0)")))) == 1


@pytest.mark.parametrize("n", [2, 4])
@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_an_operand_read_after_its_all_reduce_keeps_its_value(n, executor):
    args = [[in_place_operand(p)] for p in range(n)]
    outs = run_spmd(in_place_program(n), args, executor=executor, timeout=30)
    for p in range(n):
        np.testing.assert_array_equal(args[p][0], in_place_operand(p))  # the caller's argument is untouched
        for i, (got, want) in enumerate(zip(outs[p], in_place_expected(p, n), strict=True)):
            np.testing.assert_array_equal(got, want, err_msg=f"partition {p}, result {i}")


@pytest.mark.parametrize("every", [False, True])
@pytest.mark.parametrize("n", [2, 3, 4])
def test_a_donated_operand_holds_the_sum_and_a_held_one_is_untouched(n, every):
    """Each member reduces its slice of every operand in group order, into the donated operands
    (odd partitions', or `every` partition's: then through a scratch array, in chunks)."""
    comm = ThreadCommunicator(n, timeout=30)
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal(SLICED_REDUCE_MIN + 7).astype(np.float32) for _ in range(n)]
    want = xs[0].copy()
    for x in xs[1:]:
        want += x  # group order, as the communicator sums
    operands = [x.copy() for x in xs]

    def body(p):
        # odd partitions (or all) give up their operand, the others hold theirs
        return comm.all_reduce(p, operands[p], range(n), "sum", in_place=bool(p % 2 or every))

    outs, errors = in_threads(n, body, timeout=30)
    assert not errors, errors
    for p in range(n):
        np.testing.assert_array_equal(outs[p], want, err_msg=f"partition {p}")
        assert (outs[p] is operands[p]) == bool(p % 2 or every)
        if not (p % 2 or every):
            np.testing.assert_array_equal(operands[p], xs[p])
