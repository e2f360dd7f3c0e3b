"""More of jax.numpy's names in loom.numpy, against jax.numpy's values and
dtypes, eagerly on numpy arrays and under loom.jit; gradients against jax.grad."""

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from support.jax_parity import check, check_call, check_gradient

import loom
import loom.numpy as lnp
from loom.frontend.tracing import TracerError

jax.config.update("jax_platforms", "cpu")


def jitted(jax_fn):
    """`jax_fn` run by jax.jit with its numpy-array arguments traced and the rest static: one
    compilation instead of one per operation, which keeps this file fast."""
    def call(*args, **kwargs):
        arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]

        def f(*xs):
            full = list(args)
            for i, x in zip(arrays, xs):
                full[i] = x
            return jax_fn(*full, **kwargs)

        return jax.jit(f)(*[args[i] for i in arrays])
    return call

RNG = np.random.default_rng(5)
F = RNG.normal(size=(3, 4)).astype(np.float32)
F3 = RNG.normal(size=(2, 3, 4)).astype(np.float32)
V5 = RNG.normal(size=(5,)).astype(np.float32)
I = RNG.integers(-3, 4, size=(3, 4)).astype(np.int32)
NANS = F.copy()
NANS[0, 1] = NANS[2, :] = np.nan
NANS3 = F3.copy()
NANS3[0, 1, 2] = NANS3[1, 0, :] = np.nan


def test_dtype_names_are_jax_s():
    for name in ["int_", "uint", "uint16", "uint64", "float_", "double", "single"]:
        assert np.dtype(getattr(lnp, name)) == np.dtype(getattr(jnp, name)), name
    assert np.dtype(lnp.bool) == np.dtype(jnp.bool)
    assert lnp.dtype is jnp.dtype
    for name in ["generic", "number", "integer", "signedinteger", "unsignedinteger", "inexact", "floating",
                 "complexfloating"]:
        assert getattr(lnp, name) is getattr(jnp, name), name
    assert lnp.issubdtype(lnp.float32, lnp.floating) and lnp.issubdtype(lnp.uint16, lnp.unsignedinteger)


DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.float16, np.float32, np.float64,
          np.complex64, ml_dtypes.bfloat16]


def test_can_cast_and_isdtype_against_jax():
    for a in DTYPES:
        for b in DTYPES:
            for casting in ("safe", "same_kind", "unsafe", "no", "equiv"):
                assert lnp.can_cast(a, b, casting) == jnp.can_cast(a, b, casting), (a, b, casting)
    assert lnp.can_cast(F, np.float64) == jnp.can_cast(F, np.float64)
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating",
             "numeric", np.float32, ("integral", np.float16), ("bool", "complex floating")]
    for d in DTYPES:
        for k in kinds:
            assert lnp.isdtype(d, k) == jnp.isdtype(d, k), (d, k)
    with pytest.raises(ValueError, match="isdtype: unknown kind 'float'"):
        lnp.isdtype(np.float32, "float")


# name, args, keyword arguments
CASES = [
    ("nanmedian", (NANS,), {}), ("nanmedian", (NANS,), {"axis": 1}),
    ("nanmedian", (NANS,), {"axis": 0, "keepdims": True}),
    ("nanmedian", (NANS3,), {"axis": (0, 2)}), ("nanmedian", (NANS3,), {"axis": (1, 2), "keepdims": True}),
    ("nanmedian", (I,), {"axis": 1}),
    ("nanquantile", (NANS, np.array([0.1, 0.5, 1.0])), {"axis": 1}), ("nanquantile", (NANS, 0.3), {}),
    ("nanquantile", (NANS3, [0.0, 0.25, 0.9]), {"axis": -1, "keepdims": True}),
    ("nanpercentile", (NANS, 40.0), {"axis": 0}), ("nanpercentile", (NANS3, [10.0, 90.0]), {"axis": (0, 1)}),
]


def _static_q(name, args, kwargs):
    # q is static inside loom.jit (as a Python value), so it must not be traced by check_call
    if len(args) > 1 and isinstance(args[1], np.ndarray):
        args = (args[0], args[1].tolist()) + args[2:]
    return args


@pytest.mark.filterwarnings("ignore:All-NaN slice")
@pytest.mark.parametrize("name,args,kwargs", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(name, args, kwargs):
    args = _static_q(name, args, kwargs)
    jax_fn = getattr(jnp, name)

    def want(*a, **k):
        a = list(a)
        if len(a) > 1 and isinstance(a[1], list):
            a[1] = np.asarray(a[1])  # JAX's quantiles take arrays, not lists
        return jax_fn(*a, **k)

    check_call(name, getattr(lnp, name), jitted(want), args, kwargs)


GRADS = [  # name, args (the first is differentiated), kwargs
    ("nanmedian", (NANS,), {"axis": 1}), ("nanquantile", (NANS, 0.3), {"axis": 0}),
    ("nanpercentile", (NANS3, 70.0), {"axis": (0, 2)}),
]


@pytest.mark.parametrize("name,args,kwargs", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_against_jax(name, args, kwargs):
    check_gradient(name, args, kwargs)


XS = np.array([0.0, 0.5, 1.5, 1.75, 3.0], np.float32)
PHASE = np.cumsum(RNG.uniform(-2.5, 2.5, size=(2, 7)), axis=1).astype(np.float32)
COND = np.array([True, False, True], np.bool_)
PICK = np.array([[0, 2, 1, 2], [1, 1, 0, 2], [2, 0, 0, 1]], np.int32)

CASES2 = [
    ("gradient", (F,), {}), ("gradient", (F3, 0.5), {"axis": 1}), ("gradient", (V5, XS), {}),
    ("gradient", (F, 2.0, XS[:4]), {}), ("gradient", (I,), {"axis": -1}), ("gradient", (F3,), {"axis": (0, 2)}),
    ("unwrap", (PHASE,), {}), ("unwrap", (PHASE.T,), {"axis": 0}), ("unwrap", (PHASE,), {"discont": 4.0}),
    ("unwrap", (PHASE,), {"period": 3.0}), ("unwrap", (I,), {"period": 4}),
    ("insert", (V5, 2, np.float32(7.5)), {}), ("insert", (V5, [1, 3, 3], np.array([1.0, 2.0, 3.0], np.float32)), {}),
    ("insert", (F, 1, np.array([9.0, 8.0, 7.0], np.float32)), {"axis": 1}), ("insert", (F, slice(0, 3, 2), V5[:1]), {}),
    ("insert", (I, -1, np.int32(5)), {"axis": 0}),
    ("choose", (PICK, [F, F * 2, I]), {"mode": "wrap"}), ("choose", (PICK - 1, [F, V5[:4], 1.5]), {"mode": "clip"}),
    ("choose", (PICK + 1, [I, I * 3, -I]), {"mode": "wrap"}),
    ("compress", (COND, F), {"axis": 0, "size": 3}), ("compress", (COND, F), {"axis": 1, "size": 2, "fill_value": -1}),
    ("compress", (np.array([0, 1, 1, 0, 1]), V5), {"size": 4}), ("compress", (COND, F), {"size": 2}),
    ("extract", (I > 0, F), {"size": 6}), ("extract", (I, I), {"size": 12, "fill_value": 9}),
    ("fill_diagonal", (F, 5.0), {"inplace": False}), ("fill_diagonal", (F.T, V5[:2]), {"inplace": False}),
    ("fill_diagonal", (np.zeros((3, 3, 3), np.float32), V5), {"inplace": False}),
    ("array_equiv", (F, F[:1]), {}), ("array_equiv", (F, np.broadcast_to(F[:1], (3, 4)).copy()), {}),
    ("array_equiv", (V5, V5[:1]), {}),
]


@pytest.mark.parametrize("name,args,kwargs", CASES2, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES2)])
def test_against_jax_2(name, args, kwargs):
    def want(*a, **k):  # JAX takes arrays where loom takes static lists (insert's obj)
        return getattr(jnp, name)(*[np.asarray(x) if isinstance(x, list) and name == "insert" else x for x in a], **k)

    check_call(name, getattr(lnp, name), jitted(want), args, kwargs)


def test_eager_only_forms_against_jax():
    check("compress", lnp.compress(COND, F, axis=0), jnp.compress(COND, F, axis=0), same_dtype=False)
    check("compress", lnp.compress(COND[:2], V5), jnp.compress(COND[:2], V5), same_dtype=False)
    check("extract", lnp.extract(I > 0, F), jnp.extract(I > 0, F), same_dtype=False)
    want = jitted(jnp.choose)(PICK, [F, I, V5[:4]], mode="clip")  # in range: as mode='raise'
    check("choose", lnp.choose(PICK, [F, I, V5[:4]]), want, same_dtype=False)
    for args in [(np.array([0, 0, 1, 0, 2, 0, 0]),), (np.array([0, 0, 1, 0, 2, 0]), "f"), (np.array([0, 3, 0]), "b")]:
        check("trim_zeros", lnp.trim_zeros(*args), jnp.trim_zeros(*args), same_dtype=False)
    for axes, fn, jfn in [([1, 0], lnp.sum, jnp.sum), ([0, 2], lambda a, axis: lnp.cumsum(a, axis=axis), jnp.cumsum)]:
        want = jax.jit(lambda a, jfn=jfn, axes=axes: jnp.apply_over_axes(jfn, a, axes))(F3)
        check("apply_over_axes", loom.jit(lambda a, fn=fn, axes=axes: lnp.apply_over_axes(fn, a, axes))(F3), want)
        check("apply_over_axes", lnp.apply_over_axes(fn, F3, axes), want, same_dtype=False)


def test_errors_name_the_function():
    with pytest.raises(TypeError, match="compress: the output shape depends"):
        loom.jit(lambda c, a: lnp.compress(c, a))(COND, F[:, 0])
    with pytest.raises(TracerError, match="choose: mode='raise' needs a concrete"):
        loom.jit(lambda p: lnp.choose(p, [F, F]))(PICK)
    with pytest.raises(ValueError, match="choose: `a` has values outside"):
        lnp.choose(PICK, [F, F])
    with pytest.raises(ValueError, match="fill_diagonal: inplace=True is not supported"):
        lnp.fill_diagonal(F, 1.0)
    with pytest.raises(TracerError, match="trim_zeros: `filt` must be static"):
        loom.jit(lnp.trim_zeros)(V5)
    with pytest.raises(NotImplementedError, match="gradient: edge_order"):
        lnp.gradient(F, edge_order=2)


GRADS2 = [
    ("gradient", (F, 2.0, XS[:4]), {}), ("gradient", (V5, XS), {}), ("unwrap", (PHASE,), {}),
    ("insert", (F, 1, np.array([9.0, 8.0, 7.0], np.float32)), {"axis": 1}),
    ("choose", (PICK, [F, F * 2]), {"mode": "wrap"}), ("fill_diagonal", (F, 0.0), {"inplace": False}),
    ("compress", (COND, F), {"axis": 0, "size": 3}),
]


@pytest.mark.parametrize("name,args,kwargs", GRADS2, ids=[g[0] for g in GRADS2])
def test_gradients_against_jax_2(name, args, kwargs):
    # differentiate with respect to the first array argument (the data) of each function
    first = 1 if name in ("choose", "compress") else 0

    def loss(np_, x):
        full = list(args)
        full[first] = x if name != "choose" else [x, x * 2]
        out = getattr(np_, name)(*full, **kwargs)
        return sum(np_.sum(o * o) for o in (out if isinstance(out, list) else [out]))

    x0 = args[first][0] if name == "choose" else args[first]
    got = loom.jit(loom.grad(lambda x: loss(lnp, x)))(x0)
    want = jax.jit(jax.grad(lambda x: loss(jnp, x)))(x0)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4, atol=1e-4)


A1 = np.array([3, 1, 5, 7, 1, 9, 5], np.int32)
A2 = np.array([[5, 1], [2, 8], [5, 0]], np.int32)
FD = np.array([2.5, -1.0, 2.5, 0.0, -1.0], np.float32)
SETS = [  # name, args, keyword arguments (size given, so each also runs under loom.jit)
    ("unique_values", (FD,), {"size": 2, "fill_value": 9.0}), ("unique_counts", (A1,), {"size": 7}),
    ("unique_inverse", (FD,), {"size": 4, "fill_value": -7.0}), ("unique_all", (A2,), {"size": 8}),
    ("unique_all", (FD,), {"size": 2}), ("union1d", (FD, A1), {"size": 10, "fill_value": -1}),
    ("intersect1d", (A1, A2), {"size": 4}), ("intersect1d", (A1, A1 + 100), {"size": 2}),
    ("setdiff1d", (A2, A1), {"size": 3, "fill_value": 42}), ("setxor1d", (A1, A2), {"size": 9}),
    ("setxor1d", (FD, np.array([0.0, 3.0], np.float32)), {"size": 5, "fill_value": 0.5}),
]


@pytest.mark.parametrize("name,args,kwargs", SETS, ids=[f"{c[0]}-{i}" for i, c in enumerate(SETS)])
def test_set_operations_against_jax(name, args, kwargs):
    check_call(name, getattr(lnp, name), jitted(getattr(jnp, name)), args, kwargs)
    # and without size on plain arrays: as JAX with size= the number of values found (jitted JAX
    # is far faster than its eager, value-dependent path)
    free = {k: v for k, v in kwargs.items() if k not in ("size", "fill_value")}
    got = getattr(lnp, name)(*args, **free)
    found = len(got[0] if isinstance(got, tuple) else got)
    if found == 0:  # JAX needs size >= 1
        return
    check(name, got, jitted(getattr(jnp, name))(*args, **free, size=found), same_dtype=False)


def test_set_operation_errors_and_fields():
    with pytest.raises(TracerError, match="unique_counts: the output shape depends"):
        loom.jit(lnp.unique_counts)(A1)
    with pytest.raises(TracerError, match="setdiff1d: the output shape depends"):
        loom.jit(lnp.setdiff1d)(A1, A2)
    with pytest.raises(TracerError, match="intersect1d: the output shape depends"):
        loom.jit(lambda b: lnp.intersect1d(A1, b))(A2)
    # only the second array traced
    check("setdiff1d", loom.jit(lambda b: lnp.setdiff1d(A1, b, size=4))(A2), jitted(jnp.setdiff1d)(A1, A2, size=4))
    out = loom.jit(lambda x: lnp.unique_all(x, size=6))(A1)
    assert out._fields == jitted(jnp.unique_all)(A1, size=6)._fields
    check("intersect1d", lnp.intersect1d(A1, A2, return_indices=True), jnp.intersect1d(A1, A2, return_indices=True),
          same_dtype=False)


BESSEL = np.array([[0.0, 1e-3, -2.0, 7.9], [8.1, 15.0, -30.0, 60.0]], np.float32)
SPECIAL = [
    ("i0", (BESSEL,), {}), ("i0", (I,), {}),
    ("spacing", (np.array([1.0, -1.0, 0.0, np.inf, 1e-40, np.nan, 3e38, -7.5], np.float32),), {}),
    ("spacing", (I,), {}),
    ("histogram_bin_edges", (F,), {}), ("histogram_bin_edges", (F, 4), {"range": (-1.0, 2.0)}),
    ("histogram_bin_edges", (I, np.array([-3.0, 0.0, 1.0, 4.0], np.float32)), {}),
    ("histogram_bin_edges", (np.ones(3, np.float32), 2), {}),
]


@pytest.mark.parametrize("name,args,kwargs", SPECIAL, ids=[f"{c[0]}-{i}" for i, c in enumerate(SPECIAL)])
def test_special_against_jax(name, args, kwargs):
    check_call(name, getattr(lnp, name), jitted(getattr(jnp, name)), args, kwargs, tol=1e-5 if name != "i0" else 3e-6)


def test_kaiser_and_i0_gradients_against_jax():
    for m in (0, 1, 7):
        for beta in (0.0, 3.0):
            want = np.asarray(jnp.kaiser(m, beta)) if beta == 3.0 else np.kaiser(m, beta).astype(np.float32)
            check("kaiser", lnp.kaiser(m, beta), want)
            check("kaiser", loom.jit(lambda b, m=m: lnp.kaiser(m, b))(np.float32(beta)), want)
    got = loom.jit(loom.grad(lambda x: lnp.sum(lnp.i0(x) * x)))(BESSEL)
    want = jax.jit(jax.grad(lambda x: jnp.sum(jnp.i0(x) * x)))(BESSEL)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4, atol=1e-4)
    got = loom.jit(loom.grad(lambda b: lnp.sum(lnp.kaiser(7, b))))(np.float32(3.0))
    want = jax.jit(jax.grad(lambda b: jnp.sum(jnp.kaiser(7, b))))(np.float32(3.0))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4, atol=1e-5)


def _same(name, got, want):
    check(name, got, want)  # static helpers: JAX's dtypes exactly, also outside loom.jit


def test_index_tricks_against_jax():
    for key in [(slice(1, 3),), (slice(1, 3), 7.5), (slice(3, 0, -1), np.array([4, 5], np.int32)),
                (slice(0, 1, 4j), V5), ("0,2", [1, 2], [3, 4]), ("1,2,0", [1, 2], [3, 4]), ("-1", F, F[:, :1]),
                ("0,3,-1", V5, V5), ("1,3,1", V5, V5)]:
        _same("r_", lnp.r_[key], jax.jit(lambda key=key: jnp.r_[key])())
    for key in [(slice(1, 3), np.array([4.0, 5.0], np.float32)), (V5, V5 * 2), (F, F), ("0,3,1", V5, V5)]:
        _same("c_", lnp.c_[key], jax.jit(lambda key=key: jnp.c_[key])())
    for key in [(slice(0, 3), slice(0, 2)), (slice(0, 3), slice(0, 1, 3j)), slice(0.5, 2), slice(0, 3),
                (slice(-1, 1, 5j),), (slice(2, 8, 3), slice(0, 4), slice(1, 2))]:
        _same("mgrid", lnp.mgrid[key], jax.jit(lambda key=key: jnp.mgrid[key])())
        want = jax.jit(lambda key=key: jnp.ogrid[key])()
        _same("ogrid", lnp.ogrid[key], list(want) if isinstance(want, (list, tuple)) else want)
    got = loom.jit(lambda a, b: (lnp.r_[a, b, 1:3], lnp.c_[a, b], lnp.r_["0,2", a, b]))(V5[:2], V5[2:4])
    want = (jnp.r_[V5[:2], V5[2:4], 1:3], jnp.c_[V5[:2], V5[2:4]], jnp.r_["0,2", V5[:2], V5[2:4]])
    check("r_/c_ traced", got, want)
    with pytest.raises(NotImplementedError, match="r_: the matrix directives"):
        lnp.r_["r", V5]


BLOCKS = [
    [[F[:2, :2], F[:2, 2:]], [F[2:]]], [V5, V5], [[np.float32(1.0), np.float32(2.0)], [np.float32(3.0), V5[:1]]],
    [[[F3[:, :, :2]], [F3[:, :, :2]]]], [I, F[:, :1]], [[I[:, :1], F[:, 1:]]],
]


@pytest.mark.parametrize("case", range(len(BLOCKS)))
def test_block_against_jax(case):
    blocks = BLOCKS[case]
    want = jnp.block(blocks)
    check("block", lnp.block(blocks), want, same_dtype=False)
    leaves = []

    def walk(x):
        return [walk(e) for e in x] if isinstance(x, list) else leaves.append(x)

    walk(blocks)

    def rebuild(x, it):
        return [rebuild(e, it) for e in x] if isinstance(x, list) else next(it)

    check("block", loom.jit(lambda *xs: lnp.block(rebuild(blocks, iter(xs))))(*leaves), want)
    if case == 0:
        got = loom.jit(loom.grad(lambda x: lnp.sum(lnp.block([[x, x * 2], [x * 3, x]]) ** 2)))(V5)
        want = jax.grad(lambda x: jnp.sum(jnp.block([[x, x * 2], [x * 3, x]]) ** 2))(V5)
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_block_errors():
    with pytest.raises(ValueError, match="block: the lists in arrays are nested to different depths"):
        lnp.block([[V5], V5])
    with pytest.raises(ValueError, match=r"block: arrays\[0\] is an empty list"):
        lnp.block([[], [V5]])


def test_fromfunction_against_jax():
    for fn, shape, kw in [(lambda i, j: i * 10 + j, (3, 4), {}), (lambda i, j: i - j, (2, 5), {"dtype": int}),
                          (lambda i: i ** 2, (4,), {"dtype": np.float32}), (lambda i, j, k: i + j * k, (2, 2, 3), {})]:
        _same("fromfunction", lnp.fromfunction(fn, shape, **kw), jnp.fromfunction(fn, shape, **kw))
    got = loom.jit(lambda s: lnp.fromfunction(lambda i, j: (i + j) * s, (2, 3)))(np.float32(1.5))
    check("fromfunction", got, jnp.fromfunction(lambda i, j: (i + j) * np.float32(1.5), (2, 3)))
