"""The special, inverse-trigonometric and hyperbolic functions of `loom.lax` and its composed
conveniences (full, select_n, split, collapse, batch_matmul, scatter_sub, ...) against
`jax.lax`: values, and first and second derivatives where JAX has them, eagerly, under jit and
under vmap."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import jax.numpy as jnp  # noqa: E402
from jax import lax as jlax  # noqa: E402

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402
from loom import lax  # noqa: E402

rng = np.random.default_rng(3)
UNIT = rng.uniform(-0.9, 0.9, 8).astype(np.float32)  # inside every domain below
POSITIVE = rng.uniform(1.2, 4.0, 8).astype(np.float32)

UNARY = {"erf": UNIT, "erfc": UNIT, "erf_inv": UNIT, "lgamma": POSITIVE, "digamma": POSITIVE, "sinh": UNIT,
         "cosh": UNIT, "asin": UNIT, "acos": UNIT, "atan": UNIT, "asinh": UNIT, "acosh": POSITIVE, "atanh": UNIT,
         "reciprocal": POSITIVE, "exp2": UNIT}


@pytest.mark.parametrize("name", list(UNARY))
def test_values_match_jax(name):
    x = UNARY[name]
    want = np.asarray(getattr(jlax, name)(x))
    for got in (getattr(lax, name)(x), loom.jit(getattr(lax, name))(x), loom.vmap(getattr(lax, name))(x)):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_allclose(np.asarray(got), want, rtol=3e-6, atol=1e-6)


@pytest.mark.parametrize("name", list(UNARY))
def test_derivatives_match_jax(name):
    x = UNARY[name]

    def first(m):
        return lambda v: getattr(m, name)(v).sum()
    np.testing.assert_allclose(np.asarray(loom.grad(first(lax))(x)), np.asarray(jax.grad(first(jlax))(x)),
                               rtol=1e-5, atol=1e-6)
    tangent = np.ones_like(x)
    np.testing.assert_allclose(np.asarray(loom.jvp(getattr(lax, name), (x,), (tangent,))[1]),
                               np.asarray(jax.jvp(getattr(jlax, name), (x,), (tangent,))[1]), rtol=1e-5, atol=1e-6)
    second = loom.grad(lambda v: loom.grad(first(lax))(v).sum())(x)
    np.testing.assert_allclose(np.asarray(second), np.asarray(jax.grad(lambda v: jax.grad(first(jlax))(v).sum())(x)),
                               rtol=2e-4, atol=1e-5)


def test_composed_functions_match_jax():
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    which = np.array([[0, 2, 1, 0], [1, 1, 2, 0], [2, 0, 0, 1]], np.int32)
    cases = [x[0], x[1], x[0] * 3.0]
    np.testing.assert_array_equal(lax.select_n(which, *cases), jlax.select_n(which, *cases))
    np.testing.assert_array_equal(loom.jit(lambda w, *c: lax.select_n(w, *c))(which, *cases),
                                  jlax.select_n(which, *cases))
    mask = x[0] > 0
    np.testing.assert_array_equal(lax.select_n(mask, x[0], x[1]), jlax.select_n(mask, x[0], x[1]))
    for got, want in zip(lax.split(x, [1, 2], axis=1), jlax.split(x, [1, 2], axis=1)):
        np.testing.assert_array_equal(got, want)
    assert lax.collapse(x, 1).shape == jlax.collapse(x, 1).shape
    np.testing.assert_array_equal(lax.collapse(x, 0, 2), jlax.collapse(x, 0, 2))
    y = rng.standard_normal((2, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(lax.batch_matmul(x, y), jlax.batch_matmul(x, y), rtol=1e-5)
    fulls = [(lax.full((2, 3), 1.5), jlax.full((2, 3), 1.5)), (lax.full_like(which, 7), jlax.full_like(which, 7)),
             (lax.full_like(x, 2, dtype=np.int32, shape=(4,)), jlax.full_like(x, 2, dtype=np.int32, shape=(4,)))]
    for got, want in fulls:
        assert np.asarray(got).dtype == np.asarray(want).dtype
        np.testing.assert_array_equal(got, want)
    dn = jlax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                      scatter_dims_to_operand_dims=(0,))
    idx = np.array([[1], [0], [1]], np.int32)
    upd = rng.standard_normal((3, 4)).astype(np.float32)
    np.testing.assert_allclose(lax.scatter_sub(x[0], idx, upd, dn), jlax.scatter_sub(x[0], idx, upd, dn), rtol=1e-6)
    g = loom.grad(lambda u: lax.scatter_sub(x[0], idx, u, dn).sum())(upd)
    np.testing.assert_allclose(g, jax.grad(lambda u: jlax.scatter_sub(x[0], idx, u, dn).sum())(upd))


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_jax(n, reverse):
    x = rng.standard_normal((3, n, 2)).astype(np.float32)
    a = rng.uniform(0.5, 1.0, (3, n, 2)).astype(np.float32)

    def linear(m):  # h_t = a_t * h_{t-1} + x_t as pairs: the scan of linear recurrences (SSMs)
        return lambda e1, e2: (e1[0] * e2[0], e2[0] * e1[1] + e2[1])
    for fn_l, fn_j, elems in ((lambda p, q: p + q, lambda p, q: p + q, x),
                              (lnp.maximum, jnp.maximum, x),
                              (linear(lnp), linear(jnp), (a, x)),
                              (lambda p, q: p | q, lambda p, q: p | q, x > 0.5)):
        want = jlax.associative_scan(fn_j, elems, reverse=reverse, axis=1)
        for got in (lax.associative_scan(fn_l, elems, reverse=reverse, axis=1),
                    loom.jit(lambda e, f=fn_l: lax.associative_scan(f, e, reverse=reverse, axis=1))(elems)):
            for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_associative_scan_gradients_and_vmap_match_jax():
    x = rng.standard_normal((6, 3)).astype(np.float32)
    a = rng.uniform(0.5, 1.0, (6, 3)).astype(np.float32)

    def loss(m, scan):
        def f(a, x):
            _, h = scan(lambda e1, e2: (e1[0] * e2[0], e2[0] * e1[1] + e2[1]), (a, x))
            return m.sum(h * h)
        return f
    got = loom.grad(loss(lnp, lax.associative_scan), argnums=(0, 1))(a, x)
    want = jax.grad(loss(jnp, jlax.associative_scan), argnums=(0, 1))(a, x)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(loom.vmap(lambda v: lax.associative_scan(lambda p, q: p + q, v))(x.T),
                               jax.vmap(lambda v: jlax.associative_scan(lambda p, q: p + q, v))(x.T), rtol=1e-6)
