"""loom.sim.mpmd against closed-form pipeline times: a chain of S stages (one matmul each, stage k
on device k, the predicate on device 0) partitioned by mpmd-partition, N iterations, each stage t
seconds on the machine's roofline, each hop c = latency + bytes / bandwidth. With iterations in
flight unbounded: (N + S - 1)·t + (S - 1)·c; with one iteration in flight, every iteration waits
for the last device to announce it (one latency) and runs its stages one after another:
N·(S·t + (S - 1)·c + latency) + latency."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom import lax
from loom.sim.cost import op_time
from loom.sim.machine import Machine
from loom.sim.mpmd import simulate_mpmd
from loom.sim.simulate import SimulationError
from loom.transforms.mpmd_partition import device_functions, partition

# slow compute, a slow link with a long latency: stage and hop times dominate every scalar op
MACHINE = Machine("test", peak_flops=1e9, memory_bandwidth=1e15, link_bandwidth=1e8, link_latency=1e-4,
                  topology="switch", topology_shape=(8,))
WIDTH = 64


def chain(stages: int):
    def f(ws, h, n):
        def body(c):  # each iteration pushes the same input through the stages: no carry goes back
            i, _ = c
            y = h
            for k in range(stages):
                with loom.placement(k):
                    y = y @ ws[k]
            with loom.placement(0):
                i = i + 1
            return i, y
        with loom.placement(0):
            i0 = lnp.int32(0)
        return lax.while_loop(lambda c: c[0] < n, body, (i0, h))
    return f




def partitioned(stages: int, parallel: int):
    ws = np.zeros((stages, WIDTH, WIDTH), np.float32)
    h = np.zeros((8, WIDTH), np.float32)
    return partition(loom.jit(chain(stages)).lower(ws, h, np.int32(1)).module, parallel_iterations=parallel)


def stage_and_hop(module) -> tuple[float, float]:
    dot = next(o for o in module.walk() if o.name == "stablehlo.dot_general")
    t = op_time(dot, MACHINE)
    c = MACHINE.link_latency + 8 * WIDTH * 4 / MACHINE.link_bandwidth
    return t, c


@pytest.mark.parametrize("stages, n", [(2, 5), (4, 10), (8, 3)])
def test_unbounded_parallel_iterations_pipeline_the_stages(stages: int, n: int) -> None:
    module = partitioned(stages, parallel=n + 1)
    t, c = stage_and_hop(module)
    assert t > 100 * 8 * WIDTH / MACHINE.peak_flops  # the scalar ops are negligible next to a stage
    got = simulate_mpmd(module, MACHINE, trips=n)
    assert got.step_time == pytest.approx((n + stages - 1) * t + (stages - 1) * c, rel=1e-4)
    assert got.device_times[stages - 1] == pytest.approx(got.step_time)
    assert got.compute_time == pytest.approx(n * t, rel=1e-4)  # every device computes n stages


@pytest.mark.parametrize("stages, n", [(2, 5), (4, 10), (8, 3)])
def test_one_parallel_iteration_runs_the_stages_one_after_another(stages: int, n: int) -> None:
    module = partitioned(stages, parallel=1)
    t, c = stage_and_hop(module)
    lat = MACHINE.link_latency
    got = simulate_mpmd(module, MACHINE, trips=n)
    assert got.step_time == pytest.approx(n * (stages * t + (stages - 1) * c + lat) + lat, rel=1e-4)


def test_more_iterations_in_flight_are_never_slower_and_saturate_at_the_pipeline_depth() -> None:
    """Device 0 opens iteration i at i·t once the last device announced i - P + 1, which it does at
    (i - P + 1)·t + (S - 1)·(t + c), one latency before device 0 hears of it: the bound stops
    mattering once (P - 1)·t >= (S - 1)·(t + c) + latency."""
    stages, n = 4, 16
    t, c = stage_and_hop(partitioned(stages, 1))
    depth = 1 + int(np.ceil(((stages - 1) * (t + c) + MACHINE.link_latency) / t))
    assert 4 < depth < n
    bounds = (1, 2, 4, depth - 2, depth, n + 1)
    times = [simulate_mpmd(partitioned(stages, p), MACHINE, trips=n).step_time for p in bounds]
    assert all(a >= b * (1 - 1e-9) for a, b in zip(times, times[1:])), times
    assert times[0] > 2 * times[-1]
    assert times[3] > times[-1] * (1 + 1e-3)
    assert times[4] == pytest.approx(times[-1], rel=1e-6)


def test_trip_counts_come_from_constant_bounds_or_must_be_given() -> None:
    def f(h):
        def body(c):
            with loom.placement(1):
                h = c[1] * 2.0
            return c[0] + 1, h
        with loom.placement(0):
            return lax.while_loop(lambda c: c[0] < 7, body, (lnp.int32(0), h))
    h = np.zeros(4, np.float32)
    module = partition(loom.jit(f).lower(h).module)
    one = simulate_mpmd(module, MACHINE)  # device 0 decides on a constant bound: 7 trips
    assert one.step_time == pytest.approx(simulate_mpmd(module, MACHINE, trips={0: 7}).step_time)
    assert one.step_time > simulate_mpmd(module, MACHINE, trips=3).step_time
    with pytest.raises(SimulationError, match=r"loop 0 has no constant trip count on any device: pass trips"):
        simulate_mpmd(partitioned(2, 2), MACHINE)


def test_a_receive_whose_send_is_gone_is_a_deadlock_naming_the_devices() -> None:
    module = partitioned(2, 2)
    send = next(o for o in device_functions(module)[0].walk()
                if o.name == "mpmd.send" and o.operands[0].type.shape == (8, WIDTH))
    send.erase()
    with pytest.raises(SimulationError, match=r"wait for each other forever: device 0 at mpmd.iteration waits for "
                                              r"device 1 to start iteration \[1\] of loop 0; device 1 at mpmd.recv "
                                              r"waits for device 0's message on channel \d+ iteration \[0\]"):
        simulate_mpmd(module, MACHINE, trips=3)
