"""The second part of loom.numpy (linspace ... argsort) and loom.nn against numpy and jax.nn, on
random inputs, traced through loom.jit and run eagerly on numpy arrays."""

from __future__ import annotations

import warnings

import jax
import numpy as np
import pytest

import loom
import loom.nn as nn
import loom.numpy as lnp
from loom.frontend import jit

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(7)


def rand(shape, dtype=np.float32):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) > 0.5
    if dtype.kind in "iu":
        return RNG.integers(0 if dtype.kind == "u" else -4, 5, size=shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


def check(fn, np_fn, *args, rtol=1e-5, atol=1e-6, dtype=None, eager=True):
    """`fn` under jit (and eagerly on numpy arrays) against `np_fn`."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        expected = np_fn(*args)
        eager_out = fn(*args) if eager else None
    runs = [jit(fn)(*args)] + ([eager_out] if eager else [])
    for out in runs:
        outs, exps = (out, expected) if isinstance(out, (tuple, list)) else ((out,), (expected,))
        assert len(outs) == len(exps)
        for o, e in zip(outs, exps):
            e = np.asarray(e)
            assert np.shape(o) == e.shape, (np.shape(o), e.shape)
            np.testing.assert_allclose(np.asarray(o, dtype=np.float64), e.astype(np.float64), rtol=rtol, atol=atol)
    if dtype is not None:
        first = runs[0][0] if isinstance(runs[0], (tuple, list)) else runs[0]
        assert first.dtype == np.dtype(dtype), (first.dtype, dtype)
    return runs[0]


# --- creation ----------------------------------------------------------------------------------


def test_linspace_eye():
    np.testing.assert_allclose(lnp.linspace(0, 1, 7), np.linspace(0, 1, 7), rtol=1e-6)
    assert lnp.linspace(0, 1, 5).dtype == np.float32
    np.testing.assert_array_equal(lnp.linspace(0, 1, 4, endpoint=False), np.linspace(0, 1, 4, endpoint=False)
                                  .astype(np.float32))
    np.testing.assert_array_equal(lnp.eye(3), np.eye(3))
    np.testing.assert_array_equal(lnp.eye(3, 4, k=1, dtype=np.int32), np.eye(3, 4, k=1, dtype=np.int32))
    assert lnp.eye(2).dtype == np.float32
    x = rand((3, 3))
    check(lambda a: a + lnp.eye(3), lambda a: a + np.eye(3, dtype=np.float32), x, dtype=np.float32)
    check(lambda a: a * lnp.linspace(0, 1, 3), lambda a: a * np.linspace(0, 1, 3).astype(np.float32), x,
          dtype=np.float32)


# --- elementwise -------------------------------------------------------------------------------


UNARY = [(lnp.floor, np.floor), (lnp.ceil, np.ceil), (lnp.sign, np.sign), (lnp.round, np.round),
         (lnp.isfinite, np.isfinite), (lnp.log1p, np.log1p), (lnp.expm1, np.expm1), (lnp.logical_not, np.logical_not)]


@pytest.mark.parametrize("fn,np_fn", UNARY, ids=[f[1].__name__ for f in UNARY])
def test_unary_float(fn, np_fn):
    x = rand((4, 5)) * 3
    if fn is lnp.log1p:
        x = np.abs(x)
    check(fn, np_fn, x, rtol=1e-5)


def test_round_half_even_and_decimals():
    x = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 3.49], np.float32)
    check(lnp.round, np.round, x, dtype=np.float32)
    check(lambda a: lnp.round(a, 2), lambda a: np.round(a, 2), rand((6,)) * 10, rtol=1e-5, atol=1e-5)
    i = rand((5,), np.int32)
    check(lnp.round, np.round, i, dtype=np.int32)


def test_sign_and_isfinite_special_values():
    x = np.array([-np.inf, -2.0, -0.0, 0.0, 3.0, np.inf, np.nan], np.float32)
    check(lnp.sign, np.sign, x)
    check(lnp.isfinite, np.isfinite, x, dtype=np.bool_)
    check(lnp.isnan, np.isnan, x, dtype=np.bool_)
    check(lnp.sign, np.sign, rand((6,), np.int32), dtype=np.int32)
    check(lnp.isfinite, np.isfinite, rand((6,), np.int32), dtype=np.bool_)
    check(lnp.floor, np.floor, rand((6,), np.int32), dtype=np.int32, eager=False)  # as JAX: ints unchanged
    check(lnp.ceil, np.ceil, rand((6,), np.int8), dtype=np.int8, eager=False)


@pytest.mark.parametrize("shapes", [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3))], ids=str)
def test_logaddexp_broadcasting(shapes):
    check(lnp.logaddexp, np.logaddexp, rand(shapes[0]) * 5, rand(shapes[1]) * 5, dtype=np.float32)


def test_logaddexp_extremes():
    x = np.array([-np.inf, np.inf, -np.inf, 100.0, -100.0, np.nan], np.float32)
    y = np.array([-np.inf, np.inf, 1.0, 100.0, 90.0, 1.0], np.float32)
    check(lnp.logaddexp, np.logaddexp, x, y)
    check(lambda a: lnp.logaddexp(a, 0.0), lambda a: np.logaddexp(a, np.float32(0)), rand((5,)), dtype=np.float32)


@pytest.mark.parametrize("name", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("dtypes", [(np.bool_, np.bool_), (np.int32, np.bool_), (np.float32, np.int32)], ids=str)
def test_logical_binary(name, dtypes):
    a, b = rand((3, 4), dtypes[0]), rand((4,), dtypes[1])
    check(getattr(lnp, name), getattr(np, name), a, b, dtype=np.bool_)
    check(lambda u: getattr(lnp, name)(u, True), lambda u: getattr(np, name)(u, True), a, dtype=np.bool_)


def test_logical_not_ints():
    check(lnp.logical_not, np.logical_not, rand((7,), np.int32), dtype=np.bool_)


def test_clip():
    x = rand((4, 5)) * 3
    check(lambda a: lnp.clip(a, -1.0, 0.5), lambda a: np.clip(a, -1.0, 0.5), x, dtype=np.float32)
    check(lambda a: lnp.clip(a, None, 0.5), lambda a: np.clip(a, None, 0.5), x, dtype=np.float32)
    check(lambda a: lnp.clip(a, -0.5), lambda a: np.clip(a, -0.5, None), x, dtype=np.float32)
    lo, hi = -np.abs(rand((5,))), np.abs(rand((4, 1)))
    check(lnp.clip, np.clip, x, lo, hi, dtype=np.float32)
    check(lambda a: lnp.clip(a, -2, 2), lambda a: np.clip(a, -2, 2), rand((6,), np.int32), dtype=np.int32)


# --- reductions --------------------------------------------------------------------------------


AXES = [None, 0, 1, -1, (0, 2)]


@pytest.mark.parametrize("axis", AXES, ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["prod", "var", "std", "any", "all"])
def test_reductions(name, axis, keepdims):
    x = rand((2, 3, 4)) if name in ("prod", "var", "std") else rand((2, 3, 4)) > 0.3
    check(lambda a: getattr(lnp, name)(a, axis=axis, keepdims=keepdims),
          lambda a: getattr(np, name)(a, axis=axis, keepdims=keepdims), x, rtol=1e-5, atol=1e-5)


def test_reduction_dtypes():
    i8 = rand((3, 4), np.int8)
    check(lnp.prod, lambda a: np.prod(a, dtype=np.int32), i8, dtype=np.int32)
    check(lambda a: lnp.var(a, axis=0), lambda a: np.var(a, axis=0), rand((5, 3), np.int32), dtype=np.float32)
    check(lambda a: lnp.std(a, ddof=1), lambda a: np.std(a, ddof=1), rand((6,)), dtype=np.float32)
    check(lnp.any, np.any, rand((4,), np.int32), dtype=np.bool_)
    check(lnp.all, np.all, rand((4,)), dtype=np.bool_)
    check(lambda a: lnp.prod(a, axis=1, dtype=np.float32), lambda a: np.prod(a, axis=1, dtype=np.float32),
          rand((3, 4), np.int32), dtype=np.float32)


@pytest.mark.parametrize("name", ["argmax", "argmin"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_, np.uint8], ids=lambda d: np.dtype(d).name)
def test_arg_reductions(name, axis, dtype):
    x = rand((4, 6), dtype)  # small ints: many ties, the first index must win
    check(lambda a: getattr(lnp, name)(a, axis=axis), lambda a: getattr(np, name)(a, axis=axis), x, dtype=np.int32)
    check(lambda a: getattr(lnp, name)(a, axis=axis, keepdims=True),
          lambda a: getattr(np, name)(a, axis=axis, keepdims=True), x)


def test_arg_reductions_nan_and_inf():
    x = np.array([[1.0, np.nan, 3.0, np.nan], [-np.inf, -np.inf, 2.0, 2.0], [np.inf, 1.0, np.inf, 0.0]], np.float32)
    for axis in (None, 0, 1):
        check(lambda a, ax=axis: lnp.argmax(a, axis=ax), lambda a, ax=axis: np.argmax(a, axis=ax), x)
        check(lambda a, ax=axis: lnp.argmin(a, axis=ax), lambda a, ax=axis: np.argmin(a, axis=ax), x)
    check(lnp.argmax, np.argmax, np.full((5,), -np.inf, np.float32))
    check(lnp.argmin, np.argmin, np.full((5,), np.inf, np.float32))


# --- linear algebra ----------------------------------------------------------------------------


EINSUM = [
    ("ij,jk->ik", (3, 4), (4, 5)), ("ij,jk", (3, 4), (4, 5)), ("bij,bjk->bik", (2, 3, 4), (2, 4, 5)),
    ("i,i->", (4,), (4,)), ("i,j->ij", (3,), (4,)), ("bij,j->bi", (2, 3, 4), (4,)), ("ij,kj->ki", (3, 4), (5, 4)),
    ("ijk,ik->j", (2, 3, 4), (2, 4)), ("ij,kl->jl", (2, 3), (4, 5)), ("bhqd,bhkd->bhqk", (2, 2, 3, 4), (2, 2, 5, 4)),
    ("ij->ji", (3, 4)), ("ij->", (3, 4)), ("ijk->kj", (2, 3, 4)), ("ij", (3, 4)),
    ("...ij,...jk->...ik", (2, 3, 4), (2, 4, 5)), ("...ij,jk", (2, 2, 3, 4), (4, 5)), ("i...->...", (3, 2, 4)),
    ("...j,j...->...", (3, 4), (4, 3)), ("bi,...", (2, 3), (3,)), ("ij,jk,kl->il", (2, 3), (3, 4), (4, 5)),
    ("ij,jk,ki->", (2, 3), (3, 4), (4, 2)), ("a,b,c->abc", (2,), (3,), (4,)),
]


@pytest.mark.parametrize("spec_shapes", EINSUM, ids=[e[0] for e in EINSUM])
def test_einsum(spec_shapes):
    spec, *shapes = spec_shapes
    args = [rand(s) for s in shapes]
    check(lambda *a: lnp.einsum(spec, *a), lambda *a: np.einsum(spec, *a), *args, rtol=1e-5, atol=1e-5,
          dtype=np.float32)


def test_einsum_promotion_and_errors():
    check(lambda a, b: lnp.einsum("ij,j->i", a, b), lambda a, b: np.einsum("ij,j->i", a, b).astype(np.float32),
          rand((3, 4)), rand((4,), np.int32), dtype=np.float32)
    x = rand((3, 3))
    with pytest.raises(NotImplementedError, match="diagonals"):
        jit(lambda a: lnp.einsum("ii->i", a))(x)
    with pytest.raises(ValueError, match="operands"):
        jit(lambda a: lnp.einsum("ij,jk,kl->il", a, a))(x)
    with pytest.raises(ValueError, match="sizes"):
        jit(lambda a, b: lnp.einsum("ij,jk->ik", a, b))(x, rand((4, 2)))
    with pytest.raises(ValueError, match="broadcasting"):
        jit(lambda a, b: lnp.einsum("...i,...i->...", a, b))(rand((1, 3)), rand((2, 3)))


@pytest.mark.parametrize("axes,shapes", [(2, ((2, 3, 4), (3, 4, 5))), (1, ((3, 4), (4, 5))), (0, ((2,), (3,))),
                                         (([0, 2], [1, 0]), ((2, 3, 4), (4, 2, 5))), ((1, 0), ((3, 4), (4, 2)))],
                         ids=str)
def test_tensordot(axes, shapes):
    a, b = rand(shapes[0]), rand(shapes[1])
    check(lambda u, v: lnp.tensordot(u, v, axes), lambda u, v: np.tensordot(u, v, axes), a, b, rtol=1e-5,
          atol=1e-5, dtype=np.float32)


def test_tensordot_mismatch():
    with pytest.raises(ValueError, match="tensordot"):
        jit(lambda u, v: lnp.tensordot(u, v, 1))(rand((3, 4)), rand((3, 4)))


def test_outer():
    check(lnp.outer, np.outer, rand((3,)), rand((4,)), dtype=np.float32)
    check(lnp.outer, np.outer, rand((2, 2)), rand((3,), np.int32), dtype=np.float32, eager=False)
    check(lnp.outer, np.outer, rand((3,), np.int32), rand((2,), np.int32), dtype=np.int32)


# --- shapes ------------------------------------------------------------------------------------


SHAPE_OPS = [
    ("swapaxes", lambda m: lambda a: m.swapaxes(a, 0, 2)),
    ("swapaxes_neg", lambda m: lambda a: m.swapaxes(a, -1, 1)),
    ("moveaxis", lambda m: lambda a: m.moveaxis(a, 0, -1)),
    ("moveaxis_multi", lambda m: lambda a: m.moveaxis(a, [0, 1], [2, 0])),
    ("flip_all", lambda m: lambda a: m.flip(a)),
    ("flip_axis", lambda m: lambda a: m.flip(a, 1)),
    ("flip_axes", lambda m: lambda a: m.flip(a, (0, 2))),
    ("tile_int", lambda m: lambda a: m.tile(a, 2)),
    ("tile_more", lambda m: lambda a: m.tile(a, (2, 1, 1, 3))),
    ("tile_fewer", lambda m: lambda a: m.tile(a, (2, 3))),
    ("repeat_flat", lambda m: lambda a: m.repeat(a, 2)),
    ("repeat_axis", lambda m: lambda a: m.repeat(a, 3, axis=1)),
    ("repeat_last", lambda m: lambda a: m.repeat(a, 2, axis=-1)),
    ("pad_int", lambda m: lambda a: m.pad(a, 1)),
    ("pad_pairs", lambda m: lambda a: m.pad(a, ((0, 1), (2, 0), (1, 1)), constant_values=-3.5)),
    ("pad_pair", lambda m: lambda a: m.pad(a, (1, 2))),
    ("roll", lambda m: lambda a: m.roll(a, 2, 1)),
    ("roll_neg", lambda m: lambda a: m.roll(a, -5, -1)),
    ("roll_flat", lambda m: lambda a: m.roll(a, 7)),
    ("roll_multi", lambda m: lambda a: m.roll(a, (1, -2), (0, 2))),
    ("split_sections", lambda m: lambda a: tuple(m.split(a, 3, axis=1))),
    ("split_indices", lambda m: lambda a: tuple(m.split(a, [1, 3], axis=2))),
    ("split_edge", lambda m: lambda a: tuple(m.split(a, [0, 2, 9], axis=0))),
]


@pytest.mark.parametrize("name,make", SHAPE_OPS, ids=[s[0] for s in SHAPE_OPS])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_], ids=lambda d: np.dtype(d).name)
def test_shape_ops(name, make, dtype):
    x = rand((2, 3, 4), dtype)
    check(make(lnp), make(np), x, dtype=dtype if not name.startswith("split") else None)


def test_shape_op_errors():
    with pytest.raises(ValueError, match="equal division"):
        jit(lambda a: lnp.split(a, 3))(rand((4,)))
    with pytest.raises(NotImplementedError, match="constant"):
        jit(lambda a: lnp.pad(a, 1, mode="edge"))(rand((4,)))


# --- cumulative and sorting ----------------------------------------------------------------------


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
def test_cumulative(name, axis, dtype):
    x = rand((3, 5), dtype)
    check(lambda a: getattr(lnp, name)(a, axis=axis), lambda a: getattr(np, name)(a, axis=axis), x, rtol=1e-5,
          atol=1e-5, dtype=dtype)


def test_cumulative_dtypes():
    check(lnp.cumsum, lambda a: np.cumsum(a, dtype=np.int32), rand((6,), np.bool_), dtype=np.int32)
    check(lambda a: lnp.cumprod(a, 0), lambda a: np.cumprod(a, 0, dtype=np.int8), rand((4, 2), np.int8),
          dtype=np.int8)
    check(lambda a: lnp.cumsum(a, 1, dtype=np.float32), lambda a: np.cumsum(a, 1, dtype=np.float32),
          rand((2, 3), np.int32), dtype=np.float32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8], ids=lambda d: np.dtype(d).name)
def test_sort_argsort(axis, dtype):
    x = rand((4, 6), dtype)  # ints: many ties; argsort must be stable
    check(lambda a: lnp.sort(a, axis=axis), lambda a: np.sort(a, axis=axis), x, dtype=dtype)
    check(lambda a: lnp.argsort(a, axis=axis), lambda a: np.argsort(a, axis=axis, kind="stable"), x,
          dtype=np.int32)


def test_sort_nan_and_inf():
    x = np.array([3.0, np.nan, -np.inf, 1.0, np.nan, np.inf, -0.5], np.float32)
    check(lnp.sort, np.sort, x)
    check(lnp.argsort, lambda a: np.argsort(a, kind="stable"), x)


def test_composition():
    """Several of the new functions in one jitted function."""
    def f(a, b):
        c = lnp.einsum("ij,jk->ik", a, b)
        c = lnp.clip(c, -1.0, 1.0) + lnp.cumsum(c, axis=1)
        idx = lnp.argmax(c, axis=1)
        return lnp.sort(lnp.roll(lnp.flip(c, 0), 1, 1), axis=0), idx, lnp.std(c, axis=0)

    a, b = rand((3, 4)), rand((4, 5))
    check(f, f, a, b, rtol=1e-5, atol=1e-5, eager=False)
    out = jit(f)(a, b)
    expected = f(a, b)
    for o, e in zip(out, expected):
        np.testing.assert_allclose(o, e, rtol=1e-5, atol=1e-5)


def test_lowered_ops():
    """The lowering uses the StableHLO ops the functions name."""
    x = rand((3, 4))
    text = jit(lambda a: (lnp.argmax(a, 1), lnp.sort(a), lnp.cumsum(a, 0), lnp.pad(a, 1), lnp.flip(a, 0)))\
        .lower(x).as_text()
    for op in ("stablehlo.reduce", "stablehlo.sort", "stablehlo.reduce_window", "stablehlo.pad", "stablehlo.reverse"):
        assert op in text, op


# --- loom.nn -----------------------------------------------------------------------------------


NN = [
    ("relu", lambda m, a: m.relu(a)), ("sigmoid", lambda m, a: m.sigmoid(a)), ("silu", lambda m, a: m.silu(a)),
    ("gelu_tanh", lambda m, a: m.gelu(a)), ("gelu_exact", lambda m, a: m.gelu(a, approximate=False)),
    ("softmax", lambda m, a: m.softmax(a)), ("softmax_axis0", lambda m, a: m.softmax(a, axis=0)),
    ("log_softmax", lambda m, a: m.log_softmax(a)), ("log_softmax_axes", lambda m, a: m.log_softmax(a, axis=(0, 1))),
    ("logsumexp", lambda m, a: m.logsumexp(a)), ("logsumexp_axis", lambda m, a: m.logsumexp(a, axis=1)),
    ("logsumexp_keep", lambda m, a: m.logsumexp(a, axis=-1, keepdims=True)),
]


@pytest.mark.parametrize("name,fn", NN, ids=[n[0] for n in NN])
def test_nn_against_jax(name, fn):
    x = rand((4, 6)) * 4
    check(lambda a: fn(nn, a), lambda a: np.asarray(fn(jax.nn, a)), x, rtol=2e-5, atol=2e-6, dtype=np.float32)


def test_nn_extremes():
    x = np.array([[-1e4, 0.0, 1e4], [-np.inf, 1.0, 2.0], [50.0, 50.0, 50.0]], np.float32)
    for name in ("sigmoid", "softmax", "log_softmax", "relu"):
        check(getattr(nn, name), lambda a, n=name: np.asarray(getattr(jax.nn, n)(a)), x, rtol=1e-5, atol=1e-6)
    check(nn.logsumexp, lambda a: np.asarray(jax.nn.logsumexp(a)), x)
    check(lambda a: nn.logsumexp(a, axis=1), lambda a: np.asarray(jax.nn.logsumexp(a, axis=1)),
          np.full((2, 3), -np.inf, np.float32))


TIES = np.array([[0.0, 0.0, -1.0, 2.0], [3.0, 3.0, 3.0, -0.0], [-np.inf, 1.0, 1.0, 0.5]], np.float32)


@pytest.mark.parametrize("name", ["relu", "softmax", "log_softmax", "logsumexp"])
def test_nn_gradients_at_ties_against_jax(name):
    """Derivatives where `maximum` meets a tie (relu at 0, repeated row maxima): JAX's, not the
    half-and-half split of `maximum`'s own derivative."""
    w = np.asarray(RNG.standard_normal(TIES.shape), np.float32)

    def loss(m, x):
        return (getattr(m, name)(x) * w).sum() if name != "logsumexp" else (m.logsumexp(x, axis=1) * w[:, 0]).sum()

    want = np.asarray(jax.grad(lambda x: loss(jax.nn, x))(TIES))
    for fn in (loom.grad(lambda x: loss(nn, x)), jit(loom.grad(lambda x: loss(nn, x)))):
        np.testing.assert_allclose(np.asarray(fn(TIES)), want, rtol=1e-6, atol=1e-7)


def test_relu_derivatives_against_jax():
    x = np.array([-2.0, -0.0, 0.0, 1.5, np.inf, np.nan], np.float32)
    want = jax.vmap(jax.grad(jax.nn.relu))(x)
    np.testing.assert_array_equal(np.asarray(loom.vmap(loom.grad(nn.relu))(x)), np.asarray(want))
    tangent = np.ones_like(x)
    np.testing.assert_array_equal(np.asarray(loom.jvp(nn.relu, (x,), (tangent,))[1]),
                                  np.asarray(jax.jvp(jax.nn.relu, (x,), (tangent,))[1]))
    second = jax.vmap(jax.grad(jax.grad(jax.nn.relu)))(x)
    np.testing.assert_array_equal(np.asarray(loom.vmap(loom.grad(loom.grad(nn.relu)))(x)), np.asarray(second))


def test_nn_int_inputs():
    i = rand((5,), np.int32)
    check(nn.relu, lambda a: np.asarray(jax.nn.relu(a)), i, dtype=np.int32)
    check(nn.softmax, lambda a: np.asarray(jax.nn.softmax(a)), i, rtol=1e-5, dtype=np.float32)


@pytest.mark.parametrize("axis", [-1, 0])
def test_one_hot(axis):
    labels = np.array([[0, 3], [7, -1], [2, 4]], np.int32)
    check(lambda a: nn.one_hot(a, 5, axis=axis), lambda a: np.asarray(jax.nn.one_hot(a, 5, axis=axis)), labels,
          dtype=np.float32)
    check(lambda a: nn.one_hot(a, 4, dtype=np.int32), lambda a: np.asarray(jax.nn.one_hot(a, 4, dtype=np.int32)),
          labels, dtype=np.int32)


DTYPE_CASES = [
    ("logaddexp_int", lambda m, a, b: m.logaddexp(a, b), np.int32, np.int32),
    ("logaddexp_mixed", lambda m, a, b: m.logaddexp(a, b), np.float32, np.int8),
    ("clip_int_float", lambda m, a, b: m.clip(a, 0.5, 2.5), np.int32, np.int32),
    ("clip_weak", lambda m, a, b: m.clip(a, 0, 3), np.int8, np.int8),
    ("prod_int8", lambda m, a, b: m.prod(a), np.int8, np.int8),
    ("prod_bool", lambda m, a, b: m.prod(a), np.bool_, np.bool_),
    ("cumsum_bool", lambda m, a, b: m.cumsum(a), np.bool_, np.bool_),
    ("cumsum_uint8", lambda m, a, b: m.cumsum(a), np.uint8, np.uint8),
    ("var_int", lambda m, a, b: m.var(a), np.int32, np.int32),
    ("std_f16", lambda m, a, b: m.std(a), np.float16, np.float16),
    ("argmax", lambda m, a, b: m.argmax(a), np.float32, np.float32),
    ("argsort_i8", lambda m, a, b: m.argsort(a), np.int8, np.int8),
    ("tensordot_mixed", lambda m, a, b: m.tensordot(a, b, 1), np.int32, np.float16),
    ("einsum_mixed", lambda m, a, b: m.einsum("ij,jk->ik", a, b), np.uint8, np.int8),
    ("outer_bool_int", lambda m, a, b: m.outer(a, b), np.int16, np.uint8),
    ("sign_f16", lambda m, a, b: m.sign(a), np.float16, np.float16),
    ("floor_int", lambda m, a, b: m.floor(a), np.int32, np.int32),
    ("pad_i8", lambda m, a, b: m.pad(a, 1), np.int8, np.int8),
]


@pytest.mark.parametrize("name,fn,da,db", DTYPE_CASES, ids=[c[0] for c in DTYPE_CASES])
def test_result_dtypes_match_jax(name, fn, da, db):
    """Result dtypes of the new functions under jit match jax.numpy's (x64 off)."""
    import jax.numpy as jnp
    a, b = rand((3, 3), da), rand((3, 3), db)
    out = jit(lambda u, v: fn(lnp, u, v))(a, b)
    expected = jax.eval_shape(lambda u, v: fn(jnp, u, v), a, b)
    assert out.dtype == expected.dtype, (out.dtype, expected.dtype)
    assert out.shape == expected.shape


def test_more_elementwise_math():
    x, p = rand((3, 4)), np.abs(rand((3, 4))) + 0.1
    check(lnp.tan, np.tan, x, rtol=1e-5, atol=1e-5, dtype=np.float32)
    check(lnp.square, np.square, x, dtype=np.float32)
    check(lnp.square, np.square, rand((5,), np.int32), dtype=np.int32)
    check(lnp.reciprocal, np.reciprocal, p, rtol=1e-6, dtype=np.float32)
    check(lnp.log2, np.log2, p, rtol=1e-5, atol=1e-6, dtype=np.float32)
    check(lnp.log10, np.log10, p, rtol=1e-5, atol=1e-6, dtype=np.float32)
    check(lnp.exp2, np.exp2, x, rtol=1e-5, dtype=np.float32)
    check(lnp.arctan2, np.arctan2, x, rand((4,)), rtol=1e-5, atol=1e-6, dtype=np.float32)
    special = np.array([np.inf, -np.inf, np.nan, 0.0, 1e38], np.float32)
    check(lnp.isinf, np.isinf, special, dtype=np.bool_)
    check(lnp.isinf, np.isinf, rand((3,), np.int32), dtype=np.bool_)


@pytest.mark.parametrize("dtype", [np.float32, np.int32], ids=lambda d: np.dtype(d).name)
def test_remainder_floor_divide(dtype):
    x = (rand((4, 5)) * 10).astype(dtype)
    y = rand((5,), np.float32) * 4
    y = np.where(np.abs(y) < 0.5, 1.5, y).astype(dtype)
    y = np.where(y == 0, 3, y).astype(dtype)
    check(lnp.remainder, np.remainder, x, y, rtol=1e-5, atol=1e-5, dtype=dtype)
    check(lnp.mod, np.mod, x, y, rtol=1e-5, atol=1e-5, dtype=dtype)
    check(lnp.floor_divide, np.floor_divide, x, y, dtype=dtype)
    check(lambda a: lnp.floor_divide(a, 3), lambda a: np.floor_divide(a, dtype(3)), x, dtype=dtype)


# --- every function: values against numpy, dtypes against jax.numpy, with broadcasting ------------

def _jax_dtype(fn, args):
    """The result dtype(s) jax.numpy gives (x64 off), Python scalars staying weakly typed."""
    import jax.numpy as jnp
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

    def call(*xs):
        full = list(args)
        for i, x in zip(arrays, xs):
            full[i] = x
        return fn(jnp, *full)
    out = jax.eval_shape(call, *[args[i] for i in arrays])
    return [o.dtype for o in jax.tree_util.tree_leaves(out)]


def _input(spec, seed):
    """A numpy array (shape, dtype) or a Python scalar."""
    if not isinstance(spec, tuple):
        return spec
    shape, dtype = spec
    rng = np.random.default_rng(seed)
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) > 0.5
    if dtype.kind in "iu":
        return rng.integers(1, 5, size=shape).astype(dtype)
    return (rng.uniform(0.2, 2.0, size=shape) * rng.choice([-1, 1], size=shape)).astype(dtype)


F32, F16, I32, I8, U8, B = np.float32, np.float16, np.int32, np.int8, np.uint8, np.bool_
PAIRS = [  # (lhs, rhs): broadcasting and promotion corners, Python scalars weakly typed
    (((3, 1, 4), F32), ((2, 4), F32)),
    (((2, 3), I32), ((3,), F32)),
    (((4,), I8), ((2, 4), U8)),
    (((2, 3), B), ((2, 3), I32)),
    (((3,), F16), ((2, 1), F32)),
    (((2, 3), I8), 3),
    (((2, 3), F16), 2.5),
    (((), F32), ((2, 2), I8)),
]
BINARY_FUNCTIONS = ["add", "subtract", "multiply", "divide", "true_divide", "maximum", "minimum", "power", "arctan2",
                    "remainder", "mod", "floor_divide", "logaddexp", "equal", "not_equal", "less", "less_equal",
                    "greater", "greater_equal", "logical_and", "logical_or", "logical_xor"]
# functions numpy and jax reject (or define differently) for some inputs
_FLOAT_ONLY = {"arctan2", "logaddexp"}
_NO_BOOL = {"subtract", "power", "divide", "true_divide", "remainder", "mod", "floor_divide", "arctan2", "logaddexp"}


def _valid_binary(name, a, b):
    kinds = {np.asarray(x).dtype.kind if isinstance(x, np.ndarray) else type(x).__name__ for x in (a, b)}
    if name in _NO_BOOL and "b" in kinds:
        return False
    if name in _FLOAT_ONLY and not ({"f", "float"} & kinds):
        return False
    return True


BINARY_TABLE = [(name, i) for name in BINARY_FUNCTIONS for i, (sa, sb) in enumerate(PAIRS)
                if _valid_binary(name, _input(sa, 0), _input(sb, 1))]


def _check_table(name, fn, args, rtol):
    arrays = [x for x in args if isinstance(x, np.ndarray)]
    positions = [i for i, x in enumerate(args) if isinstance(x, np.ndarray)]

    def traced(*xs):
        full = list(args)
        for i, x in zip(positions, xs):
            full[i] = x
        return fn(lnp, *full)
    out = jit(traced)(*arrays)
    expected = fn(np, *[np.asarray(a, np.float64) if isinstance(a, np.ndarray) and a.dtype == np.float16 else a
                        for a in args])
    outs = jax.tree_util.tree_leaves(out)
    exps = jax.tree_util.tree_leaves(expected)
    dtypes = _jax_dtype(fn, args)
    if any(np.asarray(e).dtype == np.float16 and d != np.float16 for e, d in zip(exps, dtypes)):
        # numpy computes small integers in float16; the reference then needs more precision
        exps = jax.tree_util.tree_leaves(fn(np, *[np.asarray(a, np.float64) if isinstance(a, np.ndarray) else a
                                                  for a in args]))
    assert len(outs) == len(exps) == len(dtypes)
    for o, e, d in zip(outs, exps, dtypes):
        o, e = np.asarray(o), np.asarray(e)
        assert o.dtype == d, f"{name}: dtype {o.dtype}, jax gives {d}"
        assert o.shape == e.shape, f"{name}: shape {o.shape}, numpy gives {e.shape}"
        tol = 2e-3 if d == np.float16 else rtol
        if o.dtype.kind == "f":
            np.testing.assert_allclose(o, e.astype(np.float64), rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(o, e.astype(o.dtype))


@pytest.mark.parametrize("name,pair", BINARY_TABLE, ids=[f"{n}-{i}" for n, i in BINARY_TABLE])
def test_every_binary_function_broadcasts_and_promotes(name, pair):
    sa, sb = PAIRS[pair]
    a, b = _input(sa, 0), _input(sb, 1)
    if name in ("remainder", "mod", "floor_divide", "divide", "true_divide", "power"):
        b = np.abs(b) if isinstance(b, np.ndarray) else b  # nonzero divisors, no negative integer powers
        a = np.abs(a) if name == "power" and isinstance(a, np.ndarray) else a
    _check_table(name, lambda m, x, y: getattr(m, name)(x, y), (a, b), 1e-5)


UNARY_FUNCTIONS = {  # name: input dtypes
    "exp": (F32, F16, I32), "log": (F32, I8), "log1p": (F32, U8), "expm1": (F32, I32), "log2": (F32, I32),
    "log10": (F32, U8), "exp2": (F32, I8), "tanh": (F32, I32), "sin": (F16, I32), "cos": (F32, B), "tan": (F32,),
    "sqrt": (F32, I32), "square": (F32, I8, U8), "reciprocal": (F32,), "abs": (F32, I8, U8),
    "absolute": (F16, I32), "negative": (F32, I8), "sign": (F32, I32, U8), "floor": (F32, F16, I32),
    "ceil": (F32, I8), "round": (F32, I32), "around": (F16,), "isfinite": (F32, I32), "isinf": (F32, I8),
    "isnan": (F32, I32), "logical_not": (F32, I32, B),
}
POSITIVE = {"log", "log1p", "log2", "log10", "sqrt"}
UNARY_TABLE = [(n, np.dtype(d).name) for n, ds in UNARY_FUNCTIONS.items() for d in ds]


@pytest.mark.parametrize("name,dtype", UNARY_TABLE, ids=[f"{n}-{d}" for n, d in UNARY_TABLE])
def test_every_unary_function(name, dtype):
    x = _input(((2, 3), dtype), 2)
    if name in POSITIVE and x.dtype.kind == "f":
        x = np.abs(x)
    if name == "reciprocal":
        x = np.abs(x) + 0.5
    _check_table(name, lambda m, v: getattr(m, name)(v), (x,), 2e-5)


REDUCTIONS = ["sum", "prod", "mean", "max", "min", "amax", "amin", "var", "std", "any", "all"]
REDUCTION_ARGS = [(None, False), (0, False), ((0, 2), True), (-1, True)]
REDUCTION_TABLE = [(n, d, i) for n in REDUCTIONS for d in ("float32", "int32", "bool", "uint8")
                   for i in range(len(REDUCTION_ARGS))
                   if not (n in ("var", "std", "mean") and d == "bool")]


@pytest.mark.parametrize("name,dtype,k", REDUCTION_TABLE, ids=[f"{n}-{d}-{k}" for n, d, k in REDUCTION_TABLE])
def test_every_reduction_with_axes_and_keepdims(name, dtype, k):
    axis, keepdims = REDUCTION_ARGS[k]
    x = _input(((2, 3, 4), dtype), 3)
    _check_table(name, lambda m, v: getattr(m, name)(v, axis=axis, keepdims=keepdims), (x,), 2e-5)


OTHERS = [  # (name, f(m, *args), input specs)
    ("argmax_int", lambda m, x: (m.argmax(x), m.argmax(x, axis=1), m.argmin(x, axis=0, keepdims=True)),
     [((3, 4), I8)]),
    ("where_promotion", lambda m, c, x: (m.where(c, x, 2.5), m.where(c, 1, x), m.where(c > 0, x, c)),
     [((3, 4), B), ((4,), I32)]),
    ("clip_promotion", lambda m, x: (m.clip(x, 1, 3), m.clip(x, 0.5, None), m.clip(x, None, np.int8(2))),
     [((3, 4), U8)]),
    ("concatenate_mixed", lambda m, a, b: (m.concatenate([a, b], axis=1), m.stack([a[:, :2], b], axis=-1)),
     [((2, 3), I8), ((2, 2), F32)]),
    ("matmul_mixed", lambda m, a, b: (m.matmul(a, b), m.dot(a[0], b), m.outer(a[0], b[:, 0])),
     [((2, 3), I32), ((3, 4), F16)]),
    ("matmul_batched", lambda m, a, b: m.matmul(a, b), [((2, 1, 3, 4), F32), ((5, 4, 2), F32)]),
    ("einsum_tensordot", lambda m, a, b: (m.einsum("bij,jk->bki", a, b), m.tensordot(a, b, axes=1)),
     [((2, 3, 4), I8), ((4, 5), U8)]),
    ("shape_ops", lambda m, x: (m.reshape(x, (4, -1)), m.transpose(x, (1, 2, 0)), m.swapaxes(x, 0, 2),
                                m.moveaxis(x, 0, -1), m.expand_dims(x, (0, 2)), m.squeeze(x[:, :1], 1),
                                m.broadcast_to(x[:1], (3, 3, 4)), m.flip(x, (0, 2)), m.tile(x[0], (2, 1)),
                                m.repeat(x, 2, axis=1), m.roll(x, (1, -2), (0, 2)), m.pad(x, ((0, 1), (2, 0), (1, 1)))),
     [((2, 3, 4), I8)]),
    ("split", lambda m, x: (*m.split(x, 2, axis=1), *m.split(x, [1, 3], axis=2)), [((2, 4, 5), F16)]),
    ("cumulative", lambda m, x: (m.cumsum(x, axis=1), m.cumprod(x), m.cumsum(x, dtype=np.float32)),
     [((2, 3), I8)]),
    ("sort_argsort", lambda m, x: (m.sort(x, axis=0), m.argsort(x, axis=-1), m.sort(x, axis=None)),
     [((3, 4), U8)]),
    ("astype_result_type", lambda m, x: (m.astype(x, np.int8), x.astype(np.bool_), m.asarray(x, np.float16)),
     [((3,), F32)]),
    ("full_like", lambda m, x: (m.zeros_like(x), m.ones_like(x, np.int8), m.full_like(x, 3)), [((2, 2), U8)]),
    ("take", lambda m, x: (m.take(x, np.array([0, 2]), axis=1), m.take_along_axis(x, m.argsort(x, axis=0), axis=0)),
     [((3, 4), I32)]),
]


@pytest.mark.parametrize("name,fn,specs", OTHERS, ids=[c[0] for c in OTHERS])
def test_other_functions_with_mixed_dtypes(name, fn, specs):
    args = tuple(_input(s, k) for k, s in enumerate(specs))
    _check_table(name, fn, args, 2e-5)


PYTHON_DATA = [3.0, 3, True, 1j, [1.0, 2.0], [1, 2], [[1, 2.5]], (1, 2.0), [1, 1j], [], [True, False],
               np.float64(2.0), np.arange(3)]


@pytest.mark.parametrize("x", PYTHON_DATA, ids=[repr(x) for x in PYTHON_DATA])
@pytest.mark.parametrize("make", ["array", "asarray"])
def test_array_of_python_data_has_jax_dtypes(make, x):
    """Python scalars and lists get JAX's dtypes (float32, int32, complex64); 64-bit numpy values
    become 32-bit, as in JAX with 64-bit values off (the default)."""
    got = getattr(lnp, make)(x)
    want = getattr(jax.numpy, make)(x).dtype
    assert got.dtype == want
    np.testing.assert_array_equal(got, np.asarray(x).astype(want))


@pytest.mark.parametrize("x", [2**31, [1, -2**31 - 1], 2**70])
def test_array_of_python_ints_beyond_int32_is_an_error(x):
    with pytest.raises(OverflowError, match="too large to convert to int32"):
        lnp.array(x)
    with pytest.raises(OverflowError):
        jax.numpy.array(x)
