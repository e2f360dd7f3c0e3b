"""loom.sim on a machine whose devices share one metered medium (topology "shared") and fewer
cores than devices (`Machine.cores`), against closed forms: every transfer in flight, of every
device, splits the medium's bandwidth; N devices running in step on C < N cores compute N/C
times slower."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sim_programs import ASYNC

import loom
from loom.rewrite.pass_manager import PassManager
from loom.sim.cost import collective_time_on, core_share, op_time, permute_loads, route, windowed_einsum_decision
from loom.sim.machine import Machine
from loom.sim.simulate import simulate

LATENCY, BANDWIDTH = 1e-6, 1e9


def _shared(n: int, **changes) -> Machine:
    return Machine("bus", 1e12, 1e11, BANDWIDTH, LATENCY, "shared", (n,)).with_(**changes)


def _ring(n: int, shift: int) -> str:
    pairs = ", ".join(f"[{j}, {(j + shift) % n}]" for j in range(n))
    return f"dense<[{pairs}]> : tensor<{n}x2xi64>"


def _transfers(shifts: list[int], n: int) -> loom.ir.Operation:
    """Permutes of a 1024-float tensor around a ring of n (each `shift` positions), all in
    flight together."""
    starts = [f"  %f{i} = comm.collective_permute_start %x {{source_target_pairs = {_ring(n, s)}}} : tensor<1024xf32>"
              for i, s in enumerate(shifts)]
    dones = [f"  %y{i} = comm.collective_permute_done %f{i} : !comm.future<tensor<1024xf32>>"
             for i in range(len(shifts))]
    return loom.ir.parse("func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {\n"
                         + "\n".join(starts + dones) + "\n  return %y0 : tensor<1024xf32>\n}")


@pytest.mark.parametrize("n", [2, 4, 8])
def test_every_transfer_in_flight_shares_the_one_medium(n):
    """A ring permute of V bytes by every device moves n·V through the medium: latency + n·V/W;
    both ways at once (a two-way loop's round) twice that, where a ring's directions are apart."""
    nbytes = 4096
    machine = _shared(n)
    assert route(0, 1, machine) == route(2, 3, machine) == ((0, 0, 0),)
    assert permute_loads([(j, (j + 1) % n) for j in range(n)], machine) == dict.fromkeys(range(n), n)
    one = simulate(_transfers([1], n), machine)
    assert one.step_time == pytest.approx(LATENCY + n * nbytes / BANDWIDTH)
    both = simulate(_transfers([1, -1], n), machine)
    assert both.step_time == pytest.approx(LATENCY + 2 * n * nbytes / BANDWIDTH)
    assert {lane for d in both.timeline.devices() for lane in both.timeline.lanes(d)} == {"link"}
    if n > 2:  # on a ring of 3 or more the two ways are different links, each a neighbour's
        ring = simulate(_transfers([1, -1], n), machine.with_(topology="ring"))
        assert ring.step_time == pytest.approx(LATENCY + nbytes / BANDWIDTH)


def _gather(groups: list[list[int]]) -> loom.ir.Operation:
    size = len(groups[0])
    text = (f"func.func @main(%x: tensor<256x64xf32>) -> tensor<{256 * size}x64xf32> {{\n"
            f"  %g = \"stablehlo.all_gather\"(%x) {{all_gather_dim = 0 : i64, "
            f"channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, "
            f"replica_groups = dense<{groups}> : "
            f"tensor<{len(groups)}x{size}xi64>, use_global_device_ids}} : (tensor<256x64xf32>) -> "
            f"tensor<{256 * size}x64xf32>\n  return %g : tensor<{256 * size}x64xf32>\n}}")
    return loom.ir.parse(text)


@pytest.mark.parametrize("groups", [[[0, 1, 2, 3]], [[0, 1], [2, 3]], [[0, 2], [1, 3]]])
def test_a_collective_moves_every_groups_traffic_through_the_medium(groups):
    """An all_gather of V gathered bytes per device over groups of g: each device receives
    V·(g-1)/g, so all groups together move V·(g-1)·groups through the medium."""
    g, gathered = len(groups[0]), 256 * len(groups[0]) * 64 * 4
    p = simulate(_gather(groups), _shared(4), num_partitions=4)
    want = (g - 1) * LATENCY + gathered * (g - 1) * len(groups) / BANDWIDTH
    assert p.step_time == pytest.approx(want)
    assert collective_time_on("all_gather", gathered * len(groups), [g], _shared(4)) == pytest.approx(want)


def test_a_ring_loop_moves_what_the_collective_it_replaces_moves():
    """decompose-collective-matmul's all-gather loop on n devices: n - 1 ring permutes of V/n by
    every device, (n - 1)·V through the medium, as the all_gather it replaces."""
    n, m, k, c = 4, 64, 128, 64
    mesh = loom.sharding.Mesh(np.arange(n), ("x",))
    s = lambda spec: loom.sharding.NamedSharding(mesh, spec)  # noqa: E731
    P = loom.sharding.P
    jitted = loom.jit(lambda a, b: a @ b, in_shardings=(s(P("x", None)), s(P(None, "x"))),
                      out_shardings=s(P("x", None)))
    from loom.sharding.partitioning import partition
    before = partition(jitted.lower(np.zeros((m * n, k), np.float32), np.zeros((k, c * n), np.float32)).module)
    after = loom.ir.parse(str(before))
    PassManager.parse("builtin.module(decompose-collective-matmul{mode=on})").run(after)
    machine = _shared(n)
    gathered = next(op for op in before.walk() if op.name == "stablehlo.all_gather").results[0].type
    V = math.prod(gathered.shape) * 4
    assert simulate(before, machine).communication_time == pytest.approx((n - 1) * (LATENCY + V / BANDWIDTH))
    assert simulate(after, machine).communication_time == pytest.approx((n - 1) * (LATENCY + V / BANDWIDTH))


@pytest.mark.parametrize("n", [2, 4, 8])
def test_xlas_inequality_on_the_medium_prices_the_loop_as_the_collective(n):
    """On one medium the loop's n - 1 ring steps move what the collective does (m = 1): with the
    dot as long as the transfer and no latency, max(T_comp, T_comm) + T_comm·2/n."""
    machine = _shared(n, link_latency=0.0)
    full = 1 << 20
    t_comm = full * (n - 1) / BANDWIDTH
    d = windowed_einsum_decision("all_gather", t_comm * machine.peak_flops, full, n, machine)
    assert d.t_before == pytest.approx(2 * t_comm) and d.t_after == pytest.approx(t_comm * (1 + 2 / n))
    assert d.decompose == (n > 2)


@pytest.mark.parametrize("cores,share", [(0, 1), (1, 4), (2, 2), (3, 4 / 3), (4, 1), (8, 1)])
@pytest.mark.parametrize("bandwidth", [1e6, 1e12])
def test_devices_on_fewer_cores_compute_slower_and_transfers_need_none(cores, share, bandwidth):
    """4 devices on C cores: each op that computes takes max(1, 4/C) of its time alone; the
    transfer (4 devices' sends on the medium) overlaps the slowed dot."""
    module = loom.ir.parse(ASYNC)
    machine = _shared(4, cores=cores, link_bandwidth=bandwidth, op_overhead=1e-5)
    assert core_share(machine, 4) == pytest.approx(share)
    dot, exp = (next(op for op in module.walk() if op.name == name)
                for name in ("stablehlo.dot_general", "stablehlo.exponential"))
    t_dot, t_exp = op_time(dot, machine) * share, op_time(exp, machine) * share
    t_send = LATENCY + 4 * 1024 * 4 / bandwidth
    p = simulate(module, machine, num_partitions=4)
    assert p.step_time == pytest.approx(max(t_dot, t_send) + t_exp)
    assert p.compute_time == pytest.approx(t_dot + t_exp)


def test_a_machine_without_a_medium_or_with_negative_cores_is_refused():
    with pytest.raises(ValueError, match="topology 'bus'"):
        Machine("m", 1.0, 1.0, 1.0, 0.0, "bus")
    with pytest.raises(ValueError, match="cores must be >= 0"):
        Machine("m", 1.0, 1.0, 1.0, 0.0, "shared", cores=-1)
    saved = _shared(4, cores=2)
    assert Machine.from_json(saved.to_json()) == saved
