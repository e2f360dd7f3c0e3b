"""Batching (loom.transforms.batching, loom.frontend.vmap) against a Python loop over the batch and
against jax.vmap of the same jax.numpy function."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.ir as lir
import loom.numpy as lnp
from loom.frontend.vmap import vmap
from loom.transforms import batching

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")


def _softmax(m, x):
    e = m.exp(x - m.max(x, axis=-1, keepdims=True))
    return e / m.sum(e, axis=-1, keepdims=True)


def _layer_norm(m, x, g):
    mu = m.mean(x, axis=-1, keepdims=True)
    var = m.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) / m.sqrt(var + 1e-5) * g


def _mlp(m, x, w1, b1, w2):
    return m.tanh(x @ w1 + b1) @ w2


# (name, function of (numpy module, *args), per-example argument shapes, in_axes, out_axes);
# a batched argument gets a batch axis of size B inserted at its in_axes entry
CASES = [
    ("add", lambda m, x, y: x + y * 2.0, [(3, 4), (3, 4)], 0, 0),
    ("unary_chain", lambda m, x: m.log(1.0 + m.exp(-m.tanh(x))) + m.sin(x) * m.cos(x), [(4, 3)], 0, 0),
    ("broadcast_shared", lambda m, x, b: m.tanh(x + b), [(3, 4), (4,)], (0, None), 0),
    ("broadcast_batched_small", lambda m, x, b: x * b, [(3, 4), (4,)], (None, 0), 0),
    ("scalar_per_example", lambda m, x, s: x * s + s, [(3,), ()], 0, 0),
    ("where", lambda m, x, y: m.where(x > y, x * y, m.sin(y)), [(3, 4), (3, 4)], 0, 0),
    ("where_shared_cond", lambda m, c, x: m.where(c > 0, x, -x), [(4,), (4,)], (None, 0), 0),
    ("clip", lambda m, x: m.clip(x, -0.5, 0.5), [(6,)], 0, 0),
    ("maximum_relu", lambda m, x: m.maximum(x, 0.0) - m.minimum(x, 0.1), [(6,)], 0, 0),
    ("astype", lambda m, x: (x > 0).astype(m.float32) + x.astype(m.int32).astype(m.float32), [(5,)], 0, 0),
    ("softmax", lambda m, x: _softmax(m, x), [(3, 4)], 0, 0),
    ("layer_norm", lambda m, x, g: _layer_norm(m, x, g), [(3, 8), (8,)], (0, None), 0),
    ("mlp_per_example", lambda m, x, w1, b1, w2: _mlp(m, x, w1, b1, w2), [(5,), (5, 8), (8,), (8, 3)],
     (0, None, None, None), 0),
    ("matmul_lhs_batched", lambda m, a, b: a @ b, [(3, 4), (4, 5)], (0, None), 0),
    ("matmul_rhs_batched", lambda m, a, b: a @ b, [(3, 4), (4, 5)], (None, 0), 0),
    ("matmul_both_batched", lambda m, a, b: a @ b, [(3, 4), (4, 5)], 0, 0),
    ("bmm_lhs_batched", lambda m, a, b: a @ b, [(2, 3, 4), (2, 4, 5)], (1, None), 0),
    ("bmm_rhs_batched", lambda m, a, b: a @ b, [(2, 3, 4), (2, 4, 5)], (None, 2), 0),
    ("matvec", lambda m, a, v: m.dot(a, v), [(3, 4), (4,)], (None, 0), 0),
    ("einsum_batched", lambda m, a, b: m.einsum("bij,bjk->bik", a, b), [(2, 3, 4), (2, 4, 5)], 0, 0),
    ("sum_axis", lambda m, x: m.sum(x, axis=0) + m.mean(x ** 2), [(3, 4)], 0, 0),
    ("max_min_axis", lambda m, x: m.max(x, axis=1) * m.min(x, axis=0)[:3], [(3, 4)], 0, 0),
    ("argmax", lambda m, x: m.argmax(x, axis=-1), [(3, 4)], 0, 0),
    ("var_keepdims", lambda m, x: m.var(x, axis=1, keepdims=True), [(3, 4)], 0, 0),
    ("reshape_transpose", lambda m, x: m.transpose(m.reshape(x, (4, 3))) ** 2, [(3, 4)], 0, 0),
    ("slice", lambda m, a: m.sin(a[1:3, ::2]) + a[-1, :3], [(4, 5)], 0, 0),
    ("reverse", lambda m, a: a[::-1] * m.arange(5.0), [(5,)], 0, 0),
    ("concatenate", lambda m, a, b: m.concatenate([a, b, a], axis=1), [(2, 3), (2, 4)], (0, None), 0),
    ("stack", lambda m, a, b: m.stack([a, b], axis=0), [(3,), (3,)], 0, 0),
    ("pad", lambda m, a: m.pad(a, ((1, 2), (0, 1))) * 3.0, [(3, 4)], 0, 0),
    ("expand_broadcast_to", lambda m, x: m.broadcast_to(x[:, None], (3, 4)), [(3,)], 0, 0),
    ("cumsum", lambda m, x: m.cumsum(m.sin(x), axis=1), [(3, 4)], 0, 0),
    ("in_axes_1", lambda m, x, y: m.sum(x * y, axis=-1), [(3, 4), (3, 4)], 1, 0),
    ("in_axes_last", lambda m, x: _softmax(m, x), [(3, 4)], -1, 0),
    ("out_axes_1", lambda m, x: m.exp(x) @ m.ones((4, 2)), [(3, 4)], 0, 1),
    ("out_axes_neg", lambda m, x, y: m.outer(x, y), [(3,), (4,)], (0, 1), -1),
]

B = 5
_ids = [c[0] for c in CASES]


def _inputs(shapes, in_axes, seed=0):
    rng = np.random.default_rng(seed)
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(shapes)
    out = []
    for s, d in zip(shapes, axes):
        if d is not None:
            s = list(s)
            s.insert(d % (len(s) + 1), B)
        out.append(rng.normal(size=s).astype(np.float32))
    return out, axes


def _loop(fn, args, axes, out_axes):
    outs = []
    for i in range(B):
        ex = [a if d is None else np.take(a, i, axis=d) for a, d in zip(args, axes)]
        outs.append(np.asarray(loom.jit(lambda *a: fn(lnp, *a))(*ex)))
    return np.stack(outs, axis=out_axes)


@pytest.mark.parametrize("name,fn,shapes,in_axes,out_axes", CASES, ids=_ids)
def test_vmap_matches_loop_and_jax(name, fn, shapes, in_axes, out_axes):
    args, axes = _inputs(shapes, in_axes)
    ours = vmap(lambda *a: fn(lnp, *a), in_axes, out_axes)(*args)
    # jitted: one XLA compile for the batched function instead of one per primitive (eager jax)
    theirs = jax.jit(jax.vmap(lambda *a: fn(jnp, *a), in_axes, out_axes))(*args)
    loop = _loop(fn, args, axes, out_axes)
    assert ours.shape == theirs.shape == loop.shape
    assert ours.dtype == np.asarray(theirs).dtype
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours, loop, rtol=1e-5, atol=1e-6)


def test_jit_of_vmap_and_vmap_of_jit():
    x = np.random.default_rng(1).normal(size=(B, 3, 4)).astype(np.float32)
    f = lambda x: _softmax(lnp, x) * 2.0  # noqa: E731
    expected = jax.vmap(lambda x: _softmax(jnp, x) * 2.0)(x)
    np.testing.assert_allclose(loom.jit(vmap(f))(x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(vmap(loom.jit(f))(x), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(vmap(vmap(f))(x), expected, rtol=1e-5, atol=1e-6)


def test_vmap_of_grad_matches_jax():
    rng = np.random.default_rng(2)
    params = {"w": rng.normal(size=(4, 3)).astype(np.float32), "b": rng.normal(size=(3,)).astype(np.float32)}
    xs = rng.normal(size=(B, 4)).astype(np.float32)
    ys = rng.normal(size=(B, 3)).astype(np.float32)

    def loss(m, p, x, y):
        return m.mean((m.tanh(x @ p["w"] + p["b"]) - y) ** 2)

    ours = vmap(loom.grad(lambda p, x, y: loss(lnp, p, x, y)), (None, 0, 0))(params, xs, ys)
    theirs = jax.vmap(jax.grad(lambda p, x, y: loss(jnp, p, x, y)), (None, 0, 0))(params, xs, ys)
    assert set(ours) == {"w", "b"} and ours["w"].shape == (B, 4, 3)
    for k in ours:
        np.testing.assert_allclose(ours[k], np.asarray(theirs[k]), rtol=1e-4, atol=1e-5)


def test_grad_of_vmap():
    x = np.random.default_rng(3).normal(size=(B, 4)).astype(np.float32)
    ours = loom.grad(lambda x: lnp.sum(vmap(lambda r: _softmax(lnp, r) * r)(x) ** 2))(x)
    theirs = jax.grad(lambda x: jnp.sum(jax.vmap(lambda r: _softmax(jnp, r) * r)(x) ** 2))(x)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-4, atol=1e-5)


def test_pytree_in_axes_prefix_and_outputs():
    rng = np.random.default_rng(4)
    p = {"a": rng.normal(size=(3,)).astype(np.float32), "b": rng.normal(size=(B, 3)).astype(np.float32)}
    x = rng.normal(size=(3, B)).astype(np.float32)

    def f(m, p, x):
        return {"s": m.sum(p["a"] * p["b"] * x), "v": (p["b"] + x, p["a"] * 2.0)}

    in_axes = ({"a": None, "b": 0}, 1)
    out_axes = {"s": 0, "v": (1, None)}
    ours = vmap(lambda p, x: f(lnp, p, x), in_axes, out_axes)(p, x)
    theirs = jax.vmap(lambda p, x: f(jnp, p, x), in_axes, out_axes)(p, x)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-5, atol=1e-6)


def test_axis_size_and_unbatched_output():
    w = np.arange(3.0, dtype=np.float32)
    out = vmap(lambda w: w * 2.0, in_axes=None, axis_size=4)(w)
    np.testing.assert_allclose(out, np.broadcast_to(w * 2.0, (4, 3)))
    shared, per = vmap(lambda w, x: (w + 1.0, w * x), in_axes=(None, 0), out_axes=(None, 0))(w, np.ones((4, 3)))
    np.testing.assert_allclose(shared, w + 1.0)
    assert per.shape == (4, 3)


def test_errors():
    x = np.ones((B, 3), np.float32)
    with pytest.raises(ValueError, match="inconsistent sizes"):
        vmap(lambda a, b: a + b)(x, np.ones((B + 1, 3), np.float32))
    with pytest.raises(ValueError, match="at least one non-None"):
        vmap(lambda a: a, in_axes=None)(x)
    with pytest.raises(ValueError, match="axis 2"):
        vmap(lambda a: a, in_axes=2)(x)
    with pytest.raises(ValueError, match="out_axes None"):
        vmap(lambda a: a * 2.0, out_axes=None)(x)


def test_missing_rule_names_op_transformation_and_location():
    text = """
    func.func @main(%x: tensor<4x4xf32>) -> tensor<4x4xf32> {
      %0 = "stablehlo.einsum"(%x, %x) <{einsum_config = "ab,bc->ac"}> : (tensor<4x4xf32>, tensor<4x4xf32>)
             -> tensor<4x4xf32> loc("test_vmap.py":7:3)
      return %0 : tensor<4x4xf32>
    }"""
    with pytest.raises(batching.MissingRuleError) as info:
        batching.vmap_module(lir.parse(text), [0], B)
    msg = str(info.value)
    assert "stablehlo.einsum" in msg and "vmap" in msg and "test_vmap.py" in msg


def _lowered_module(fn, shapes, in_axes):
    args, axes = _inputs(shapes, in_axes)
    ex = [a if d is None else np.take(a, 0, axis=d) for a, d in zip(args, axes)]
    lowered = loom.jit(lambda *a: fn(lnp, *a)).lower(*ex)
    return batching.vmap_module(lowered.module, list(axes), B), args


@pytest.mark.parametrize("name", ["mlp_per_example", "softmax", "matmul_rhs_batched", "pad", "cumsum",
                                  "concatenate", "argmax"])
def test_transformed_module_round_trips(name):
    _, fn, shapes, in_axes, _ = next(c for c in CASES if c[0] == name)
    module, args = _lowered_module(fn, shapes, in_axes)
    module.verify()
    text = lir.print(module)
    parsed = lir.parse(text)
    parsed.verify()
    assert lir.print(parsed) == text
    expected = vmap(lambda *a: fn(lnp, *a), in_axes)(*args)
    np.testing.assert_allclose(loom.execute(text, *args), expected, rtol=1e-5, atol=1e-6)


def test_rules_table_covers_required_ops():
    for name in ["add", "select", "compare", "convert", "clamp", "broadcast_in_dim", "reshape", "transpose",
                 "slice", "concatenate", "reverse", "pad", "dot_general", "reduce", "reduce_window"]:
        assert f"stablehlo.{name}" in batching.BATCH_RULES


_SCALAR_OPERANDS = """
func.func @main(%p: tensor<i1>, %lo: tensor<f32>, %x: tensor<4xf32>, %hi: tensor<f32>) -> (tensor<4xf32>) {
  %0 = "stablehlo.clamp"(%lo, %x, %hi) : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "stablehlo.negate"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = "stablehlo.select"(%p, %0, %1) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %2 : tensor<4xf32>
}
"""


@pytest.mark.parametrize("in_dims", [(None, None, 0, None), (0, 0, None, None), (0, None, 1, 0), (None, 0, 0, 0)])
def test_select_and_clamp_with_scalar_operands(in_dims):
    module = lir.parse(_SCALAR_OPERANDS)
    rng = np.random.default_rng(6)
    per = [np.asarray(True), np.asarray(-0.3, np.float32), rng.normal(size=(4,)).astype(np.float32),
           np.asarray(0.4, np.float32)]
    args = []
    for i, (a, d) in enumerate(zip(per, in_dims)):
        if d is None:
            args.append(a)
            continue
        stacked = np.stack([a if i != 0 else np.asarray(k % 2 == 0) for k in range(B)])
        if i == 2:
            stacked = stacked + np.arange(B, dtype=np.float32)[:, None] * 0.2
        args.append(np.moveaxis(stacked, 0, d))
    out = batching.vmap_module(module, list(in_dims), B)
    out.verify()
    got = loom.execute(lir.print(out), *args)
    for k in range(B):
        ex = [a if d is None else np.take(a, k, axis=d) for a, d in zip(args, in_dims)]
        np.testing.assert_allclose(got[k], loom.execute(module, *ex), rtol=1e-6)


def test_reduce_window_with_batch_axis_inside():
    x = np.random.default_rng(8).normal(size=(6, B, 4)).astype(np.float32)
    ours = vmap(lambda x: lnp.cumsum(x, axis=0) * 2.0 + lnp.cumprod(x, axis=1), in_axes=1, out_axes=2)(x)
    theirs = jax.vmap(lambda x: jnp.cumsum(x, axis=0) * 2.0 + jnp.cumprod(x, axis=1), in_axes=1, out_axes=2)(x)
    assert ours.shape == (6, 4, B)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-5, atol=1e-5)


def test_list_in_axes_and_python_scalar_shared():
    x = np.random.default_rng(9).normal(size=(3, B)).astype(np.float32)
    ours = vmap(lambda x, s: x * s, in_axes=[1, None])(x, 2.5)
    assert ours.dtype == np.float32
    np.testing.assert_allclose(ours, x.T * 2.5, rtol=1e-6)
