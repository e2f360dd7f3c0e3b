"""stablehlo.collective_reduce: declared (parse, verify, print back), and run over
loom.runtime.local's partitions in both executors: the spec's examples (the root is the group's
first process, or the one the dynamic root index names; every other process, and one in no group,
gets zeros), reducers the communicator has and one it has not (applied in group order)."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.runtime.local import run_spmd

EXECUTORS = ["compiled", "interpreter"]


def _program(t, groups, reducer="add", dynamic_root=False, operands=1):
    e = t.split("x")[-1].rstrip(">")
    args = ", ".join(f"%x{i}: {t}" for i in range(operands))
    names = ", ".join(f"%x{i}" for i in range(operands))
    roots = f", %root: tensor<{operands}xi32>" if dynamic_root else ""
    root_operand = ", %root" if dynamic_root else ""
    root_type = f", tensor<{operands}xi32>" if dynamic_root else ""
    body = (f"%0 = stablehlo.{reducer} %a, %b : tensor<{e}>" if reducer != "first_minus_second" else
            f"%0 = stablehlo.subtract %a, %b : tensor<{e}>")
    results = ", ".join([t] * operands)
    outs = ", ".join(f"%r#{i}" for i in range(operands)) if operands > 1 else "%r"
    count = f":{operands}" if operands > 1 else ""
    return f"""module {{
  func.func @main({args}{roots}) -> ({results}) {{
    %r{count} = "stablehlo.collective_reduce"({names}{root_operand}) ({{
      ^bb0(%a: tensor<{e}>, %b: tensor<{e}>):
        {body}
        stablehlo.return %0 : tensor<{e}>
    }}) {{replica_groups = dense<{groups}> : tensor<{len(groups)}x{len(groups[0])}xi64>,
        channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, use_global_device_ids
        {", has_dynamic_root" if dynamic_root else ""}}} : ({", ".join([t] * operands)}{root_type}) -> ({results})
    return {outs} : {results}
  }}
}}"""


@pytest.mark.parametrize("executor", EXECUTORS)
def test_spec_interpreter_example_two_processes(executor):
    text = _program("tensor<4xi64>", [[0, 1]])
    out = run_spmd(text, [[np.array([1, 2, 3, 4])], [np.array([5, 6, 7, 8])]], executor=executor)
    np.testing.assert_array_equal(out[0][0], [6, 8, 10, 12])
    np.testing.assert_array_equal(out[1][0], [0, 0, 0, 0])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("dynamic_root", [False, True])
def test_spec_examples_four_processes(executor, dynamic_root):
    text = _program("tensor<1x2xi64>", [[0, 1, 2, 3]], dynamic_root=dynamic_root)
    xs = [np.array([[1, 2]]), np.array([[3, 4]]), np.array([[5, 6]]), np.array([[7, 8]])]
    args = [[x, np.array([3], np.int32)] if dynamic_root else [x] for x in xs]
    out = run_spmd(text, args, executor=executor)
    root = 3 if dynamic_root else 0
    for p in range(4):
        np.testing.assert_array_equal(out[p][0], [[16, 20]] if p == root else [[0, 0]])


@pytest.mark.parametrize("executor", EXECUTORS)
def test_groups_reducers_and_a_process_in_no_group(executor):
    """Groups [0, 1] and [2, 3] reduce apart; partition 4 is in no group (zeros); `maximum` is the
    communicator's reduction, `a - b` is not (folded in group order: x0 - x1)."""
    xs = [np.array([1.0, -2.0], np.float32) * (p + 1) for p in range(5)]
    for reducer, combine in (("maximum", np.maximum), ("first_minus_second", np.subtract)):
        text = _program("tensor<2xf32>", [[0, 1], [2, 3]], reducer=reducer)
        out = run_spmd(text, [[x] for x in xs], executor=executor)
        np.testing.assert_array_equal(out[0][0], combine(xs[0], xs[1]))
        np.testing.assert_array_equal(out[2][0], combine(xs[2], xs[3]))
        for p in (1, 3, 4):
            np.testing.assert_array_equal(out[p][0], np.zeros(2, np.float32))


@pytest.mark.parametrize("executor", EXECUTORS)
def test_several_operands_each_with_its_root(executor):
    text = _program("tensor<3xi32>", [[0, 1, 2]], dynamic_root=True, operands=2)
    args = [[np.full(3, p, np.int32), np.full(3, 10 * p, np.int32), np.array([2, 1], np.int32)] for p in range(3)]
    out = run_spmd(text, args, executor=executor)
    for p in range(3):
        np.testing.assert_array_equal(out[p][0], np.full(3, 3 if p == 2 else 0))
        np.testing.assert_array_equal(out[p][1], np.full(3, 30 if p == 1 else 0))


def test_a_root_index_outside_the_group_is_an_error_naming_the_op():
    text = _program("tensor<2xi32>", [[0, 1]], dynamic_root=True)
    args = [[np.zeros(2, np.int32), np.array([2], np.int32)] for _ in range(2)]
    with pytest.raises(Exception, match=r"stablehlo.collective_reduce.*root indices \[2\]"):
        run_spmd(text, args)


def test_declared_parsed_verified_and_printed_back():
    text = _program("tensor<4xi64>", [[0, 1]], dynamic_root=True)
    module = loom.ir.parse(text)
    module.verify()
    again = loom.ir.parse(str(module))
    assert str(again) == str(module)
    op = next(o for o in module.walk() if o.name == "stablehlo.collective_reduce")
    assert op.groups == [[0, 1]] and op.mode == "flattened_ids"
    bad = text.replace("tensor<1xi32>", "tensor<2xi32>")
    with pytest.raises(Exception, match="root indices must be a 1-dimensional tensor of 1 elements"):
        loom.ir.parse(bad).verify()


def test_over_processes_with_gloo():
    """Four processes (torch.distributed, gloo on 127.0.0.1, bounded waits): the spec's example,
    root 0 and the dynamic root 3."""
    pytest.importorskip("torch")
    from runtime.distributed_worker import launch
    outcomes = launch("spec_example", 4, module="collective_reduce_worker")
    for rank in range(4):
        status, value = outcomes[rank]
        assert status == "ok", outcomes[rank]
        for executor in ("compiled", "interpreter"):
            first, dynamic = value[executor]
            assert first == ([[16, 20]] if rank == 0 else [[0, 0]])
            assert dynamic == ([[7, 8]] if rank == 3 else [[0, 0]])
