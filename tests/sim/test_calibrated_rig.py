"""loom.sim on a rig described by measurement: collectives priced at the bandwidth calibrated for
their kind (Machine.collective_bandwidth, found by loom.sim.calibrate.effective_bandwidth), and
transfers that keep part of a core busy (Machine.transfer_cpu), so that compute and the transfers
it overlaps, sharing cores that leave no room for both, slow each other alike; against closed
forms."""

from __future__ import annotations

import pytest
from sim_programs import ASYNC

import loom
from loom.sim.calibrate import effective_bandwidth, transfer_cpu_from_slowdown
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


# (cores, transfer_cpu, the slowdown by hand): 4 devices; a thread's share of a core a0 = min(1, C/4)
# with one thread per device, a1 = min(1, C/8) with two; sigma = 1 + min(1, u/a0)·(a0/a1 - 1)
SLOWDOWNS = [(2, 0.2, 1 + 0.4 * 1), (2, 0.45, 1 + 0.9 * 1), (1, 0.2, 1 + 0.8 * 1), (1, 0.5, 2.0), (0, 0.2, 1.2),
             (4, 0.2, 1.2), (8, 0.2, 1.0), (2, 0.0, 1.0)]


@pytest.mark.parametrize("cores,cpu,slowdown", SLOWDOWNS)
@pytest.mark.parametrize("bandwidth", [1e6, 1e10])
def test_compute_and_a_transfer_overlapping_share_the_cores(cores, cpu, slowdown, bandwidth):
    """4 devices on C cores, each sending a 4 KiB shard (its bytes on the medium for
    B = 4·4096/W) while it computes a dot (D): both run sigma times slower until the first is
    done, the other at its own pace after: the overlap lasts sigma·min(D, B), the dot ends at
    sigma·min(D, B) + D - min(D, B) and the bytes at sigma·min(D, B) + B - min(D, B)
    (W = 1e10: the bytes are sent first; W = 1e6: the dot is overlapped whole); the exponential
    after the wait is not slowed."""
    module = loom.ir.parse(ASYNC)
    machine = _shared(4, cores=cores, link_bandwidth=bandwidth, op_overhead=1e-5, transfer_cpu=cpu)
    assert transfer_slowdown(machine, 4) == pytest.approx(slowdown)
    if slowdown > 1:  # the inverse, up to a transfer copying all of its time (u = a0)
        assert transfer_cpu_from_slowdown(slowdown, 4, machine) == pytest.approx(min(cpu, (cores or 4) / 4, 1))
    share = max(1.0, 4 / cores) if cores else 1.0
    dot, exp = (next(op for op in module.walk() if op.name == name)
                for name in ("stablehlo.dot_general", "stablehlo.exponential"))
    t_dot, t_exp = op_time(dot, machine) * share, op_time(exp, machine) * share
    sending = 4 * 1024 * 4 / bandwidth
    both = min(t_dot, sending)
    dot_end, sent = slowdown * both + t_dot - both, slowdown * both + sending - both
    p = simulate(module, machine, num_partitions=4)
    assert p.step_time == pytest.approx(max(dot_end, sent + LATENCY) + t_exp)
    assert p.compute_time == pytest.approx(dot_end + t_exp)


# a transfer issued part-way through the compute: 2 dots, the permute between them, a third dot
# after its wait; 2 devices on 1 core (a0 = 1/2, a1 = 1/4: sigma = 1 + 2u)
PARTIAL = """func.func @main(%x: tensor<N x f32>, %a: tensor<128x128xf32>) -> tensor<128x128xf32> {
  %d = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] :
      (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 0]]> :
      tensor<2x2xi64>} : tensor<N x f32>
  %e = stablehlo.dot_general %d, %a, contracting_dims = [1] x [0] :
      (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  %y = comm.collective_permute_done %f : !comm.future<tensor<N x f32>>
  %g = stablehlo.dot_general %e, %a, contracting_dims = [1] x [0] :
      (tensor<128x128xf32>, tensor<128x128xf32>) -> tensor<128x128xf32>
  return %g : tensor<128x128xf32>
}"""


@pytest.mark.parametrize("sends", [0.3, 1.0, 2.5])  # the bytes' time alone in dots
@pytest.mark.parametrize("cpu", [0.0, 0.1, 0.25])
def test_only_the_overlap_is_slowed(sends, cpu):
    """The first dot (D) runs before the transfer is issued and the third after its wait: neither
    slowed; the second and the bytes (B = sends·D alone) overlap for sigma·min(D, B); the step is
    D + max(sigma·min(D, B) + D - min(D, B), sigma·min(D, B) + B - min(D, B) + latency) + D."""
    elements = 1 << 12
    machine = _shared(2, cores=1, transfer_cpu=cpu)
    sigma = 1 + 2 * cpu
    assert transfer_slowdown(machine, 2) == pytest.approx(sigma)
    d = op_time(next(op for op in loom.ir.parse(PARTIAL.replace("N x ", f"{elements}x")).walk()
                     if op.name == "stablehlo.dot_general"), machine) * 2
    bandwidth = 2 * elements * 4 / (sends * d)  # both devices' bytes cross the medium
    machine = machine.with_(link_bandwidth=bandwidth)
    module = loom.ir.parse(PARTIAL.replace("N x ", f"{elements}x"))
    both = min(d, sends * d)
    expected = d + max(sigma * both + d - both, sigma * both + sends * d - both + LATENCY) + d
    p = simulate(module, machine, num_partitions=2)
    assert p.step_time == pytest.approx(expected)
    assert p.compute_time == pytest.approx(3 * d + (sigma - 1) * both)


def test_two_transfers_in_flight_are_slowed_together():
    """Two permutes in flight on one medium (processor sharing: 2·B for both alone) beside a dot
    longer than both: the link is sigma times slower while the dot runs, so both end at
    sigma·2·B, and the dot at sigma·2·B + D - 2·B."""
    machine = _shared(2, cores=1, transfer_cpu=0.2, link_bandwidth=1e10, op_overhead=1e-3)
    sigma = transfer_slowdown(machine, 2)
    module = loom.ir.parse("""func.func @main(%x: tensor<1024xf32>, %a: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %f = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} :
      tensor<1024xf32>
  %h = comm.collective_permute_start %x {source_target_pairs = dense<[[0, 1], [1, 0]]> : tensor<2x2xi64>} :
      tensor<1024xf32>
  %d = stablehlo.dot_general %a, %a, contracting_dims = [1] x [0] : (tensor<8x8xf32>, tensor<8x8xf32>) ->
      tensor<8x8xf32>
  %y = comm.collective_permute_done %f : !comm.future<tensor<1024xf32>>
  %z = comm.collective_permute_done %h : !comm.future<tensor<1024xf32>>
  return %d : tensor<8x8xf32>
}""")
    dot = op_time(next(op for op in module.walk() if op.name == "stablehlo.dot_general"), machine) * 2
    b = 2 * 1024 * 4 / 1e10
    assert dot > 2 * b
    p = simulate(module, machine, num_partitions=2)
    assert p.step_time == pytest.approx(sigma * 2 * b + dot - 2 * b)


def test_a_slowdown_calibrates_the_transfers_cpu_within_the_model():
    """The inverse of transfer_slowdown, bounded: noise below 1 gives 0, a slowdown past the
    model's most (a0/a1) the most share it allows; cores to spare for every thread fit none."""
    machine = _shared(4, cores=2)  # a0 = 1/2, a1 = 1/4
    assert transfer_cpu_from_slowdown(1.26, 4, machine) == pytest.approx(0.13)
    assert transfer_cpu_from_slowdown(0.95, 4, machine) == 0.0
    assert transfer_cpu_from_slowdown(5.0, 4, machine) == pytest.approx(0.5)
    assert transfer_cpu_from_slowdown(1.14, 2, _shared(2, cores=2)) == pytest.approx(0.14)
    with pytest.raises(ValueError, match="no share of a core fits"):
        transfer_cpu_from_slowdown(1.2, 4, _shared(4, cores=8))
