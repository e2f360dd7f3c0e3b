"""The machine description, the cost model and the timeline: presets survive a JSON round trip;
op and collective times equal the roofline / ring formulas worked out here from their inputs
(shapes, bandwidths, latencies); XLA's windowed-einsum inequality flips exactly at its boundary;
the Chrome trace parses with one process per device and one thread per lane."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

import loom
from loom.sim.cost import collective_time, hops, op_bytes, op_flops, op_time, windowed_einsum_decision
from loom.sim.machine import PRESETS, Machine
from loom.sim.timeline import COLORS, Timeline, draw_png

PROGRAM = """func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xbf16>, %u: tensor<2x4xf32>, %i: tensor<i32>)
    -> tensor<8x4xf32> {
  %b2 = stablehlo.convert %b : (tensor<16x4xbf16>) -> tensor<16x4xf32>
  %0 = stablehlo.dot_general %a, %b2, contracting_dims = [1] x [0] :
      (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = stablehlo.add %0, %0 : tensor<8x4xf32>
  %2 = stablehlo.dynamic_update_slice %1, %u, %i, %i :
      (tensor<8x4xf32>, tensor<2x4xf32>, tensor<i32>, tensor<i32>) -> tensor<8x4xf32>
  %3 = stablehlo.reshape %2 : (tensor<8x4xf32>) -> tensor<32xf32>
  return %2 : tensor<8x4xf32>
}"""


def _ops() -> dict[str, loom.ir.core.Operation]:
    return {op.name: op for op in loom.ir.parse(PROGRAM).walk()}


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_presets_round_trip_through_json(name, tmp_path):
    m = Machine.preset(name)
    assert Machine.load(m.save(tmp_path / "m.json")) == m
    assert Machine.named(str(tmp_path / "m.json")) == m and Machine.named(name) == m
    changed = m.with_(link_bandwidth=1.0)
    assert changed.link_bandwidth == 1.0 and changed.peak_flops == m.peak_flops


def test_bad_machines_are_refused_with_where(tmp_path):
    with pytest.raises(ValueError, match="preset"):
        Machine.preset("tpu-v9")
    with pytest.raises(ValueError, match="torus3d needs a topology_shape of 3"):
        Machine("x", 1.0, 1.0, 1.0, 0.0, "torus3d", (4, 4))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"name": "x", "peak_flops": 1.0}))
    with pytest.raises(ValueError, match="bad.json.*missing"):
        Machine.load(path)


def test_op_costs_are_the_roofline_of_their_types():
    ops = _ops()
    dot, add, convert = ops["stablehlo.dot_general"], ops["stablehlo.add"], ops["stablehlo.convert"]
    # dot: 2·M·N·K FLOPs; bytes: both operands and the result, f32 (4 bytes)
    assert op_flops(dot) == 2 * 8 * 4 * 16
    assert op_bytes(dot) == 4 * (8 * 16 + 16 * 4 + 8 * 4)
    assert op_flops(add) == 8 * 4 and op_bytes(add) == 3 * 4 * 8 * 4
    assert op_bytes(convert) == 2 * 16 * 4 + 4 * 16 * 4  # bf16 in, f32 out
    # an in-place update touches the update only (read and written); a reshape is a view
    assert op_bytes(ops["stablehlo.dynamic_update_slice"]) == 2 * 4 * 2 * 4
    assert op_bytes(ops["stablehlo.reshape"]) == 0
    compute_bound = Machine("c", peak_flops=1e3, memory_bandwidth=1e9, link_bandwidth=1.0, link_latency=0.0)
    memory_bound = compute_bound.with_(peak_flops=1e12, memory_bandwidth=1e3)
    assert op_time(dot, compute_bound) == pytest.approx(2 * 8 * 4 * 16 / 1e3)
    assert op_time(dot, memory_bound) == pytest.approx(4 * (8 * 16 + 16 * 4 + 8 * 4) / 1e3)
    # a dispatch cost is added to every op that does work, not to views
    slow_dispatch = compute_bound.with_(op_overhead=1e-3)
    assert op_time(dot, slow_dispatch) == pytest.approx(op_time(dot, compute_bound) + 1e-3)
    assert op_time(ops["stablehlo.reshape"], slow_dispatch) == 0.0


def test_collective_times_follow_the_ring_and_torus_algorithms():
    w, lat, v = 2e9, 3e-6, 1 << 20
    ring = Machine("r", 1e12, 1e12, w, lat, "ring", (8,))
    # bidirectional ring all-gather: ceil((N-1)/2) hops, each direction carrying half of (N-1)/N of V
    assert collective_time("all_gather", v, 8, ring) == pytest.approx(math.ceil(7 / 2) * lat + v * 7 / 8 / (2 * w))
    assert collective_time("reduce_scatter", v, 8, ring) == collective_time("all_gather", v, 8, ring)
    assert collective_time("all_reduce", v, 8, ring) == pytest.approx(2 * collective_time("all_gather", v, 8, ring))
    assert collective_time("collective_permute", v, 8, ring) == pytest.approx(lat + v / w)
    # a group of 16 on a 4x4x4 torus spans two axes of 4: both directions of 2 axes carry data
    torus = ring.with_(topology="torus3d", topology_shape=(4, 4, 4))
    assert collective_time("all_gather", v, 16, torus) == pytest.approx(2 * math.ceil(3 / 2) * lat
                                                                       + v * 15 / 16 / (2 * 2 * w))
    assert collective_time("all_to_all", v, 16, torus) == pytest.approx(2 * 2 * lat + v * (4 + 4) / (8 * 2 * w))
    # a switch: one link per device, ring steps
    switch = ring.with_(topology="switch")
    assert collective_time("all_gather", v, 8, switch) == pytest.approx(7 * lat + v * 7 / 8 / w)
    assert collective_time("all_gather", v, 1, switch) == 0.0
    with pytest.raises(ValueError, match="unknown collective"):
        collective_time("gather", v, 8, ring)


def test_hops_on_a_torus_use_the_wraparound():
    torus = Machine("t", 1.0, 1.0, 1.0, 0.0, "torus2d", (4, 4))
    assert hops(0, 3, torus) == 1 and hops(0, 12, torus) == 1  # around the ring of each axis
    assert hops(0, 5, torus) == 2 and hops(0, 10, torus) == 4
    assert hops(0, 7, Machine.preset("h100")) == 1


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("kind", ["all_gather", "reduce_scatter"])
def test_windowed_einsum_decision_flips_at_the_inequality_boundary(kind, bidirectional):
    m = Machine("r", 1e12, 1e12, 1e9, 1e-6, "ring", (8,))
    n, full = 8, 64 << 20
    t_comm = collective_time(kind, full, n, m)
    steps = math.ceil((n - 1) / 2) if bidirectional else n - 1
    mult = steps * (m.link_latency + full / n / m.link_bandwidth) / t_comm
    extra = t_comm * mult * 2 / n
    # where T_comp < T_comm·m the inequality max(T_comp, T_comm·m) + extra < T_comp + T_comm reads
    # T_comp > T_comm·(m - 1) + extra
    boundary = t_comm * (mult - 1) + extra
    assert boundary < t_comm * mult  # the boundary lies in that regime
    below = windowed_einsum_decision(kind, boundary * (1 - 1e-6) * m.peak_flops, full, n, m, bidirectional)
    above = windowed_einsum_decision(kind, boundary * (1 + 1e-6) * m.peak_flops, full, n, m, bidirectional)
    assert not below.decompose and above.decompose
    assert below.t_after >= below.t_before and above.t_after < above.t_before
    assert "T_comp" in below.reason and "not be faster" in below.reason
    assert windowed_einsum_decision(kind, 1e9, full, 1, m).decompose is False


def test_chrome_trace_has_a_process_per_device_and_a_thread_per_lane(tmp_path):
    t = Timeline("test")
    for device in range(3):
        t.add(device, "compute", "dot", 0.0, 2e-6, flops=10)
        t.add(device, "link+", "send up", 0.5e-6, 1.5e-6)
        t.add(device, "link-", "send down", 1e-6, 3e-6)
    t.add(0, "compute", "add", 2e-6, 2.5e-6)
    trace = json.loads(t.write_chrome(tmp_path / "trace.json").read_text())
    spans = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert {e["pid"] for e in spans} == {0, 1, 2}
    for device in range(3):
        threads = {e["args"]["name"]: e["tid"] for e in trace["traceEvents"]
                   if e["ph"] == "M" and e["name"] == "thread_name" and e["pid"] == device}
        assert sorted(threads) == sorted(["compute", "link+", "link-"]) and len(set(threads.values())) == 3
        lane_of = {"dot": "compute", "add": "compute", "send up": "link+", "send down": "link-"}
        assert all(e["tid"] == threads[lane_of[e["name"]]] for e in spans if e["pid"] == device)
    assert [s.name for s in t.spans(0, "compute")] == ["dot", "add"]
    assert next(e for e in spans if e["name"] == "add")["ts"] == pytest.approx(2.0)  # microseconds
    assert t.busy(0, "compute") == pytest.approx(2.5e-6)
    with pytest.raises(ValueError, match="ends before it starts"):
        t.add(0, "compute", "x", 1.0, 0.0)


def _has_color(image: np.ndarray, name: str) -> bool:
    from matplotlib.colors import to_rgb
    return bool((np.abs(image[..., :3] - np.array(to_rgb(name))) < 0.02).all(-1).any())


def test_timelines_draw_as_a_png_with_a_row_per_device_and_lane_in_its_lane_color(tmp_path):
    import matplotlib.image
    before, after = Timeline("before"), Timeline("after")
    for device in range(2):
        before.add(device, "compute", "dot", 0.0, 4e-3)
        before.add(device, "link+", "send", 4e-3, 6e-3)
        after.add(device, "compute", "dot", 0.0, 4e-3)
        after.add(device, "link-", "send", 1e-3, 3e-3)
    image = matplotlib.image.imread(draw_png({"before": before, "after": after}, tmp_path / "t.png", dpi=50))
    assert image.shape[:2] == (round((1.2 + 0.45 * 8) * 50), 12 * 50)  # 8 rows: 2 devices x 2 lanes, twice
    assert all(_has_color(image, COLORS[lane]) for lane in ("compute", "link+", "link-"))
    compute_only = Timeline("compute only")
    compute_only.add(0, "compute", "dot", 0.0, 1e-3)
    image = matplotlib.image.imread(draw_png({"compute only": compute_only}, tmp_path / "c.png", dpi=50))
    assert image.shape[:2] == (round((1.2 + 0.45) * 50), 12 * 50)
    assert _has_color(image, COLORS["compute"])
    assert not _has_color(image, COLORS["link+"]) and not _has_color(image, COLORS["link-"])


def test_convolution_and_reduction_flops_come_from_their_shapes():
    f = loom.jit(lambda x, w: loom.lax.conv_general_dilated(x, w, (1, 1), "VALID", feature_group_count=2).sum(-1))
    module = f.lower(np.zeros((2, 4, 9, 9), np.float32), np.zeros((6, 2, 3, 3), np.float32)).module
    ops = {op.name: op for op in module.walk()}
    # each of the 2·6·7·7 outputs takes a 3x3 window of its group's 4 / 2 input features
    assert op_flops(ops["stablehlo.convolution"]) == 2 * (2 * 6 * 7 * 7) * (3 * 3 * 4 // 2)
    assert op_flops(ops["stablehlo.reduce"]) == 2 * 6 * 7 * 7  # one add per element reduced
