"""bfloat16 and float16 through the front end: jit, grad, vjp, jvp, vmap and linearize on bf16 /
f16 inputs (numpy arrays, torch tensors, loom.Arrays), JAX's type promotion for them, and
loom.numpy's functions on them, against jax.numpy / jax.grad on the same inputs, on the numpy
backend (host) and the torch backend (torch:cpu)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

import loom
import loom.numpy as lnp

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
torch = pytest.importorskip("torch")

from loom.backend.torch_kernels import to_numpy  # noqa: E402
from loom.runtime.devices import Array, Device  # noqa: E402

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
TORCH_CPU = Device("cpu", 0, "torch")
BACKENDS = ["numpy", "torch"]
RNG = np.random.default_rng(7)


def rand(shape, dtype=BF16, positive=False):
    x = RNG.standard_normal(shape)
    return (np.abs(x) + 0.5 if positive else x).astype(dtype)


def place(x, backend):
    """`x` on the backend's device: numpy arrays stay on the host, torch puts them on torch:cpu."""
    return x if backend == "numpy" else loom.device_put(x, "torch:cpu")


def host(x):
    """A result as a float64 numpy array, and its numpy dtype."""
    if isinstance(x, torch.Tensor):
        arr = to_numpy(x)
    else:
        arr = np.asarray(x)
    return arr.astype(np.float64), arr.dtype


def check_result(got, want, backend, rtol, atol=None):
    """Same dtype exactly; values within `rtol` (and `atol`, scaled by the largest magnitude)
    of JAX's; on the torch backend the result is a loom.Array on torch:cpu."""
    if backend == "torch":
        assert isinstance(got, Array) and got.device == TORCH_CPU, type(got)
    else:
        assert isinstance(got, np.ndarray), type(got)
    g, gd = host(got)
    w = np.asarray(want)
    assert gd == w.dtype, (gd, w.dtype)
    w = w.astype(np.float64)
    assert g.shape == w.shape
    finite = np.isfinite(w)
    np.testing.assert_array_equal(np.isfinite(g), finite)
    scale = float(np.max(np.abs(w[finite]), initial=1.0))
    np.testing.assert_allclose(g[finite], w[finite], rtol=rtol, atol=(atol if atol is not None else rtol) * scale)


# One ulp of bfloat16 is 2**-7 relative (2**-10 for float16): loom and XLA may round an
# intermediate differently, so values are compared to a couple of ulps.
TOL = {BF16: 2.0 ** -6, F16: 2.0 ** -9}


# --- promotion -------------------------------------------------------------------------------------

PROMOTION = [
    ("bf16 + python float", lambda: (rand((3,)), 2.5)),
    ("bf16 + python int", lambda: (rand((3,)), 3)),
    ("bf16 + f16", lambda: (rand((3,)), rand((3,), F16))),
    ("bf16 + f32", lambda: (rand((3,)), rand((3,), np.float32))),
    ("int32 + bf16", lambda: (np.arange(3, dtype=np.int32), rand((3,)))),
    ("uint8 + bf16", lambda: (np.arange(3, dtype=np.uint8), rand((3,)))),
    ("bool + bf16", lambda: (np.array([True, False, True]), rand((3,)))),
    ("int8 scalar + bf16", lambda: (np.int8(2), rand((3,)))),
    ("f16 + python float", lambda: (rand((3,), F16), 0.5)),
    ("f16 + int16", lambda: (rand((3,), F16), np.arange(3, dtype=np.int16))),
    ("bf16 scalar + f32 scalar", lambda: (BF16.type(1.5), np.float32(2.0))),
]


# One function object each, so that JAX compiles each once per dtype pair, not once per test.
ARITHMETIC = (lambda x, y: x + y, lambda x, y: x * y - y, lambda x, y: x / (y * y + 1))


@pytest.mark.parametrize("name,make", PROMOTION, ids=[p[0] for p in PROMOTION])
@pytest.mark.parametrize("backend", BACKENDS)
def test_binary_promotion_matches_jax(name, make, backend):
    a, b = make()
    for fn in ARITHMETIC:
        want = jax.jit(fn)(a, b)
        got = loom.jit(fn, device=None if backend == "numpy" else "torch:cpu")(a, b)
        check_result(got, want, backend, rtol=TOL.get(np.dtype(want.dtype), 2.0 ** -6))


def test_result_type_matches_jax():
    dtypes = [BF16, F16, np.float32, np.int8, np.int32, np.uint8, np.bool_]
    scalars = [1, 1.0, True]
    for a in dtypes:
        for b in dtypes + scalars:
            assert lnp.result_type(a, b) == jnp.result_type(a, b), (a, b)
    assert lnp.result_type(BF16, F16) == np.float32
    assert lnp.result_type(BF16, 2.0) == BF16
    assert lnp.result_type(np.int32, BF16) == BF16


def test_weak_types_through_bf16():
    """Python scalars stay weak through bf16 arithmetic, as JAX: `x_bf16 * 2.0` is a strong bf16
    array, so adding a float16 array afterwards gives float32; a Python float argument is a weak
    float32 value, and what is computed from it alone (`s * 2`, `sqrt(s)`) adopts bf16."""
    x, h = rand((4,)), rand((4,), F16)

    def fn(m):
        return lambda a, b, s: ((a * 2.0) + b, (a + s * 2) * 1.5, a - m.sqrt(s), m.maximum(s, a))

    got, want = loom.jit(fn(lnp))(x, h, 3.0), jax.jit(fn(jnp))(x, h, 3.0)
    assert [g.dtype for g in got] == [np.float32, BF16, BF16, BF16]
    for g, w in zip(got, want):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(g.astype(np.float64), np.asarray(w).astype(np.float64), rtol=2.0 ** -6)


# --- loom.numpy on bf16 ------------------------------------------------------------------------------

FUNCTIONS = [
    ("sin_sum", lambda m: lambda a: m.sin(a) * 2 + a.sum(), False),
    ("exp_log", lambda m: lambda a: m.log(a) + m.exp(a), True),
    ("tanh_sqrt", lambda m: lambda a: m.tanh(a) * m.sqrt(a), True),
    ("arcsinh_arctan", lambda m: lambda a: m.arcsinh(a) - m.arctan(a), False),
    ("power_reciprocal", lambda m: lambda a: a ** 3 + m.reciprocal(a), True),
    ("exp2_log2", lambda m: lambda a: m.exp2(a) + m.log2(a), True),
    ("clip_round_floor", lambda m: lambda a: m.clip(a, -0.5, 0.5) + m.round(a * 4) + m.floor(a), False),
    ("where", lambda m: lambda a: m.where(a > 0, a, a * 0.1), False),
    ("maximum_abs", lambda m: lambda a: m.maximum(m.abs(a), 0.25), False),
    ("sum_axis", lambda m: lambda a: m.sum(a, axis=1), False),
    ("mean", lambda m: lambda a: m.mean(a, axis=0), False),
    ("var_std", lambda m: lambda a: m.var(a, axis=1) + m.std(a), False),
    ("prod", lambda m: lambda a: m.prod(a, axis=1), False),
    ("max_min", lambda m: lambda a: m.max(a, axis=0) - m.min(a, axis=0), False),
    ("argmax", lambda m: lambda a: m.argmax(a, axis=1), False),
    ("sort", lambda m: lambda a: m.sort(a, axis=1), False),
    ("cumsum", lambda m: lambda a: m.cumsum(a, axis=1), False),
    ("softmax", lambda m: lambda a: m.exp(a - m.max(a, axis=1, keepdims=True))
     / m.sum(m.exp(a - m.max(a, axis=1, keepdims=True)), axis=1, keepdims=True), False),
    ("logsumexp", lambda m: lambda a: m.log(m.sum(m.exp(a), axis=-1)), False),
    ("isfinite_isinf", lambda m: lambda a: m.isfinite(a / (a > 0)) & ~m.isinf(a), False),
    ("nan_to_num", lambda m: lambda a: m.nan_to_num(a / 0.0), False),
    ("frexp", lambda m: lambda a: m.frexp(a)[0], False),
    ("astype_f32", lambda m: lambda a: a.astype(m.float32) * 2, False),
    ("astype_int", lambda m: lambda a: (a * 10).astype(m.int32), False),
    ("transpose_reshape", lambda m: lambda a: m.reshape(a.T, (-1,))[::2], False),
    ("concatenate_f32", lambda m: lambda a: m.concatenate([a, a.astype(m.float32)]), False),
    ("take", lambda m: lambda a: a[np.array([2, 0])] * a[1], False),
]


JAX_FUNCTIONS: dict = {}  # name -> the jitted JAX function, made once: compiled once per dtype, not per backend


@pytest.mark.parametrize("name,make,positive", FUNCTIONS, ids=[f[0] for f in FUNCTIONS])
@pytest.mark.parametrize("dtype", [BF16, F16], ids=["bf16", "f16"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_lnp_function_matches_jax(name, make, positive, dtype, backend):
    x = rand((4, 6), dtype, positive)
    with np.errstate(all="ignore"):
        want = JAX_FUNCTIONS.setdefault(name, jax.jit(make(jnp)))(x)
    got = loom.jit(make(lnp))(place(x, backend))
    check_result(got, want, backend, rtol=TOL[dtype] * (2 if name == "cumsum" else 1))


@pytest.mark.parametrize("backend", BACKENDS)
def test_matmul_matches_jax(backend):
    a, b, v = rand((5, 8)), rand((8, 3)), rand((8,))

    def fn(m):
        return lambda a, b, v: (a @ b, m.matmul(a, v), m.dot(v, v), m.matmul(a.astype(m.float32), b))

    got = loom.jit(fn(lnp))(place(a, backend), place(b, backend), place(v, backend))
    want = jax.jit(fn(jnp))(a, b, v)
    for g, w in zip(got, want):
        check_result(g, w, backend, rtol=2.0 ** -6)


@pytest.mark.parametrize("dtype", [BF16, F16], ids=["bf16", "f16"])
def test_long_sums_accumulate_in_float32(dtype):
    """JAX accumulates half-precision sums and means in float32: 1000 ones sum to 1000, where a
    bf16 running sum would stop at 256 (257 rounds back to 256)."""
    x = np.ones(1000, dtype)
    got = loom.jit(lambda a: (lnp.sum(a), lnp.mean(a * 3), lnp.var(a)))(x)
    want = jax.jit(lambda a: (jnp.sum(a), jnp.mean(a * 3), jnp.var(a)))(x)
    for g, w in zip(got, want):
        assert g.dtype == dtype
        np.testing.assert_array_equal(g.astype(np.float64), np.asarray(w).astype(np.float64))
    assert float(got[0]) == 1000.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_creation_and_conversion_with_bf16_dtype(backend):
    x = rand((2, 3), np.float32)

    def fn(m):
        return lambda a: (m.asarray(a, dtype=m.bfloat16) + m.zeros((2, 3), m.bfloat16),
                          m.array(a, dtype="bfloat16") * m.ones(3, "bfloat16"),
                          m.full((2, 3), 1.5, m.bfloat16) + m.zeros_like(a, dtype=m.bfloat16),
                          a.astype("bfloat16") - m.full_like(a, 2, dtype=m.bfloat16),
                          m.arange(3, dtype=m.bfloat16) + a.astype(m.bfloat16))

    got = loom.jit(fn(lnp))(place(x, backend))
    want = jax.jit(fn(jnp))(x)
    for g, w in zip(got, want):
        check_result(g, w, backend, rtol=2.0 ** -7)
    # outside tracing: numpy arrays of that dtype, as jax.numpy gives arrays of it
    for host_value, jax_value in [(lnp.zeros((2,), lnp.bfloat16), jnp.zeros((2,), jnp.bfloat16)),
                                  (lnp.ones(2, "bfloat16"), jnp.ones(2, "bfloat16")),
                                  (lnp.full((2,), 0.1, lnp.bfloat16), jnp.full((2,), 0.1, jnp.bfloat16)),
                                  (lnp.asarray([0.1, 3.0], dtype="bfloat16"), jnp.asarray([0.1, 3.0], "bfloat16")),
                                  (lnp.array(x, dtype=lnp.bfloat16), jnp.array(x, dtype=jnp.bfloat16))]:
        assert host_value.dtype == jax_value.dtype == BF16
        np.testing.assert_array_equal(host_value, np.asarray(jax_value))
    assert np.dtype(lnp.bfloat16) == np.dtype(jnp.bfloat16) == BF16


def test_finfo_and_iinfo_match_jax():
    for d in (lnp.bfloat16, "bfloat16", lnp.float16, lnp.float32):
        got, want = lnp.finfo(d), jnp.finfo(d)
        assert got.dtype == want.dtype
        for field in ("eps", "max", "min", "tiny", "resolution", "bits", "nmant", "maxexp"):
            assert float(getattr(got, field)) == float(getattr(want, field)), (d, field)
    assert lnp.finfo(lnp.bfloat16).eps == 2.0 ** -7
    assert lnp.iinfo(lnp.int8).min == jnp.iinfo(jnp.int8).min == -128
    # finfo of a traced value's dtype, as in `jnp.finfo(x.dtype).eps` inside a function
    got = loom.jit(lambda a: a + lnp.finfo(a.dtype).eps)(np.ones(2, BF16))
    assert got.dtype == BF16 and float(got[0]) == 1.0078125


# --- every kind of input ------------------------------------------------------------------------------

def test_bf16_inputs_of_every_kind():
    """The motivating call, on numpy bf16 arrays, torch bf16 tensors and loom.Arrays: results
    come back as bf16 in the same kind of container."""
    def fn(m):
        return lambda a: m.sin(a) * 2 + a.sum()

    x = rand((2, 3))
    want = np.asarray(jax.jit(fn(jnp))(x)).astype(np.float64)
    f = loom.jit(fn(lnp))
    on_host = f(x)
    assert type(on_host) is np.ndarray and on_host.dtype == BF16
    tensor = torch.from_numpy(x.view(np.int16).copy()).view(torch.bfloat16)
    raw = f(tensor)
    assert isinstance(raw, torch.Tensor) and raw.dtype == torch.bfloat16
    on_device = f(loom.device_put(x, "torch:cpu"))
    assert isinstance(on_device, Array) and on_device.dtype == BF16
    for out in (on_host, raw, on_device):
        np.testing.assert_allclose(host(out)[0], want, rtol=2.0 ** -7)
    half = f(x.astype(F16))
    assert half.dtype == F16
    np.testing.assert_allclose(half.astype(np.float64), np.asarray(jax.jit(fn(jnp))(x.astype(F16))), rtol=2.0 ** -10)


def test_unsupported_dtype_is_still_an_error():
    with pytest.raises(TypeError, match="float8_e4m3fn, which loom does not support"):
        loom.jit(lambda a: a * 2)(np.ones(2, ml_dtypes.float8_e4m3fn))


# --- transformations -----------------------------------------------------------------------------------


def loss(m):
    return lambda w, x: m.mean(m.tanh(x @ w) ** 2) + 0.5 * m.sum(w * w) + m.max(m.sin(w))


@pytest.mark.parametrize("dtype", [BF16, F16], ids=["bf16", "f16"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_matches_jax(dtype, backend):
    w, x = rand((5, 3), dtype), rand((4, 5), dtype)
    tol = 2.0 ** -5 if dtype == BF16 else 2.0 ** -8
    # jitted: one XLA compile instead of one per primitive (eager jax)
    want = jax.jit(jax.grad(loss(jnp), argnums=(0, 1)))(w, x)
    for got in (loom.grad(loss(lnp), argnums=(0, 1))(place(w, backend), place(x, backend)),
                loom.jit(loom.grad(loss(lnp), argnums=(0, 1)))(place(w, backend), place(x, backend))):
        for g, e in zip(got, want):
            check_result(g, e, backend, rtol=tol)
    value, grad_w = loom.value_and_grad(loss(lnp))(place(w, backend), place(x, backend))
    jvalue, jgrad_w = jax.jit(jax.value_and_grad(loss(jnp)))(w, x)
    check_result(value, jvalue, backend, rtol=tol)
    check_result(grad_w, jgrad_w, backend, rtol=tol)


@pytest.mark.parametrize("backend", BACKENDS)
def test_grad_with_python_scalars_and_mixed_dtypes(backend):
    """Python scalars are weak (the gradient stays bf16); a float32 argument mixed in promotes
    the computation, and each gradient takes its argument's dtype, as JAX."""
    x, y = rand((6,)), rand((6,), np.float32)

    def fn(m):
        return lambda a, b: m.sum(m.sin(a * 1.5 + 2) * b) + m.sum(a * a) * 0.25

    got = loom.grad(fn(lnp), argnums=(0, 1))(place(x, backend), place(y, backend))
    want = jax.grad(fn(jnp), argnums=(0, 1))(x, y)
    for g, w in zip(got, want):
        check_result(g, w, backend, rtol=2.0 ** -5)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vjp_jvp_linearize_match_jax(backend):
    x = rand((3, 4))
    ct = rand((3, 4))
    t = rand((3, 4))

    def fn(m):
        return lambda a: m.exp(m.sin(a)) * a

    tol = 2.0 ** -5
    out, vjp_fn = loom.vjp(fn(lnp), place(x, backend))
    jout, jvjp_fn = jax.vjp(fn(jnp), x)
    check_result(out, jout, backend, rtol=tol)
    check_result(vjp_fn(place(ct, backend))[0], jvjp_fn(ct)[0], backend, rtol=tol)
    out, tangent = loom.jvp(fn(lnp), (place(x, backend),), (place(t, backend),))
    jout, jtangent = jax.jvp(fn(jnp), (x,), (t,))
    check_result(out, jout, backend, rtol=tol)
    check_result(tangent, jtangent, backend, rtol=tol)
    out, f_jvp = loom.linearize(fn(lnp), place(x, backend))
    jout, jf_jvp = jax.linearize(fn(jnp), x)
    check_result(out, jout, backend, rtol=tol)
    check_result(f_jvp(place(t, backend)), jf_jvp(t), backend, rtol=tol)


@pytest.mark.parametrize("backend", BACKENDS)
def test_vmap_matches_jax(backend):
    x, w = rand((5, 4)), rand((4, 3))

    def fn(m):
        return lambda row, w: m.tanh(row @ w) + m.mean(row)

    got = loom.vmap(fn(lnp), in_axes=(0, None))(place(x, backend), place(w, backend))
    want = jax.vmap(fn(jnp), in_axes=(0, None))(x, w)
    check_result(got, want, backend, rtol=2.0 ** -6)
    per_example = loom.vmap(loom.grad(lambda row: lnp.sum(lnp.sin(row) * row)))(place(x, backend))
    jper_example = jax.vmap(jax.grad(lambda row: jnp.sum(jnp.sin(row) * row)))(x)
    check_result(per_example, jper_example, backend, rtol=2.0 ** -5)
