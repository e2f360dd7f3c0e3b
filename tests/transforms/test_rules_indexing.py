"""Gradients, tangents and batching of gather, scatter, dynamic_slice, dynamic_update_slice,
convolution and sort (and of products, cumulative products, clamp, remainder, atan2), against
jax.grad / jax.jvp / jax.vmap, float64 finite differences and a Python loop over the batch."""

from __future__ import annotations

import numpy as np
import pytest

import loom
import loom.numpy as lnp
from loom import lax

# float64 results and int64 indices are checked: 64-bit values on
pytestmark = pytest.mark.usefixtures("loom_x64")

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
jl = jax.lax

RNG = np.random.default_rng(0)
X = RNG.normal(size=(3, 4, 5)).astype(np.float32)
T = RNG.normal(size=(3, 4, 5)).astype(np.float32)
IDX = np.array([2, 0, 2, 1], np.int32)


def _lax(m):
    return lax if m is lnp else jl


def _close(ours, theirs, tol=1e-4):
    a, b = jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert np.shape(u) == np.shape(v)
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=tol, atol=tol)


def _zeroed(x):
    x = x.copy()
    x[0, 1, 2] = 0.0
    x[1, 1, 3] = 0.0
    return x


# (name, f(m, x) -> array): m is lnp or jnp; used for grad (of sum(sin(f))), jvp and vmap
CASES = [
    ("gather_array", lambda m, x: x[IDX, 1:3]),
    ("gather_separated", lambda m, x: x[np.array([0, 2]), :, np.array([4, 1])]),
    ("gather_clamped", lambda m, x: x[np.array([5, -1, -9])]),
    ("gather_strided", lambda m, x: x[np.array([1, 0]), ::2, ::-2]),
    ("take", lambda m, x: m.take(x, np.array([3, 0, 3]), axis=1)),
    ("take_along_axis", lambda m, x: m.take_along_axis(x, m.argsort(x, axis=2), axis=2)),
    ("scatter_add_duplicates", lambda m, x: x.at[IDX, 1].add(x[0, 0] * 3.0)),
    ("scatter_add_dropped", lambda m, x: x.at[np.array([4, -4, 1])].add(x[2] * 2.0)),
    ("scatter_set_duplicates", lambda m, x: x.at[IDX, 1].set(x[0, 0] * 3.0)),
    ("scatter_set_window", lambda m, x: x.at[:, 1:3].set(x[:, 2:4, ::-1] ** 2)),
    ("scatter_multiply_constant", lambda m, x: x.at[np.array([1, 1])].multiply(3.0)),
    ("scatter_max_ties", lambda m, x: x.at[np.array([0, 2, 0, 7]), 1].max(x[np.array([1, 0, 1, 2]), 1] * 0.5)),
    ("scatter_min_window", lambda m, x: x.at[:, np.array([1, 1])].min(x[:, :2])),
    ("scatter_multiply_unique", lambda m, x: x.at[np.array([0, 2, 7])].multiply(x[1] * 2.0, unique_indices=True)),
    ("scatter_divide_constant", lambda m, x: x.at[:, 2].divide(2.0)),
    ("sort", lambda m, x: m.sort(x, axis=1)),
    ("sort_last", lambda m, x: m.sort(x * 2.0)),
    ("prod", lambda m, x: m.prod(_zeroed(np.ones_like(X)) * x, axis=(0, 2))),
    ("prod_all", lambda m, x: m.prod(x[0])),
    ("cumprod", lambda m, x: m.cumprod(_zeroed(np.ones_like(X)) * x, axis=2)),
    ("clip", lambda m, x: m.clip(x, -0.5, 0.6)),
    ("remainder", lambda m, x: m.remainder(x * 3.0, 0.7)),
    ("arctan2", lambda m, x: m.arctan2(x, x[0] + 2.0)),
    ("tan", lambda m, x: m.tan(x * 0.4)),
    ("cbrt", lambda m, x: _lax(m).cbrt(x * x + 1.0)),
    ("dynamic_slice", lambda m, x: _lax(m).dynamic_slice(x, (np.int32(1), np.int32(2), np.int32(4)), (2, 2, 2))),
    ("dynamic_update_slice", lambda m, x: _lax(m).dynamic_update_slice(x, x[:2, :3, :2] ** 2,
                                                                        (np.int32(2), np.int32(0), np.int32(1)))),
    ("max_pool", lambda m, x: _lax(m).reduce_window(x, -np.inf, _lax(m).max, (1, 2, 2), (1, 2, 2), "VALID")),
    ("min_window_same", lambda m, x: _lax(m).reduce_window(x, np.inf, _lax(m).min, (1, 3, 2), (1, 1, 2), "SAME")),
    ("cummax", lambda m, x: _lax(m).cummax(x, 1)),
    ("conv", lambda m, x: _lax(m).conv_general_dilated(x[None], x[None, :, :2, :2] * 0.5, (1, 2), "SAME")),
]


# JAX drops the cotangent of a clamped out-of-bounds read (its transpose scatters in "drop" mode);
# loom sends it to the element that was read, which is what finite differences measure.
JAX_GRAD_CASES = [c for c in CASES if c[0] != "gather_clamped"]


@pytest.mark.parametrize("name,fn", JAX_GRAD_CASES, ids=[c[0] for c in JAX_GRAD_CASES])
def test_grad_matches_jax(name, fn):
    ours = loom.grad(lambda x: lnp.sum(lnp.sin(fn(lnp, x))))(X)
    theirs = jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(fn(jnp, x)))))(X)
    _close(ours, theirs)


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_jvp_matches_jax(name, fn):
    theirs = jax.jit(lambda x, t: jax.jvp(lambda v: fn(jnp, v), (x,), (t,)))(X, T)
    _close(loom.jvp(lambda x: fn(lnp, x), (X,), (T,)), theirs)


@pytest.mark.parametrize("name,fn", CASES, ids=[c[0] for c in CASES])
def test_vmap_matches_jax_and_a_loop(name, fn):
    xb = np.stack([X, X * 0.5 - 1.0])
    ours = loom.vmap(lambda x: fn(lnp, x))(xb)
    _close(ours, jax.jit(jax.vmap(lambda x: fn(jnp, x)))(xb))
    _close(ours, np.stack([np.asarray(loom.jit(lambda x: fn(lnp, x))(x)) for x in xb]))


FD = ["gather_array", "gather_clamped", "scatter_add_duplicates", "scatter_set_duplicates", "scatter_max_ties", "sort",
      "prod",
      "cumprod", "dynamic_update_slice", "max_pool", "conv"]


@pytest.mark.parametrize("name", FD)
def test_grad_matches_float64_finite_differences(name):
    fn = dict((c[0], c[1]) for c in CASES)[name]
    x = X.astype(np.float64)

    def f(v):
        return lnp.sum(lnp.sin(fn(lnp, v)) * lnp.cos(fn(lnp, v)))
    g = loom.grad(f)(x)
    assert g.dtype == np.float64
    value = loom.jit(f)
    rng = np.random.default_rng(1)
    eps = 1e-6
    for _ in range(4):
        idx = tuple(int(rng.integers(0, d)) for d in x.shape)
        plus, minus = x.copy(), x.copy()
        plus[idx] += eps
        minus[idx] -= eps
        fd = (float(value(plus)) - float(value(minus))) / (2 * eps)
        np.testing.assert_allclose(g[idx], fd, rtol=1e-5, atol=1e-7)


def test_second_order_through_gather_and_scatter():
    def f(m):
        return lambda x: m.sum(m.sin(x.at[IDX, 1].add(x[0, 0] ** 2)[np.array([2, 1]), 1:]) ** 2)
    ours = loom.grad(lambda x: lnp.sum(loom.grad(f(lnp))(x) ** 2))(X)
    theirs = jax.jit(jax.grad(lambda x: jnp.sum(jax.grad(f(jnp))(x) ** 2)))(X)
    _close(ours, theirs, 1e-3)


def test_vmap_of_traced_indices():
    xb = np.stack([X, -X, 2 * X])
    ib = np.array([0, 2, 1], np.int32)
    cases = [
        (lambda x, i: x[i], (0, 0)),
        (lambda x, i: x[:, i], (None, 0)),
        (lambda x, i: x.at[i].set(1.0), (None, 0)),
        (lambda x, i: x.at[i, 1].add(x[0, 0]), (0, 0)),
        (lambda x, i: x.at[i].add(x[1]), (0, None)),
        (lambda x, i: lax.dynamic_slice(x, (i, np.int32(1), i), (1, 2, 2)) if True else None, (0, 0)),
        (lambda x, i: lax.dynamic_update_slice(x, x[:1, :2] * 2.0, (i, i, np.int32(0))), (0, 0)),
    ]
    for f, axes in cases:
        x_in = xb if axes[0] == 0 else X
        i_in = ib if axes[1] == 0 else np.int32(1)
        ours = loom.vmap(f, axes)(x_in, i_in)
        jf = f
        if f is cases[5][0]:
            def jf(x, i):
                return jl.dynamic_slice(x, (i, np.int32(1), i), (1, 2, 2))
        if f is cases[6][0]:
            def jf(x, i):
                return jl.dynamic_update_slice(x, x[:1, :2] * 2.0, (i, i, np.int32(0)))
        _close(ours, jax.jit(jax.vmap(jf, axes))(jnp.asarray(x_in), i_in))


def test_dynamic_update_slice_grad_of_both_operands():
    u = RNG.normal(size=(2, 4, 3)).astype(np.float32)

    def f(m):
        return lambda x, u: m.sum(m.sin(_lax(m).dynamic_update_slice(x, u, (np.int32(5), np.int32(0), np.int32(1)))))
    _close(loom.grad(f(lnp), (0, 1))(X, u), jax.jit(jax.grad(f(jnp), (0, 1)))(X, u))


CONV = [
    dict(ls=(2, 3, 7, 6), rs=(4, 3, 3, 2), kw=dict(window_strides=(2, 1), padding="SAME", rhs_dilation=(1, 2))),
    dict(ls=(2, 3, 7, 6), rs=(4, 3, 3, 2), kw=dict(window_strides=(2, 2), padding=((1, 2), (0, 1)),
                                                  lhs_dilation=(2, 1))),
    dict(ls=(2, 4, 7, 6), rs=(6, 2, 3, 2), kw=dict(window_strides=(1, 2), padding="SAME", feature_group_count=2)),
    dict(ls=(4, 3, 7, 6), rs=(4, 3, 3, 2), kw=dict(window_strides=(1, 1), padding="VALID", batch_group_count=2)),
    dict(ls=(2, 7, 6, 3), rs=(3, 2, 3, 4), kw=dict(window_strides=(1, 1), padding="SAME",
                                                  dimension_numbers=("NHWC", "HWIO", "NHWC"))),
]


@pytest.mark.parametrize("cfg", CONV, ids=[str(i) for i in range(len(CONV))])
def test_convolution_rules_match_jax(cfg):
    x = RNG.normal(size=cfg["ls"]).astype(np.float32)
    w = RNG.normal(size=cfg["rs"]).astype(np.float32)

    def f(m):
        return lambda x, w: m.conv_general_dilated(x, w, **cfg["kw"])
    jit = jax.jit
    _close(loom.jit(f(lax))(x, w), jit(f(jl))(x, w))
    _close(loom.grad(lambda x, w: lnp.sum(lnp.sin(f(lax)(x, w))), (0, 1))(x, w),
           jit(jax.grad(lambda x, w: jnp.sum(jnp.sin(f(jl)(x, w))), (0, 1)))(x, w))
    tangents = (w.sum() * x, x.sum() * w)
    _close(loom.jvp(f(lax), (x, w), tangents), jit(lambda p, t: jax.jvp(f(jl), p, t))((x, w), tangents))
    xb, wb = np.stack([x, x * 2, x - 1]), np.stack([w, w * 0.5, -w])
    _close(loom.vmap(f(lax))(xb, wb), jit(jax.vmap(f(jl)))(xb, wb))
    _close(loom.vmap(f(lax), (0, None))(xb, w), jit(jax.vmap(f(jl), (0, None)))(xb, w))
    _close(loom.vmap(f(lax), (None, 0))(x, wb), jit(jax.vmap(f(jl), (None, 0)))(x, wb))


def test_scatter_multiply_of_traced_updates_without_unique_indices_is_a_missing_rule_error():
    with pytest.raises(NotImplementedError, match=r"vjp.*stablehlo\.scatter.*multiply"):
        loom.grad(lambda x: lnp.sum(x.at[np.array([0, 1])].multiply(x[2])))(X)


def test_sort_of_several_operands_batches_and_differentiates():
    def f(m):
        return lambda x: _lax(m).sort((x[0], x[1]), dimension=1, num_keys=1)[1]
    xb = np.stack([X, X[::-1]])
    _close(loom.vmap(f(lnp))(xb), jax.jit(jax.vmap(f(jnp)))(xb))
    _close(loom.grad(lambda x: lnp.sum(lnp.sin(f(lnp)(x))))(X),
           jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(f(jnp)(x)))))(X))
    _close(loom.jvp(f(lnp), (X,), (T,)), jax.jit(lambda x, t: jax.jvp(f(jnp), (x,), (t,)))(X, T))
