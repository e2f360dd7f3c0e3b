"""loom.sim on a rig described by measurement: collectives priced at the bandwidth calibrated for
their kind (Machine.collective_bandwidth, found by loom.sim.calibrate.effective_bandwidth), and
transfers that keep part of a core busy (Machine.transfer_cpu), slowing the compute they overlap
where the cores leave no room; against closed forms."""

from __future__ import annotations

import pytest

import loom
from loom.sim.calibrate import effective_bandwidth
from loom.sim.cost import collective_time, op_time, transfer_slowdown
from loom.sim.machine import Machine
from loom.sim.simulate import simulate

LATENCY, BANDWIDTH = 1e-6, 1e9


def _shared(n: int, **changes) -> Machine:
    return Machine("bus", 1e12, 1e11, BANDWIDTH, LATENCY, "shared", (n,)).with_(**changes)


def _collective(kind: str, n: int) -> loom.ir.Operation:
    """One all_gather (256x64 -> 256n x 64) or reduce_scatter (256n x 64 -> 256x64) over n."""
    group = f"replica_groups = dense<[{list(range(n))}]> : tensor<1x{n}xi64>"
    channel = "channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>"
    small, big = "tensor<256x64xf32>", f"tensor<{256 * n}x64xf32>"
    if kind == "all_gather":
        op = (f'"stablehlo.all_gather"(%x) {{all_gather_dim = 0 : i64, {channel}, {group}, use_global_device_ids}} '
              f": ({small}) -> {big}")
        args, result = small, big
    else:
        op = (f'"stablehlo.reduce_scatter"(%x) ({{\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n'
              f"    %s = stablehlo.add %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n  }}) "
              f"{{scatter_dimension = 0 : i64, {channel}, {group}, use_global_device_ids}} : ({big}) -> {small}")
        args, result = big, small
    return loom.ir.parse(f"func.func @main(%x: {args}) -> {result} {{\n  %g = {op}\n  return %g : {result}\n}}")


@pytest.mark.parametrize("n", [2, 4])
def test_each_collective_moves_its_bytes_at_its_calibrated_bandwidth(n):
    """A reduce_scatter calibrated at a third of the medium's bandwidth: (n-1)·latency +
    V·(n-1)/(W/3) for its operand of V bytes; the all_gather beside it keeps the medium's W."""
    machine = _shared(n, collective_bandwidth={"reduce_scatter": BANDWIDTH / 3})
    V = 256 * n * 64 * 4  # the reduce_scatter's operand, the all_gather's result
    rs = simulate(_collective("reduce_scatter", n), machine)
    assert rs.step_time == pytest.approx((n - 1) * LATENCY + V * (n - 1) / (BANDWIDTH / 3))
    ag = simulate(_collective("all_gather", n), machine)
    assert ag.step_time == pytest.approx((n - 1) * LATENCY + V * (n - 1) / BANDWIDTH)
    assert collective_time("all_reduce", V, n, machine.with_(collective_bandwidth={"all_reduce": 2e8})) == \
        pytest.approx(2 * ((n - 1) * LATENCY + V * (n - 1) / 2e8))


@pytest.mark.parametrize("kind", ["all_gather", "reduce_scatter", "all_reduce", "collective_permute"])
@pytest.mark.parametrize("topology,shape", [("shared", (4,)), ("ring", (4,)), ("torus2d", (2, 2)), ("switch", (4,))])
def test_effective_bandwidth_is_the_rate_that_reproduces_the_measured_time(kind, topology, shape):
    """Calibrated from a time, the machine prices that collective at exactly that time."""
    machine = Machine("m", 1e12, 1e11, BANDWIDTH, LATENCY, topology, shape)
    measured = 3 * collective_time(kind, 1 << 20, 4, machine)
    rate = effective_bandwidth(kind, 1 << 20, 4, measured, machine)
    calibrated = machine.with_(collective_bandwidth={kind: rate})
    assert collective_time(kind, 1 << 20, 4, calibrated) == pytest.approx(measured)
    with pytest.raises(ValueError, match="no bandwidth fits"):
        effective_bandwidth(kind, 1 << 20, 4, LATENCY / 10, machine)


def test_a_calibrated_machine_round_trips_and_bad_rates_are_refused():
    machine = _shared(4, collective_bandwidth={"reduce_scatter": 1e8, "all_gather": 3e8}, transfer_cpu=0.2)
    assert Machine.from_json(machine.to_json()) == machine
    assert machine.to_json()["collective_bandwidth"] == {"all_gather": 3e8, "reduce_scatter": 1e8}
    assert machine.bandwidth_of("all_gather") == 3e8 and machine.bandwidth_of("all_to_all") == BANDWIDTH
    with pytest.raises(ValueError, match="collective_bandwidth 'allgather'"):
        _shared(4, collective_bandwidth={"allgather": 1e8})
    with pytest.raises(ValueError, match="collective_bandwidth 'reduce_scatter'"):
        _shared(4, collective_bandwidth={"reduce_scatter": 0.0})
    with pytest.raises(ValueError, match="transfer_cpu"):
        _shared(4, transfer_cpu=1.0)


ASYNC = """func.func @main(%x: tensor<1024xf32>, %a: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 2], [2, 3], [3, 0]]> :
      tensor<4x2xi64>} : tensor<1024xf32>
  %d = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] :
      (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %y = comm.collective_permute_done %f : !comm.future<tensor<1024xf32>>
  %e = stablehlo.exponential %d : tensor<128x128xf32>
  return %e : tensor<128x128xf32>
}"""


# (cores, transfer_cpu, the slowdown by hand): 4 devices; a compute thread's core share with
# transfers in flight min(1, max((C - 4u) / 4, C / 8)) against min(1, C / 4) without
SLOWDOWNS = [(2, 0.2, 0.5 / 0.3), (2, 0.45, 0.5 / 0.25), (1, 0.2, 0.25 / 0.125), (0, 0.2, 1 / 0.8), (4, 0.2, 1 / 0.8),
             (8, 0.2, 1.0), (2, 0.0, 1.0)]


@pytest.mark.parametrize("cores,cpu,slowdown", SLOWDOWNS)
@pytest.mark.parametrize("bandwidth", [1e6, 1e10])
def test_compute_overlapping_a_transfer_shares_the_cores_with_it(cores, cpu, slowdown, bandwidth):
    """4 devices on C cores, each sending a 4 KiB shard (its bytes on the medium for
    B = 4·4096/W) while it computes a dot: the dot runs `slowdown` times longer while the bytes
    are in flight and at its own pace after (W = 1e10: B is shorter than the dot; W = 1e6: the
    dot is overlapped whole); the exponential after the wait is not slowed."""
    module = loom.ir.parse(ASYNC)
    machine = _shared(4, cores=cores, link_bandwidth=bandwidth, op_overhead=1e-5, transfer_cpu=cpu)
    assert transfer_slowdown(machine, 4) == pytest.approx(slowdown)
    share = max(1.0, 4 / cores) if cores else 1.0
    dot, exp = (next(op for op in module.walk() if op.name == name)
                for name in ("stablehlo.dot_general", "stablehlo.exponential"))
    t_dot, t_exp = op_time(dot, machine) * share, op_time(exp, machine) * share
    sending = 4 * 1024 * 4 / bandwidth
    dot_end = t_dot * slowdown if t_dot * slowdown <= sending else sending + t_dot - sending / slowdown
    p = simulate(module, machine, num_partitions=4)
    assert p.step_time == pytest.approx(max(dot_end, sending + LATENCY) + t_exp)
    assert p.compute_time == pytest.approx(dot_end + t_exp)
