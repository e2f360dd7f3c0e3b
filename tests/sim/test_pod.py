"""loom.sim.pod: the per-layer per-device program of a GPT layer under 2-D model x data sharding
has the FLOPs of its matmuls (counted here from the model's shapes), the collectives of the
scheme (which groups, how many); the models are the sizes they are named; and on a slice where
the cost model decomposes some collectives, no decomposition makes the simulated step slower."""

from __future__ import annotations

import pytest

import loom
from loom.ir.attributes import location_line_col
from loom.ir.diagnostics import collect_remarks
from loom.rewrite.pass_manager import PassManager
from loom.sim import pod
from loom.sim.cost import op_flops, ring_positions, tensor_bytes
from loom.sim.simulate import simulate
from loom.transforms.collective_matmul import decompose

TINY = pod.GPT("tiny", layers=2, d_model=256, heads=8, seq_len=64)


def test_models_have_the_sizes_they_are_named():
    scale = {"B": 1e9, "T": 1e12}
    for model in pod.MODELS:
        named = float(model.name[:-1]) * scale[model.name[-1]]
        assert abs(model.parameters - named) / named < 0.02, model
        assert pod.model_axis_sizes(model, pod.CHIPS[model.name]), model


@pytest.mark.parametrize("dx,dy", [(16, 4), (8, 8)])
def test_layer_program_has_the_matmul_flops_and_collectives_of_the_scheme(dx, dy):
    batch = 2 * dx
    module = pod.layer_program(TINY, batch, dx, dy)
    module.verify()
    m, f, s = TINY.d_model, 4 * TINY.d_model, TINY.seq_len
    rows = batch // dx * s  # tokens of one data shard, gathered over the model axis
    heads, head_dim = TINY.heads // dy, m // TINY.heads
    linears = 2 * rows * (m * 3 * m + m * m + m * f + f * m) / dy  # QKV, attention output, FFN in and out
    attention = 2 * (batch // dx) * heads * s * s * head_dim  # one of scores / context
    # forward: the linears and two attention products; backward: twice the linears (input and
    # weight gradients) and four attention products
    want = 3 * linears + 6 * attention
    got = sum(op_flops(op) for op in module.walk() if op.name == "stablehlo.dot_general")
    assert got == pytest.approx(want)
    model_group = list(range(dy))
    data_group = [x * dy for x in range(dx)]
    kinds: dict[tuple[str, tuple[int, ...]], int] = {}
    for op in module.walk():
        if op.name in ("stablehlo.all_gather", "stablehlo.reduce_scatter"):
            group = tuple(op.properties["replica_groups"].to_numpy()[0].tolist())
            kinds[op.name, group] = kinds.get((op.name, group), 0) + 1
    assert kinds == {("stablehlo.all_gather", tuple(model_group)): 4,  # activations over the model axis
                     ("stablehlo.reduce_scatter", tuple(model_group)): 4,
                     ("stablehlo.all_gather", tuple(data_group)): 8,  # weights, forward and backward
                     ("stablehlo.reduce_scatter", tuple(data_group)): 4}  # weight gradients


def test_bad_meshes_are_refused():
    with pytest.raises(ValueError, match="do not split over a 3 x 4 mesh"):
        pod.layer_program(TINY, 6, 3, 4)


def test_the_decompositions_the_cost_model_chooses_never_slow_the_step():
    model = next(m for m in pod.MODELS if m.name == "50B")
    pairs = pod.compare(model, 128, [4, 8])
    assert any(after.transfers for _, after in pairs)  # something was decomposed
    for before, after in pairs:
        assert after.step_time <= before.step_time
        # the same dots in pieces, plus the loops' accumulating adds and index arithmetic
        assert before.layer.flops <= after.layer.flops <= before.layer.flops * (1 + 1e-4)
        assert before.transfers == 0 and before.utilisation <= 1 and after.utilisation <= 1


def _candidates(module) -> list:
    """The collectives past auto mode's size gate that feed a dot (all_gather) or are fed by one
    (reduce_scatter): what the cost model decides on."""
    out = []
    for op in module.walk():
        if op.name == "stablehlo.all_gather":
            full, next_to_dot = op.results[0].type, any(u.name == "stablehlo.dot_general" for u in op.results[0].users)
        elif op.name == "stablehlo.reduce_scatter":
            owner = op.operands[0].owner_op
            full, next_to_dot = op.operands[0].type, owner is not None and owner.name == "stablehlo.dot_general"
        else:
            continue
        if next_to_dot and tensor_bytes(full) >= 256 << 20:
            out.append(op)
    return out


def _where(op) -> str:
    line, col = location_line_col(op.location)[1:]
    return f"{line}:{col}"


def _check_decisions(model: pod.GPT, chips: int, dy: int, bidirectional: bool, check_refusals: bool) -> int:
    """Decompose one layer in auto mode: every simulated chip is no slower; every candidate left
    alone has a remark saying why, and (`check_refusals`) one refused as slower is slower when the
    program decomposes it alone. Returns how many candidates were decomposed."""
    machine = pod.pod_machine(chips)
    base = pod.layer_program(model, 2 * chips, chips // dy, dy)
    devices = sorted({0, chips // 2 + dy // 2, chips - 1})
    before = simulate(base, machine, devices=devices).device_times
    with collect_remarks() as remarks:
        after = simulate(pod.decompose(base, machine, bidirectional), machine, devices=devices).device_times
    assert all(after[d] <= before[d] for d in devices), (after, before)
    why = {r.where.split(":", 1)[1]: r.message for r in remarks}
    decomposed = 0
    for i, coll in enumerate(_candidates(base)):
        if _where(coll) not in why:
            decomposed += 1
            continue
        message = why[_where(coll)]
        assert "would not be faster" in message or "negligible" in message, message
        if check_refusals and "the simulated loop would not be faster" in message:
            alone = loom.ir.parse(str(base))
            decompose(_candidates(alone)[i], bidirectional)
            PassManager.parse("builtin.module(schedule-latency-hiding)").run(alone)
            kinds = ring_positions(coll.groups, machine)
            t_base = simulate(base, machine, devices=kinds).device_times
            t_alone = simulate(alone, machine, devices=kinds).device_times
            assert any(t_alone[d] >= t_base[d] for d in kinds), message
    return decomposed


@pytest.mark.parametrize("bidirectional", [False, True])
def test_chosen_decompositions_never_slow_the_step_and_refused_ones_say_why(bidirectional):
    """50B on 128 chips (a 4x4x8 torus): model axes of 8 (one torus axis) and 16 (a group spanning
    two axes, where ring neighbours can be two hops apart)."""
    model = next(m for m in pod.MODELS if m.name == "50B")
    assert sum(_check_decisions(model, 128, dy, bidirectional, True) for dy in (8, 16)) > 0


@pytest.mark.slow  # every configuration of benchmarks/overlap_pod.py: minutes on a 2-core machine
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("name", [m.name for m in pod.MODELS])
def test_every_pod_configuration_is_no_slower_where_decomposed(name, bidirectional):
    model = next(m for m in pod.MODELS if m.name == name)
    chips = pod.CHIPS[name]
    for dy in pod.model_axis_sizes(model, chips):
        _check_decisions(model, chips, dy, bidirectional, False)
