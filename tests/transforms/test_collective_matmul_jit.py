"""`loom.jit(f, in_shardings=..., out_shardings=..., overlap=...)` runs decompose-collective-matmul
on the partitioned program. Oracles: the same jit with overlap="off" (the undecomposed program on
the same mesh runtime) and the function run unsharded on one device; gradients (jit of loom.grad)
in float64, where the all-gather loop's transpose, the reduce-scatter loop, computes the
gradient."""

from __future__ import annotations

import numpy as np
import pytest

import loom
from loom.ir.diagnostics import collect_remarks
from loom.sharding import Mesh, NamedSharding, P
from loom.tree_util import tree_leaves

MESH = Mesh(np.arange(4), ("x",))
MESH_2D = Mesh(np.arange(8).reshape(2, 4), ("d", "m"))


def _s(mesh: Mesh, *spec) -> NamedSharding:
    return NamedSharding(mesh, P(*spec))


def mlp(x, w1, w2):
    """A sequence-parallel MLP block: x split by rows, w1 by columns, w2 by rows."""
    return loom.numpy.tanh(x @ w1) @ w2


def loss(x, w):
    return loom.numpy.sum(loom.numpy.tanh(x @ w) ** 2)


# x split along its batch dimension, gathered before a batched matmul with the replicated w
batched = loom.shard_map(lambda x, w: loom.numpy.einsum("bmk,bkn->bmn", loom.lax.all_gather(x, "x", axis=0, tiled=True),
                                                        w),
                         mesh=MESH, in_specs=(P("x", None, None), P()), out_specs=P(),
                         check_vma=False)  # the gathered product is equal on every device


def _values(shapes, dtype=np.float32, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _program(jitted, args) -> list[str]:
    """The names of the ops of the partitioned program the jit runs."""
    return [op.name for op in jitted.lower(*args).compile().executable.module.walk()]


# name -> (function, mesh, in specs, out spec, shapes, bit for bit)
CASES = {
    "sequence_parallel_mlp": (mlp, MESH, [("x", None), (None, "x"), ("x", None)], ("x", None),
                              [(8, 6), (6, 8), (8, 6)], False),
    "batch_split": (batched, MESH, [("x", None, None), ()], (), [(4, 3, 5), (4, 5, 8)], True),
    "two_dimensional_mesh": (mlp, MESH_2D, [("m", None), (None, "m"), ("m", "d")], ("m", "d"),
                             [(8, 6), (6, 8), (8, 6)], False),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_equal_with_and_without_overlap(name):
    """overlap="on" replaces the program's gathers / reduce-scatters next to dots by ring loops;
    the values are those of overlap="off" (bit for bit when only whole blocks are computed, to
    float tolerance when blocks of a contraction are summed one by one) and of the unsharded run.
    overlap="auto" on these small programs leaves them as they are (XLA's 256 MiB gate)."""
    f, mesh, in_specs, out_spec, shapes, exact = CASES[name]
    args = _values(shapes)
    jits = {mode: loom.jit(f, in_shardings=tuple(_s(mesh, *p) for p in in_specs), out_shardings=_s(mesh, *out_spec),
                           overlap=mode) for mode in ("off", "on", "auto")}
    off, on = _program(jits["off"], args), _program(jits["on"], args)
    assert {"stablehlo.all_gather", "stablehlo.reduce_scatter"} & set(off)
    assert "stablehlo.while" in on and "stablehlo.collective_permute" in on
    assert not {"stablehlo.all_gather", "stablehlo.reduce_scatter"} & set(on)
    assert _program(jits["auto"], args) == off
    want = np.asarray(jits["off"](*args))
    got = np.asarray(jits["on"](*args))
    if exact:
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_array_equal(np.asarray(jits["auto"](*args)), want)
    np.testing.assert_allclose(got, np.asarray(loom.jit(f)(*args)), rtol=1e-5, atol=1e-5)


def test_a_gather_and_the_scatter_its_matmul_feeds_become_one_loop():
    """shard_map's sequence-parallel MLP (gather x, matmul, gelu, matmul, psum_scatter): with
    overlap="on" the two collectives become one fused loop, with overlap="off"'s values."""
    def block(x, w1, w2):
        h = loom.nn.gelu(loom.lax.all_gather(x, "x", axis=0, tiled=True) @ w1)
        return loom.lax.psum_scatter(h @ w2, "x", scatter_dimension=0, tiled=True)

    specs = (P("x", None), P(None, "x"), P("x", None))
    body = loom.shard_map(block, mesh=MESH, in_specs=specs, out_specs=P("x", None))
    args = _values([(8, 6), (6, 8), (8, 6)], seed=3)
    jits = {mode: loom.jit(body, in_shardings=tuple(NamedSharding(MESH, p) for p in specs),
                           out_shardings=_s(MESH, "x", None), overlap=mode) for mode in ("off", "on")}
    on = _program(jits["on"], args)
    assert on.count("stablehlo.while") == 1 and not {"stablehlo.all_gather", "stablehlo.reduce_scatter"} & set(on)
    np.testing.assert_allclose(np.asarray(jits["on"](*args)), np.asarray(jits["off"](*args)), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mesh", [MESH, MESH_2D], ids=["1d", "2d"])
def test_gradients_of_the_decomposed_program(mesh):
    """jit(grad(loss), overlap="on") in float64, x and w split by columns: the forward gathers x
    (on the contracting dimension) and w, and the gradient reduce-scatters dx (the gather's
    transpose). Every one becomes a loop (the all-gather loops and, for the transpose, a
    reduce-scatter loop), and the gradients are those of overlap="off" and of the unsharded
    program to float64 tolerance."""
    axis = mesh.axis_names[-1]
    other = mesh.axis_names[0] if len(mesh.axis_names) > 1 else None
    specs = (_s(mesh, other, axis), _s(mesh, None, axis))
    with loom.config.override(enable_x64=True):
        args = _values([(8, 8), (8, 8)], np.float64, seed=1)
        grad = loom.grad(loss, argnums=(0, 1))
        jits = {mode: loom.jit(grad, in_shardings=specs, out_shardings=specs, overlap=mode) for mode in ("off", "on")}
        off = _program(jits["off"], args)
        with collect_remarks() as remarks:
            on = _program(jits["on"], args)
        assert off.count("stablehlo.reduce_scatter") == 1 and off.count("stablehlo.all_gather") == 2
        assert not {"stablehlo.all_gather", "stablehlo.reduce_scatter"} & set(on) and not remarks
        assert on.count("stablehlo.while") == 3
        want = [np.asarray(g) for g in tree_leaves(jits["off"](*args))]
        got = [np.asarray(g) for g in tree_leaves(jits["on"](*args))]
        single = [np.asarray(g) for g in tree_leaves(loom.jit(grad)(*args))]
    for g, w, s in zip(got, want, single):
        assert g.dtype == np.float64
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(g, s, rtol=1e-12, atol=1e-12)


def test_gradient_against_finite_differences():
    """The decomposed gradient program against central differences of the unsharded loss."""
    specs = (_s(MESH, None, "x"), _s(MESH, None, "x"))
    with loom.config.override(enable_x64=True):
        args = _values([(8, 8), (8, 8)], np.float64, seed=2)
        grads = loom.jit(loom.grad(loss, argnums=(0, 1)), in_shardings=specs, out_shardings=specs, overlap="on")(*args)
        unsharded = loom.jit(loss)
        rng = np.random.default_rng(3)
        for i, g in enumerate(tree_leaves(grads)):
            direction, eps = rng.standard_normal(args[i].shape), 1e-6
            plus = [a + eps * direction if j == i else a for j, a in enumerate(args)]
            minus = [a - eps * direction if j == i else a for j, a in enumerate(args)]
            numeric = (float(unsharded(*plus)) - float(unsharded(*minus))) / (2 * eps)
            np.testing.assert_allclose(float(np.sum(np.asarray(g) * direction)), numeric, rtol=1e-6)


def test_overlap_option_is_checked():
    with pytest.raises(ValueError, match="overlap must be 'auto', 'on' or 'off', got 'yes'"):
        loom.jit(mlp, overlap="yes")


def test_the_machine_argument_decides_auto_overlap():
    """(16384 x 8192) @ (8192 x 8192) with rhs's columns split over 4 devices: the partitioned
    program gathers 256 MiB of rhs (the size gate) into a dot about as long as the gather on an
    H200 (989e12 FLOP/s, 450e9 B/s links), so the loop pays there; on a TPU v4 (275e12 FLOP/s,
    4.5e10 B/s links) the loop's one-way transfers (4.5 ms) outlast the dot (2 ms) by more than
    the overlap saves, and XLA's inequality refuses. Compiled only: nothing runs."""
    from loom.sharding.partitioning import partition
    from loom.sim.cost import collective_matmul_decision
    from loom.sim.machine import Machine

    mesh = Mesh(np.arange(4), ("x",))
    a, b = np.zeros((16384, 8192), np.float32), np.zeros((8192, 8192), np.float32)
    shardings = dict(in_shardings=(NamedSharding(mesh, P("x", None)), NamedSharding(mesh, P(None, "x"))),
                     out_shardings=NamedSharding(mesh, P("x", None)))
    undecomposed = partition(loom.jit(lambda x, y: x @ y, **shardings).lower(a, b).module)
    gather = next(op for op in undecomposed.walk() if op.name == "stablehlo.all_gather")
    dot = next(op for op in undecomposed.walk() if op.name == "stablehlo.dot_general")
    for machine, want in (("h200", True), ("tpu-v4", False), (Machine.preset("h100"), True)):
        assert collective_matmul_decision(gather, dot, Machine.named(machine)).decompose is want
        with collect_remarks() as remarks:
            compiled = loom.jit(lambda x, y: x @ y, overlap="auto", machine=machine, **shardings).lower(a, b).compile()
        names = {op.name for op in compiled.executable.module.walk()}
        assert ("stablehlo.while" in names) is want, machine
        assert bool(remarks) is not want and all("on tpu-v4" in r.message for r in remarks), machine
    with pytest.raises(ValueError, match="jit: machine='h900': 'h900' is neither a machine preset"):
        loom.jit(lambda x, y: x @ y, overlap="auto", machine="h900")
