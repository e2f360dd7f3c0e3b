"""`loom.random`: pseudo-random numbers with explicit keys, bit for bit as `jax.random`.

A key is a `uint32` array of shape `(2,)`, the raw key data `jax.random.PRNGKey` gives (loom has
no typed key arrays). `split` and `fold_in` derive new keys; the samplers (`uniform`, `normal`,
`bernoulli`, `randint`, `choice`, `permutation`, `categorical`, `truncated_normal`, `gumbel`,
`bits`) never change their key: reusing a key reuses its numbers.

Everything is built from JAX's default generator, Threefry-2x32 (20 rounds) in its
"partitionable" counter layout (`jax_threefry_partitionable`, the default since JAX 0.5): element
`i` of a sample of shape `s` hashes the 64-bit counter `i` (row-major index) under the key. The
hash is emitted as StableHLO integer ops (add, xor, shifts) through the tracing API, so the same
code runs under `loom.jit`, `loom.grad` and `loom.vmap` (the ops are traced into the enclosing
function) and on concrete inputs (each sampler is then compiled once per shape and dtype with
`loom.jit` and cached). Floats come from the mantissa trick of `jax.random.uniform`; normals from
the inverse error function. To give JAX's float32 results to the bit on CPU, the float math is
emitted as XLA's CPU code computes it: the polynomial XLA expands `chlo.erf_inv` into, XLA's own
log, log1p and erf (Cephes-style, not numpy's), and the multiply-adds LLVM contracts into FMAs
(computed in float64, where the product of two float32 is exact). float16 samples are exact
except `gumbel` (an ulp or two: XLA fuses float16 math with excess precision); float64 normals
agree to about 1e-15 (XLA's float64 log1p is not emulated). Inside a user's jitted function XLA
may also contract a sampler's last multiply with the user's next add; loom returns the values
`jax.random` returns on its own.

Seeds follow JAX's default 32-bit mode: `key(seed)` is `[0, seed mod 2**32]`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from loom.dialects import chlo, stablehlo
from loom.dialects.stablehlo import GatherDimensionNumbers
from loom.frontend.jit import jit
from loom.frontend.tracing import Tracer, current_trace, ir_element_type, tensor_type
from loom.numpy import argmax, cumsum

ArrayLike = Any
Shape = Sequence[int]

_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32), 64: np.dtype(np.uint64)}
_FLOATS = (np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16), np.dtype(np.float32), np.dtype(np.float64))


# --- tracer-level helpers: every sampler is written once, against these -------------------------


def _tracer(x: ArrayLike, dtype: Any = None) -> Tracer:
    """`x` as a tracer of the current trace (a constant when concrete), converted to `dtype`."""
    if isinstance(x, Tracer):
        return x if dtype is None else _convert(x, dtype)
    trace = current_trace()
    arr = np.asarray(x) if dtype is None else np.asarray(x).astype(dtype)
    if dtype is None and isinstance(x, (int, float)) and not isinstance(x, bool):
        arr = arr.astype(np.int32 if isinstance(x, int) else np.float32)
    return Tracer(trace.constant(arr), trace)


def _const(value: Any, dtype: Any, shape: Shape = ()) -> Tracer:
    trace = current_trace()
    return Tracer(trace.constant(np.asarray(value, dtype=dtype), shape=tuple(shape)), trace)


def _op(fn: Callable, *xs: Tracer) -> Tracer:
    trace = xs[0].trace
    return Tracer(fn(trace.emit(), *(x.value for x in xs)), trace)


def _add(x: Tracer, y: Tracer) -> Tracer:
    return _op(stablehlo.add, x, y)


def _xor(x: Tracer, y: Tracer) -> Tracer:
    return _op(stablehlo.xor, x, y)


def _mul(x: Tracer, y: Tracer) -> Tracer:
    return _op(stablehlo.multiply, x, y)


def _rem(x: Tracer, y: Tracer) -> Tracer:
    return _op(stablehlo.remainder, x, y)


def _select(c: Tracer, x: Tracer, y: Tracer) -> Tracer:
    return _op(stablehlo.select, c, x, y)


def _compare(x: Tracer, y: Tracer, direction: str) -> Tracer:
    return Tracer(stablehlo.compare(x.trace.emit(), x.value, y.value, direction), x.trace)


def _convert(x: Tracer, dtype: Any) -> Tracer:
    d = np.dtype(dtype)
    if x.dtype == d:
        return Tracer(x.value, x.trace) if x.weak else x
    return Tracer(stablehlo.convert(x.trace.emit(), x.value, ir_element_type(d)), x.trace)


def _bitcast(x: Tracer, dtype: Any) -> Tracer:
    return Tracer(stablehlo.bitcast_convert(x.trace.emit(), x.value, tensor_type(x.shape, dtype)), x.trace)


def _reshape(x: Tracer, shape: Shape) -> Tracer:
    shape = tuple(shape)
    if x.shape == shape:
        return x
    return Tracer(stablehlo.reshape(x.trace.emit(), x.value, shape), x.trace, x.weak)


def _broadcast(x: Tracer, shape: Shape) -> Tracer:
    """`x` broadcast to `shape` with numpy's rules (trailing dimensions aligned)."""
    shape = tuple(shape)
    if x.shape == shape:
        return x
    dims = list(range(len(shape) - x.ndim, len(shape)))
    return Tracer(stablehlo.broadcast_in_dim(x.trace.emit(), x.value, shape, dims), x.trace, x.weak)


def _fma(a: Tracer, b: Tracer, c: Tracer) -> Tracer:
    """`a * b + c` as XLA's CPU code computes it: in float32 LLVM contracts the multiply-add into
    an FMA (rounded once), which float64 reproduces (the product of two float32 is exact there);
    float16 and float64 arithmetic is not fused."""
    if a.dtype != np.float32:
        return _add(_mul(a, b), c)
    wide = np.dtype(np.float64)
    return _convert(_add(_mul(_convert(a, wide), _convert(b, wide)), _convert(c, wide)), a.dtype)


def _shift(x: Tracer, amount: int, left: bool) -> Tracer:
    fn = stablehlo.shift_left if left else stablehlo.shift_right_logical
    return _op(fn, x, _const(amount, x.dtype, x.shape))


def _scalar(key: Tracer, i: int) -> Tracer:
    """Word `i` of a `(2,)` key, as a scalar."""
    v = stablehlo.slice_(key.trace.emit(), key.value, [i], [i + 1], [1])
    return _reshape(Tracer(v, key.trace), ())


def _concat(xs: Sequence[Tracer], axis: int) -> Tracer:
    return Tracer(stablehlo.concatenate(xs[0].trace.emit(), [x.value for x in xs], axis), xs[0].trace)


# --- Threefry-2x32 --------------------------------------------------------------------------------

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry2x32(k1: Tracer, k2: Tracer, x1: Tracer, x2: Tracer) -> tuple[Tracer, Tracer]:
    """The Threefry-2x32 hash (20 rounds) of the counter words `x1`, `x2` under the key words
    `k1`, `k2` (scalars), as JAX's `threefry2x32_p`. The key schedule is computed on scalars and
    broadcast once per injection, so the per-element work is the 20 rounds and 10 additions."""
    shape = x1.shape
    ks = [k1, k2, _xor(_xor(k1, k2), _const(0x1BD11BDA, _U32))]
    x = [_add(x1, _broadcast(ks[0], shape)), _add(x2, _broadcast(ks[1], shape))]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = _add(x[0], x[1])
            rotated = _op(stablehlo.or_, _shift(x[1], r, True), _shift(x[1], 32 - r, False))
            x[1] = _xor(x[0], rotated)
        inject1 = _add(ks[(i + 2) % 3], _const(i + 1, _U32))
        x[0] = _add(x[0], _broadcast(ks[(i + 1) % 3], shape))
        x[1] = _add(x[1], _broadcast(inject1, shape))
    return x[0], x[1]


def _counters(shape: tuple[int, ...]) -> tuple[Tracer, Tracer]:
    """The high and low words of the row-major 64-bit index of each element of `shape` (JAX's
    `iota_2x32_shape`)."""
    size = math.prod(shape)
    trace = current_trace()
    if not shape:
        return _const(0, _U32), _const(0, _U32)
    if size <= 2 ** 32:
        low = Tracer(stablehlo.iota(trace.emit(), tensor_type((size,), _U32), 0), trace)
        return _const(0, _U32, shape), _reshape(low, shape)
    # beyond 2**32 elements the index needs 64 bits: sum of per-dimension iotas times strides
    u64 = np.dtype(np.uint64)
    strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
    total = None
    for d, stride in enumerate(strides):
        term = _mul(Tracer(stablehlo.iota(trace.emit(), tensor_type(shape, u64), d), trace), _const(stride, u64, shape))
        total = term if total is None else _add(total, term)
    return _convert(_shift(total, 32, False), _U32), _convert(total, _U32)


def _key_words(key: ArrayLike) -> tuple[Tracer, Tracer]:
    k = _tracer(key)
    return _scalar(k, 0), _scalar(k, 1)


def _random_bits(key: ArrayLike, bit_width: int, shape: tuple[int, ...]) -> Tracer:
    """Uniform random bits: an unsigned array of `bit_width` bits and shape `shape`."""
    k1, k2 = _key_words(key)
    hi, lo = _counters(shape)
    b1, b2 = _threefry2x32(k1, k2, hi, lo)
    if bit_width == 64:
        u64 = _UINT[64]
        return _op(stablehlo.or_, _shift(_convert(b1, u64), 32, True), _convert(b2, u64))
    bits = _xor(b1, b2)
    return bits if bit_width == 32 else _convert(bits, _UINT[bit_width])


def _split_impl(key: ArrayLike, shape: tuple[int, ...]) -> Tracer:
    k1, k2 = _key_words(key)
    hi, lo = _counters(shape)
    b1, b2 = _threefry2x32(k1, k2, hi, lo)
    return _concat([_reshape(b1, (*shape, 1)), _reshape(b2, (*shape, 1))], len(shape))


def _fold_in_impl(key: ArrayLike, data: ArrayLike) -> Tracer:
    k1, k2 = _key_words(key)
    d = _tracer(data)
    if d.dtype != _U32:
        d = _convert(d, _U32)
    # JAX hashes the two-word count [0, data] (the seed of `data`) under the key
    y1, y2 = _threefry2x32(k1, k2, _const(0, _U32, (1,)), _reshape(d, (1,)))
    return _concat([y1, y2], 0)


# --- argument checking ----------------------------------------------------------------------------


def _shape_dtype(x: ArrayLike) -> tuple[tuple[int, ...], np.dtype]:
    if isinstance(x, Tracer):
        return x.shape, x.dtype
    if isinstance(x, (bool, int, float)):
        return (), np.dtype(np.int32 if isinstance(x, int) and not isinstance(x, bool) else
                            np.float32 if isinstance(x, float) else np.bool_)
    arr = np.asarray(x)
    return arr.shape, arr.dtype


def _check_key(name: str, key: ArrayLike) -> None:
    shape, dtype = _shape_dtype(key)
    if dtype != _U32 or shape != (2,):
        if dtype == _U32 and len(shape) > 1 and shape[-1] == 2:
            raise ValueError(f"loom.random.{name}: argument 'key' must be a single key of shape (2,), got an array of "
                             f"keys of shape {shape}; use loom.vmap to map over keys")
        raise TypeError(f"loom.random.{name}: argument 'key' must be a uint32 array of shape (2,) (from "
                        f"loom.random.key, PRNGKey, split or fold_in), got shape {shape} and dtype {dtype}")


def _check_shape(name: str, shape: Any, arg: str = "shape") -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    try:
        out = tuple(int(_index(d)) for d in shape)
    except TypeError:
        raise TypeError(f"loom.random.{name}: argument '{arg}' must be a tuple of non-negative ints, "
                        f"got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"loom.random.{name}: argument '{arg}' must be a tuple of non-negative ints, got {out}")
    return out


def _index(d: Any) -> int:
    """`d` as an int if it is an integer (Python or numpy); a TypeError otherwise."""
    if isinstance(d, Tracer):
        raise TypeError("a traced value cannot be used as a shape")
    return operator.index(d)


def _float_dtype(name: str, dtype: Any) -> np.dtype:
    d = np.dtype(np.float32 if dtype is None else dtype)
    if d not in _FLOATS:
        raise ValueError(f"loom.random.{name}: argument 'dtype' must be a float dtype (bfloat16, float16, float32 "
                         f"or float64), got {d}")
    return d


def _check_broadcast(name: str, shape: tuple[int, ...], **params: ArrayLike) -> None:
    for arg, value in params.items():
        pshape = _shape_dtype(value)[0]
        try:
            ok = np.broadcast_shapes(shape, pshape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError(f"loom.random.{name}: argument '{arg}' of shape {pshape} does not broadcast to the "
                             f"sample shape {shape}")


# --- running a sampler: traced inline, or compiled once per signature -----------------------------

_COMPILED: dict[Callable, Any] = {}


def _run(impl: Callable, arrays: tuple, static: tuple) -> Any:
    """`impl(*arrays, *static)`: inline while tracing, else through `loom.jit` (cached per shapes,
    dtypes and static values), so concrete calls and traced calls run the same IR."""
    if current_trace() is not None:
        return impl(*arrays, *static)
    jitted = _COMPILED.get(impl)
    if jitted is None:
        n = len(arrays)
        n_static = impl.__code__.co_argcount - n
        jitted = _COMPILED[impl] = jit(impl, static_argnums=tuple(range(n, n + n_static)))
    return jitted(*arrays, *static)


# --- keys -----------------------------------------------------------------------------------------


def key(seed: int | ArrayLike) -> Any:
    """A key from an integer seed: the `uint32` pair `[0, seed mod 2**32]`, as `jax.random.key` /
    `jax.random.PRNGKey` in JAX's default 32-bit mode. A traced seed gives a traced key."""
    if isinstance(seed, Tracer):
        if seed.ndim or seed.dtype.kind not in "iu":
            raise TypeError(f"loom.random.key: argument 'seed' must be an integer scalar, got a traced array of "
                            f"shape {seed.shape} and dtype {seed.dtype}")
        low = _reshape(_convert(seed, _U32), (1,))
        return _concat([_const(0, _U32, (1,)), low], 0)
    if isinstance(seed, (bool, np.bool_)) or np.ndim(seed) or np.asarray(seed).dtype.kind not in "iu":
        raise TypeError(f"loom.random.key: argument 'seed' must be an integer scalar, got {seed!r}; use loom.vmap "
                        "to make several keys")
    return np.array([0, int(seed) & 0xFFFFFFFF], dtype=np.uint32)


PRNGKey = key


def key_data(keys: ArrayLike) -> Any:
    """The raw `uint32` data of keys (loom's keys are raw data already: the identity)."""
    return keys


def split(key: ArrayLike, num: int | Shape = 2) -> Any:
    """`num` new keys (shape `(num, 2)`), or an array of keys of shape `(*num, 2)` for a tuple."""
    _check_key("split", key)
    shape = _check_shape("split", num, "num")
    return _run(_split_impl, (key,), (shape,))


def fold_in(key: ArrayLike, data: int | ArrayLike) -> Any:
    """A new key, a function of `key` and the 32-bit integer `data`."""
    _check_key("fold_in", key)
    dshape, ddtype = _shape_dtype(data)
    if dshape or ddtype.kind not in "iub":
        raise TypeError(f"loom.random.fold_in: argument 'data' must be an integer scalar, got shape {dshape} and "
                        f"dtype {ddtype}")
    if not isinstance(data, Tracer):
        data = np.uint32(int(data) & 0xFFFFFFFF)
    return _run(_fold_in_impl, (key, data), ())


# --- samplers -------------------------------------------------------------------------------------


def bits(key: ArrayLike, shape: Shape = (), dtype: Any = np.uint32) -> Any:
    """Uniform random bits as unsigned integers of `dtype` (uint8, 16, 32 or 64)."""
    _check_key("bits", key)
    shape = _check_shape("bits", shape)
    d = np.dtype(dtype)
    if d.kind != "u":
        raise ValueError(f"loom.random.bits: argument 'dtype' must be an unsigned integer dtype, got {d}")
    return _run(_random_bits, (key,), (d.itemsize * 8, shape))


def _uniform_impl(key: ArrayLike, minval: ArrayLike, maxval: ArrayLike, shape: tuple[int, ...],
                  dtype: np.dtype) -> Tracer:
    finfo = ml_dtypes.finfo(dtype)
    nbits, nmant = finfo.bits, finfo.nmant
    udtype = _UINT[nbits]
    # as JAX: at least 8 random bits (bfloat16 has 7 mantissa bits: 8 bits, widened to 16)
    rng_bits = nbits if nmant >= 8 else 8
    random = _random_bits(key, rng_bits, shape)
    if rng_bits != nbits:
        random = _convert(random, udtype)
    # the top `nmant` random bits become the mantissa of a float in [1, 2); subtract 1
    mantissa = _shift(random, rng_bits - nmant, False)
    one_bits = _const(np.array(1.0, dtype).view(udtype), udtype, shape)
    floats = _bitcast(_op(stablehlo.or_, mantissa, one_bits), dtype)
    floats = _op(stablehlo.subtract, floats, _const(1.0, dtype, shape))
    lo = _broadcast(_tracer(minval, dtype), shape)
    hi = _broadcast(_tracer(maxval, dtype), shape)
    scaled = _fma(floats, _op(stablehlo.subtract, hi, lo), lo)
    return _op(stablehlo.maximum, lo, scaled)


def uniform(key: ArrayLike, shape: Shape = (), dtype: Any = np.float32, minval: ArrayLike = 0.0,
            maxval: ArrayLike = 1.0) -> Any:
    """Uniform floats in `[minval, maxval)` (float32 by default)."""
    _check_key("uniform", key)
    shape = _check_shape("uniform", shape)
    d = _float_dtype("uniform", dtype)
    _check_broadcast("uniform", shape, minval=minval, maxval=maxval)
    return _run(_uniform_impl, (key, minval, maxval), (shape, d))


# XLA's CPU code for float32 log: Cephes' logf (the mantissa m in [sqrt(1/2), sqrt(2)) minus 1, a
# degree-8 polynomial in three interleaved parts, the exponent added back in two pieces), with the
# multiply-adds LLVM contracts into FMAs.
_LOG_P = (7.0376836292e-2, -1.1514610310e-1, 1.1676998740e-1, -1.2420140846e-1, 1.4249322787e-1, -1.6668057665e-1,
          2.0000714765e-1, -2.4999993993e-1, 3.3333331174e-1)
_LOG_Q1, _LOG_Q2 = -2.12194440e-4, 0.693359375
# and for log1p of small |x| (below sqrt(2) - 1): Cephes' log1p rational function, highest degree first
_LOG1P_NUMERATOR = (4.5270000862445199635215e-5, 4.9854102823193375972e-1, 6.5787325942061044846e0,
                    2.9911919328553073277e1, 6.0949667980987787057e1, 5.7112963590585538103e1,
                    2.0039553499201281259e1)
_LOG1P_DENOMINATOR = (1.0, 1.5062909083469192198839293e1, 8.3047565967967209469e1, 2.2176239823732856465e2,
                      3.0909872225312059774e2, 2.1642788614495947685e2, 6.0118660497603843919e1)


def _log_f32(x: Tracer) -> Tracer:
    """Natural log of float32 `x` as XLA's CPU code computes it (numpy's `log` differs in the last
    bit for about a fifth of inputs), with its special cases: log(0) = -inf (subnormals count as
    0), log(+inf) = +inf, and NaN for negative or NaN inputs."""
    f32, u32, shape = np.float32, _U32, x.shape
    c = lambda v: _const(v, f32, shape)  # noqa: E731
    u = lambda v: _const(v, u32, shape)  # noqa: E731
    bits = _bitcast(_op(stablehlo.maximum, x, c(np.finfo(f32).tiny)), u32)
    # frexp: x = m * 2**e with m in [0.5, 1)
    e = _op(stablehlo.subtract, _convert(_shift(bits, 23, False), f32), c(126.0))
    m = _bitcast(_op(stablehlo.or_, _op(stablehlo.and_, bits, u(0x807FFFFF)), u(0x3F000000)), f32)
    below = _compare(m, c(0.707106781186547524), "LT")
    m_plus = _add(_op(stablehlo.subtract, m, c(1.0)), _select(below, m, c(0.0)))
    e = _op(stablehlo.subtract, e, _select(below, c(1.0), c(0.0)))
    m = m_plus
    x2 = _mul(m, m)
    x3 = _mul(x2, m)
    y = _fma(c(_LOG_P[0]), m, c(_LOG_P[1]))
    y1 = _fma(c(_LOG_P[3]), m, c(_LOG_P[4]))
    y2 = _fma(c(_LOG_P[6]), m, c(_LOG_P[7]))
    y = _fma(y, m, c(_LOG_P[2]))
    y1 = _fma(y1, m, c(_LOG_P[5]))
    y2 = _fma(y2, m, c(_LOG_P[8]))
    y = _fma(_fma(y, x3, y1), x3, y2)
    t = _fma(y, x3, _mul(e, c(_LOG_Q1)))
    m = _fma(_op(stablehlo.negate, x2), c(0.5), m)
    result = _fma(e, c(_LOG_Q2), _add(m, t))
    # XLA's CPU code treats subnormal inputs as zero
    zero = _compare(_op(stablehlo.abs_, x), c(np.finfo(f32).tiny), "LT")
    result = _select(zero, c(-np.inf), result)
    result = _select(_compare(x, c(np.inf), "EQ"), c(np.inf), result)
    negative = _op(stablehlo.and_, _compare(x, c(0.0), "LT"), _op(stablehlo.not_, zero))
    return _select(_op(stablehlo.or_, negative, _compare(x, x, "NE")), c(np.nan), result)


def _log(x: Tracer) -> Tracer:
    """Natural log as XLA's CPU code computes it: float32 by `_log_f32`, float16 through float32,
    float64 by `stablehlo.log`."""
    if x.dtype == np.float32:
        return _log_f32(x)
    if x.dtype == np.float16:
        return _convert(_log_f32(_convert(x, np.float32)), x.dtype)
    return _op(stablehlo.log, x)


def _log1p_f32(x: Tracer) -> Tracer:
    """log(1 + x) for float32 `x` as XLA's CPU code computes it: a rational function for |x| below
    sqrt(2) - 1, else the log of 1 + x."""
    f32, shape = np.float32, x.shape
    c = lambda v: _const(v, f32, shape)  # noqa: E731
    large = _log_f32(_add(x, c(1.0)))
    x2 = _mul(x, x)

    def horner(coeffs: Sequence[float]) -> Tracer:
        p = c(coeffs[0])
        for a in coeffs[1:]:
            p = _fma(p, x, c(a))
        return p
    ratio = _op(stablehlo.divide, horner(_LOG1P_NUMERATOR), horner(_LOG1P_DENOMINATOR))
    small = _add(x, _add(_mul(c(-0.5), x2), _mul(_mul(x, x2), ratio)))
    is_small = _compare(_op(stablehlo.abs_, x), c(0.41421356237309504880), "LT")
    return _select(is_small, small, large)


# XLA's expansion of chlo.erf_inv for f32 (Giles' single-precision approximation): coefficients
# for w = -log1p(-x*x) below 5, then above.
_ERF_INV_SMALL = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087, -0.00125372503,
                  -0.00417768164, 0.246640727, 1.50140941)
_ERF_INV_LARGE = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773, -0.0076224613,
                  0.00943887047, 1.00167406, 2.83297682)


def _erf_inv(x: Tracer) -> Tracer:
    """The inverse error function, op for op as XLA expands `chlo.erf_inv` (float16 is computed in
    float32, as XLA does)."""
    if x.dtype == np.float64:
        return _erf_inv_f64(x)
    if x.dtype != np.float32:
        return _convert(_erf_inv(_convert(x, np.float32)), x.dtype)
    f32, shape = np.float32, x.shape
    c = lambda v: _const(v, f32, shape)  # noqa: E731 - a short local constant maker
    neg_x2 = _mul(x, _op(stablehlo.negate, x))
    w = _op(stablehlo.negate, _log1p_f32(neg_x2))
    small = _compare(w, c(5.0), "LT")
    w = _select(small, _add(w, c(-2.5)), _add(_op(stablehlo.sqrt, w), c(-3.0)))
    p = _select(small, c(_ERF_INV_SMALL[0]), c(_ERF_INV_LARGE[0]))
    for a, b in zip(_ERF_INV_SMALL[1:], _ERF_INV_LARGE[1:]):
        p = _fma(p, w, _select(small, c(a), c(b)))
    result = _mul(p, x)
    at_one = _compare(_op(stablehlo.abs_, x), c(1.0), "EQ")
    return _select(at_one, _mul(x, c(np.inf)), result)


# XLA's f64 expansion (Giles' double-precision approximation): for w below 6.25, 16 and above,
# the offset of its polynomial's variable and the coefficients, highest degree first.
_ERF_INV_F64 = (
    (6.25, -3.125, (
        -3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
        1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
        6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
        2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
        1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
        4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
        0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
        0.24015818242558961693, 1.6536545626831027356)),
    (16.0, -3.25, (
        2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
        1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
        2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
        6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
        0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
        -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
        3.0838856104922207635)),
    (np.inf, 5.0, (
        -2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
        -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
        2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
        -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
        7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
        1.0103004648645343977, 4.8499064014085844221)),
)


def _erf_inv_f64(x: Tracer) -> Tracer:
    """Float64 inverse error function: XLA's three-range polynomial (w < 6.25, < 16, else)."""
    f64, shape = np.float64, x.shape
    c = lambda v: _const(v, f64, shape)  # noqa: E731
    w = _op(stablehlo.negate, _op(stablehlo.log_plus_one, _mul(x, _op(stablehlo.negate, x))))
    lt_625 = _compare(w, c(6.25), "LT")
    lt_16 = _compare(w, c(16.0), "LT")
    sqrt_w = _op(stablehlo.sqrt, w)

    def horner(coeffs: Sequence[float], t: Tracer) -> Tracer:
        p = c(coeffs[0])
        for a in coeffs[1:]:
            p = _add(c(a), _mul(p, t))
        return p

    _, shift_a, coeffs_a = _ERF_INV_F64[0]
    _, shift_b, coeffs_b = _ERF_INV_F64[1]
    _, shift_c, coeffs_c = _ERF_INV_F64[2]
    p_a = horner(coeffs_a, _add(w, c(shift_a)))
    p_b = horner(coeffs_b, _op(stablehlo.subtract, sqrt_w, c(-shift_b)))
    p_c = horner(coeffs_c, _op(stablehlo.subtract, sqrt_w, c(shift_c)))
    p = _select(lt_625, p_a, _select(lt_16, p_b, p_c))
    result = _mul(p, x)
    at_one = _compare(_op(stablehlo.abs_, x), c(1.0), "EQ")
    return _select(at_one, _mul(x, c(np.inf)), result)


def _normal_impl(key: ArrayLike, shape: tuple[int, ...], dtype: np.dtype) -> Tracer:
    lo = np.nextafter(np.array(-1.0, dtype), np.array(0.0, dtype), dtype=dtype)
    u = _uniform_impl(key, lo, np.array(1.0, dtype), shape, dtype)
    return _mul(_const(np.sqrt(2), dtype, shape), _erf_inv(u))


def normal(key: ArrayLike, shape: Shape = (), dtype: Any = np.float32) -> Any:
    """Standard normal floats: `sqrt(2) * erfinv(u)` for `u` uniform in `(-1, 1)`, as JAX."""
    _check_key("normal", key)
    shape = _check_shape("normal", shape)
    return _run(_normal_impl, (key,), (shape, _float_dtype("normal", dtype)))


def _bernoulli_impl(key: ArrayLike, p: ArrayLike, shape: tuple[int, ...], dtype: np.dtype, high: bool) -> Tracer:
    pt = _broadcast(_tracer(p, dtype), shape)
    if not high:
        return _compare(_uniform_impl(key, 0.0, 1.0, shape, dtype), pt, "LT")
    both = _uniform_impl(key, 0.0, 1.0, (2, *shape), dtype)
    u1 = _reshape(Tracer(stablehlo.slice_(both.trace.emit(), both.value, [0] * both.ndim, [1, *shape]), both.trace),
                  shape)
    u2 = _reshape(Tracer(stablehlo.slice_(both.trace.emit(), both.value, [1] + [0] * len(shape), [2, *shape]),
                         both.trace), shape)
    u2 = _mul(u2, _const(2.0 ** -ml_dtypes.finfo(dtype).nmant, dtype, shape))
    return _compare(u2, _op(stablehlo.subtract, pt, u1), "LT")


def bernoulli(key: ArrayLike, p: ArrayLike = 0.5, shape: Shape | None = None, mode: str = "low") -> Any:
    """Booleans that are True with probability `p` (of the shape of `p` unless `shape` is given);
    `mode="high"` uses twice the bits, for tiny `p`, as JAX."""
    _check_key("bernoulli", key)
    if mode not in ("low", "high"):
        raise ValueError(f"loom.random.bernoulli: argument 'mode' must be 'high' or 'low', got {mode!r}")
    pshape, pdtype = _shape_dtype(p)
    if pdtype.kind != "f":
        raise TypeError(f"loom.random.bernoulli: argument 'p' must have a floating dtype, got {pdtype}")
    shape = pshape if shape is None else _check_shape("bernoulli", shape)
    _check_broadcast("bernoulli", shape, p=p)
    return _run(_bernoulli_impl, (key, p), (shape, pdtype, mode == "high"))


def _clip_convert(x: Tracer, dtype: np.dtype) -> Tracer:
    """`x` (an integer array) converted to the integer `dtype`, clipped to its range instead of
    wrapping (JAX's `_convert_and_clip_integer`)."""
    lo = max(np.iinfo(dtype).min, np.iinfo(x.dtype).min)
    hi = min(np.iinfo(dtype).max, np.iinfo(x.dtype).max)
    clipped = _op(stablehlo.clamp, _const(lo, x.dtype, x.shape), x, _const(hi, x.dtype, x.shape))
    return _convert(clipped, dtype)


def _randint_impl(key: ArrayLike, minval: ArrayLike, maxval: ArrayLike, shape: tuple[int, ...],
                  dtype: np.dtype) -> Tracer:
    lo, hi = _tracer(minval), _tracer(maxval)
    if lo.dtype.kind not in "iu":
        lo = _convert(lo, np.int32)
    if hi.dtype.kind not in "iu":
        hi = _convert(hi, np.int32)
    # maxval beyond the dtype's range (randint(k, s, 0, 256, uint8)) widens the span by one
    dmax = np.iinfo(dtype).max
    hi_limit = _clip_convert(_const(dmax, dtype, hi.shape), hi.dtype)
    out_of_range = _broadcast(_compare(hi, hi_limit, "GT"), shape)
    lo = _broadcast(_clip_convert(lo, dtype), shape)
    hi = _broadcast(_clip_convert(hi, dtype), shape)
    nbits = dtype.itemsize * 8
    udtype = _UINT[nbits]
    keys = _split_impl(key, (2,))
    k1 = _reshape(Tracer(stablehlo.slice_(keys.trace.emit(), keys.value, [0, 0], [1, 2]), keys.trace), (2,))
    k2 = _reshape(Tracer(stablehlo.slice_(keys.trace.emit(), keys.value, [1, 0], [2, 2]), keys.trace), (2,))
    higher, lower = _random_bits(k1, nbits, shape), _random_bits(k2, nbits, shape)
    span = _convert(_op(stablehlo.subtract, hi, lo), udtype)
    one = _const(1, udtype, shape)
    span = _select(_compare(hi, lo, "LE"), one, span)
    span = _select(_op(stablehlo.and_, out_of_range, _compare(hi, lo, "GT")), _add(span, one), span)
    # (2**nbits) % span without overflow: ((2**(nbits/2) % span) ** 2) % span
    multiplier = _rem(_const(2 ** (nbits // 2), udtype, shape), span)
    multiplier = _rem(_mul(multiplier, multiplier), span)
    offset = _add(_mul(_rem(higher, span), multiplier), _rem(lower, span))
    offset = _rem(offset, span)
    return _add(lo, _convert(offset, dtype))


def _int_bound(x: ArrayLike) -> ArrayLike:
    """A Python int bound as an int32 array (int64 if it does not fit), as JAX."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return np.asarray(x, np.int32 if np.iinfo(np.int32).min <= int(x) <= np.iinfo(np.int32).max else np.int64)
    return x


def randint(key: ArrayLike, shape: Shape, minval: ArrayLike, maxval: ArrayLike, dtype: Any = np.int32) -> Any:
    """Uniform integers in `[minval, maxval)` (int32 by default), by JAX's double-width modulus."""
    _check_key("randint", key)
    shape = _check_shape("randint", shape)
    d = np.dtype(dtype)
    if d.kind not in "iu":
        raise TypeError(f"loom.random.randint: argument 'dtype' must be an integer dtype, got {d}")
    _check_broadcast("randint", shape, minval=minval, maxval=maxval)
    minval, maxval = _int_bound(minval), _int_bound(maxval)
    if d.itemsize < 4:
        # sample in 32 bits to avoid bias, then narrow (JAX does the same)
        info = np.iinfo(d)
        minval = np.clip(np.asarray(minval).astype(np.int32), info.min, info.max) \
            if not isinstance(minval, Tracer) else minval
        maxval = np.clip(np.asarray(maxval).astype(np.int32), info.min, info.max + 1) \
            if not isinstance(maxval, Tracer) else maxval
        out = _run(_randint_impl, (key, minval, maxval), (shape, np.dtype(np.int32)))
        return out.astype(d) if not isinstance(out, Tracer) else _convert(out, d)
    return _run(_randint_impl, (key, minval, maxval), (shape, d))


def _sort_by(keys: Tracer, x: Tracer, axis: int) -> Tracer:
    """`x` reordered along `axis` by a stable ascending sort of `keys` (of x's shape)."""
    b = x.trace.emit()
    outs = stablehlo.sort(b, [keys.value, x.value], axis,
                          lambda bb, args: [stablehlo.compare(bb, args[0], args[1], "LT")], is_stable=True)
    return Tracer(outs[1], x.trace, x.weak)


def _shuffle(key: ArrayLike, x: Tracer, axis: int, along_only: bool) -> Tracer:
    """JAX's `_shuffle`: rounds of sorting by fresh random 32-bit keys. With `along_only` the sort
    keys depend on the position along `axis` only (one permutation for all the other axes, which
    is `take(x, permutation(n), axis)`); otherwise each vector along `axis` is shuffled by its own."""
    n = x.size if not along_only else x.shape[axis]
    rounds = int(np.ceil(3 * np.log(max(1, n)) / np.log(np.iinfo(np.uint32).max)))
    k = _tracer(key)
    for _ in range(rounds):
        keys = _split_impl(k, (2,))
        k = _reshape(Tracer(stablehlo.slice_(keys.trace.emit(), keys.value, [0, 0], [1, 2]), keys.trace), (2,))
        sub = _reshape(Tracer(stablehlo.slice_(keys.trace.emit(), keys.value, [1, 0], [2, 2]), keys.trace), (2,))
        if along_only:
            sort_keys = _random_bits(sub, 32, (x.shape[axis],))
            sort_keys = Tracer(stablehlo.broadcast_in_dim(x.trace.emit(), sort_keys.value, x.shape, [axis]), x.trace)
        else:
            sort_keys = _random_bits(sub, 32, x.shape)
        x = _sort_by(sort_keys, x, axis)
    return x


def _permutation_impl(key: ArrayLike, x: ArrayLike, axis: int, independent: bool) -> Tracer:
    xt = _tracer(x)
    return _shuffle(key, xt, axis, along_only=not independent and xt.ndim > 1)


def _arange_impl(key: ArrayLike, n: int) -> Tracer:
    trace = current_trace()
    r = Tracer(stablehlo.iota(trace.emit(), tensor_type((n,), np.int32), 0), trace)
    return _shuffle(key, r, 0, along_only=False)


def permutation(key: ArrayLike, x: int | ArrayLike, axis: int = 0, independent: bool = False) -> Any:
    """A random permutation of `arange(x)` for an int `x`, else `x` shuffled along `axis` (each
    vector independently with `independent=True`), as JAX (the same sorts, the same result)."""
    _check_key("permutation", key)
    xshape, xdtype = _shape_dtype(x)
    if not xshape:
        if xdtype.kind not in "iu" or isinstance(x, Tracer):
            raise TypeError("loom.random.permutation: argument 'x' must be a concrete integer or an array of rank "
                            f">= 1, got {x!r}")
        return _run(_arange_impl, (key,), (int(x),))
    if not -len(xshape) <= axis < len(xshape):
        raise ValueError(f"loom.random.permutation: argument 'axis' {axis} is out of bounds for shape {xshape}")
    return _run(_permutation_impl, (key, x), (axis % len(xshape), bool(independent)))


def _take(x: Tracer, indices: Tracer, axis: int) -> Tracer:
    """`x` indexed by the flat int32 `indices` along `axis` (a `stablehlo.gather`)."""
    k = indices.size
    idx = _reshape(indices, (k, 1))
    out_rank = x.ndim
    dn = GatherDimensionNumbers.get(offset_dims=tuple(d for d in range(out_rank) if d != axis),
                                    collapsed_slice_dims=(axis,), start_index_map=(axis,), index_vector_dim=1)
    sizes = [1 if d == axis else s for d, s in enumerate(x.shape)]
    v = stablehlo.gather(x.trace.emit(), x.value, idx.value, dn, sizes)
    return Tracer(v, x.trace, x.weak)


def _gumbel_impl(key: ArrayLike, shape: tuple[int, ...], dtype: np.dtype) -> Tracer:
    u = _uniform_impl(key, ml_dtypes.finfo(dtype).tiny, 1.0, shape, dtype)
    neg_log = _op(stablehlo.negate, _log(u))
    return _op(stablehlo.negate, _log(neg_log))


def gumbel(key: ArrayLike, shape: Shape = (), dtype: Any = np.float32) -> Any:
    """Standard Gumbel floats, `-log(-log(u))` (JAX's default "low" mode)."""
    _check_key("gumbel", key)
    shape = _check_shape("gumbel", shape)
    return _run(_gumbel_impl, (key,), (shape, _float_dtype("gumbel", dtype)))


def _top_k_indices(x: Tracer, k: int) -> Tracer:
    """Indices of the `k` largest entries of the 1-D `x`, largest first, lower index first on ties."""
    trace = x.trace
    iota = Tracer(stablehlo.iota(trace.emit(), tensor_type(x.shape, np.int32), 0), trace)
    outs = stablehlo.sort(trace.emit(), [x.value, iota.value], 0,
                          lambda bb, args: [stablehlo.compare(bb, args[0], args[1], "GT")], is_stable=True)
    v = stablehlo.slice_(trace.emit(), outs[1], [0], [k], [1])
    return Tracer(v, trace)


def _choice_impl(key: ArrayLike, a: ArrayLike, p: ArrayLike, shape: tuple[int, ...], n_inputs: int, replace: bool,
                 axis: int, scalar_a: bool, has_p: bool) -> Tracer:
    n_draws = math.prod(shape)
    if not has_p:
        if replace:
            ind = _randint_impl(key, np.int32(0), np.int32(n_inputs), shape, np.dtype(np.int32))
            result = ind if scalar_a else _take(_tracer(a), ind, axis)
        else:
            base = _arange_impl(key, n_inputs) if scalar_a else _permutation_impl(key, a, axis, False)
            lim = list(base.shape)
            lim[axis] = n_draws
            result = Tracer(stablehlo.slice_(base.trace.emit(), base.value, [0] * base.ndim, lim), base.trace)
    else:
        pt = _tracer(p)
        if pt.dtype.kind != "f":
            pt = _convert(pt, np.float32)
        if replace:
            cum = cumsum(pt)
            total = _reshape(Tracer(stablehlo.slice_(cum.trace.emit(), cum.value, [n_inputs - 1], [n_inputs]),
                                    cum.trace), ())
            u = _uniform_impl(key, 0.0, 1.0, shape, pt.dtype)
            r = _mul(_broadcast(total, shape), _op(stablehlo.subtract, _const(1.0, pt.dtype, shape), u))
            # searchsorted(cum, r, side="left"): how many entries of cum are below r
            below = _compare(_broadcast(cum, (*shape, n_inputs)),
                             Tracer(stablehlo.broadcast_in_dim(r.trace.emit(), r.value, (*shape, n_inputs),
                                                               list(range(len(shape)))), r.trace), "LT")
            counts = _convert(below, np.int32)
            ind = Tracer(stablehlo.reduce(counts.trace.emit(), [counts.value], [_const(0, np.int32).value],
                                          [len(shape)], lambda b, args: [stablehlo.add(b, args[0], args[1])]),
                         counts.trace)
        else:
            # the Gumbel top-k trick, as JAX
            g = _add(_gumbel_impl(key, (n_inputs,), pt.dtype), _log(pt))
            ind = _top_k_indices(g, n_draws)
        result = ind if scalar_a else _take(_tracer(a), ind, axis)
    ashape = _shape_dtype(a)[0]
    return _reshape(result, shape if scalar_a else (*ashape[:axis], *shape, *ashape[axis + 1:]))


def choice(key: ArrayLike, a: int | ArrayLike, shape: Shape = (), replace: bool = True, p: ArrayLike | None = None,
           axis: int = 0) -> Any:
    """A random sample of `a` (or of `arange(a)` for an int) along `axis`, with or without
    replacement, uniform or with probabilities `p`, as JAX."""
    _check_key("choice", key)
    if not isinstance(shape, (tuple, list)):
        raise TypeError(f"loom.random.choice: argument 'shape' must be a sequence, got {shape!r}")
    shape = _check_shape("choice", shape)
    ashape, adtype = _shape_dtype(a)
    scalar_a = not ashape
    if scalar_a:
        if isinstance(a, Tracer) or adtype.kind not in "iu":
            raise TypeError(f"loom.random.choice: argument 'a' must be a concrete int or an array, got {a!r}")
        n_inputs = int(a)
        axis = 0
    else:
        if not -len(ashape) <= axis < len(ashape):
            raise ValueError(f"loom.random.choice: argument 'axis' {axis} is out of bounds for shape {ashape}")
        axis %= len(ashape)
        n_inputs = ashape[axis]
    n_draws = math.prod(shape)
    if n_draws == 0:
        return np.zeros(shape if scalar_a else (*ashape[:axis], *shape, *ashape[axis + 1:]),
                        np.int32 if scalar_a else adtype)
    if n_inputs <= 0:
        raise ValueError("loom.random.choice: argument 'a' must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(f"loom.random.choice: cannot take a larger sample (size {n_draws}) than the population "
                         f"(size {n_inputs}) when replace=False")
    if p is not None and _shape_dtype(p)[0] != (n_inputs,):
        raise ValueError(f"loom.random.choice: argument 'p' must be None or a 1-D vector of size {n_inputs}, got "
                         f"shape {_shape_dtype(p)[0]}")
    a_arg = np.int32(0) if scalar_a else a
    p_arg = np.float32(0) if p is None else p
    return _run(_choice_impl, (key, a_arg, p_arg),
                (shape, n_inputs, bool(replace), axis, scalar_a, p is not None))


def _categorical_impl(key: ArrayLike, logits: ArrayLike, axis: int, shape: tuple[int, ...],
                      batch_shape: tuple[int, ...]) -> Tracer:
    lt = _tracer(logits)
    if lt.dtype.kind != "f":
        lt = _convert(lt, np.float32)
    prefix = shape[:len(shape) - len(batch_shape)]
    logits_shape = list(shape[len(shape) - len(batch_shape):])
    logits_shape.insert(axis, lt.shape[axis])
    full = (*prefix, *logits_shape)
    g = _gumbel_impl(key, full, lt.dtype)
    return argmax(_add(g, _broadcast(lt, full)), axis=len(prefix) + axis)


def categorical(key: ArrayLike, logits: ArrayLike, axis: int = -1, shape: Shape | None = None) -> Any:
    """Samples of categorical distributions with unnormalized log-probabilities `logits` (along
    `axis`), by the Gumbel-max trick, as JAX (with replacement)."""
    _check_key("categorical", key)
    lshape, _ = _shape_dtype(logits)
    if not lshape:
        raise ValueError("loom.random.categorical: argument 'logits' must have at least one dimension")
    if not -len(lshape) <= axis < len(lshape):
        raise ValueError(f"loom.random.categorical: argument 'axis' {axis} is out of bounds for shape {lshape}")
    axis %= len(lshape)
    batch_shape = tuple(d for i, d in enumerate(lshape) if i != axis)
    shape = batch_shape if shape is None else _check_shape("categorical", shape)
    if len(shape) < len(batch_shape) or shape[len(shape) - len(batch_shape):] != batch_shape:
        raise ValueError(f"loom.random.categorical: argument 'shape' {shape} must end with the batch shape of the "
                         f"logits {batch_shape}")
    return _run(_categorical_impl, (key, logits), (axis, shape, batch_shape))


# XLA's CPU expansion of erf for float32 (a rational function of x, odd over even), numerator
# and denominator coefficients, highest degree of x*x first; |x| >= 3.8325... gives +-1.
_ERF_NUMERATOR = (0.00022905065861350646, 0.0034082910107109506, 0.050955695062380861, 0.18520832239976145,
                  1.128379143519084)
_ERF_DENOMINATOR = (-1.1791602954361697e-7, 0.000023547966471313185, 0.0010179625278914885, 0.014070470171167667,
                    0.11098505178285362, 0.49746925110067538, 1.0)
_ERF_SATURATES = 3.832506856900711


def _erf(x: Tracer) -> Tracer:
    """The error function as XLA's CPU code computes it in float32 (float16 via float32); float64
    uses the executor's `chlo.erf`."""
    if x.dtype == np.float64:
        return Tracer(chlo.ErfOp.build(x.trace.emit(), x.value).results[0], x.trace)
    if x.dtype != np.float32:
        return _convert(_erf(_convert(x, np.float32)), x.dtype)
    f32, shape = np.float32, x.shape
    c = lambda v: _const(v, f32, shape)  # noqa: E731
    x2 = _mul(x, x)
    p = c(_ERF_NUMERATOR[0])
    for a in _ERF_NUMERATOR[1:]:
        p = _fma(p, x2, c(a))
    q = c(_ERF_DENOMINATOR[0])
    for b in _ERF_DENOMINATOR[1:]:
        q = _fma(q, x2, c(b))
    ratio = _op(stablehlo.divide, _mul(x, p), q)
    saturated = _compare(_op(stablehlo.abs_, x), c(_ERF_SATURATES), "GE")
    return _select(saturated, _select(_compare(x, c(0.0), "LT"), c(-1.0), c(1.0)), ratio)


def _next_after(x: Tracer, upward: bool) -> Tracer:
    """The next float after the finite `x` toward +inf (`upward`) or -inf: one step of its bit
    pattern, away from zero when `x` points that way, else toward it."""
    udtype = _UINT[x.dtype.itemsize * 8]
    bits = _bitcast(x, udtype)
    one = _const(1, udtype, x.shape)
    zero = _const(0.0, x.dtype, x.shape)
    away = _compare(x, zero, "GT" if upward else "LT")
    stepped = _select(away, _add(bits, one), _op(stablehlo.subtract, bits, one))
    smallest = _const(1 if upward else 1 | (1 << (8 * x.dtype.itemsize - 1)), udtype, x.shape)
    at_zero = _compare(x, zero, "EQ")
    return _bitcast(_select(at_zero, smallest, stepped), x.dtype)


def _truncated_normal_impl(key: ArrayLike, lower: ArrayLike, upper: ArrayLike, shape: tuple[int, ...],
                           dtype: np.dtype) -> Tracer:
    sqrt2 = _const(np.sqrt(2), dtype, shape)
    lo = _broadcast(_tracer(lower, dtype), shape)
    hi = _broadcast(_tracer(upper, dtype), shape)
    # XLA turns the division by the constant sqrt(2) into a multiplication by its reciprocal
    inv_sqrt2 = _const(np.array(1.0, dtype) / np.array(np.sqrt(2), dtype), dtype, shape)
    a = _erf(_mul(lo, inv_sqrt2))
    b = _erf(_mul(hi, inv_sqrt2))
    u = _uniform_impl(key, a, b, shape, dtype)
    out = _mul(sqrt2, _erf_inv(u))
    return _op(stablehlo.clamp, _next_after(lo, True), out, _next_after(hi, False))


def truncated_normal(key: ArrayLike, lower: ArrayLike, upper: ArrayLike, shape: Shape | None = None,
                     dtype: Any = np.float32) -> Any:
    """Standard normal floats truncated to the open interval `(lower, upper)`, as JAX: the
    uniform floats between erf(lower / sqrt 2) and erf(upper / sqrt 2) mapped through erfinv, so
    they agree with JAX to the ulps of `normal`."""
    _check_key("truncated_normal", key)
    d = _float_dtype("truncated_normal", dtype)
    if shape is None:
        shape = tuple(np.broadcast_shapes(_shape_dtype(lower)[0], _shape_dtype(upper)[0]))
    else:
        shape = _check_shape("truncated_normal", shape)
        _check_broadcast("truncated_normal", shape, lower=lower, upper=upper)
    return _run(_truncated_normal_impl, (key, lower, upper), (shape, d))


__all__ = ["PRNGKey", "bernoulli", "bits", "categorical", "choice", "fold_in", "gumbel", "key", "key_data", "normal",
           "permutation", "randint", "split", "truncated_normal", "uniform"]
