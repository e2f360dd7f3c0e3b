"""loom.numpy against numpy on random inputs, traced through loom.jit, and its dtype promotion
against jax.numpy's (jnp.result_type)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import loom.numpy as lnp
from loom.frontend import jit

RNG = np.random.default_rng(1)


def rand(shape, dtype=np.float32, positive=False):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return RNG.random(shape) > 0.5
    if dtype.kind in "iu":
        lo = 1 if positive else (0 if dtype.kind == "u" else -5)
        return RNG.integers(lo, 6, size=shape).astype(dtype)
    x = RNG.standard_normal(shape)
    return (np.abs(x) + 0.1 if positive else x).astype(dtype)


def check(fn, np_fn, *args, rtol=1e-5, atol=1e-6, dtype=None):
    out = jit(fn)(*args)
    expected = np_fn(*args)
    outs, exps = (out, expected) if isinstance(out, tuple) else ((out,), (expected,))
    assert len(outs) == len(exps)
    for o, e in zip(outs, exps):
        e = np.asarray(e)
        np.testing.assert_allclose(o, e, rtol=rtol, atol=atol)
        assert o.shape == e.shape
        if dtype is not None:
            assert o.dtype == np.dtype(dtype), (o.dtype, dtype)
    return out


BINARY = [
    (lnp.add, np.add), (lnp.subtract, np.subtract), (lnp.multiply, np.multiply), (lnp.maximum, np.maximum),
    (lnp.minimum, np.minimum),
]
BROADCAST_SHAPES = [((3, 4), (3, 4)), ((3, 4), (4,)), ((2, 1, 4), (3, 1)), ((), (2, 3)), ((5, 1), (1, 6))]


@pytest.mark.parametrize("fn,np_fn", BINARY, ids=[f[1].__name__ for f in BINARY])
@pytest.mark.parametrize("shapes", BROADCAST_SHAPES, ids=str)
def test_binary_broadcasting(fn, np_fn, shapes):
    check(fn, np_fn, rand(shapes[0]), rand(shapes[1]), dtype=np.float32)


@pytest.mark.parametrize("fn,np_fn", BINARY, ids=[f[1].__name__ for f in BINARY])
def test_binary_ints(fn, np_fn):
    check(fn, np_fn, rand((3, 4), np.int32), rand((4,), np.int32), dtype=np.int32)


def test_divide_and_power():
    x, y = rand((3, 4)), rand((3, 4), positive=True)
    check(lnp.divide, np.divide, x, y, dtype=np.float32)
    check(lambda a, b: a / b, np.divide, x, y, dtype=np.float32)
    i, j = rand((5,), np.int32), rand((5,), np.int32, positive=True)
    check(lnp.divide, lambda a, b: (a / b).astype(np.float32), i, j, dtype=np.float32)
    check(lnp.power, np.power, y, x, rtol=1e-4, dtype=np.float32)
    check(lambda a: a ** 3, lambda a: a ** 3, x, rtol=1e-4, dtype=np.float32)
    check(lnp.power, np.power, j, rand((5,), np.int32, positive=True), dtype=np.int32)


UNARY = [
    (lnp.exp, np.exp, False), (lnp.log, np.log, True), (lnp.tanh, np.tanh, False), (lnp.sin, np.sin, False),
    (lnp.cos, np.cos, False), (lnp.sqrt, np.sqrt, True), (lnp.abs, np.abs, False), (lnp.negative, np.negative, False),
]


@pytest.mark.parametrize("fn,np_fn,positive", UNARY, ids=[f[1].__name__ for f in UNARY])
def test_unary(fn, np_fn, positive):
    check(fn, np_fn, rand((3, 5), positive=positive), rtol=1e-5, dtype=np.float32)


def test_unary_of_ints_gives_float32():
    x = rand((4,), np.int32, positive=True)
    check(lnp.exp, lambda a: np.exp(a.astype(np.float32)), x, rtol=1e-5, dtype=np.float32)
    check(lnp.sqrt, lambda a: np.sqrt(a.astype(np.float32)), x, dtype=np.float32)
    check(lnp.abs, np.abs, rand((4,), np.int32), dtype=np.int32)
    check(lambda a: -a, np.negative, rand((4,), np.int32), dtype=np.int32)


COMPARISONS = [
    (lnp.less, np.less), (lnp.less_equal, np.less_equal), (lnp.greater, np.greater),
    (lnp.greater_equal, np.greater_equal), (lnp.equal, np.equal), (lnp.not_equal, np.not_equal),
]


@pytest.mark.parametrize("fn,np_fn", COMPARISONS, ids=[f[1].__name__ for f in COMPARISONS])
def test_comparisons(fn, np_fn):
    x, y = rand((3, 4), np.int32), rand((4,), np.int32)
    check(fn, np_fn, x, y, dtype=np.bool_)
    check(fn, np_fn, rand((2, 3)), rand((2, 3)), dtype=np.bool_)
    check(lambda a: fn(a, 0.5), lambda a: np_fn(a, 0.5), rand((4,)), dtype=np.bool_)


def test_operator_comparisons():
    x, y = rand((6,)), rand((6,))
    check(lambda a, b: (a < b, a <= b, a > b, a >= b, a == b, a != b),
          lambda a, b: (a < b, a <= b, a > b, a >= b, a == b, a != b), x, y)


def test_where():
    c, x, y = rand((3, 4), np.bool_), rand((3, 4)), rand((4,))
    check(lnp.where, np.where, c, x, y, dtype=np.float32)
    check(lambda a: lnp.where(a > 0, a, 0.0), lambda a: np.where(a > 0, a, 0.0).astype(np.float32), x,
          dtype=np.float32)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
def test_reductions(name, axis, keepdims):
    x = rand((3, 4, 5))
    check(lambda a: getattr(lnp, name)(a, axis=axis, keepdims=keepdims),
          lambda a: getattr(np, name)(a, axis=axis, keepdims=keepdims), x, rtol=1e-5, dtype=np.float32)


def test_reductions_of_ints_and_bools():
    i = rand((3, 4), np.int32)
    check(lambda a: lnp.sum(a, axis=0), lambda a: a.sum(0), i, dtype=np.int32)
    check(lambda a: lnp.max(a, axis=1), lambda a: a.max(1), i, dtype=np.int32)
    check(lambda a: lnp.min(a), lambda a: a.min(), i, dtype=np.int32)
    check(lnp.mean, lambda a: a.mean(), i, dtype=np.float32)
    check(lnp.sum, lambda a: a.sum(), rand((7,), np.bool_), dtype=np.int32)
    check(lambda a: a.sum(1) + a.mean(0).sum(), lambda a: a.sum(1) + a.mean(0).sum(), rand((2, 3)), rtol=1e-5)


@pytest.mark.parametrize("shapes", [((3, 4), (4, 5)), ((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                                    ((2, 3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5)), ((1, 3, 4), (2, 4, 5)),
                                    ((3, 4), (2, 4, 5))], ids=str)
def test_matmul(shapes):
    a, b = rand(shapes[0]), rand(shapes[1])
    check(lnp.matmul, np.matmul, a, b, rtol=1e-5, dtype=np.float32)
    check(lambda x, y: x @ y, np.matmul, a, b, rtol=1e-5)


def test_dot_and_mixed_dtype_matmul():
    a, b = rand((3, 4)), rand((4, 2))
    check(lnp.dot, np.dot, a, b, rtol=1e-5)
    check(lambda x: lnp.dot(x, 2.0), lambda x: x * 2, a, dtype=np.float32)
    i = rand((4, 2), np.int32)
    check(lnp.matmul, lambda x, y: x @ y.astype(np.float32), a, i, rtol=1e-5, dtype=np.float32)


def test_shape_ops():
    x = rand((2, 3, 4))
    check(lambda a: lnp.reshape(a, (6, -1)), lambda a: a.reshape(6, -1), x)
    check(lambda a: a.reshape(4, 6), lambda a: a.reshape(4, 6), x)
    check(lnp.transpose, np.transpose, x)
    check(lambda a: lnp.transpose(a, (1, 0, 2)), lambda a: a.transpose(1, 0, 2), x)
    check(lambda a: a.T, lambda a: a.T, x)
    check(lambda a: lnp.broadcast_to(a, (5, 2, 3, 4)), lambda a: np.broadcast_to(a, (5, 2, 3, 4)), x)
    check(lambda a: lnp.expand_dims(a, 1), lambda a: np.expand_dims(a, 1), x)
    check(lambda a: lnp.expand_dims(a, (0, -1)), lambda a: np.expand_dims(a, (0, -1)), x)
    y = rand((1, 3, 1, 2))
    check(lnp.squeeze, np.squeeze, y)
    check(lambda a: lnp.squeeze(a, 2), lambda a: np.squeeze(a, 2), y)
    check(lambda a, b: lnp.concatenate([a, b], axis=1), lambda a, b: np.concatenate([a, b], axis=1),
          x, rand((2, 5, 4)))
    check(lambda a, b: lnp.concatenate([a, b]), lambda a, b: np.concatenate([a, b]).astype(np.float32),
          rand((2, 3)), rand((1, 3), np.int32), dtype=np.float32)
    check(lambda a: lnp.stack([a, a * 2], axis=1), lambda a: np.stack([a, a * 2], axis=1), rand((3, 2)))


def test_tracer_attributes_and_astype():
    def f(a):
        assert a.shape == (2, 3) and a.ndim == 2 and a.dtype == np.float32 and len(a) == 2
        return a.astype(np.int32), a.astype(np.float64), (a > 0).astype(np.float32)

    x = rand((2, 3)) * 4
    check(f, lambda a: (a.astype(np.int32), a.astype(np.float64), (a > 0).astype(np.float32)), x)


@pytest.mark.parametrize("index", [0, -1, (1, 2), slice(1, 3), (slice(None), 1), (Ellipsis, 2),
                                   (slice(None, None, 2), slice(1, None)), (None, 1), (1, None, slice(0, 4, 3)),
                                   slice(None, None, -1), (slice(3, 0, -2), slice(None, None, -3)), slice(1, 3, -1)],
                         ids=str)
def test_basic_indexing(index):
    check(lambda a: a[index], lambda a: a[index], rand((4, 5)))


def test_creation():
    assert lnp.zeros((2, 3)).dtype == np.float32 and lnp.ones(4).shape == (4,)
    np.testing.assert_array_equal(lnp.full((2,), 7), np.full((2,), 7))
    assert lnp.arange(5).dtype == np.int32 and lnp.arange(0.0, 1.0, 0.25).dtype == np.float32
    np.testing.assert_array_equal(lnp.arange(2, 8, 2), [2, 4, 6])
    np.testing.assert_array_equal(lnp.array([1, 2]), [1, 2])
    x = rand((2, 3))
    check(lambda a: a + lnp.zeros_like(a) + lnp.ones_like(a) + lnp.ones((2, 3)) + lnp.arange(3),
          lambda a: a + 2 + np.arange(3), x, dtype=np.float32)
    check(lambda a: (lnp.zeros((3,)), lnp.full_like(a, 2.5), lnp.asarray(a), lnp.array(a, np.int32)),
          lambda a: (np.zeros(3), np.full_like(a, 2.5), a, a.astype(np.int32)), x)
    check(lambda a: lnp.array([a[0, 0], a[1, 1]]), lambda a: np.array([a[0, 0], a[1, 1]]), x)


def test_eager_numpy_outside_jit():
    x, y = rand((2, 3)), rand((3,))
    np.testing.assert_allclose(lnp.add(x, y), x + y)
    np.testing.assert_allclose(lnp.sum(x, axis=0), x.sum(0))
    np.testing.assert_allclose(lnp.matmul(x, rand((3, 2)) * 0), np.zeros((2, 2)))
    np.testing.assert_allclose(lnp.where(x > 0, x, y), np.where(x > 0, x, y))
    assert lnp.reshape(x, (3, 2)).shape == (3, 2)


# --- dtype promotion against jax.numpy ------------------------------------------------------------

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.float16, np.float32]
SCALARS = [True, 2, 2.5]


@pytest.mark.parametrize("a,b", list(itertools.combinations_with_replacement(DTYPES, 2)),
                         ids=lambda d: np.dtype(d).name)
def test_promotion_matches_jax(a, b):
    jnp = pytest.importorskip("jax.numpy")
    assert lnp.result_type(a, b) == jnp.result_type(a, b)
    x, y = rand((3,), a, positive=True), rand((3,), b, positive=True)
    assert jit(lnp.add)(x, y).dtype == jnp.result_type(a, b)
    assert jit(lnp.multiply)(x, y).dtype == jnp.result_type(a, b)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("scalar", SCALARS, ids=repr)
def test_weak_scalar_promotion_matches_jax(dtype, scalar):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = rand((3,), dtype, positive=True)
    expected = jax.eval_shape(lambda a: a + scalar, jax.ShapeDtypeStruct((3,), dtype)).dtype
    out = jit(lambda a: a + scalar)(x)
    assert out.dtype == expected
    assert lnp.result_type(x, scalar) == jnp.result_type(x, scalar)


def test_weak_results_stay_weak():
    # `s` is a weak float32 scalar argument: `s * 2` stays weak, so float16 wins
    assert jit(lambda a, s: a + s * 2)(rand((2,), np.float16), 1.5).dtype == np.float16
    assert jit(lambda a: a + (lnp.ones_like(a) * 2.0))(rand((2,), np.float16)).dtype == np.float16


def test_random_broadcasting_against_numpy():
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp

    @hypothesis.settings(max_examples=25, deadline=None)
    @hypothesis.given(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
                      st.sampled_from([(lnp.add, np.add), (lnp.multiply, np.multiply), (lnp.maximum, np.maximum),
                                       (lnp.less, np.less)]))
    def run(shapes, fns):
        a, b = rand(shapes.input_shapes[0]), rand(shapes.input_shapes[1])
        out = jit(fns[0])(a, b)
        assert out.shape == shapes.result_shape
        np.testing.assert_array_equal(out, fns[1](a, b))

    run()


@pytest.mark.parametrize("a", [np.bool_, np.int32, np.uint8, np.float16, np.float32, np.complex64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("b", [np.complex64, 1j, 2.5, 3], ids=repr)
def test_complex_promotion_matches_jax(a, b):
    """JAX's lattice has complex types and a weak complex category (Python complex scalars)."""
    jnp = pytest.importorskip("jax.numpy")
    assert lnp.result_type(a, b) == jnp.result_type(a, b)


def test_tracing_complex_values_is_a_clear_error():
    message = r"loom does not trace values of dtype complex64 \(at .*test_core_and_promotion.py:\d+\)"
    with pytest.raises(TypeError, match=message):
        jit(lambda a: a * 1j)(rand((2,), np.float32))
