"""`loom.eval_shape`, `loom.ShapeDtypeStruct`, `loom.block_until_ready`, `loom.device_get`
against JAX's: the same Python source (loom.numpy for jax.numpy) gives the same shapes and dtypes."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402


def model(m):
    def f(p, x):
        h = m.tanh(x @ p["w"] + p["b"])
        return {"y": h, "count": m.sum(h > 0, axis=0), "mean": m.mean(h), "pair": (h.T, x[0] * 2.0)}
    return f


def test_eval_shape_matches_jax():
    p = {"w": ((3, 2), np.float32), "b": ((2,), np.float32)}
    got = loom.eval_shape(model(lnp), {k: loom.ShapeDtypeStruct(*v) for k, v in p.items()},
                          loom.ShapeDtypeStruct((5, 3), np.float32))
    want = jax.eval_shape(model(jnp), {k: jax.ShapeDtypeStruct(*v) for k, v in p.items()},
                          jax.ShapeDtypeStruct((5, 3), np.float32))
    g_leaves, g_tree = jax.tree_util.tree_flatten(got)
    w_leaves, w_tree = jax.tree_util.tree_flatten(want)
    assert g_tree == w_tree
    assert [(g.shape, g.dtype) for g in g_leaves] == [(w.shape, w.dtype) for w in w_leaves]
    assert all(isinstance(g, loom.ShapeDtypeStruct) for g in g_leaves)


def test_eval_shape_takes_arrays_and_computes_nothing():
    calls = []

    def f(x):
        calls.append(1)
        return lnp.concatenate([x, x], axis=0)
    out = loom.eval_shape(f, np.zeros((2, 3), np.float16))
    assert out == loom.ShapeDtypeStruct((4, 3), np.float16) and calls == [1]
    assert out.ndim == 2 and out.size == 12 and "float16" in repr(out)


def test_jit_lowers_shape_dtype_structs():
    text = loom.jit(lambda x: x * 2).lower(loom.ShapeDtypeStruct((4,), np.float32)).as_text()
    assert "tensor<4xf32>" in text


def test_block_until_ready_and_device_get():
    pytest.importorskip("torch")
    x = loom.device_put(np.arange(4, dtype=np.float32), "torch:cpu")
    tree = {"a": x, "b": [np.ones(2), 3]}
    assert loom.block_until_ready(tree)["a"] is x
    host = loom.device_get(tree)
    assert isinstance(host["a"], np.ndarray) and host["b"][1] == 3
    np.testing.assert_array_equal(host["a"], np.arange(4, dtype=np.float32))
