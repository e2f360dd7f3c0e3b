"""loom.sim.pod: the per-layer per-device program of a GPT layer under 2-D model x data sharding
has the FLOPs of its matmuls (counted here from the model's shapes), the collectives of the
scheme (which groups, how many); the models are the sizes they are named; and on a slice where
the cost model decomposes some collectives, no decomposition makes the simulated step slower."""

from __future__ import annotations

import pytest

from loom.sim import pod
from loom.sim.cost import op_flops

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
