"""schedule-latency-hiding against the unscheduled program as the oracle: the all-gather and
reduce-scatter loops of decompose-collective-matmul (ring and bidirectional, N in {2, 4, 8}) give
the same values, bit for bit, with their permutes split into comm start / done pairs, on the
in-process mesh (both executors). Also: where the pass puts the start and the done (the step's dot
between them, inside the while bodies), the comm ops printing and parsing back in both forms, and
the verifiers naming the op."""

from __future__ import annotations

import numpy as np
import pytest
from spmd_run import run_global

import loom
from loom.dialects.comm import AllGatherStartOp, CollectivePermuteDoneOp, CollectivePermuteStartOp, FutureType
from loom.ir import VerifyError, parse
from loom.ir.core import Operation
from loom.ir.types import RankedTensorType, f32
from loom.rewrite.pass_manager import PassManager
from loom.runtime.local import LinkModel, run_spmd
from loom.sharding import Mesh, NamedSharding, P
from loom.sharding.partitioning import partition
from loom.sim.timeline import Timeline

F32 = np.float32
F32_TYPE = f32


def _run_pipeline(module: Operation, pipeline: str) -> Operation:
    out = parse(str(module))
    PassManager.parse(f"builtin.module({pipeline})").run(out)
    out.verify()
    return out


def _partitioned(f, in_specs, out_spec, shapes, n):
    mesh = Mesh(np.arange(n), ("x",))
    s = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
    jitted = loom.jit(f, in_shardings=tuple(s(p) for p in in_specs), out_shardings=s(out_spec))
    return partition(jitted.lower(*[np.zeros(sh, F32) for sh in shapes]).module)


def _values(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(F32) for s in shapes]


def _all_gather_program(n):
    shapes = [(2 * n, 6), (6, 2 * n)]
    return _partitioned(lambda a, b: a @ b, [P("x", None), P(None, "x")], P(None, "x"), shapes, n), shapes


def _reduce_scatter_program(n):
    shapes = [(2 * n, 3 * n), (3 * n, 2 * n)]
    return _partitioned(lambda a, b: a @ b, [P(None, "x"), P("x", None)], P("x", None), shapes, n), shapes


PROGRAMS = {"all_gather": _all_gather_program, "reduce_scatter": _reduce_scatter_program}
BIDI = pytest.mark.parametrize("options", ["mode=on", "mode=on bidirectional=true"], ids=["ring", "bidirectional"])


def _names(module: Operation) -> list[str]:
    return [op.name for op in module.walk()]


@BIDI
@pytest.mark.parametrize("n", [2, 4, 8])
@pytest.mark.parametrize("pattern", sorted(PROGRAMS))
def test_scheduled_loops_give_the_unscheduled_values_bit_for_bit(pattern, n, options):
    module, shapes = PROGRAMS[pattern](n)
    decomposed = _run_pipeline(module, f"decompose-collective-matmul{{{options}}}")
    scheduled = _run_pipeline(decomposed, "schedule-latency-hiding")
    names = _names(scheduled)
    assert "stablehlo.collective_permute" not in names
    assert names.count("comm.collective_permute_start") == _names(decomposed).count("stablehlo.collective_permute") > 0
    assert names.count("comm.collective_permute_done") == names.count("comm.collective_permute_start")
    assert str(parse(str(scheduled))) == str(scheduled)
    args = _values(shapes)
    for w, g in zip(run_global(decomposed, *args), run_global(scheduled, *args)):
        np.testing.assert_array_equal(g, w)


def _loop_body(module: Operation) -> list[Operation]:
    loop = next(op for op in module.walk() if op.name == "stablehlo.while")
    return list(loop.regions[1].blocks[0].ops)


@pytest.mark.parametrize("pattern", sorted(PROGRAMS))
def test_the_steps_dot_sits_between_start_and_done(pattern):
    module, _ = PROGRAMS[pattern](4)
    scheduled = _run_pipeline(module, "decompose-collective-matmul{mode=on},schedule-latency-hiding")
    body = _loop_body(scheduled)
    names = [op.name for op in body]
    start = names.index("comm.collective_permute_start")
    done = names.index("comm.collective_permute_done")
    dot = names.index("stablehlo.dot_general")
    assert start < dot < done
    # the start right at the top (its operand is the loop-carried shard or accumulator), the done
    # right before the first use of what it receives
    assert start == 0
    received = body[done].results[0]
    first_use = min(body.index(u) for u in received.users)
    assert first_use == done + 1
    if pattern == "reduce_scatter":  # the received accumulator is needed by the add after the dot
        assert names[done + 1] == "stablehlo.add"
    else:  # the shard received is only passed on to the next step
        assert names[done + 1] == "stablehlo.return"


def test_start_goes_right_after_its_operand_and_done_before_the_first_use():
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %a = stablehlo.negate %x : tensor<4xf32>
      %b = stablehlo.exponential %x : tensor<4xf32>
      %c = stablehlo.sine %x : tensor<4xf32>
      %p = "stablehlo.collective_permute"(%b) <{source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>,
             channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>}> : (tensor<4xf32>) -> tensor<4xf32>
      %d = stablehlo.cosine %x : tensor<4xf32>
      %e = stablehlo.add %c, %d : tensor<4xf32>
      %f = stablehlo.add %e, %p : tensor<4xf32>
      %g = stablehlo.add %f, %a : tensor<4xf32>
      return %g : tensor<4xf32>
    }
    """
    module = parse(text)
    PassManager.parse("builtin.module(schedule-latency-hiding)").run(module)
    module.verify()
    func = next(op for op in module.walk() if op.name == "func.func")
    names = [op.name for op in func.regions[0].blocks[0].ops]
    assert names == ["stablehlo.negate", "stablehlo.exponential", "comm.collective_permute_start", "stablehlo.sine",
                     "stablehlo.cosine", "stablehlo.add", "comm.collective_permute_done", "stablehlo.add",
                     "stablehlo.add", "func.return"]
    start = next(op for op in module.walk() if isinstance(op, CollectivePermuteStartOp))
    assert start.pairs == [(0, 1), (1, 0)]
    assert start.properties["channel_handle"].handle == 1
    assert start.results[0].type is FutureType(start.operands[0].type)


def test_programs_without_permutes_are_unchanged():
    module, _ = _all_gather_program(4)
    assert str(_run_pipeline(module, "schedule-latency-hiding")) == str(module)


def test_comm_ops_print_and_parse_back_in_both_forms():
    module, _ = _reduce_scatter_program(4)
    scheduled = _run_pipeline(module, "decompose-collective-matmul{mode=on bidirectional=true},"
                                      "schedule-latency-hiding")
    pretty = str(scheduled)
    generic = loom.ir.print(scheduled, generic=True)
    assert "comm.collective_permute_start %" in pretty and '"comm.collective_permute_start"(' in generic
    for text in (pretty, generic):
        back = parse(text)
        back.verify()
        assert str(back) == pretty
        assert loom.ir.print(back, generic=True) == generic


def test_verifier_errors_name_the_op():
    text = """
    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>}
             : tensor<4xf32>
      %y = comm.collective_permute_done %f : !comm.future<tensor<4xf32>>
      %z = comm.collective_permute_done %f : !comm.future<tensor<4xf32>>
      return %z : tensor<4xf32>
    }
    """
    with pytest.raises(VerifyError, match=r"comm.collective_permute_done.*exactly one") as info:
        parse(text).verify()
    assert isinstance(info.value.op, CollectivePermuteDoneOp)


GATHER = """
func.func @main(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %v: tensor<4x4xf32>) -> (tensor<8x4xf32>, tensor<4x4xf32>) {
  %a = stablehlo.negate %x : tensor<2x4xf32>
  %g = "stablehlo.all_gather"(%a) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1,
         type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> :
         (tensor<2x4xf32>) -> tensor<8x4xf32>
  %b = stablehlo.dot_general %w, %v, contracting_dims = [1] x [0] :
         (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %c = stablehlo.tanh %b : tensor<4x4xf32>
  %d = stablehlo.dot_general %g, %c, contracting_dims = [1] x [0] :
         (tensor<8x4xf32>, tensor<4x4xf32>) -> tensor<8x4xf32>
  return %d, %c : tensor<8x4xf32>, tensor<4x4xf32>
}
"""


def _gather_args(n: int = 4, seed: int = 0) -> list[list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    w, v = rng.standard_normal((4, 4)).astype(F32), rng.standard_normal((4, 4)).astype(F32)
    return [[rng.standard_normal((2, 4)).astype(F32), w, v] for _ in range(n)]


def test_an_all_gather_is_split_around_the_independent_compute():
    """The start right after its operand's definition, the done right before the dot that uses
    the gathered value: the independent dot and tanh run between them. Off by default."""
    assert str(_run_pipeline(parse(GATHER), "schedule-latency-hiding")) == str(parse(GATHER))
    module = _run_pipeline(parse(GATHER), "schedule-latency-hiding{all-gathers=true}")
    func = next(op for op in module.walk() if op.name == "func.func")
    assert [op.name for op in func.regions[0].blocks[0].ops] == [
        "stablehlo.negate", "comm.all_gather_start", "stablehlo.dot_general", "stablehlo.tanh",
        "comm.all_gather_done", "stablehlo.dot_general", "func.return"]
    start = next(op for op in module.walk() if isinstance(op, AllGatherStartOp))
    assert start.results[0].type is FutureType(RankedTensorType((8, 4), F32_TYPE))
    assert start.properties["channel_handle"].handle == 1 and start.properties["all_gather_dim"].value == 0


BARRIER = """
func.func @main(%x: tensor<2x4xf32>) -> (tensor<8x4xf32>, tensor<2x4xf32>) {
  %a = stablehlo.negate %x : tensor<2x4xf32>
  %r = "stablehlo.all_reduce"(%x) <{channel_handle = #stablehlo.channel_handle<handle = 2, type = 1>,
         replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> ({
  ^bb0(%l: tensor<f32>, %m: tensor<f32>):
    %s = stablehlo.add %l, %m : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %e = stablehlo.exponential %r : tensor<2x4xf32>
  %g = "stablehlo.all_gather"(%a) <{all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1,
         type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}> :
         (tensor<2x4xf32>) -> tensor<8x4xf32>
  %t = stablehlo.sine %e : tensor<2x4xf32>
  return %g, %t : tensor<8x4xf32>, tensor<2x4xf32>
}
"""


def test_an_all_gather_start_stays_below_the_collectives_before_it():
    """Its operand is ready before the all_reduce, but the start waits below it: issued above,
    it would hold the links the all_reduce needs. The done goes before the return (no other use)."""
    module = _run_pipeline(parse(BARRIER), "schedule-latency-hiding{all-gathers=true}")
    func = next(op for op in module.walk() if op.name == "func.func")
    assert [op.name for op in func.regions[0].blocks[0].ops] == [
        "stablehlo.negate", "stablehlo.all_reduce", "comm.all_gather_start", "stablehlo.exponential",
        "stablehlo.sine", "comm.all_gather_done", "func.return"]
    args = [[np.full((2, 4), p, F32)] for p in range(4)]
    for w, g in zip(run_spmd(parse(BARRIER), args), run_spmd(module, args)):
        for a, b in zip(w, g):
            np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("executor", ["compiled", "interpreter"])
def test_asynchronous_all_gathers_give_the_synchronous_values(executor):
    module = parse(GATHER)
    scheduled = _run_pipeline(module, "schedule-latency-hiding{all-gathers=true}")
    args = _gather_args()
    want = run_spmd(module, args, executor=executor)
    got = run_spmd(scheduled, args, executor=executor)
    for w, g in zip(want, got):
        for a, b in zip(w, g):
            np.testing.assert_array_equal(b, a)
    # and the gathered rows are every partition's negated x, in group order
    stacked = np.concatenate([-a[0] for a in args])
    np.testing.assert_allclose(got[0][0], stacked @ np.tanh(args[0][1] @ args[0][2]), rtol=1e-5)


def test_the_gather_travels_while_the_partition_computes():
    """With a link model (0.1 s a hop), the compute recorded between the start and the done ends
    while the gather is still on the link, and the compute after the done begins once it is off."""
    timeline = Timeline()
    scheduled = _run_pipeline(parse(GATHER), "schedule-latency-hiding{all-gathers=true}")
    run_spmd(scheduled, _gather_args(), link=LinkModel(0.1, 1e9), timeline=timeline)
    for device in range(4):
        (gather_span, *_) = [s for s in timeline.spans(device, "link+") if s.name == "all_gather"]
        computes = timeline.spans(device, "compute")
        during = [c for c in computes if gather_span.start - 0.05 < c.end < gather_span.end]
        after = [c for c in computes if c.start >= gather_span.end - 1e-3]
        assert during and after, (device, gather_span, computes)


def test_all_gather_ops_print_parse_and_verify():
    module = _run_pipeline(parse(GATHER), "schedule-latency-hiding{all-gathers=true}")
    pretty, generic = str(module), loom.ir.print(module, generic=True)
    assert "comm.all_gather_start %" in pretty and '"comm.all_gather_done"(' in generic
    for text in (pretty, generic):
        back = parse(text)
        back.verify()
        assert str(back) == pretty
    wrong = """
    func.func @main(%x: tensor<2x4xf32>) -> tensor<6x4xf32> {
      %f = comm.all_gather_start %x {all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1,
             type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}
             : tensor<2x4xf32> -> !comm.future<tensor<6x4xf32>>
      %y = comm.all_gather_done %f : !comm.future<tensor<6x4xf32>>
      return %y : tensor<6x4xf32>
    }
    """
    with pytest.raises(VerifyError, match=r"comm.all_gather_start.*should be '!comm.future<tensor<8x4xf32>>'") as info:
        parse(wrong).verify()
    assert isinstance(info.value.op, AllGatherStartOp)
