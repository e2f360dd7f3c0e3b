"""loom.sim.simulate on partitioned programs (made by loom's partitioner, the
decompose-collective-matmul and schedule-latency-hiding passes, as
tests/transforms/test_collective_matmul.py makes them) and on small hand-written ones: the
simulated totals equal the sum of every executed op's cost-model time (loop bodies counted once
per iteration of the pass's documented trip count); synchronous collectives block compute,
start/done transfers overlap it; a decomposed program is predicted faster than the undecomposed
one when communication is about as long as compute, and its step time never exceeds the
undecomposed one's when XLA's inequality chose the decomposition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_programs import permute_beside_dot

import loom
from loom.ir.core import Operation
from loom.rewrite.pass_manager import PassManager
from loom.sharding import Mesh, NamedSharding, P
from loom.sharding.partitioning import partition
from loom.sim.cost import (
    closed_form_decision,
    collective_matmul_decision,
    collective_time,
    op_bytes,
    op_flops,
    op_time,
    permute_loads,
    roofline_time,
    route,
    tensor_bytes,
    windowed_einsum_decision,
)
from loom.sim.machine import Machine
from loom.sim.simulate import SimulationError, simulate, trip_count

F32 = np.float32
CONTROL = {"stablehlo.while", "builtin.module", "func.func"}


def _program(n: int, m: int = 256, k: int = 512, c: int = 256, out: P | None = None) -> Operation:
    """(m·n x k) @ (k x c·n): lhs rows and rhs columns split over n partitions, the result's rows
    (or `out`): the partitioner all-gathers rhs before the local dot."""
    mesh = Mesh(np.arange(n), ("x",))
    s = lambda spec: NamedSharding(mesh, spec)  # noqa: E731
    jitted = loom.jit(lambda a, b: a @ b, in_shardings=(s(P("x", None)), s(P(None, "x"))),
                      out_shardings=s(out or P("x", None)))
    return partition(jitted.lower(np.zeros((m * n, k), F32), np.zeros((k, c * n), F32)).module)


def _decompose(module: Operation, options: str) -> Operation:
    out = loom.ir.parse(str(module))
    PassManager.parse(f"builtin.module(decompose-collective-matmul{{{options}}})").run(out)
    return out


def _asynchronous(module: Operation) -> Operation:
    """Each collective_permute split into a start and a done by the latency-hiding scheduler."""
    out = loom.ir.parse(str(module))
    PassManager.parse("builtin.module(schedule-latency-hiding)").run(out)
    assert "stablehlo.collective_permute" not in {op.name for op in out.walk()}
    return out


def _machine(module: Operation, topology: str, n: int, ratio: float = 1.0) -> Machine:
    """A machine on which the program's dot takes `ratio` times its all-gather."""
    dot = next(op for op in module.walk() if op.name == "stablehlo.dot_general")
    gathered = next(op for op in module.walk() if op.name == "stablehlo.all_gather").results[0].type
    base = Machine("test", 1.0, 1e15, 1e9, 1e-7, topology, (n,))
    t_comm = collective_time("all_gather", math.prod(gathered.shape) * 4, n, base)
    return base.with_(peak_flops=op_flops(dot) / (ratio * t_comm))


def _executed(block_owner: Operation, trips: dict[str, int]) -> list[tuple[Operation, int]]:
    """(op, times it runs) for every op under `block_owner`; a while's condition runs once more
    than its body, whose trip count `trips` gives by the loop's position in the program."""
    out, loops = [], iter(trips.values())

    def visit(op: Operation, times: int) -> None:
        if op.name == "stablehlo.while":
            trip = next(loops)
            for o in op.regions[0].entry.ops:
                visit(o, times * (trip + 1))
            for o in op.regions[1].entry.ops:
                visit(o, times * trip)
        elif op.name in CONTROL:
            for region in op.regions:
                for o in region.entry.ops:
                    visit(o, times)
        else:
            out.append((op, times))

    visit(block_owner, 1)
    return out


def _split(module: Operation, machine: Machine, trips: dict[str, int]) -> tuple[float, float]:
    """(compute, communication) seconds summed op by op from the cost model."""
    compute = comm = 0.0
    for op, times in _executed(module, trips):
        t = op_time(op, machine, 4) * times
        if "collective" in op.name or op.name.startswith(("stablehlo.all_", "stablehlo.reduce_scatter")):
            comm += t
        else:
            compute += t
    return compute, comm


@pytest.mark.parametrize("topology", ["ring", "switch"])
def test_simulated_totals_are_the_sum_of_the_per_op_figures(topology):
    n = 4
    before = _program(n)
    after = _decompose(before, "mode=on")
    machine = _machine(before, topology, n)
    for module, trips in ((before, {}), (after, {"ring": n - 1})):  # the pass's ring loop: N - 1 steps
        p = simulate(module, machine, devices=[0])
        compute, comm = _split(module, machine, trips)
        assert p.compute_time == pytest.approx(compute, rel=1e-9)
        assert p.communication_time == pytest.approx(comm, rel=1e-9)
        # synchronous collectives: nothing overlaps
        assert p.step_time == pytest.approx(compute + comm, rel=1e-9)
        assert p.flops == pytest.approx(sum(op_flops(op) * t for op, t in _executed(module, trips)))
    # the dot's FLOPs are the same, split into N pieces
    assert simulate(after, machine).flops == pytest.approx(simulate(before, machine).flops, rel=1e-3)


def test_synchronous_collectives_add_up():
    """Result columns sharded: an all_gather before the dot and an all_to_all after it, each
    blocking compute: the step is the sum of every op's time."""
    n = 4
    module = _program(n, out=P(None, "x"))
    names = [op.name for op in module.walk()]
    assert "stablehlo.all_gather" in names and "stablehlo.all_to_all" in names
    machine = Machine("m", 1e12, 1e11, 1e9, 1e-6, "torus2d", (2, 2))
    p = simulate(module, machine)
    compute, comm = _split(module, machine, {})
    assert p.communication_time == pytest.approx(comm) and p.compute_time == pytest.approx(compute)
    assert p.step_time == pytest.approx(compute + comm)
    assert set(p.op_time_by_name) >= {"stablehlo.all_gather", "stablehlo.all_to_all", "stablehlo.dot_general"}


@pytest.mark.parametrize("topology,options", [("switch", "mode=on"), ("ring", "mode=on bidirectional=true")])
def test_decomposed_program_is_faster_when_communication_is_close_to_compute(topology, options):
    n = 4
    before = _program(n)
    machine = _machine(before, topology, n, ratio=1.0)
    sync_after = _decompose(before, options)
    after = _asynchronous(sync_after)
    t_before = simulate(before, machine).step_time
    p = simulate(after, machine)
    assert p.step_time < 0.8 * t_before
    # overlapped: less than the serial sum, no less than either lane alone
    assert max(p.compute_time, p.communication_time / 2) <= p.step_time < p.compute_time + p.communication_time
    # the same loop with synchronous permutes hides nothing
    sync = simulate(sync_after, machine)
    assert sync.step_time == pytest.approx(sync.compute_time + sync.communication_time)
    assert sync.step_time > p.step_time
    # while a permute is in flight the device computes: some dot lies inside a transfer
    dots = [s for s in p.timeline.spans(0, "compute") if s.name == "dot_general"]
    sends = p.timeline.spans(0, "link+") + p.timeline.spans(0, "link-")
    assert any(t.start <= d.start and d.end <= t.end for d in dots for t in sends)
    assert sorted(p.timeline.devices()) == list(range(n))


def _pair(module: Operation) -> tuple[Operation, Operation]:
    """The all_gather and the dot it feeds."""
    return (next(op for op in module.walk() if op.name == "stablehlo.all_gather"),
            next(op for op in module.walk() if op.name == "stablehlo.dot_general"))


@pytest.mark.parametrize("memory_bound", [False, True])
@pytest.mark.parametrize("ratio", [0.05, 0.3, 1.0, 3.0, 20.0])
@pytest.mark.parametrize("topology,options,bidirectional",
                         [("switch", "mode=on", False), ("ring", "mode=on bidirectional=true", True)])
def test_a_decomposition_the_cost_model_chooses_never_slows_the_step(ratio, topology, options, bidirectional,
                                                                     memory_bound):
    n = 4
    before = _program(n)
    machine = _machine(before, topology, n, ratio=ratio)
    if memory_bound:  # the whole dot at its roofline's ridge: the thin partial dots fall below it
        gather, dot = _pair(before)
        machine = machine.with_(memory_bandwidth=op_bytes(dot) * machine.peak_flops / op_flops(dot))
    gather, dot = _pair(before)
    decision = collective_matmul_decision(gather, dot, machine, bidirectional)
    closed = closed_form_decision(gather, dot, machine, bidirectional)
    t_before = simulate(before, machine).step_time
    t_after = simulate(_asynchronous(_decompose(before, options)), machine).step_time
    assert closed.t_before == pytest.approx(t_before, rel=1e-2)  # the dot and the gather dominate
    assert decision.decompose <= closed.decompose
    if decision.decompose:  # its sides are the simulated steps (the program is the pair and scalar ops)
        assert t_after <= t_before
        assert (decision.t_before, decision.t_after) == (pytest.approx(t_before, rel=1e-2),
                                                         pytest.approx(t_after, rel=1e-2))
    elif closed.decompose:  # refused by the simulated inequality: the loop does not pay
        assert t_after >= t_before * (1 - 1e-9) and "the simulated loop would not be faster" in decision.reason
    # XLA's FLOP-only form prices the loop's compute as the whole dot's
    xla = windowed_einsum_decision("all_gather", op_flops(dot), tensor_bytes(gather.results[0].type), n, machine,
                                   bidirectional)
    if not memory_bound:
        assert (xla.decompose, xla.t_after) == (closed.decompose, pytest.approx(closed.t_after))
    elif xla.decompose and not closed.decompose:  # what the FLOP-only form would have chosen does not pay
        assert t_after >= t_before * (1 - 1e-9)


def test_the_loop_compute_is_priced_by_the_roofline_of_its_steps():
    """An all-gather of b (k x c·n, gathered along its columns) into (m x k) @ (k x c·n): each of
    the n steps reads the window (k x c), the whole lhs (m x k), and writes its (m x c) block in
    place (written, then read and written by the update)."""
    n, m, k, c = 4, 256, 512, 256
    gather, dot = _pair(_program(n, m, k, c))
    machine = Machine("slow-memory", 1e12, 1e9, 1e9, 0.0, "ring", (n,))
    window, lhs, block = 4 * k * c, 4 * m * k, 4 * m * c
    t_loop = n * roofline_time(2 * m * k * c, window + lhs + 3 * block, machine)
    decision = closed_form_decision(gather, dot, machine)
    assert f"T_loop {t_loop * 1e6:.3g} us" in decision.reason
    assert f"T_comp {roofline_time(2 * m * k * c * n, 4 * (m * k + k * c * n + m * c * n), machine) * 1e6:.3g} us" \
        in decision.reason


def test_both_directions_of_a_bidirectional_ring_carry_transfers_on_every_device():
    n = 8
    before = _program(n)
    p = simulate(_asynchronous(_decompose(before, "mode=on bidirectional=true")), _machine(before, "ring", n))
    for device in range(n):
        up, down = p.timeline.spans(device, "link+"), p.timeline.spans(device, "link-")
        assert up and down and abs(len(up) - len(down)) <= 1, device


LOOP = """func.func @main(%x: tensor<64xf32>) -> tensor<64xf32> {{
  %i0 = stablehlo.constant dense<{start}> : tensor<i32>
  %r:2 = stablehlo.while(%a = %x, %i = %i0) : tensor<64xf32>, tensor<i32>
  cond {{
    %lim = stablehlo.constant dense<{limit}> : tensor<i32>
    %c = stablehlo.compare {direction}, %i, %lim, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }} do {{
    %s = stablehlo.constant dense<{step}> : tensor<i32>
    %b = stablehlo.exponential %a : tensor<64xf32>
    %j = stablehlo.{update} %i, %s : tensor<i32>
    stablehlo.return %b, %j : tensor<64xf32>, tensor<i32>
  }}
  return %r#0 : tensor<64xf32>
}}"""


@pytest.mark.parametrize("start,limit,step,direction,update,want", [
    (0, 5, 1, "LT", "add", 5), (0, 5, 1, "LE", "add", 6), (0, 7, 2, "LT", "add", 4), (10, 0, 3, "GT", "subtract", 4),
    (3, 3, 1, "LT", "add", 0), (0, 6, 2, "NE", "add", 3)])
def test_trip_counts_come_from_constant_bounds(start, limit, step, direction, update, want):
    module = loom.ir.parse(LOOP.format(start=start, limit=limit, step=step, direction=direction, update=update))
    loop = next(op for op in module.walk() if op.name == "stablehlo.while")
    assert trip_count(loop) == want
    machine = Machine("m", 1e9, 1e9, 1e9, 0.0)
    exp = next(op for op in module.walk() if op.name == "stablehlo.exponential")
    assert simulate(module, machine).op_time_by_name.get("stablehlo.exponential", 0.0) == \
        pytest.approx(want * op_time(exp, machine))


def test_a_loop_without_constant_bounds_is_refused_naming_it():
    text = LOOP.format(start=0, limit=5, step=1, direction="LT", update="add").replace(
        "%lim = stablehlo.constant dense<5> : tensor<i32>", "%lim = stablehlo.multiply %i, %i : tensor<i32>")
    with pytest.raises(SimulationError, match="stablehlo.while.*constant trip count"):
        simulate(loom.ir.parse(text), Machine("m", 1e9, 1e9, 1e9, 0.0))


BRANCHES = """func.func @main(%p: tensor<i32>, %x: tensor<256xf32>) -> tensor<256xf32> {
  %r = "stablehlo.case"(%p) ({
    %a = stablehlo.exponential %x : tensor<256xf32>
    stablehlo.return %a : tensor<256xf32>
  }, {
    %a = stablehlo.exponential %x : tensor<256xf32>
    %b = stablehlo.exponential %a : tensor<256xf32>
    %c = stablehlo.exponential %b : tensor<256xf32>
    stablehlo.return %c : tensor<256xf32>
  }) : (tensor<i32>) -> tensor<256xf32>
  return %r : tensor<256xf32>
}"""


def test_case_takes_its_slowest_branch():
    module = loom.ir.parse(BRANCHES)
    machine = Machine("m", 1e9, 1e9, 1e9, 0.0)
    exp = next(op for op in module.walk() if op.name == "stablehlo.exponential")
    assert simulate(module, machine, num_partitions=1).step_time == pytest.approx(3 * op_time(exp, machine))


ASYNC = permute_beside_dot(2)


@pytest.mark.parametrize("op_overhead", [0.0, 1e-4])
@pytest.mark.parametrize("link_bandwidth", [1e6, 1e9])
def test_a_transfer_overlaps_the_compute_between_its_start_and_done(link_bandwidth, op_overhead):
    module = loom.ir.parse(ASYNC)
    machine = Machine("m", 1e12, 1e11, link_bandwidth, 1e-6, "ring", (2,), op_overhead=op_overhead)
    t_dot = max(2 * 128 ** 3 / 1e12, 3 * 128 * 128 * 4 / 1e11) + op_overhead
    t_exp = max(128 * 128 / 1e12, 2 * 128 * 128 * 4 / 1e11) + op_overhead
    t_send = 1e-6 + 1024 * 4 / link_bandwidth
    p = simulate(module, machine)
    assert p.step_time == pytest.approx(max(t_dot, t_send) + t_exp)
    assert p.compute_time == pytest.approx(t_dot + t_exp) and p.communication_time == pytest.approx(t_send)
    assert p.device_times == {0: p.step_time, 1: p.step_time}
    (send,) = p.timeline.spans(0, "link+")
    assert send.start == 0.0 and send.end == pytest.approx(t_send)


def _ring_pairs(n: int, shift: int) -> str:
    pairs = ", ".join(f"[{j}, {(j + shift) % n}]" for j in range(n))
    return f"dense<[{pairs}]> : tensor<{n}x2xi64>"


def _transfers(shifts: list[int], n: int = 4, compute: int = 0) -> Operation:
    """Permutes of a 1024-float tensor issued one after another (each device sending `shift`
    positions around a ring of n), `compute` floats of exponential after the first start, then
    every done."""
    lines = []
    for i, shift in enumerate(shifts):
        lines.append(f"  %f{i} = comm.collective_permute_start %x {{source_target_pairs = {_ring_pairs(n, shift)}}}"
                     f" : tensor<1024xf32>")
        if i == 0 and compute:
            lines.append(f"  %e = stablehlo.exponential %c : tensor<{compute}xf32>")
    lines += [f"  %y{i} = comm.collective_permute_done %f{i} : !comm.future<tensor<1024xf32>>"
              for i in range(len(shifts))]
    return loom.ir.parse(f"func.func @main(%x: tensor<1024xf32>, %c: tensor<{compute or 1}xf32>) -> tensor<1024xf32> "
                         "{\n" + "\n".join(lines) + "\n  return %y0 : tensor<1024xf32>\n}")


def test_transfers_on_one_link_direction_share_its_bandwidth():
    """On a ring, transfers in flight on one link direction split its bandwidth; the two
    directions do not contend; a later transfer slows the earlier one only from its start."""
    latency, bandwidth = 1e-6, 1e9
    machine = Machine("ring", 1e15, 1e9, bandwidth, latency, "ring", (4,))
    one = latency + 4096 / bandwidth
    assert simulate(_transfers([1]), machine).step_time == pytest.approx(one)
    together = simulate(_transfers([1, 1]), machine)
    assert together.step_time == pytest.approx(latency + 2 * 4096 / bandwidth)
    assert [s.end for s in together.timeline.spans(0, "link+")] == pytest.approx([together.step_time] * 2)
    assert simulate(_transfers([1, -1]), machine).step_time == pytest.approx(one)  # opposite directions
    # the second transfer starts after t of exponential (8 bytes per float at 1e9 B/s): the first has
    # V/W - t left, done at half speed; then the second's remaining t alone
    t = 8 * 200 / 1e9
    staggered = simulate(_transfers([1, 1], compute=200), machine)
    first, second = staggered.timeline.spans(0, "link+")
    assert first.end == pytest.approx(t + 2 * (4096 / bandwidth - t) + latency)
    assert second.start == pytest.approx(t) and second.end == pytest.approx(2 * 4096 / bandwidth + latency)


def test_pairs_of_one_permute_share_the_links_their_routes_cross():
    """Each device of a ring of 8 sending two positions ahead: every link carries two of the
    permute's transfers (from j and from j - 1), so each takes two hops' latency and twice the
    bytes' time; one position ahead, one each. Routes are dimension-ordered on a torus."""
    latency, bandwidth = 1e-6, 1e9
    machine = Machine("ring", 1e15, 1e9, bandwidth, latency, "ring", (8,))
    assert simulate(_transfers([1], n=8), machine).step_time == pytest.approx(latency + 4096 / bandwidth)
    assert simulate(_transfers([2], n=8), machine).step_time == pytest.approx(2 * latency + 2 * 4096 / bandwidth)
    assert permute_loads([(0, 2), (1, 3), (5, 4)], machine) == {0: 2, 1: 2, 5: 1}
    torus = Machine("torus", 1e15, 1e9, bandwidth, latency, "torus2d", (4, 4))
    # from (0, 1) to (3, 3): axis 0 the short way back (0 -> 3), then axis 1 forward (1 -> 2 -> 3)
    assert route(1, 15, torus) == ((1, 0, -1), (13, 1, 1), (14, 1, 1))
    switch = Machine("switch", 1e15, 1e9, bandwidth, latency, "switch", (8,))
    assert route(0, 5, switch) == ((0, 0, 1), (5, 0, -1))
    assert permute_loads([(0, 5), (1, 5)], switch) == {0: 2, 1: 2}  # one downlink into device 5


GATHERED = """func.func @main(%x: tensor<256x64xf32>, %w: tensor<64x64xf32>) -> tensor<1024x64xf32> {
  %f = comm.all_gather_start %x {all_gather_dim = 0 : i64, channel_handle = #stablehlo.channel_handle<handle = 1,
         type = 1>, replica_groups = dense<[[0, 1, 2, 3]]> : tensor<1x4xi64>, use_global_device_ids}
         : tensor<256x64xf32> -> !comm.future<tensor<1024x64xf32>>
  %b = stablehlo.dot_general %w, %w, contracting_dims = [1] x [0] : (tensor<64x64xf32>, tensor<64x64xf32>) ->
         tensor<64x64xf32>
  %g = comm.all_gather_done %f : !comm.future<tensor<1024x64xf32>>
  %d = stablehlo.dot_general %g, %b, contracting_dims = [1] x [0] : (tensor<1024x64xf32>, tensor<64x64xf32>) ->
         tensor<1024x64xf32>
  return %d : tensor<1024x64xf32>
}"""


@pytest.mark.parametrize("link_bandwidth", [1e6, 1e12])
def test_an_asynchronous_all_gather_overlaps_the_compute_before_its_done(link_bandwidth):
    module = loom.ir.parse(GATHERED)
    machine = Machine("ring", 1e9, 1e11, link_bandwidth, 1e-6, "ring", (4,))
    ops = [op for op in module.walk() if op.name == "stablehlo.dot_general"]
    t_gather = collective_time("all_gather", 1024 * 64 * 4, 4, machine)
    p = simulate(module, machine)
    assert p.step_time == pytest.approx(max(t_gather, op_time(ops[0], machine)) + op_time(ops[1], machine))
    assert p.communication_time == pytest.approx(t_gather)
    for lane in ("link+", "link-"):  # the gather holds both directions of the ring
        (span,) = p.timeline.spans(0, lane)
        assert span.start == 0.0 and span.end == pytest.approx(t_gather)
