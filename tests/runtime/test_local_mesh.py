"""Partitions as threads in one process: the rendezvous of ThreadCommunicator (copies, errors,
timeouts, deadlocks) and run_spmd's error reporting."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest
from support.spmd_programs import binary_reducer, groups_attr, module, one_op, tensor

from loom.runtime.communicator import CollectiveError, PartitionError
from loom.runtime.local import ThreadCommunicator, run_spmd

T = tensor((4,), "f32")


def in_threads(n, fn, timeout=10.0):
    """Run fn(p) in n threads; return (results, errors) by partition."""
    results, errors = {}, {}

    def body(p):
        try:
            results[p] = fn(p)
        except Exception as e:  # noqa: BLE001
            errors[p] = e

    threads = [threading.Thread(target=body, args=(p,)) for p in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
        assert not t.is_alive(), "a partition hung"
    return results, errors


def test_results_are_copies_and_a_gather_or_reduction_one_read_only_array():
    """No result shares an operand's memory. Each member's result is its own, but an all_gather's
    and an all_reduce's, the same values for every member: one array they all get, which nobody can
    write into."""
    comm = ThreadCommunicator(4)
    xs = [np.full(3, p, np.float32) for p in range(4)]
    calls = {
        "all_reduce": lambda p: comm.all_reduce(p, xs[p], range(4), "sum"),
        "all_gather": lambda p: comm.all_gather(p, xs[p], range(4), 0),
        "broadcast": lambda p: comm.collective_broadcast(p, xs[p], range(4)),
        "permute": lambda p: comm.collective_permute(p, xs[p], [(0, 1), (1, 0), (2, 3), (3, 2)]),
    }
    for name, call in calls.items():
        results, errors = in_threads(4, call)
        assert not errors, errors
        for p, r in results.items():
            assert not any(np.shares_memory(r, x) for x in xs), f"{name}: partition {p} shares an operand"
            if name in ("all_gather", "all_reduce"):
                assert all(results[q] is r for q in results) and not r.flags.writeable
                with pytest.raises(ValueError, match="read-only"):
                    r[0] = 1
            else:
                assert not any(np.shares_memory(r, results[q]) for q in results if q != p), name
        if name == "all_gather":
            np.testing.assert_array_equal(results[0], np.concatenate(xs))
        if name == "all_reduce":
            np.testing.assert_array_equal(results[0], np.full(3, 6, np.float32))
    np.testing.assert_array_equal(results[1], xs[0])


def test_timeout_names_the_missing_partition():
    comm = ThreadCommunicator(2, timeout=0.2)

    def call(p):
        if p == 1:
            time.sleep(0.6)  # busy elsewhere, never joins in time
            return None
        return comm.all_reduce(p, np.ones(2), [0, 1], "sum")

    start = time.monotonic()
    _, errors = in_threads(2, call)
    assert time.monotonic() - start < 5
    assert isinstance(errors[0], CollectiveError)
    assert errors[0].partition == 1
    assert "partition(s) [1] did not join within 0.2 s" in str(errors[0])


def test_mismatched_collectives_name_both():
    comm = ThreadCommunicator(2, timeout=30)

    def call(p):
        if p == 0:
            return comm.all_reduce(p, np.ones(2), [0, 1], "sum")
        time.sleep(0.05)
        return comm.all_gather(p, np.ones(2), [0, 1], 0)

    start = time.monotonic()
    _, errors = in_threads(2, call)
    assert time.monotonic() - start < 5
    assert "partition 1 calls all_gather" in str(errors[1]) and "partition 0 calls all_reduce" in str(errors[1])
    assert errors[0].partition == 1  # partition 0 stops because partition 1 failed
    assert "partition 1 failed" in str(errors[0])


def test_mismatched_groups_deadlock_is_reported_at_once():
    """0 waits for 1 in group [0, 1], 1 for 2 in [1, 2], 2 for 0 in [0, 2]: nobody can go on."""
    comm = ThreadCommunicator(3, timeout=60)
    groups = {0: [0, 1], 1: [1, 2], 2: [0, 2]}
    start = time.monotonic()
    _, errors = in_threads(3, lambda p: comm.all_reduce(p, np.ones(2), groups[p], "sum"))
    assert time.monotonic() - start < 5, "the deadlock waited for the timeout"
    assert sorted(errors) == [0, 1, 2]
    assert any("deadlock" in str(e) and "partition 2 waits at all_reduce sum" in str(e) for e in errors.values())
    # each names the call it waits at: the collective, its shape and dtype, its number and group
    assert any("waits at all_reduce sum (2,) float64 (call 0 over partitions [0, 2])" in str(e)
               for e in errors.values()), errors


def _branch_on_partition(then_ops, else_ops, n=2):
    """@main(x): if partition_id == 0 then <then_ops> else <else_ops>, each ending in %r."""
    u = "tensor<ui32>"
    def region(ops):
        return "{\n" + "\n".join(ops) + f'\n"stablehlo.return"(%r) : ({T}) -> ()\n}}'
    return module(n, [T], [T], [
        f'%pid = "stablehlo.partition_id"() : () -> {u}',
        f'%zero = "stablehlo.constant"() <{{value = dense<0> : {u}}}> : () -> {u}',
        f'%c = "stablehlo.compare"(%pid, %zero) <{{comparison_direction = #stablehlo<comparison_direction EQ>}}> : '
        f"({u}, {u}) -> tensor<i1>",
        f'%0 = "stablehlo.if"(%c) ({region(then_ops)}, {region(else_ops)}) : (tensor<i1>) -> {T}',
        f'"func.return"(%0) : ({T}) -> ()'])


ALL_REDUCE = (f'%r = "stablehlo.all_reduce"(%arg0) <{{{groups_attr([[0, 1]])}}}> '
              f'{binary_reducer("add", "f32")} : ({T}) -> {T}')
BROADCAST = (f'%r = "stablehlo.collective_broadcast"(%arg0) <{{{groups_attr([[0, 1]], global_ids=False)}}}> : '
             f"({T}) -> {T}")
IDENTITY = f'%r = "stablehlo.negate"(%arg0) : ({T}) -> {T}'


@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_partition_finishing_without_joining(executor):
    text = _branch_on_partition([ALL_REDUCE], [IDENTITY])
    with pytest.raises(PartitionError, match=r"partition 0 of 2 failed: .*partition 1 finished its program "
                                             "without joining") as info:
        run_spmd(text, [[np.ones(4, np.float32)]] * 2, executor=executor, timeout=30)
    assert info.value.partition == 0


def test_a_failing_partition_stops_the_others_quickly():
    """Partition 2's argument has the wrong shape: it fails before its collective; the others,
    waiting there, stop at once and run_spmd names partition 2."""
    t = tensor((4,), "f32")
    text = one_op(4, "all_reduce", groups_attr([[0, 1, 2, 3]]), t, t, binary_reducer("add", "f32"))
    args = [[np.ones(4, np.float32)] for _ in range(4)]
    args[2] = [np.ones(5, np.float32)]
    start = time.monotonic()
    with pytest.raises(PartitionError, match=r"partition 2 of 4 failed: .*\(partitions \[0, 1, 3\] stopped") as info:
        run_spmd(text, args, timeout=60)
    assert time.monotonic() - start < 10
    assert info.value.partition == 2


def test_mismatched_participation_in_a_program():
    text = _branch_on_partition([ALL_REDUCE], [BROADCAST])
    with pytest.raises(PartitionError, match="calls collective_broadcast") as info:
        run_spmd(text, [[np.ones(4, np.float32)]] * 2, timeout=30)
    assert isinstance(info.value.__cause__, CollectiveError)


def test_argument_count_must_match_the_partitions():
    t = tensor((4,), "f32")
    text = one_op(4, "all_reduce", groups_attr([[0, 1, 2, 3]]), t, t, binary_reducer("add", "f32"))
    with pytest.raises(ValueError, match="partitioned for 4 partitions .* arguments for 2"):
        run_spmd(text, [[np.ones(4, np.float32)]] * 2)


def test_compiled_program_shared_by_threads_with_an_interpreted_op():
    """A reduce whose body is not elementwise runs through the interpreter from compiled code;
    the threads share the compiled program, so each needs its own interpreter state (threads
    switched as often as possible, to make a shared one fail)."""
    t = "tensor<256xf32>"
    body = ['%b = "stablehlo.broadcast_in_dim"(%lhs) <{broadcast_dimensions = array<i64>}> : '
            "(tensor<f32>) -> tensor<1xf32>",
            '%l = "stablehlo.reshape"(%b) : (tensor<1xf32>) -> tensor<f32>',
            '%r = "stablehlo.add"(%l, %rhs) : (tensor<f32>, tensor<f32>) -> tensor<f32>']
    region = ("({\n^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):\n" + "\n".join(body) +
              '\n"stablehlo.return"(%r) : (tensor<f32>) -> ()\n})')
    text = module(8, [t], ["tensor<f32>"], [
        '%z = "stablehlo.constant"() <{value = dense<0.0> : tensor<f32>}> : () -> tensor<f32>',
        f'%0 = "stablehlo.reduce"(%arg0, %z) <{{dimensions = array<i64: 0>}}> {region} : ({t}, tensor<f32>) -> '
        "tensor<f32>",
        '"func.return"(%0) : (tensor<f32>) -> ()'])
    xs = [np.arange(256, dtype=np.float32) * (p + 1) for p in range(8)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for _ in range(25):
            out = run_spmd(text, [[x] for x in xs])
            assert [float(o[0]) for o in out] == [float(x.sum()) for x in xs]
    finally:
        sys.setswitchinterval(interval)


def test_compiled_once_and_shared_interpreters_one_each():
    from loom.ir import parse
    from loom.runtime.local import _runners
    m = parse(one_op(4, "all_reduce", groups_attr([[0, 1, 2, 3]]), T, T, binary_reducer("add", "f32")))
    assert len({id(r) for r in _runners(m, "main", "compiled", 4)}) == 1
    assert len({id(r) for r in _runners(m, "main", "interpreter", 4)}) == 4


@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_a_collective_outside_a_partitioned_run_is_an_error(executor):
    import loom
    text = one_op(4, "all_reduce", groups_attr([[0, 1, 2, 3]]), T, T, binary_reducer("add", "f32"))
    with pytest.raises(RuntimeError, match="outside a partitioned run"):
        loom.compile(text, executor=executor)(np.ones(4, np.float32))
