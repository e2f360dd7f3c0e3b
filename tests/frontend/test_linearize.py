"""loom.linearize against jax.linearize, and loom.jvp's has_aux against jax.jvp."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom.frontend.jvp import jvp
from loom.frontend.linearize import linearize

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4)).astype(np.float32)
Y = RNG.normal(size=(4, 2)).astype(np.float32)
TX = RNG.normal(size=(3, 4)).astype(np.float32)
TY = RNG.normal(size=(4, 2)).astype(np.float32)

CASES = [
    ("sin_exp", lambda m, x, y: m.sin(x) * m.exp(x * 0.5)),
    ("matmul_tanh", lambda m, x, y: m.tanh(x @ y)),
    ("reductions", lambda m, x, y: m.sum(x ** 2, axis=1) + m.max(x @ y)),
    ("softmax_like", lambda m, x, y: m.exp(x - m.max(x, axis=1, keepdims=True))
     / m.sum(m.exp(x - m.max(x, axis=1, keepdims=True)), axis=1, keepdims=True)),
    ("indexing", lambda m, x, y: x[np.array([2, 0]), 1:] * y[1:, 0]),
    ("constant_output", lambda m, x, y: (m.sin(x), m.ones((2,), np.float32) * 3.0)),
]


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_linearize_matches_jax(name, fn):
    out, f_jvp = linearize(lambda x, y: fn(lnp, x, y), X, Y)
    j_out, j_f_jvp = jax.linearize(lambda x, y: fn(jnp, x, y), X, Y)
    for o, t in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(j_out)):
        np.testing.assert_allclose(o, np.asarray(t), rtol=1e-5, atol=1e-6)
    for scale in (1.0, -2.5):
        ours = f_jvp(TX * scale, TY)
        theirs = j_f_jvp(TX * scale, TY)
        for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
            np.testing.assert_allclose(o, np.asarray(t), rtol=1e-4, atol=1e-5)


def test_the_linear_function_does_not_recompute_the_primal():
    _, f_jvp = linearize(lambda x: lnp.sin(lnp.exp(x)), X)
    text = str(f_jvp.module)
    # only multiplications by the residuals cos(exp(x)) and exp(x) remain
    for nonlinear in ("stablehlo.sine", "stablehlo.cosine", "stablehlo.exponential"):
        assert nonlinear not in text
    assert f_jvp.n_residuals >= 1
    np.testing.assert_allclose(f_jvp(TX), np.cos(np.exp(X)) * np.exp(X) * TX, rtol=1e-5)


def test_pytrees_and_has_aux():
    def f(p):
        return {"y": lnp.tanh(p["a"] @ p["b"])}, lnp.sum(p["a"])
    primals = {"a": X, "b": Y}
    out, f_jvp, aux = linearize(f, primals, has_aux=True)
    j_out, j_f_jvp, j_aux = jax.linearize(f_jax, primals, has_aux=True)
    np.testing.assert_allclose(out["y"], np.asarray(j_out["y"]), rtol=1e-5)
    np.testing.assert_allclose(aux, np.asarray(j_aux), rtol=1e-5)
    np.testing.assert_allclose(f_jvp({"a": TX, "b": TY})["y"], np.asarray(j_f_jvp({"a": TX, "b": TY})["y"]),
                               rtol=1e-4, atol=1e-5)
    with pytest.raises(TypeError, match="structure of the primals"):
        f_jvp(TX)


def f_jax(p):
    return {"y": jnp.tanh(p["a"] @ p["b"])}, jnp.sum(p["a"])


def test_linearize_inside_jit():
    ours = loom.jit(lambda x, t: linearize(lnp.sin, x)[1](t))(X, TX)
    np.testing.assert_allclose(ours, np.cos(X) * TX, rtol=1e-5)


def test_jvp_has_aux_matches_jax():
    def f(m):
        return lambda x, y: (m.sin(x) @ y, {"norm": m.sum(x ** 2), "n": 3})
    out, tangent, aux = jvp(f(lnp), (X, Y), (TX, TY), has_aux=True)
    j_out, j_tangent, j_aux = jax.jvp(f(jnp), (X, Y), (TX, TY), has_aux=True)
    np.testing.assert_allclose(out, np.asarray(j_out), rtol=1e-5)
    np.testing.assert_allclose(tangent, np.asarray(j_tangent), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(aux["norm"], np.asarray(j_aux["norm"]), rtol=1e-5)
    assert int(aux["n"]) == 3
    with pytest.raises(TypeError, match="must return a pair"):
        jvp(lambda x: lnp.sin(x), (X,), (TX,), has_aux=True)
