"""loom.placement and the mpmd-partition pass: placed ops (loop and branch bodies included), one
function per device with a send / recv pair for every value that crosses devices, each device
with its own copy of the control it takes part in (the predicate sent by its owner every
iteration, a conditional's decision sent to the devices of its branches), the partitioned programs
printed, parsed back and verified. Values are checked against the single-device program in
tests/runtime/test_mpmd.py."""

from __future__ import annotations

import numpy as np
import pytest
from runtime.mpmd_programs import four_stages, operands, pipeline, pipeline_loss, three_devices

import loom
import loom.numpy as lnp
from loom import lax
from loom.dialects.mpmd import CARRIES_ATTRIBUTE, DEVICE_ATTRIBUTE, RIDES_ATTRIBUTE, device_of
from loom.ir import parse
from loom.ir.diagnostics import VerifyError
from loom.rewrite import PassManager
from loom.transforms.mpmd_partition import MPMDError, device_functions, partition


def lowered(f, *args):
    return loom.jit(f).lower(*args).module


def ops_named(op_or_region, name):
    ops = op_or_region.ops if hasattr(op_or_region, "blocks") else [op_or_region]
    return [o for top in ops for o in top.walk() if o.name == name]


def test_placement_marks_ops_inside_loop_bodies_and_the_innermost_wins() -> None:
    module = lowered(pipeline, *operands())
    tanh, = ops_named(module, "stablehlo.tanh")
    sine, = ops_named(module, "stablehlo.sine")
    assert (device_of(tanh), device_of(sine)) == (0, 1)
    while_op, = ops_named(module, "stablehlo.while")
    assert tanh.parent_op is while_op and sine.parent_op is while_op
    # nothing outside a placement is marked, and the mark is gone outside the `with`
    assert loom.jit(lambda x: x * 2.0).lower(np.ones(2, np.float32)).module.walk().__next__() is not None
    plain = lowered(lambda x: lnp.tanh(x), np.ones(2, np.float32))
    assert all(DEVICE_ATTRIBUTE not in o.attributes for o in plain.walk())


def test_placement_rejects_what_is_not_a_device() -> None:
    with pytest.raises(ValueError, match="device number"):
        with loom.placement(-1):
            pass
    with pytest.raises(ValueError, match="device number"):
        with loom.placement("gpu"):
            pass


def test_each_device_gets_its_own_loop_and_the_predicate_owner_sends_it_every_iteration() -> None:
    module = partition(lowered(pipeline, *operands()), parallel_iterations=3)
    module.verify()
    functions = device_functions(module)
    assert sorted(functions) == [0, 1]
    for d, fn in functions.items():
        loop, = ops_named(fn, "stablehlo.while")
        cond = loop.regions[0].entry
        if d == 0:  # computes the predicate, sends it to device 1 tagged with its iteration counter
            send, = ops_named(loop.regions[0], "mpmd.send")
            assert int(send.properties["peer"].value) == 1 and send.operands[1] is cond.args[0]
            assert send.operands[0] is cond.terminator.operands[0]
        else:  # receives it, for the same iteration, and its condition is that value
            recv, = ops_named(loop.regions[0], "mpmd.recv")
            assert recv.operands[0] is cond.args[0] and cond.terminator.operands[0] is recv.results[0]
            assert not ops_named(loop.regions[0], "stablehlo.compare")
        first = loop.regions[1].entry.first_op
        assert first.name == "mpmd.iteration" and list(first.properties["devices"].values) == [0, 1]
        assert int(first.properties["parallel"].value) == 3
    # the stages stay where they were placed
    assert ops_named(functions[0], "stablehlo.tanh") and not ops_named(functions[0], "stablehlo.sine")
    assert ops_named(functions[1], "stablehlo.sine") and not ops_named(functions[1], "stablehlo.tanh")
    # every send has exactly one receive of the same channel, at the other end, of the same type
    sends = {int(o.properties["channel"].value): o for o in ops_named(module, "mpmd.send")}
    recvs = {int(o.properties["channel"].value): o for o in ops_named(module, "mpmd.recv")}
    assert sorted(sends) == sorted(recvs)
    for c, s in sends.items():
        assert s.operands[0].type is recvs[c].results[0].type
        assert len(s.operands) - 1 == len(recvs[c].operands)  # the same iteration depth


def _joins(module) -> dict[tuple[str, str, int], int]:
    """(op, attribute, its channel) -> the channel the attribute names, for every marked transfer."""
    return {(o.name, a, int(o.properties["channel"].value)): int(o.attributes[a].value)
            for o in [*ops_named(module, "mpmd.send"), *ops_named(module, "mpmd.recv")]
            for a in (CARRIES_ATTRIBUTE, RIDES_ATTRIBUTE) if a in o.attributes}


def test_the_predicate_rides_on_the_deciders_last_data_message_only_where_nothing_after_it_waits() -> None:
    # pipeline: device 0 decides; its body's last send to device 1 (the state) is followed by no
    # wait, so that message carries the next predicate, both ends marked with each other's channel
    module = partition(lowered(pipeline, *operands()), parallel_iterations=2)
    functions = device_functions(module)
    predicate, = ops_named(ops_named(functions[0], "stablehlo.while")[0].regions[0], "mpmd.send")
    state, = ops_named(ops_named(functions[0], "stablehlo.while")[0].regions[1], "mpmd.send")
    p, d = (int(o.properties["channel"].value) for o in (predicate, state))
    assert _joins(module) == {("mpmd.send", RIDES_ATTRIBUTE, p): d, ("mpmd.recv", RIDES_ATTRIBUTE, p): d,
                              ("mpmd.send", CARRIES_ATTRIBUTE, d): p, ("mpmd.recv", CARRIES_ATTRIBUTE, d): p}
    again = parse(str(module))  # the marks print and parse back
    again.verify()
    assert _joins(again) == _joins(module)
    # one iteration in flight: the peer would start on the data only after the decider's body
    assert not _joins(partition(lowered(pipeline, *operands()), parallel_iterations=1))
    # four_stages: the decider (device 3) sends the carry to device 0 first thing in its body, then
    # waits for device 2's stage: holding that message would wait on a wait, so nothing is joined
    assert not _joins(partition(lowered(four_stages, *operands()), parallel_iterations=2))


def test_partitioned_programs_print_parse_and_verify_in_both_forms() -> None:
    module = partition(lowered(three_devices, *operands()))
    pretty = str(module)
    assert "mpmd.send" in pretty and "mpmd.recv" in pretty and "mpmd.iteration" in pretty
    again = parse(pretty)
    again.verify()
    assert str(again) == pretty
    generic = loom.ir.print(module, generic=True)
    assert '"mpmd.send"' in generic
    assert loom.ir.print(parse(generic), generic=True) == generic


def test_loom_opt_pipeline_runs_the_pass() -> None:
    module = lowered(pipeline, *operands())
    PassManager.parse("builtin.module(mpmd-partition{parallel-iterations=4})").run(module)
    assert sorted(device_functions(module)) == [0, 1]
    assert {int(o.properties["parallel"].value) for o in ops_named(module, "mpmd.iteration")} == {4}


def test_nested_control_nests_and_a_device_only_in_the_outer_loop_gets_no_inner_copy() -> None:
    functions = device_functions(partition(lowered(three_devices, *operands())))
    loops = {d: ops_named(fn, "stablehlo.while") for d, fn in functions.items()}
    assert [len(loops[d]) for d in range(3)] == [1, 1, 2]  # the inner loop lives on device 2 only
    inner = loops[2][1]
    assert inner.parent_op is loops[2][0]
    # its transfers would carry both counters: the inner loop's iteration op does
    it, = ops_named(inner.regions[1], "mpmd.iteration")
    assert len(it.operands) == 2 and list(it.properties["devices"].values) == [2]
    # the conditional on device 1 stays on device 1; the one decided on device 0 with branches
    # on device 2 runs on device 2, which receives the decision
    ifs = {d: ops_named(fn, "stablehlo.if") for d, fn in functions.items()}
    assert (len(ifs[0]), len(ifs[1]), len(ifs[2])) == (0, 1, 1)
    decision = ifs[2][0].operands[0].owner_op
    assert decision.name == "mpmd.recv" and int(decision.properties["peer"].value) == 0


def test_unplaced_ops_follow_their_values_and_gradient_stacks_stay_with_the_saved_values() -> None:
    module = partition(lowered(loom.grad(pipeline_loss), *operands()))
    for d, fn in device_functions(module).items():
        loops = ops_named(fn, "stablehlo.while")
        assert len(loops) == 2, d  # the forward and the backward loop run on both devices
        for push in ops_named(fn, "stack.push"):
            value = push.operands[1].owner_op
            # a saved value is pushed where it is computed: no transfer feeds a push
            assert value is None or value.name != "mpmd.recv"
        assert len(ops_named(fn, "stack.new")) == len({p.operands[0] for p in ops_named(fn, "stack.pop")})
    functions = device_functions(module)
    # the forward line placed on device 1 (sin) and its derivative (cos) both run on device 1;
    # the derivative of device 0's tanh (1 - tanh^2) on device 0
    assert [d for d, fn in functions.items() if ops_named(fn, "stablehlo.sine")] == [1]
    assert [d for d, fn in functions.items() if ops_named(fn, "stablehlo.cosine")] == [1]
    assert [d for d, fn in functions.items() if [o for o in ops_named(fn, "stablehlo.subtract")
                                                 if o.results[0].type.shape == (8,)]] == [0]
    # the backward loop's control (its counter and predicate) runs where its body starts: device 1,
    # which holds the derivative of the last forward stage; device 0 receives the predicate
    backward = {d: ops_named(fn, "stablehlo.while")[1] for d, fn in functions.items()}
    assert [o.name for o in backward[0].regions[0].entry.ops] == ["mpmd.recv", "stablehlo.return"]
    assert "stablehlo.compare" in [o.name for o in backward[1].regions[0].entry.ops]
    # only tensors travel: a stack stays with the ops that push and pop it
    assert all(type(s.operands[0].type).__name__ == "RankedTensorType" for s in ops_named(module, "mpmd.send"))


def test_an_op_of_the_arguments_alone_takes_its_users_device_and_nothing_waits_for_it() -> None:
    """A slice of a weight (an argument) read by a product on device 0 inside a loop: the product
    is device 0's, so the loop's carry it makes is too, and the unplaced sum of that carry and
    device 1's value goes where the carry is. Only device 1's value crosses, not the carry and
    back (the slice has no device of its own to wait for: it is computed where it is read)."""
    def f(x, w):
        def cond(c):
            with loom.placement(0):
                return c[0] < 3

        def body(c):
            i, h = c
            with loom.placement(1):
                g = lnp.sin(x)
            u = h + g
            with loom.placement(0):
                a = lnp.tanh(u)
            return i + 1, a @ w[:, :4]
        return lax.while_loop(cond, body, (0, x))[1]

    x, w = np.ones((2, 4), np.float32), np.ones((4, 8), np.float32)
    functions = device_functions(partition(lowered(f, x, w)))
    sent = {d: [str(s.operands[0].type) for s in ops_named(fn, "mpmd.send")] for d, fn in functions.items()}
    assert "tensor<2x4xf32>" not in sent[0] and sent[1].count("tensor<2x4xf32>") == 1
    slice_, = ops_named(functions[0], "stablehlo.slice")
    assert not ops_named(functions[1], "stablehlo.slice")


def test_a_placement_beyond_num_devices_is_an_error_naming_the_op() -> None:
    def f(x):
        with loom.placement(3):
            return lnp.sin(x)
    with pytest.raises(MPMDError, match=r"stablehlo.sine at .*test_mpmd_partition.py:\d+.* device 3.* 2 devices"):
        partition(lowered(f, np.ones(2, np.float32)), num_devices=2)
    with pytest.raises(MPMDError, match="parallel_iterations"):
        partition(lowered(f, np.ones(2, np.float32)), parallel_iterations=0)


def test_the_verifier_rejects_bad_transfers_with_their_location() -> None:
    bad_peer = """func.func @f(%x: tensor<2xf32>) {
  mpmd.send %x to 0 channel 1 {mpmd.device = 0 : i64} : tensor<2xf32>
  return
}"""
    with pytest.raises(VerifyError, match="to itself"):
        parse(bad_peer).verify()
    bad_parallel = """func.func @f(%i: tensor<i32>) {
  mpmd.iteration %i loop 0 devices [0, 1] parallel 0 : tensor<i32>
  return
}"""
    with pytest.raises(VerifyError, match="parallel must be >= 1"):
        parse(bad_parallel).verify()
    bad_counter = """func.func @f(%x: tensor<2xf32>, %i: tensor<2xi32>) {
  mpmd.send %x to 1 channel 1 iteration %i : tensor<2xf32>, tensor<2xi32>
  return
}"""
    with pytest.raises(VerifyError, match="iteration counter"):
        parse(bad_counter).verify()


def test_a_conditional_whose_untaken_side_holds_a_whole_device_still_partitions() -> None:
    def f(x, p):
        with loom.placement(0):
            q = p > 0
        return lax.cond(q, lambda v: _on(1, lambda: v * 3.0), lambda v: _on(0, lambda: v - 1.0), x)

    functions = device_functions(partition(lowered(f, np.ones(2, np.float32), np.int32(1))))
    if0, = ops_named(functions[0], "stablehlo.if")
    if1, = ops_named(functions[1], "stablehlo.if")
    # device 1 holds branch 0 (and the result); device 0 holds branch 1 and sends it its value
    assert ops_named(if1.regions[0], "stablehlo.multiply") and ops_named(if1.regions[1], "mpmd.recv")
    assert ops_named(if0.regions[1], "mpmd.send") and not ops_named(if0.regions[0], "stablehlo.multiply")


def _on(device, f):
    with loom.placement(device):
        return f()
