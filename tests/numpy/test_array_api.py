"""The array-API names and the rest of jax.numpy's everyday API in loom.numpy,
against jax.numpy's values and dtypes, eagerly on numpy arrays and under loom.jit; gradients
against jax.grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from support.jax_parity import check, check_call, check_gradient

import loom
import loom.numpy as lnp

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(11)
F = RNG.normal(size=(3, 4)).astype(np.float32)
F3 = RNG.normal(size=(2, 3, 4)).astype(np.float32)
V4 = RNG.normal(size=(4,)).astype(np.float32)
V3 = RNG.normal(size=(3,)).astype(np.float32)
M34 = RNG.normal(size=(2, 3, 4)).astype(np.float32)
I = RNG.integers(-5, 6, size=(3, 4)).astype(np.int32)
NANS = F.copy()
NANS[0, 1] = NANS[2, :] = np.nan
INF = np.array([-np.inf, -1.0, 0.0, np.inf, np.nan], np.float32)
P1 = np.array([1.0, -2.0, 3.0], np.float32)
P2 = np.array([0.5, 4.0], np.float32)
PI = np.array([3, 0, -2, 5], np.int32)
Y = RNG.normal(size=(2, 5)).astype(np.float32)
XS = np.sort(RNG.uniform(0, 3, size=5)).astype(np.float32)
FLAT = np.array([0, 5, 11, 7, 3], np.int32)
ROWS = np.array([0, 2, 1, 2], np.int32)
COLS = np.array([3, 0, 1, 4], np.int32)

# name, args, keyword arguments
CASES = [
    ("permute_dims", (F3, (2, 0, 1)), {}), ("concat", ([F, F],), {"axis": 1}), ("concat", ([F, V4],), {"axis": None}),
    ("matrix_transpose", (F3,), {}), ("vecdot", (F, V4), {}), ("vecdot", (F3, M34), {"axis": 1}),
    ("matvec", (M34, V4), {}), ("vecmat", (V3, M34), {}),
    ("cumulative_sum", (F,), {"axis": 1}), ("cumulative_sum", (V4,), {"include_initial": True}),
    ("cumulative_sum", (I,), {"axis": 0, "include_initial": True}), ("cumulative_prod", (F,), {"axis": 0}),
    ("cumulative_prod", (V4,), {"include_initial": True}),
    ("isneginf", (INF,), {}), ("isposinf", (INF,), {}), ("isreal", (F,), {}), ("iscomplex", (I,), {}),
    ("nanprod", (NANS,), {"axis": 1}), ("nanprod", (NANS,), {}), ("nanvar", (NANS,), {"axis": 0}),
    ("nanvar", (NANS,), {"axis": 1, "ddof": 1, "keepdims": True}), ("nanstd", (NANS,), {}),
    ("nanvar", (I,), {"axis": 1}),
    ("nanargmax", (NANS,), {"axis": 0}), ("nanargmin", (NANS,), {"axis": 1}), ("nanargmax", (NANS,), {}),
    ("nancumsum", (NANS,), {"axis": 1}), ("nancumprod", (NANS,), {"axis": 0}),
    ("ravel_multi_index", ((ROWS, np.clip(COLS, 0, 3)), (3, 4)), {}),
    ("ravel_multi_index", ((ROWS, COLS), (3, 4)), {"mode": "clip"}),
    ("ravel_multi_index", ((ROWS, COLS), (3, 4)), {"mode": "wrap", "order": "F"}),
    ("unravel_index", (FLAT, (3, 4)), {}), ("unravel_index", (np.array([-1, 12, 40, -30], np.int32), (3, 4)), {}),
    ("append", (F, V4), {}), ("append", (F, F[:1], 0), {}), ("delete", (F, 1, 1), {}),
    ("delete", (F,), {"obj": np.array([0, 2])}), ("delete", (F3, slice(0, 3, 2), 2), {}), ("diagflat", (P1,), {}),
    ("diagflat", (P2, -1), {}), ("rollaxis", (F3, 2), {}), ("rollaxis", (F3, 0, 2), {}),
    ("rollaxis", (F3, 1, 3), {}), ("vander", (P1,), {}), ("vander", (PI, 3), {"increasing": True}),
    ("trapezoid", (Y,), {}), ("trapezoid", (Y, XS), {}), ("trapezoid", (Y.T,), {"dx": 0.5, "axis": 0}),
    ("divmod", (I, np.int32(3)), {}), ("divmod", (F, 0.75), {}),
    ("polyadd", (P1, P2), {}), ("polysub", (P2, P1), {}), ("polymul", (P1, P2), {}), ("polyder", (P1,), {}),
    ("polyder", (PI, 2), {}), ("polyint", (P1,), {}), ("polyint", (P2, 2), {"k": np.array([1.0, -1.0], np.float32)}),
    ("copy", (F,), {}), ("isin", (I, np.array([0, 3, -2], np.int32)), {}),
    ("isin", (I, np.array([[1, 2], [5, 5]], np.int32)), {"invert": True}),
    ("digitize", (F, np.array([-1.0, 0.0, 0.5, 2.0], np.float32)), {}),
    ("digitize", (F, np.array([2.0, 0.5, 0.0, -1.0], np.float32)), {"right": True}),
    ("digitize", (np.array([0.0, 0.5, 1.0], np.float32), np.array([0.0, 0.5, 1.0], np.float32)), {"right": True}),
    ("bincount", (np.array([0, 1, 1, 3, 3, 3], np.int32),), {"length": 5}),
    ("bincount", (np.array([2, 0, 2, 6], np.int32), np.array([0.5, 1.0, 2.0, 4.0], np.float32)), {"length": 4}),
    ("resize", (F, (5, 3)), {}), ("resize", (V4, 10), {}), ("ix_", (np.array([0, 2], np.int32), V4), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(name, args, kwargs):
    check_call(name, getattr(lnp, name), getattr(jnp, name), args, kwargs)


def test_unstack_and_size_and_shapes():
    for axis in (0, 1, -1):
        got = loom.jit(lambda x, axis=axis: lnp.unstack(x, axis=axis))(F3)
        want = jnp.unstack(F3, axis=axis)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert lnp.size(F3) == jnp.size(F3) and lnp.size(F3, 1) == jnp.size(F3, 1)
    assert lnp.broadcast_shapes((3, 1), (4,), (2, 1, 1)) == jnp.broadcast_shapes((3, 1), (4,), (2, 1, 1))
    assert lnp.newaxis is None and F[:, lnp.newaxis].shape == (3, 1, 4)
    for x in (1.0, np.float32(2), np.array(3.0), F):
        assert lnp.isscalar(x) == jnp.isscalar(x), x
    assert loom.jit(lambda x: lnp.array(lnp.isscalar(x)))(np.float32(1.0)) == jnp.isscalar(np.float32(1.0))
    assert lnp.isrealobj(F) and not lnp.iscomplexobj(F) and lnp.iscomplexobj(np.zeros(2, np.complex64))


def test_static_index_helpers_and_windows():
    for name, args in [("tril_indices", (4,)), ("tril_indices", (3, 1, 5)), ("triu_indices", (4, -1)),
                       ("triu_indices", (3, 0, 2)), ("diag_indices", (3,)), ("diag_indices", (2, 3))]:
        check(name, getattr(lnp, name)(*args), getattr(jnp, name)(*args))
    check("tril_indices_from", lnp.tril_indices_from(F, 1), jnp.tril_indices_from(F, 1))
    check("triu_indices_from", lnp.triu_indices_from(F), jnp.triu_indices_from(F))
    sq = np.zeros((3, 3, 3), np.float32)
    check("diag_indices_from", lnp.diag_indices_from(sq), jnp.diag_indices_from(sq))
    for m in (0, 1, 5, 8):
        for name in ("bartlett", "blackman", "hamming", "hanning"):
            check(name, getattr(lnp, name)(m), getattr(jnp, name)(m))
    check("geomspace", lnp.geomspace(1.0, 1000.0, 4), jnp.geomspace(1.0, 1000.0, 4))
    check("geomspace", lnp.geomspace(2.0, 32.0, 4, endpoint=False), jnp.geomspace(2.0, 32.0, 4, endpoint=False))


GRADS = [  # name, args (the first is differentiated), kwargs
    ("vecdot", (F, V4), {}), ("matvec", (M34, V4), {}), ("cumulative_sum", (F,), {"axis": 1}),
    ("nanvar", (NANS,), {"axis": 1}), ("nanprod", (NANS,), {"axis": 0}), ("trapezoid", (Y, XS), {}),
    ("vander", (P1,), {}), ("polymul", (P1, P2), {}), ("polyint", (P1,), {}), ("delete", (F, 1, 1), {}),
]


@pytest.mark.parametrize("name,args,kwargs", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_against_jax(name, args, kwargs):
    check_gradient(name, args, kwargs)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="matrix_transpose: x must have at least 2 dimensions"):
        lnp.matrix_transpose(V4)
    with pytest.raises(ValueError, match="cumulative_sum: axis must be given"):
        lnp.cumulative_sum(F)
    with pytest.raises(ValueError, match="vecdot: axis -1 has size 4 in a and 3 in b"):
        lnp.vecdot(F, V3)
    with pytest.raises(ValueError, match="index 1 has values outside"):
        lnp.ravel_multi_index((ROWS, COLS), (3, 4))
    with pytest.raises(TypeError, match="mode='raise' needs concrete indices"):
        loom.jit(lambda r, c: lnp.ravel_multi_index((r, c), (3, 4)))(ROWS, COLS)
    with pytest.raises(ValueError, match="unstack: axis 3 is out of bounds"):
        lnp.unstack(F3, axis=3)
    with pytest.raises(ValueError, match="vander: x must be 1-D"):
        lnp.vander(F)


VECTORIZED = [  # loom function, jax function, signature, args
    (lambda a, b: lnp.sum(a * b), lambda a, b: jnp.sum(a * b), "(n),(n)->()", (F3, V4)),
    (lambda a: lnp.where(a > 0, a, 0.0) * 2, lambda a: jnp.where(a > 0, a, 0.0) * 2, None, (F,)),
    (lambda m, v: m @ v, lambda m, v: m @ v, "(m,n),(n)->(m)", (M34, F3[:, 0, :])),
    (lambda a: (lnp.max(a), lnp.argmax(a)), lambda a: (jnp.max(a), jnp.argmax(a)), "(n)->(),()", (F3,)),
    (lambda a, b: a * b + 1, lambda a, b: a * b + 1, None, (F, V4)),
]


@pytest.mark.parametrize("case", range(len(VECTORIZED)))
def test_vectorize_against_jax(case):
    fn, jax_fn, signature, args = VECTORIZED[case]
    want = jnp.vectorize(jax_fn, signature=signature)(*args)
    check("vectorize", loom.jit(lnp.vectorize(fn, signature=signature))(*args), want)
    check("vectorize", lnp.vectorize(fn, signature=signature)(*args), want, same_dtype=False)


def test_vectorize_excluded_and_errors():
    fn = lnp.vectorize(lambda a, power: lnp.sum(a ** power), excluded={1}, signature="(n)->()")
    check("vectorize", loom.jit(lambda a: fn(a, 3))(F3),
          jnp.vectorize(lambda a, power: jnp.sum(a ** power), excluded={1}, signature="(n)->()")(F3, 3))
    with pytest.raises(TypeError, match="has 2 inputs, but the call has 1 array arguments"):
        lnp.vectorize(lambda a, b: a, signature="(n),(n)->()")(F)
    with pytest.raises(ValueError, match="has no '->'"):
        lnp.vectorize(lambda a: a, signature="(n)")(F)


@pytest.mark.parametrize("axis", [0, 1, -1, 2])
def test_apply_along_axis_against_jax(axis):
    for fn, jax_fn in [(lambda r: lnp.cumsum(r) * r[0], lambda r: jnp.cumsum(r) * r[0]),
                       (lambda r: lnp.sum(r ** 2), lambda r: jnp.sum(r ** 2)),
                       (lambda r: lnp.outer(r, r[:2]), lambda r: jnp.outer(r, r[:2]))]:
        want = jax.jit(lambda a, jax_fn=jax_fn: jnp.apply_along_axis(jax_fn, axis, a))(F3)  # one program, not op by op
        check("apply_along_axis", loom.jit(lambda a, fn=fn: lnp.apply_along_axis(fn, axis, a))(F3), want)
    grad = loom.grad(lambda a: lnp.sum(lnp.apply_along_axis(lambda r: lnp.cumsum(r) * r[0], axis, a)))(F3)
    want = jax.jit(jax.grad(lambda a: jnp.sum(jnp.apply_along_axis(lambda r: jnp.cumsum(r) * r[0], axis, a))))(F3)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(want), rtol=1e-5, atol=1e-5)


def test_bincount_eager_length_and_traced_error():
    x = np.array([1, 4, 1, 0], np.int32)
    check("bincount", lnp.bincount(x), jnp.bincount(x), same_dtype=False)
    check("bincount", lnp.bincount(x, minlength=7), jnp.bincount(x, minlength=7), same_dtype=False)
    with pytest.raises(TypeError, match="length="):
        loom.jit(lnp.bincount)(x)


def test_ix_indexes_an_open_mesh_and_dtype_predicates():
    rows, cols = np.array([0, 2], np.int32), np.array([1, 3], np.int32)
    np.testing.assert_array_equal(loom.jit(lambda f: f[lnp.ix_(rows, cols)])(F), F[np.ix_(rows, cols)])
    np.testing.assert_array_equal(loom.jit(lambda f: f[lnp.s_[1:, ::2]])(F), F[1:, ::2])
    assert lnp.index_exp[1:2] == np.index_exp[1:2]
    import ml_dtypes
    for a, b in [(ml_dtypes.bfloat16, np.floating), (ml_dtypes.bfloat16, np.integer), ("bfloat16", np.inexact),
                 (np.float32, np.floating), (np.int32, np.floating), (np.int8, np.signedinteger),
                 (ml_dtypes.bfloat16, ml_dtypes.bfloat16), (np.floating, np.inexact), (np.uint8, np.integer)]:
        assert lnp.issubdtype(a, b) == jnp.issubdtype(a, b), (a, b)
