"""Every elementwise math function and the common jnp functions of `loom.numpy`, against NumPy's
values and jax.numpy's dtypes, eagerly and under `loom.jit`; gradients against `jax.grad`."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import loom
import loom.numpy as lnp

RNG = np.random.default_rng(0)
F = RNG.normal(size=(3, 4)).astype(np.float32) * 2
F2 = RNG.normal(size=(4,)).astype(np.float32)
U = RNG.uniform(-0.95, 0.95, size=(3, 4)).astype(np.float32)
G = RNG.uniform(1.1, 4.0, size=(3, 4)).astype(np.float32)
I = RNG.integers(-20, 20, size=(3, 4)).astype(np.int32)
I2 = RNG.integers(1, 9, size=(4,)).astype(np.int32)
S = RNG.integers(0, 5, size=(4,)).astype(np.int32)
B = RNG.uniform(size=(3, 4)) < 0.5
F[0, 0], F[1, 1] = -0.0, 0.0

# name, args (Python scalars stay weak)
ELEMENTWISE = [
    ("sinh", (F,)), ("cosh", (F,)), ("arcsin", (U,)), ("arccos", (U,)), ("arctan", (F,)), ("arcsinh", (F,)),
    ("arccosh", (G,)), ("arctanh", (U,)), ("asin", (U,)), ("acos", (U,)), ("atan", (I,)), ("asinh", (I,)),
    ("acosh", (G,)), ("atanh", (U,)), ("sinh", (I,)), ("cbrt", (F,)), ("cbrt", (I,)), ("signbit", (F,)),
    ("signbit", (I,)), ("deg2rad", (F,)), ("rad2deg", (I,)), ("degrees", (F,)), ("radians", (F,)), ("fabs", (I,)),
    ("fabs", (F,)), ("trunc", (F,)), ("trunc", (I,)), ("rint", (F,)), ("rint", (I,)),
    ("sinc", (F,)), ("positive", (I,)), ("conj", (F,)), ("conjugate", (I,)), ("real", (F,)), ("imag", (F,)),
    ("angle", (F,)), ("invert", (I,)), ("bitwise_not", (B,)), ("bitwise_invert", (I,)), ("bitwise_count", (I,)),
    ("hypot", (F, F2)), ("hypot", (F, 2.0)), ("hypot", (I, I2)), ("copysign", (F, F2)), ("copysign", (I, -1)),
    ("fmod", (F, F2)), ("fmod", (I, I2)), ("fmax", (F, F2)), ("fmin", (I, I2)), ("fmin", (F, 0.5)),
    ("float_power", (G, F2)), ("heaviside", (F, 0.5)), ("heaviside", (I, I2)), ("logaddexp2", (F, F2)),
    ("logaddexp2", (F, 1.0)), ("atan2", (F, F2)), ("pow", (G, 2)), ("ldexp", (F, S)), ("ldexp", (I, S)),
    ("gcd", (I, I2)), ("lcm", (I, I2)), ("gcd", (I, 6)), ("bitwise_and", (I, I2)), ("bitwise_or", (B, B)),
    ("bitwise_xor", (I, 5)), ("left_shift", (I, S)), ("right_shift", (I, S)), ("bitwise_left_shift", (I2, 2)),
    ("bitwise_right_shift", (I, S)), ("nextafter", (F, F2)),
    # int / float / bool mixes and weak Python scalars
    ("hypot", (I, F2)), ("copysign", (B, F2)), ("arctan", (B,)), ("fmod", (I, F2)), ("heaviside", (B, F2)),
    ("bitwise_and", (B, I2)), ("ldexp", (F2, I2)), ("fmax", (I, 2.5)), ("logaddexp2", (I, 1)), ("arcsinh", (B,)),
    ("float_power", (I2, 2)), ("gcd", (I2, np.int32(12))), ("trunc", (B,)), ("frexp", (F,)), ("frexp", (I,)),
    ("modf", (F,)), ("cosh", (np.float16(0.5) + F.astype(np.float16),)),
]


def jax_dtypes(fn):
    """JAX's results of `fn()` where only their dtypes are read: by abstract evaluation (nothing
    compiled), or by running `fn` where its results' shapes depend on the values."""
    try:
        return jax.eval_shape(fn)
    except Exception:  # noqa: BLE001 - a value-dependent shape; a real error raises again here
        return fn()


def _check(name, ours, theirs_np, theirs_jax, rtol=2e-5):
    ours_l = ours if isinstance(ours, (tuple, list)) else [ours]
    np_l = theirs_np if isinstance(theirs_np, (tuple, list)) else [theirs_np]
    jax_l = theirs_jax if isinstance(theirs_jax, (tuple, list)) else [theirs_jax]
    assert len(ours_l) == len(np_l), name
    for o, n, j in zip(ours_l, np_l, jax_l):
        o = np.asarray(o)
        assert o.dtype == np.dtype(j.dtype), (name, o.dtype, j.dtype)
        np.testing.assert_allclose(o.astype(np.float64) if o.dtype.kind != "b" else o,
                                   np.asarray(n).astype(np.float64) if o.dtype.kind != "b" else n,
                                   rtol=rtol, atol=2e-6, equal_nan=True, err_msg=name)


@pytest.mark.parametrize("name,args", ELEMENTWISE, ids=[f"{c[0]}-{i}" for i, c in enumerate(ELEMENTWISE)])
def test_elementwise_matches_numpy_values_and_jax_dtypes(name, args):
    arrays = [a for a in args if isinstance(a, np.ndarray)]
    statics = {i: a for i, a in enumerate(args) if not isinstance(a, np.ndarray)}

    def call(mod, *arrs):
        it = iter(arrs)
        return getattr(mod, name)(*[statics[i] if i in statics else next(it) for i in range(len(args))])

    with np.errstate(all="ignore"):
        expected = call(np, *arrays)
        if np.asarray(expected[0] if isinstance(expected, tuple) else expected).dtype == np.float16 and not any(
                a.dtype == np.float16 for a in arrays):  # numpy computes float math of bools in float16, JAX in float32
            expected = call(np, *[a.astype(np.float32) if a.dtype == np.bool_ else a for a in arrays])
        eager = call(lnp, *arrays)
    jitted = loom.jit(lambda *a: call(lnp, *a))(*arrays)
    theirs = jax_dtypes(lambda: call(jnp, *arrays))
    _check(name, eager, expected, theirs)  # eager calls run as jitted ones: JAX's dtypes, float32 math of bools
    _check(name, jitted, expected, theirs)


def test_nextafter_steps_one_ulp_and_signbit_sees_negative_zero():
    x = np.array([1.0, -0.0, 0.0], np.float32)
    out = loom.jit(lambda a: lnp.nextafter(a, 2.0))(x)
    assert out.dtype == np.float32 and out.tolist() == np.nextafter(x, np.float32(2)).tolist()
    assert loom.jit(lnp.signbit)(x).tolist() == [False, True, False]


@pytest.mark.parametrize("dtype,tiny", [(np.float16, 1e-7), (np.float32, 1e-40), (np.float64, 1e-310)])
def test_frexp_is_exact_for_zeros_subnormals_and_non_finite_values(dtype, tiny):
    x = np.array([0.0, -0.0, 1.0, -3.5, tiny, -tiny, np.inf, -np.inf, np.nan, 12345.678, 0.5], dtype)
    with loom.config.override(enable_x64=True):  # float64 stays float64
        mant, exp = loom.jit(lnp.frexp)(x)
    expected_mant, expected_exp = np.frexp(x)
    assert mant.dtype == dtype and exp.dtype == np.int32
    np.testing.assert_array_equal(mant, expected_mant)
    np.testing.assert_array_equal(exp, expected_exp)


def test_put_along_axis_returns_a_new_array_and_is_differentiable():
    x = RNG.normal(size=(3, 4)).astype(np.float32)
    idx = np.array([[1], [0], [3]])
    ours = loom.jit(lambda a, i: lnp.put_along_axis(a, i, -1.0, axis=1))(x, idx)
    np.testing.assert_array_equal(ours, jnp.put_along_axis(x, idx, -1.0, axis=1, inplace=False))
    eager = lnp.put_along_axis(x, idx, -1.0, axis=1)
    np.testing.assert_array_equal(eager, ours)
    assert not (x == -1.0).any()

    def f(m, a):
        return m.sum(m.put_along_axis(a, idx, a[:, :1] * 2, axis=1, inplace=False) ** 2)
    x64 = x.astype(np.float64)
    with jax.enable_x64(True), loom.config.override(enable_x64=True):
        np.testing.assert_allclose(loom.grad(lambda a: f(lnp, a))(x64), jax.grad(lambda a: f(jnp, a))(x64),
                                   rtol=1e-12)


def test_vmap_of_new_functions_matches_numpy():
    x = np.abs(F) + 0.5
    np.testing.assert_allclose(loom.vmap(lambda r: lnp.arcsinh(r) + lnp.hypot(r, 1.0))(x),
                               np.arcsinh(x) + np.hypot(x, 1.0), rtol=1e-6)
    np.testing.assert_array_equal(loom.vmap(lambda r: lnp.gcd(r, 6))(I), np.gcd(I, 6))
    np.testing.assert_array_equal(loom.vmap(lambda r: lnp.nextafter(r, 10.0))(x), np.nextafter(x, np.float32(10)))
    np.testing.assert_allclose(loom.vmap(lnp.median)(F), np.median(F, axis=1), rtol=1e-6)


def test_integer_functions_reject_floats_naming_the_function():
    with pytest.raises(TypeError, match="gcd: arguments must be integers"):
        loom.jit(lambda a: lnp.gcd(a, a))(F)


M = RNG.normal(size=(4, 4)).astype(np.float32)
V3 = RNG.normal(size=(5, 3)).astype(np.float32)
W3 = RNG.normal(size=(3,)).astype(np.float32)
A8 = RNG.normal(size=(8,)).astype(np.float32)
K3 = RNG.normal(size=(3,)).astype(np.float32)
SORTED = np.sort(RNG.normal(size=(6,))).astype(np.float32)
Q = RNG.normal(size=(7,)).astype(np.float32) * 2
NANS = F.copy()
NANS[0, 1], NANS[2, :] = np.nan, np.nan
INFS = np.array([1.0, np.inf, -np.inf, np.nan], np.float32)

# name, function (of a module), array args
COMMON = [
    ("average", lambda m, x: m.average(x, axis=0), (F,)),
    ("average_weights", lambda m, x, w: m.average(x, axis=1, weights=w), (F, np.abs(F2) + 0.1)),
    ("cov", lambda m, x: m.cov(x), (F,)),
    ("cov_cols", lambda m, x: m.cov(x, rowvar=False, ddof=0), (F,)),
    ("corrcoef", lambda m, x: m.corrcoef(x), (F,)),
    ("diag_1d", lambda m, x: m.diag(x, 1), (F2,)),
    ("diag_1d_neg", lambda m, x: m.diag(x, -2), (F2,)),
    ("diag_2d", lambda m, x: m.diag(x, -1), (F,)),
    ("diagonal", lambda m, x: m.diagonal(x, 1), (F,)),
    ("trace", lambda m, x: m.trace(x), (M,)),
    ("trace_int", lambda m, x: m.trace(x, -1), (I,)),
    ("tril", lambda m, x: m.tril(x, -1), (F,)),
    ("triu", lambda m, x: m.triu(x, 1), (I,)),
    ("cross", lambda m, a, b: m.cross(a, b), (V3, W3)),
    ("kron", lambda m, a, b: m.kron(a, b), (M[:2, :3], F)),
    ("inner", lambda m, a, b: m.inner(a, b), (F, M)),
    ("vdot", lambda m, a, b: m.vdot(a, b), (F, F * 2)),
    ("meshgrid", lambda m, a, b: m.meshgrid(a, b), (F2, K3)),
    ("meshgrid_ij", lambda m, a, b: m.meshgrid(a, b, indexing="ij"), (F2, K3)),
    ("nan_to_num", lambda m, x: m.nan_to_num(x), (INFS,)),
    ("nanmax", lambda m, x: m.nanmax(x, axis=1), (NANS,)),
    ("nanmin", lambda m, x: m.nanmin(x, axis=0), (NANS,)),
    ("nansum", lambda m, x: m.nansum(x, axis=1), (NANS,)),
    ("nanmean", lambda m, x: m.nanmean(x, axis=0), (NANS,)),
    ("median", lambda m, x: m.median(x, axis=1), (F,)),
    ("median_all", lambda m, x: m.median(x), (I,)),
    ("percentile", lambda m, x: m.percentile(x, 30.0, axis=0), (F,)),
    ("quantile", lambda m, x: m.quantile(x, np.array([0.1, 0.5, 0.9]), axis=1), (F,)),
    ("searchsorted", lambda m, a, v: m.searchsorted(a, v), (SORTED, Q)),
    ("searchsorted_right", lambda m, a, v: m.searchsorted(a, v, side="right"), (SORTED, SORTED)),
    ("interp", lambda m, x, xp, fp: m.interp(x, xp, fp), (Q, SORTED, A8[:6])),
    ("polyval", lambda m, p, x: m.polyval(p, x), (K3, F)),
    ("isclose", lambda m, a, b: m.isclose(a, b, atol=0.5), (F, F2)),
    ("isclose_inf", lambda m, a, b: m.isclose(a, b, equal_nan=True), (INFS, INFS)),
    ("allclose", lambda m, a, b: m.allclose(a, b), (F, F)),
    ("array_equal", lambda m, a, b: m.array_equal(a, b), (I, I + 0)),
    ("count_nonzero", lambda m, x: m.count_nonzero(x, axis=0), (I,)),
    ("diff", lambda m, x: m.diff(x, 2, axis=1), (F,)),
    ("diff_bool", lambda m, x: m.diff(x), (B,)),
    ("ediff1d", lambda m, x: m.ediff1d(x), (F,)),
    ("convolve", lambda m, a, v: m.convolve(a, v), (A8, K3)),
    ("convolve_same", lambda m, a, v: m.convolve(a, v, "same"), (K3, A8)),
    ("convolve_valid", lambda m, a, v: m.convolve(a, v, "valid"), (A8, K3)),
    ("correlate", lambda m, a, v: m.correlate(a, v), (A8, K3)),
    ("correlate_full", lambda m, a, v: m.correlate(a, v, "full"), (K3, A8)),
    ("correlate_same", lambda m, a, v: m.correlate(a, v, "same"), (A8, K3)),
    ("ptp", lambda m, x: m.ptp(x, axis=1), (I,)),
    ("atleast", lambda m, x, y: [m.atleast_1d(x), m.atleast_2d(y), m.atleast_3d(y)], (F2, F2)),
    ("ravel", lambda m, x: m.ravel(x), (F,)),
    ("hstack", lambda m, a, b: m.hstack([a, b]), (F, M[:3])),
    ("vstack", lambda m, a, b: m.vstack([a, b]), (F, F2)),
    ("dstack", lambda m, a, b: m.dstack([a, b]), (F, F)),
    ("column_stack", lambda m, a, b: m.column_stack([a, b]), (F2, M)),
    ("hsplit", lambda m, x: m.hsplit(x, 2), (F,)),
    ("vsplit", lambda m, x: m.vsplit(x, [1]), (F,)),
    ("array_split", lambda m, x: m.array_split(x, 3, axis=1), (F,)),
    ("rot90", lambda m, x: [m.rot90(x), m.rot90(x, 2), m.rot90(x, 3)], (F,)),
    ("fliplr_flipud", lambda m, x: [m.fliplr(x), m.flipud(x)], (F,)),
    ("select", lambda m, x: m.select([x < -1, x > 1], [x * 2, x - 1], 0.5), (F,)),
    ("piecewise", lambda m, x: m.piecewise(x, [x < 0, x > 1], [lambda v: -v, 7.0, lambda v: v * 3]), (F,)),
    ("broadcast_arrays", lambda m, a, b: m.broadcast_arrays(a, b), (F, F2)),
    ("histogram", lambda m, x: m.histogram(x, 3), (F,)),
    ("histogram_edges", lambda m, x: m.histogram(x, np.array([-1.0, 0.0, 0.5, 2.0], np.float32)), (F,)),
    ("histogram_range_weights", lambda m, x, w: m.histogram(x, 4, range=(-1.0, 1.0), weights=w), (F2, F2 * F2)),
    ("histogram_density", lambda m, x: m.histogram(x, 5, density=True), (I,)),
    ("real_imag", lambda m, x: [m.real(x), m.imag(x), m.angle(x)], (I,)),
    ("sort_family", lambda m, x: [m.sort(m.partition(x, 2)), m.lexsort([x, x * 0])], (F2,)),
    ("mixed_weak", lambda m, x: [m.hypot(x, 3), m.fmax(x, 1.0), m.arctan(x) + 1], (F,)),
]


@pytest.mark.parametrize("name,fn,args", COMMON, ids=[c[0] for c in COMMON])
def test_common_function_matches_numpy_values_and_jax_dtypes(name, fn, args):
    with np.errstate(all="ignore"), loom.config.override(enable_x64=True):  # NumPy's float64 values
        expected = fn(np, *args)
        eager = fn(lnp, *args)
        jitted_x64 = loom.jit(lambda *a: fn(lnp, *a))(*args)
    jitted = loom.jit(lambda *a: fn(lnp, *a))(*args)
    theirs = jax_dtypes(lambda: fn(jnp, *args))
    _check(name, jitted, expected, theirs, rtol=1e-4)
    # eager calls run as jitted ones (with 64-bit values enabled here): the same dtypes and values
    eager_l = eager if isinstance(eager, (list, tuple)) else [eager]
    jitted_l = jitted_x64 if isinstance(jitted_x64, (list, tuple)) else [jitted_x64]
    for e, j, n in zip(eager_l, jitted_l, expected if isinstance(expected, (list, tuple)) else [expected]):
        assert np.asarray(e).dtype == np.asarray(j).dtype, name
        np.testing.assert_allclose(np.asarray(e, np.float64), np.asarray(j, np.float64), rtol=1e-6, equal_nan=True)
        np.testing.assert_allclose(np.asarray(e, np.float64), np.asarray(n, np.float64), rtol=1e-4, atol=2e-6,
                                   equal_nan=True)


def test_creation_functions_have_jax_default_dtypes():
    for name, args in [("identity", (3,)), ("tri", (3, 4, 1)), ("indices", ((2, 3),)), ("empty", ((2,),)),
                       ("logspace", (0.0, 2.0, 5))]:
        ours, theirs = getattr(lnp, name)(*args), getattr(jnp, name)(*args)
        assert ours.dtype == theirs.dtype, name
        if name != "empty":
            np.testing.assert_allclose(ours, getattr(np, name)(*args), rtol=1e-6)
    e = loom.jit(lnp.empty_like)(F)
    assert e.shape == F.shape and e.dtype == np.float32


def test_value_dependent_shapes_raise_under_tracing_without_size_and_work_eagerly():
    x = np.array([3, 1, 3, 0], np.int32)
    np.testing.assert_array_equal(lnp.unique(x), [0, 1, 3])
    np.testing.assert_array_equal(lnp.nonzero(x)[0], [0, 1, 2])
    for name in ("unique", "nonzero", "argwhere", "flatnonzero"):
        with pytest.raises(loom.frontend.tracing.TracerError,
                           match=f"{name}: the output shape depends on the values.*pass a static size="):
            loom.jit(getattr(lnp, name))(x)


@pytest.mark.parametrize("size", [2, 5, 14])
def test_size_variants_match_jax(size):
    x = np.array([[0, 3, 0, 1], [2, 0, 0, 5], [0, 0, 7, 0]], np.int32)
    f = np.array([3.0, 1, 3, -2, 1, 7], np.float32)
    cases = [
        (lambda m, a: m.nonzero(a, size=size), x),
        (lambda m, a: m.nonzero(a, size=size, fill_value=-1), x[0]),
        (lambda m, a: m.argwhere(a, size=size, fill_value=-1), x),
        (lambda m, a: m.flatnonzero(a, size=size), x),
        (lambda m, a: m.unique(a, size=size), f),
        (lambda m, a: m.unique(a, size=size, fill_value=0.5), f),
    ]
    for fn, arg in cases:
        ours = loom.jit(lambda a, fn=fn: fn(lnp, a))(arg)
        eager = fn(lnp, arg)
        theirs = fn(jnp, arg)
        for o, e, t in zip(*(v if isinstance(v, tuple) else (v,) for v in (ours, eager, theirs))):
            assert o.dtype == t.dtype
            np.testing.assert_array_equal(o, t)
            np.testing.assert_array_equal(e, t)


def test_quantile_rejects_a_traced_q():
    with pytest.raises(loom.frontend.tracing.TracerError, match="`q` must be a static value"):
        loom.jit(lambda x, q: lnp.quantile(x, q))(F, np.float32(0.5))


X64 = RNG.normal(size=(5,))
GRADS = [
    ("sinh_cosh", lambda m, x: m.sum(m.sinh(x) * m.cosh(x))),
    ("arcsin_arccos", lambda m, x: m.sum(m.arcsin(x * 0.3) + m.arccos(x * 0.2))),
    ("arctanh", lambda m, x: m.sum(m.arctanh(x * 0.3) ** 2)),
    ("arccosh", lambda m, x: m.sum(m.arccosh(x * x + 1.5))),
    ("cbrt_copysign", lambda m, x: m.sum(m.cbrt(x) + m.copysign(x * x, -x))),
    ("sinc_hypot", lambda m, x: m.sum(m.sinc(x) * m.hypot(x, 0.7))),
    ("logaddexp2_float_power", lambda m, x: m.sum(m.logaddexp2(x, 1.0) + m.float_power(x * x + 1, 1.5))),
    ("fmax_heaviside", lambda m, x: m.sum(m.fmax(x, 0.1) * m.deg2rad(x) + m.ldexp(x, 3))),
    ("cov_trace", lambda m, x: m.trace(m.cov(m.stack([x, m.sin(x)])))),
    ("average_median", lambda m, x: m.average(x, weights=m.abs(x) + 1.0) + m.median(x * x)),
    ("interp_polyval", lambda m, x: m.sum(m.interp(x, m.array([-2.0, 0.0, 2.0]), m.array([1.0, -1.0, 3.0]))
                                          + m.polyval(m.array([1.0, 2.0, 3.0]), x))),
    ("convolve_kron_diag", lambda m, x: m.sum(m.convolve(x, x[:2]) ** 2) + m.sum(m.kron(x, x) * m.diag(x)[0, 0])),
    ("tril_cross_nansum", lambda m, x: m.sum(m.tril(m.outer(x, x))) + m.sum(m.cross(x[:3], x[2:])) + m.nansum(x)),
]


@pytest.mark.parametrize("name,fn", GRADS, ids=[c[0] for c in GRADS])
def test_grad_matches_jax(name, fn):
    with loom.config.override(enable_x64=True):
        ours = loom.grad(lambda x: fn(lnp, x))(X64)
    with jax.enable_x64(True):
        theirs = np.asarray(jax.grad(lambda x: fn(jnp, x))(X64))
    np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)
