"""NumPy kernels for the StableHLO op set, one table keyed by op name.

`KERNELS[name](op) -> Kernel` reads the op's static attributes once and returns the call to make:
`Kernel(fn, *template)`, where the template lists what `fn` receives: operand markers (`ALL`,
`PACKED`, `Operand(i)`) and static values. The compiled executor turns a Kernel into one line of
Python (`v3 = np_add(v1, v2)`, static values hoisted to constants of the generated module); the
interpreter calls it directly. A torch table can follow with the same shape.

Semantics follow StableHLO as XLA computes it on CPU (checked against jax in the conformance
tests): integer division truncates, x/0 is -1 (all ones) and x%0 is x, INT_MIN/-1 is INT_MIN,
shifts by the bit width or more give 0 (arithmetic: the sign), float->int converts saturate with
NaN -> 0, f16/bf16 arithmetic that numpy lacks is done in f32 and rounded.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from loom.backend import common
from loom.backend.common import ConvDims, ExecutionError, dtype_of, shape_of
from loom.ir.core import Operation


class _Marker:
    __slots__ = ("kind", "index")

    def __init__(self, kind: str, index: int = 0) -> None:
        self.kind = kind
        self.index = index

    def __repr__(self) -> str:
        return f"<{self.kind}{self.index if self.kind == 'operand' else ''}>"


ALL = _Marker("all")          # every operand, spread as positional arguments
PACKED = _Marker("packed")    # every operand, as one tuple


def Operand(i: int) -> _Marker:  # noqa: N802 - reads like the other markers
    return _Marker("operand", i)


def Rest(i: int) -> _Marker:  # noqa: N802
    """Operands from `i` on, spread."""
    return _Marker("rest", i)


class Kernel:
    """One op's call: `fn(*template)`, where operand markers in the template stand for runtime
    values and everything else is a static value. `value` instead marks a result known at
    compile time (iota, constants)."""

    __slots__ = ("fn", "template", "value")

    def __init__(self, fn: Callable | None, *template: Any, value: Any = None) -> None:
        self.fn = fn
        self.template = template if template else (ALL,)
        self.value = value

    @staticmethod
    def constant(value: Any) -> Kernel:
        return Kernel(None, value=value)

    def __call__(self, operands: list) -> Any:
        if self.fn is None:
            return self.value
        args: list[Any] = []
        for t in self.template:
            if type(t) is _Marker:
                if t.kind == "all":
                    args.extend(operands)
                elif t.kind == "packed":
                    args.append(tuple(operands))
                elif t.kind == "operand":
                    args.append(operands[t.index])
                else:
                    args.extend(operands[t.index:])
            else:
                args.append(t)
        return self.fn(*args)


KERNELS: dict[str, Callable[[Operation], Kernel]] = {}

LOW_FLOATS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))  # computed in float32, as XLA does on CPU
BF16 = np.dtype(ml_dtypes.bfloat16)


def kernel(*names: str):
    """Register a kernel maker under one or more op names."""
    def register(maker: Callable[[Operation], Kernel]) -> Callable[[Operation], Kernel]:
        for n in names:
            KERNELS[n] = maker
        return maker
    return register


def direct(fn: Callable) -> Callable[[Operation], Kernel]:
    return lambda op: Kernel(fn)


def result_dtype(op: Operation, i: int = 0) -> np.dtype:
    return dtype_of(op.results[i].type)


def operand_dtype(op: Operation, i: int = 0) -> np.dtype:
    return dtype_of(op.operands[i].type)


def result_shape(op: Operation, i: int = 0) -> tuple[int, ...]:
    return shape_of(op.results[i].type)


# Elementwise ---------------------------------------------------------------------------------
# The functions and kernel makers of the elementwise ops; the rows of loom.ops.elementwise
# register them in the table (one row per op).

def in_f32(ufunc: Callable) -> Callable:
    """`ufunc` computed in float32 and rounded back, as XLA does for f16/bf16 math."""
    def low_precision(*xs):
        dt = xs[0].dtype
        return ufunc(*(np.asarray(x, np.float32) for x in xs)).astype(dt)
    low_precision.__name__ = f"{getattr(ufunc, '__name__', 'op')}_in_f32"
    return low_precision


def in_f16(ufunc: Callable) -> Callable:
    """`ufunc` on float8 / float6 / float4 values computed as XLA's CPU backend does: the
    operands widened to f16, the math done in f32, rounded to f16, then to the type."""
    def narrow_precision(*xs):
        dt = xs[0].dtype
        return ufunc(*(np.asarray(x, np.float32) for x in xs)).astype(np.float16).astype(dt)
    narrow_precision.__name__ = f"{getattr(ufunc, '__name__', 'op')}_in_f16"
    return narrow_precision


# The ml_dtypes float types narrower than 16 bits whose values f16 holds (all but f8E8M0FNU).
F16_HOLDS = frozenset(np.dtype(t) for t in (
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz,
    ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4, ml_dtypes.float6_e2m3fn,
    ml_dtypes.float6_e3m2fn, ml_dtypes.float4_e2m1fn))
NARROW_FLOATS = F16_HOLDS | {np.dtype(ml_dtypes.float8_e8m0fnu)}  # the torch backend holds them in float32


def float_math(ufunc: Callable) -> Callable[[Operation], Kernel]:
    """Elementwise math whose f16/bf16 precision XLA takes from f32, and float8's from f16."""
    def make(op: Operation) -> Kernel:
        dt = operand_dtype(op)
        if dt in LOW_FLOATS or dt == np.dtype(ml_dtypes.float8_e8m0fnu):
            return Kernel(in_f32(ufunc))
        if dt in F16_HOLDS:
            return Kernel(in_f16(ufunc))
        return Kernel(ufunc)
    return make


def rsqrt(x):
    return 1 / np.sqrt(x)


def logistic(x):
    return 1 / (1 + np.exp(-x))


def square(x):
    return x * x


def is_inf(x):
    return np.isinf(x)


def is_pos_inf(x):
    return np.isposinf(x)


def is_neg_inf(x):
    return np.isneginf(x)


def erf_inv(y: float) -> float:
    """Inverse error function by Newton's method on math.erf."""
    import math
    if y <= -1.0 or y >= 1.0:
        return math.copysign(math.inf, y) if abs(y) == 1.0 else math.nan
    if y != y:
        return y
    x = 0.0
    for _ in range(100):
        step = (math.erf(x) - y) / (2.0 / math.sqrt(math.pi) * math.exp(-x * x))
        x -= step
        if abs(step) < 1e-15 * max(1.0, abs(x)):
            break
    return x


def digamma(x: float) -> float:
    """psi(x): recurrence up to x >= 6, then the asymptotic series; reflection for x < 0."""
    import math
    if x != x or x == -math.inf:
        return math.nan
    if x <= 0 and x == math.floor(x):
        return math.nan
    if x < 0:
        return digamma(1 - x) - math.pi / math.tan(math.pi * x)
    result = 0.0
    while x < 6:
        result -= 1 / x
        x += 1
    f = 1 / (x * x)
    return result + math.log(x) - 0.5 / x - f * (1 / 12 - f * (1 / 120 - f * (1 / 252 - f * (1 / 240 - f / 132))))


def special_kernel(op: Operation) -> Kernel:
    import math
    fn = {"chlo.erf": math.erf, "chlo.erfc": math.erfc, "chlo.lgamma": _lgamma, "chlo.erf_inv": erf_inv,
          "chlo.digamma": digamma}[op.name]
    return Kernel(scalar_map, Operand(0), np.frompyfunc(fn, 1, 1), result_dtype(op))


def _lgamma(x: float) -> float:
    import math
    try:
        return math.lgamma(x)
    except ValueError:
        return math.inf


def scalar_map(x, fn, dtype):
    return np.asarray(fn(np.asarray(x, np.float64)), dtype=np.float64).astype(dtype)


def abs_(x):
    return np.abs(x)


def sign(x):
    """sign with sign(+-0) = +-0 and sign(NaN) = NaN; x/|x| for complex."""
    return np.where(x == 0, x, np.sign(x))


def round_nearest_afz(x):
    """Round half away from zero (keeps -0.0)."""
    t = np.trunc(x)
    return np.where(np.abs(x - t) >= 0.5, t + np.sign(x), t)


def divide_kernel(op: Operation) -> Kernel:
    dt = result_dtype(op)
    if dt.kind in "iu":
        return Kernel(integer_divide)
    return Kernel(np.divide)


def remainder_kernel(op: Operation) -> Kernel:
    dt = result_dtype(op)
    if dt.kind in "iu":
        return Kernel(integer_remainder)
    if dt in LOW_FLOATS:
        return Kernel(in_f32(np.fmod))
    return Kernel(np.fmod)


def power_kernel(op: Operation) -> Kernel:
    dt = result_dtype(op)
    if dt.kind in "iu":
        return Kernel(integer_power)
    if dt in LOW_FLOATS:
        return Kernel(in_f32(np.power))
    return Kernel(np.power)


def integer_divide(a, b):
    """Truncating division; x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN, as XLA computes it."""
    a = np.asarray(a)
    b = np.asarray(b)
    zero = b == 0
    safe = np.where(zero, np.ones_like(b), b)
    if a.dtype.kind == "i":
        overflow = (a == np.iinfo(a.dtype).min) & (b == -1)
        safe = np.where(overflow, np.ones_like(b), safe)
    r = np.fmod(a, safe)
    q = (a - r) // safe
    return np.where(zero, np.array(-1).astype(a.dtype), q)


def integer_remainder(a, b):
    """Remainder with the dividend's sign; x%0 = x, INT_MIN%-1 = 0."""
    a = np.asarray(a)
    b = np.asarray(b)
    zero = b == 0
    safe = np.where(zero, np.ones_like(b), b)
    if a.dtype.kind == "i":
        safe = np.where((a == np.iinfo(a.dtype).min) & (b == -1), np.ones_like(b), safe)
    return np.where(zero, a, np.fmod(a, safe))


def integer_power(a, b):
    """Exponentiation by squaring with wrap-around; negative exponents give 0 except for bases 1, -1."""
    a = np.asarray(a)
    b = np.asarray(b)
    dt = a.dtype
    result = np.ones(np.broadcast_shapes(a.shape, b.shape), dt)
    base = np.broadcast_to(a, result.shape).copy()
    e = np.broadcast_to(b, result.shape).copy()
    negative = e < 0 if dt.kind == "i" else np.zeros(result.shape, bool)
    e = np.where(negative, 0, e)
    while np.any(e > 0):
        result = np.where((e & 1) == 1, result * base, result)
        base = base * base
        e = e >> 1
    if dt.kind == "i":
        odd = (b & 1) == 1
        neg_result = np.where(a == 1, 1, np.where(a == -1, np.where(odd, -1, 1), 0)).astype(dt)
        result = np.where(negative, neg_result, result)
    return result


def _unsigned(dt: np.dtype) -> np.dtype:
    return np.dtype(f"u{dt.itemsize}")


def _signed(dt: np.dtype) -> np.dtype:
    return np.dtype(f"i{dt.itemsize}")


def shift_left(a, s):
    a = np.asarray(a)
    ud = _unsigned(a.dtype)
    bits = a.dtype.itemsize * 8
    amount = np.asarray(s).astype(ud, copy=False) if a.dtype.kind == "i" else np.asarray(s)
    big = amount >= bits
    out = np.left_shift(a.view(ud), np.where(big, 0, amount).astype(ud))
    return np.where(big, 0, out).astype(ud).view(a.dtype)


def shift_right_logical(a, s):
    a = np.asarray(a)
    ud = _unsigned(a.dtype)
    bits = a.dtype.itemsize * 8
    amount = np.asarray(s).view(ud) if np.asarray(s).dtype.kind == "i" else np.asarray(s)
    big = amount >= bits
    out = np.right_shift(a.view(ud), np.where(big, 0, amount).astype(ud))
    return np.where(big, 0, out).astype(ud).view(a.dtype)


def shift_right_arithmetic(a, s):
    a = np.asarray(a)
    sd = _signed(a.dtype)
    bits = a.dtype.itemsize * 8
    amount = np.asarray(s).view(_unsigned(a.dtype)) if np.asarray(s).dtype.kind == "i" else np.asarray(s)
    amount = np.minimum(amount, bits - 1).astype(sd)
    return np.right_shift(a.view(sd), amount).astype(sd).view(a.dtype)


def popcnt(x):
    x = np.asarray(x)
    return np.bitwise_count(x.view(_unsigned(x.dtype))).astype(x.dtype)


def count_leading_zeros(x):
    x = np.asarray(x)
    bits = x.dtype.itemsize * 8
    u = x.view(_unsigned(x.dtype)).astype(np.uint64)
    length = np.zeros(x.shape, np.int64)
    for k in (32, 16, 8, 4, 2, 1):
        high = (u >> np.uint64(k)) != 0
        length += np.where(high, k, 0)
        u = np.where(high, u >> np.uint64(k), u)
    length += (u != 0)
    return (bits - length).astype(x.dtype)


def clamp(lo, x, hi):
    return np.minimum(np.maximum(x, lo), hi)


def complex_kernel(op: Operation) -> Kernel:
    return Kernel(make_complex, ALL, result_dtype(op))


def make_complex(re, im, dtype):
    out = np.empty(np.broadcast_shapes(np.shape(re), np.shape(im)), dtype)
    out.real = re
    out.imag = im
    return out


# Compare ---------------------------------------------------------------------------------------

_COMPARE = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal, "GT": np.greater,
            "GE": np.greater_equal}


def total_order_key(x):
    """Integers ordering floats totally: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN."""
    x = np.asarray(x)
    sd = _signed(x.dtype)
    i = x.view(sd)
    return np.where(i < 0, i ^ np.iinfo(sd).max, i)


def compare_kernel(op: Operation) -> Kernel:
    direction = common.enum(op.get_attr("comparison_direction"))
    compare_type = common.enum(op.get_attr("compare_type"), "")
    fn = _COMPARE[direction]
    dt = operand_dtype(op)
    if compare_type == "TOTALORDER" and dt.kind in "fV":
        return Kernel(compare_total_order, Operand(0), Operand(1), fn)
    if dt.kind == "c" and direction not in ("EQ", "NE"):
        return Kernel(compare_complex, Operand(0), Operand(1), fn)
    return Kernel(fn)


def compare_total_order(a, b, fn):
    return fn(total_order_key(a), total_order_key(b))


def compare_complex(a, b, fn):
    """Lexicographic (real, then imaginary), as XLA orders complex numbers."""
    a = np.asarray(a)
    b = np.asarray(b)
    return np.where(a.real == b.real, fn(a.imag, b.imag), fn(a.real, b.real))


# Conversions -----------------------------------------------------------------------------------

def convert_kernel(op: Operation) -> Kernel:
    src, dst = operand_dtype(op), result_dtype(op)
    if src == dst:
        return Kernel(identity)
    if src.kind == "c" and dst.kind != "c":
        return Kernel(convert_complex_to_real, Operand(0), dst)
    if src.kind in "fV" and dst.kind in "iu":
        return Kernel(convert_float_to_int, Operand(0), dst)
    if dst == np.bool_:
        return Kernel(convert_to_bool)
    return Kernel(convert_plain, Operand(0), dst)


def identity(x):
    return x


def convert_plain(x, dtype):
    return np.asarray(x).astype(dtype)


def convert_to_bool(x):
    return np.asarray(x) != 0


def convert_complex_to_real(x, dtype):
    real = np.real(x)
    if dtype.kind in "iu":
        return convert_float_to_int(real, dtype)
    return convert_to_bool(real) if dtype == np.bool_ else real.astype(dtype)


def convert_float_to_int(x, dtype):
    """Truncate toward zero, saturate at the type's bounds, NaN -> 0."""
    t = np.trunc(np.asarray(x, np.float64))
    info = np.iinfo(dtype)
    too_big = t >= float(2 ** (info.bits - (1 if info.min < 0 else 0)))
    too_small = t < float(info.min)
    bad = too_big | too_small | np.isnan(t)
    out = np.where(bad, 0, t).astype(dtype)
    out = np.where(too_big, info.max, out).astype(dtype)
    return np.where(too_small, info.min, out).astype(dtype)


@kernel("stablehlo.bitcast_convert")
def _bitcast_convert(op: Operation) -> Kernel:
    in_bits, out_bits = common.element_bits(op.operands[0].type), common.element_bits(op.results[0].type)
    dtype = result_dtype(op)
    in_dtype = operand_dtype(op)
    if in_bits == in_dtype.itemsize * 8 and out_bits == dtype.itemsize * 8 and in_dtype not in NARROW_FLOATS:
        return Kernel(bitcast_convert, Operand(0), dtype, result_shape(op))
    return Kernel(bitcast_convert_bits, Operand(0), operand_dtype(op), in_bits, dtype, out_bits, result_shape(op))


def bitcast_convert(x, dtype, shape):
    return np.ascontiguousarray(x).view(dtype).reshape(shape)


def bitcast_convert_bits(x, in_dtype, in_bits: int, dtype, out_bits: int, shape):
    """bitcast_convert where an element's bits do not fill its storage (i1 in a byte, i4 in int8,
    f4E2M1FN in a byte): the operand's `in_bits` low bits per element, little-endian, regrouped
    into `out_bits` per result element; the storage's high bits are zero (the sub-byte wrap after
    the op extends the sign of signed integers)."""
    x = np.ascontiguousarray(x, in_dtype)  # the torch backend holds float8 in float32
    raw = x.reshape(x.size, 1).view(np.uint8)
    bits = np.unpackbits(raw, axis=1, bitorder="little")[:, :in_bits].reshape(-1, out_bits)
    padded = np.zeros((bits.shape[0], dtype.itemsize * 8), np.uint8)
    padded[:, :out_bits] = bits
    return np.packbits(padded, axis=1, bitorder="little").view(dtype).reshape(shape)


def reduce_precision_kernel(op: Operation) -> Kernel:
    return Kernel(reduce_precision, Operand(0), common.integer(op.get_attr("exponent_bits")),
                  common.integer(op.get_attr("mantissa_bits")))


# (bits type, exponent bits, mantissa bits) of the types XLA rounds on their own bits.
_FLOAT_BITS = {np.dtype(np.float16): (np.uint16, 5, 10), np.dtype(np.float32): (np.uint32, 8, 23),
               np.dtype(np.float64): (np.uint64, 11, 52)}


def reduce_precision(x, exponent_bits: int, mantissa_bits: int):
    """Round to a float format with the given exponent and mantissa widths as XLA does, on the
    operand's own bits (so float16 subnormals round where their bits are): the mantissa rounds
    to nearest even; exponents above the format's range give inf, at or below its minimum (its
    subnormals included) a signed zero; NaN is returned unchanged."""
    x = np.asarray(x)
    dt = x.dtype
    if dt == BF16:
        return _reduce_precision_bf16(x, exponent_bits, mantissa_bits)
    if dt not in _FLOAT_BITS:  # the float8 types: in float32, which holds each of their values
        return reduce_precision(x.astype(np.float32), exponent_bits, mantissa_bits).astype(dt)
    bits_t, src_exp, src_mant = _FLOAT_BITS[dt]
    nbits = dt.itemsize * 8
    if mantissa_bits >= src_mant and exponent_bits >= src_exp:
        return x.copy()  # a no-op XLA removes: NaN payloads stay
    # flat, so that 0-d operands stay arrays (numpy scalars warn where their arithmetic wraps)
    u = x.reshape(-1).view(bits_t)
    if mantissa_bits < src_mant:
        drop = src_mant - mantissa_bits
        last = (u >> bits_t(drop)) & bits_t(1)
        bias = last + bits_t((1 << (drop - 1)) - 1)
        # unsigned arithmetic wraps where a NaN's bits overflow; NaNs are put back below
        u = (u + bias) & bits_t(~((1 << drop) - 1) & ((1 << nbits) - 1))
    if exponent_bits < src_exp:
        exp_mask = bits_t(((1 << src_exp) - 1) << src_mant)
        src_bias = (1 << (src_exp - 1)) - 1
        dst_bias = (1 << (exponent_bits - 1)) - 1
        exponent = u & exp_mask
        signs = u & bits_t(1 << (nbits - 1))
        u = np.where(exponent > bits_t((src_bias + dst_bias) << src_mant), signs | exp_mask,
                     np.where(exponent <= bits_t((src_bias - dst_bias) << src_mant), signs, u))
    return np.where(np.isnan(x), x, u.view(dt).reshape(x.shape))


def _reduce_precision_bf16(x, exponent_bits: int, mantissa_bits: int):
    """XLA computes bfloat16 in float32 and converts the result back (rounding bfloat16
    subnormals a second time, and leaving each NaN the quiet NaN of its sign); so does this."""
    if mantissa_bits >= 23 and exponent_bits >= 8:
        return x.copy()  # a no-op on float32, which XLA removes: NaN payloads stay
    with np.errstate(invalid="ignore"):  # NaNs convert (and are replaced below)
        out = reduce_precision(x.astype(np.float32), exponent_bits, mantissa_bits).astype(BF16)
    u = x.view(np.uint16)
    quiet = (u & np.uint16(0x8000)) | np.uint16(0x7FC0)
    return np.where((u & np.uint16(0x7FFF)) > np.uint16(0x7F80), quiet.view(BF16), out)


# Shapes ----------------------------------------------------------------------------------------

@kernel("stablehlo.reshape")
def _reshape(op: Operation) -> Kernel:
    # the method, not np.reshape: that one goes through two Python frames of numpy's dispatch
    # (values here are ndarrays or numpy scalars, both of which have .reshape)
    return Kernel(reshape, Operand(0), result_shape(op))


@kernel("stablehlo.transpose")
def _transpose(op: Operation) -> Kernel:
    return Kernel(np.transpose, Operand(0), common.ints(op.get_attr("permutation")))


@kernel("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op: Operation) -> Kernel:
    dims = common.ints(op.get_attr("broadcast_dimensions"))
    shape = result_shape(op)
    in_shape = shape_of(op.operands[0].type)
    if in_shape == shape and list(dims) == sorted(dims):
        return Kernel(identity)
    if list(dims) != sorted(dims):  # operand dims out of order: transpose first
        perm = tuple(sorted(range(len(dims)), key=lambda i: dims[i]))
        dims = tuple(sorted(dims))
        in_shape = tuple(in_shape[p] for p in perm)
        expanded = [1] * len(shape)
        for d, n in zip(dims, in_shape):
            expanded[d] = n
        return Kernel(broadcast_transposed, Operand(0), perm, tuple(expanded), shape)
    expanded = [1] * len(shape)
    for d, n in zip(dims, in_shape):
        expanded[d] = n
    return Kernel(broadcast_in_dim, Operand(0), tuple(expanded), shape)


def reshape(x, shape):
    return x.reshape(shape)


def broadcast_in_dim(x, expanded, shape):
    return np.broadcast_to(np.reshape(x, expanded), shape)


def broadcast_transposed(x, perm, expanded, shape):
    return np.broadcast_to(np.reshape(np.transpose(x, perm), expanded), shape)


@kernel("stablehlo.slice")
def _slice(op: Operation) -> Kernel:
    starts = common.ints(op.get_attr("start_indices"))
    limits = common.ints(op.get_attr("limit_indices"))
    strides = common.ints(op.get_attr("strides"), [1] * len(starts))
    index = tuple(slice(s, e, k) for s, e, k in zip(starts, limits, strides))
    return Kernel(operator.getitem, Operand(0), index)


@kernel("stablehlo.dynamic_slice")
def _dynamic_slice(op: Operation) -> Kernel:
    return Kernel(dynamic_slice, Operand(0), common.ints(op.get_attr("slice_sizes")), Rest(1))


def _clamped_starts(shape, sizes, starts) -> tuple:
    return tuple(slice(s, s + n) for s, n in
                 ((min(max(int(i), 0), d - n), n) for i, d, n in zip(starts, shape, sizes)))


def dynamic_slice(x, sizes, *starts):
    return x[_clamped_starts(x.shape, sizes, starts)]


def dynamic_update_slice(x, update, *starts):
    out = np.array(x)
    out[_clamped_starts(x.shape, update.shape, starts)] = update
    return out


KERNELS["stablehlo.dynamic_update_slice"] = direct(dynamic_update_slice)


@kernel("stablehlo.concatenate")
def _concatenate(op: Operation) -> Kernel:
    return Kernel(np.concatenate, PACKED, common.integer(op.get_attr("dimension")))


@kernel("stablehlo.reverse")
def _reverse(op: Operation) -> Kernel:
    return Kernel(np.flip, Operand(0), common.ints(op.get_attr("dimensions")))


@kernel("stablehlo.iota")
def _iota(op: Operation) -> Kernel:
    return Kernel.constant(iota(result_shape(op), common.integer(op.get_attr("iota_dimension")), result_dtype(op)))


def iota(shape, dim, dtype):
    values = np.arange(shape[dim]).astype(dtype)
    expanded = [1] * len(shape)
    expanded[dim] = shape[dim]
    out = np.broadcast_to(values.reshape(expanded), shape)
    out.flags.writeable = False
    return out


@kernel("stablehlo.constant")
def _constant(op: Operation) -> Kernel:
    return Kernel.constant(common.dense_value(op.get_attr("value")))


@kernel("stablehlo.pad")
def _pad(op: Operation) -> Kernel:
    return Kernel(pad, Operand(0), Operand(1), common.ints(op.get_attr("edge_padding_low")),
                  common.ints(op.get_attr("edge_padding_high")), common.ints(op.get_attr("interior_padding")))


def pad(x, value, low, high, interior):
    """Edge padding (negative: cropping) and interior padding."""
    x = np.asarray(x)
    if not any(interior) and min(low, default=0) >= 0 and min(high, default=0) >= 0:
        return np.pad(x, list(zip(low, high)), constant_values=value)
    big_shape, inner, crop = [], [], []
    for d, lo, hi, it in zip(x.shape, low, high, interior):
        spread = d + max(d - 1, 0) * it
        lo_p, hi_p = max(lo, 0), max(hi, 0)
        size = lo_p + spread + hi_p
        big_shape.append(size)
        inner.append(slice(lo_p, lo_p + spread, it + 1))
        crop.append(slice(-min(lo, 0), size + min(hi, 0)))
    out = np.full(big_shape, value, x.dtype)
    out[tuple(inner)] = x
    return out[tuple(crop)]


@kernel("stablehlo.get_dimension_size")
def _get_dimension_size(op: Operation) -> Kernel:
    return Kernel(get_dimension_size, Operand(0), common.integer(op.get_attr("dimension")))


def get_dimension_size(x, dim):
    return np.array(x.shape[dim], np.int32)


@kernel("stablehlo.dynamic_reshape")
def _dynamic_reshape(op: Operation) -> Kernel:
    return Kernel(dynamic_reshape)


def dynamic_reshape(x, shape):
    return np.reshape(x, tuple(int(s) for s in np.asarray(shape)))


@kernel("stablehlo.dynamic_iota")
def _dynamic_iota(op: Operation) -> Kernel:
    return Kernel(dynamic_iota, Operand(0), common.integer(op.get_attr("iota_dimension")), result_dtype(op))


def dynamic_iota(shape, dim, dtype):
    return iota(tuple(int(s) for s in np.asarray(shape)), dim, dtype)


@kernel("stablehlo.dynamic_broadcast_in_dim")
def _dynamic_broadcast_in_dim(op: Operation) -> Kernel:
    return Kernel(dynamic_broadcast_in_dim, Operand(0), Operand(1),
                  common.ints(op.get_attr("broadcast_dimensions")))


def dynamic_broadcast_in_dim(x, shape, dims):
    shape = tuple(int(s) for s in np.asarray(shape))
    expanded = [1] * len(shape)
    for d, n in zip(dims, np.shape(x)):
        expanded[d] = n
    return np.broadcast_to(np.reshape(x, expanded), shape)


# Structural ------------------------------------------------------------------------------------

def values_tuple(*xs):
    return tuple(xs)


KERNELS["stablehlo.optimization_barrier"] = lambda op: Kernel(values_tuple) if len(op.results) != 1 \
    else Kernel(identity)
KERNELS["stablehlo.tuple"] = lambda op: Kernel(values_tuple)
KERNELS["sdy.sharding_constraint"] = lambda op: Kernel(identity)  # one device: sharding is a no-op


@kernel("stablehlo.get_tuple_element")
def _get_tuple_element(op: Operation) -> Kernel:
    return Kernel(operator.getitem, Operand(0), common.integer(op.get_attr("index")))


# Linear algebra --------------------------------------------------------------------------------

def _compute_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt in LOW_FLOATS else dt


@kernel("stablehlo.dot_general")
def _dot_general(op: Operation) -> Kernel:
    f = common.struct_fields(op.get_attr("dot_dimension_numbers"))
    lb, rb = f.get("lhs_batching_dimensions", ()), f.get("rhs_batching_dimensions", ())
    lc, rc = f.get("lhs_contracting_dimensions", ()), f.get("rhs_contracting_dimensions", ())
    lhs_t, rhs_t = op.operands[0].type, op.operands[1].type
    out_dt = result_dtype(op)
    work = _compute_dtype(out_dt)
    lrank, rrank = len(shape_of(lhs_t)), len(shape_of(rhs_t))
    same = operand_dtype(op, 0) == out_dt and operand_dtype(op, 1) == out_dt and work == out_dt
    form = _matmul_form(lrank, rrank, (lb, rb, lc, rc))
    if form == (False, False):
        return Kernel(np.matmul) if same else Kernel(matmul_as, Operand(0), Operand(1), work, out_dt)
    if form is not None:
        # one matmul over transposed views (BLAS reads them with its transpose flags): the
        # backward pass's contractions on dims (0, 0) and (1, 1) copy nothing
        if same:
            return Kernel(_TRANSPOSED_MATMUL[form], Operand(0), Operand(1))
        return Kernel(matmul_transposed_as, Operand(0), Operand(1), form, work, out_dt)
    return Kernel(dot_general, Operand(0), Operand(1), (lb, rb, lc, rc), work, out_dt)


def _matmul_form(lrank: int, rrank: int, dims: tuple) -> tuple[bool, bool] | None:
    """(transpose lhs, transpose rhs) when the dot_general is one `np.matmul` over the operands'
    last two dims, leading dims batch dims in order (its result is then laid out as StableHLO's:
    batch, lhs free, rhs free); None otherwise."""
    lb, rb, lc, rc = dims
    nb = len(lb)
    if lrank != nb + 2 or rrank != nb + 2 or len(lc) != 1 or len(rc) != 1:
        return None
    if tuple(lb) != tuple(range(nb)) or tuple(rb) != tuple(range(nb)):
        return None
    return lc[0] == nb, rc[0] == nb + 1


def _t(x: np.ndarray) -> np.ndarray:
    return x.T if x.ndim == 2 else np.swapaxes(x, -1, -2)


def matmul_tn(a, b):
    return np.matmul(_t(a), b)


def matmul_nt(a, b):
    return np.matmul(a, _t(b))


def matmul_tt(a, b):
    return np.matmul(_t(a), _t(b))


_TRANSPOSED_MATMUL = {(True, False): matmul_tn, (False, True): matmul_nt, (True, True): matmul_tt}


def matmul_transposed_as(a, b, form, work, out):
    a = np.asarray(a).astype(work, copy=False)
    b = np.asarray(b).astype(work, copy=False)
    return np.matmul(_t(a) if form[0] else a, _t(b) if form[1] else b).astype(out, copy=False)


def matmul_as(a, b, work, out):
    return np.matmul(a.astype(work, copy=False), b.astype(work, copy=False)).astype(out, copy=False)


def dot_general(lhs, rhs, dims, work, out_dtype):
    """Batch dims first, then lhs free dims, then rhs free dims: transpose, reshape, one matmul."""
    lb, rb, lc, rc = dims
    lhs = np.asarray(lhs).astype(work, copy=False)
    rhs = np.asarray(rhs).astype(work, copy=False)
    lf = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    batch_shape = [lhs.shape[d] for d in lb]
    lf_shape = [lhs.shape[d] for d in lf]
    rf_shape = [rhs.shape[d] for d in rf]
    nb = int(np.prod(batch_shape, dtype=np.int64))
    nc = int(np.prod([lhs.shape[d] for d in lc], dtype=np.int64))
    a = np.transpose(lhs, (*lb, *lf, *lc)).reshape(nb, -1 if lf_shape else 1, nc) if nb and nc else None
    b = np.transpose(rhs, (*rb, *rc, *rf)).reshape(nb, nc, -1 if rf_shape else 1) if nb and nc else None
    out_shape = (*batch_shape, *lf_shape, *rf_shape)
    if a is None or a.size == 0 or b.size == 0:
        return np.zeros(out_shape, out_dtype)
    return np.matmul(a, b).reshape(out_shape).astype(out_dtype, copy=False)


@kernel("stablehlo.convolution")
def _convolution(op: Operation) -> Kernel:
    dims = ConvDims(op.get_attr("dimension_numbers"))
    n = len(dims.input_spatial)
    strides = common.ints(op.get_attr("window_strides"), [1] * n)
    padding = common.padding_pairs(op.get_attr("padding"), n)
    lhs_dil = common.ints(op.get_attr("lhs_dilation"), [1] * n)
    rhs_dil = common.ints(op.get_attr("rhs_dilation"), [1] * n)
    reversal = common.bools(op.get_attr("window_reversal"), n)
    fgc = common.integer(op.get_attr("feature_group_count"), 1)
    bgc = common.integer(op.get_attr("batch_group_count"), 1)
    out_dt = result_dtype(op)
    config = (dims, tuple(strides), tuple(padding), tuple(lhs_dil), tuple(rhs_dil), tuple(reversal), fgc, bgc,
              _compute_dtype(out_dt), out_dt)
    return Kernel(convolution, Operand(0), Operand(1), config)


def convolution(lhs, rhs, config):
    """StableHLO convolution: layouts normalised to (N, C, spatial...) x (O, I, spatial...),
    dilations as interior padding, windows as strided views, one tensordot per group."""
    dims, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc, work, out_dt = config
    x = np.transpose(np.asarray(lhs), (dims.input_batch, dims.input_feature, *dims.input_spatial)).astype(work)
    w = np.transpose(np.asarray(rhs), (dims.kernel_output_feature, dims.kernel_input_feature,
                                       *dims.kernel_spatial)).astype(work)
    n = len(dims.input_spatial)
    rev_axes = tuple(2 + i for i in range(n) if reversal[i])
    if rev_axes:
        w = np.flip(w, rev_axes)
    if any(d != 1 for d in rhs_dil):
        w = pad(w, np.zeros((), work), [0] * (n + 2), [0] * (n + 2), [0, 0, *(d - 1 for d in rhs_dil)])
    x = pad(x, np.zeros((), work), [0, 0, *(p[0] for p in padding)], [0, 0, *(p[1] for p in padding)],
            [0, 0, *(d - 1 for d in lhs_dil)])
    out = _grouped_conv(x, w, strides, fgc, bgc)
    out_perm = [0] * (n + 2)
    out_perm[dims.output_batch] = 0
    out_perm[dims.output_feature] = 1
    for i, d in enumerate(dims.output_spatial):
        out_perm[d] = 2 + i
    return np.transpose(out, out_perm).astype(out_dt, copy=False)


def _grouped_conv(x, w, strides, fgc, bgc):
    n = x.ndim - 2
    if bgc > 1:
        xs = np.split(x, bgc, axis=0)
        ws = np.split(w, bgc, axis=0)
        return np.concatenate([_grouped_conv(a, b, strides, fgc, 1) for a, b in zip(xs, ws)], axis=1)
    if fgc > 1:
        xs = np.split(x, fgc, axis=1)
        ws = np.split(w, fgc, axis=0)
        return np.concatenate([_grouped_conv(a, b, strides, 1, 1) for a, b in zip(xs, ws)], axis=1)
    ksize = w.shape[2:]
    out_spatial = [max((x.shape[2 + i] - ksize[i]) // strides[i] + 1, 0) if x.shape[2 + i] >= ksize[i] else 0
                   for i in range(n)]
    if 0 in out_spatial or x.shape[0] == 0 or w.shape[0] == 0:
        return np.zeros((x.shape[0], w.shape[0], *out_spatial), x.dtype)
    windows = sliding_window_view(x, ksize, axis=tuple(range(2, 2 + n)))
    windows = windows[(slice(None), slice(None), *(slice(None, None, s) for s in strides))]
    # windows: (N, C, out..., k...); w: (O, C, k...)
    out = np.tensordot(windows, w, axes=([1, *range(2 + n, 2 + 2 * n)], [1, *range(2, 2 + n)]))
    return np.moveaxis(out, -1, 1)  # (N, out..., O) -> (N, O, out...)


# Gather ----------------------------------------------------------------------------------------

class GatherDims:
    """The dimension numbers of a gather (read from `#stablehlo.gather<...>`)."""

    def __init__(self, attr) -> None:
        f = common.struct_fields(attr)
        self.offset_dims = f.get("offset_dims", ())
        self.collapsed_slice_dims = f.get("collapsed_slice_dims", ())
        self.operand_batching_dims = f.get("operand_batching_dims", ())
        self.start_indices_batching_dims = f.get("start_indices_batching_dims", ())
        self.start_index_map = f.get("start_index_map", ())
        self.index_vector_dim = f.get("index_vector_dim", 0)


@kernel("stablehlo.gather")
def _gather(op: Operation) -> Kernel:
    dims = GatherDims(op.get_attr("dimension_numbers"))
    sizes = common.ints(op.get_attr("slice_sizes"))
    return Kernel(gather, Operand(0), Operand(1), dims, tuple(sizes))


def _batch_coordinates(idx_shape: tuple[int, ...], index_vector_dim: int):
    """The start-indices dims that are batch dims (all but the index vector dim), in order."""
    return [d for d in range(len(idx_shape)) if d != index_vector_dim]


def gather(operand, start_indices, dims: GatherDims, slice_sizes):
    """Vectorised gather: one advanced-indexing read of every (batch, offset) element."""
    operand = np.asarray(operand)
    idx = np.asarray(start_indices)
    ivd = dims.index_vector_dim
    if ivd == idx.ndim:
        idx = idx[..., None]
    batch_dims = _batch_coordinates(idx.shape, ivd)
    idx = np.moveaxis(idx, ivd, -1).astype(np.int64)
    batch_shape = idx.shape[:-1]
    nb = len(batch_shape)
    kept = [d for d in range(operand.ndim) if d not in dims.collapsed_slice_dims and
            d not in dims.operand_batching_dims]
    nw = len(kept)
    index = []
    for d in range(operand.ndim):
        if d in dims.start_index_map:
            k = dims.start_index_map.index(d)
            start = np.clip(idx[..., k], 0, operand.shape[d] - slice_sizes[d])
        elif d in dims.operand_batching_dims:
            sd = dims.start_indices_batching_dims[dims.operand_batching_dims.index(d)]
            axis = batch_dims.index(sd)
            shape = [1] * nb
            shape[axis] = batch_shape[axis]
            start = np.arange(batch_shape[axis]).reshape(shape)
        else:
            start = np.zeros((1,) * nb, np.int64)
        start = np.reshape(start, np.shape(start) + (1,) * nw)
        if d in kept:
            shape = [1] * (nb + nw)
            shape[nb + kept.index(d)] = slice_sizes[d]
            start = start + np.arange(slice_sizes[d]).reshape(shape)
        index.append(start)
    out = operand[tuple(index)] if operand.ndim else np.broadcast_to(operand, batch_shape)
    out = np.broadcast_to(out, (*batch_shape, *(slice_sizes[d] for d in kept)))
    return np.transpose(out, gather_permutation(dims, nb, nb + nw))


def gather_permutation(dims: GatherDims, nb: int, rank: int) -> list[int]:
    """The axes of a gather's result among (batch dims..., offset dims...): result dim i is an
    offset dim where `offset_dims` names it, else the next batch dim."""
    perm, b = [], 0
    for i in range(rank):
        if i in dims.offset_dims:
            perm.append(nb + dims.offset_dims.index(i))
        else:
            perm.append(b)
            b += 1
    return perm


# Scatter ---------------------------------------------------------------------------------------

class ScatterDims:
    """The dimension numbers of a scatter (read from `#stablehlo.scatter<...>`)."""

    def __init__(self, attr) -> None:
        f = common.struct_fields(attr)
        self.update_window_dims = f.get("update_window_dims", ())
        self.inserted_window_dims = f.get("inserted_window_dims", ())
        self.input_batching_dims = f.get("input_batching_dims", ())
        self.scatter_indices_batching_dims = f.get("scatter_indices_batching_dims", ())
        self.scatter_dims_to_operand_dims = f.get("scatter_dims_to_operand_dims", ())
        self.index_vector_dim = f.get("index_vector_dim", 0)


def scatter_index(operand_shape, scatter_indices, updates_shape, dims: ScatterDims):
    """For every update element, its operand index (one int array per operand dim, each of the
    updates' shape) and whether its window lies in bounds (XLA skips windows that do not)."""
    idx = np.asarray(scatter_indices)
    ivd = dims.index_vector_dim
    if ivd == idx.ndim:
        idx = idx[..., None]
    batch_dims = _batch_coordinates(idx.shape, ivd)
    idx = np.moveaxis(idx, ivd, -1).astype(np.int64)
    rank_u = len(updates_shape)
    scatter_axes = [d for d in range(rank_u) if d not in dims.update_window_dims]
    window_operand_dims = [d for d in range(len(operand_shape)) if d not in dims.inserted_window_dims and
                           d not in dims.input_batching_dims]
    window_sizes = {d: updates_shape[u] for d, u in zip(window_operand_dims, dims.update_window_dims)}

    def place(arr: np.ndarray, axes: list[int]) -> np.ndarray:
        shape = [1] * rank_u
        for a, n in zip(axes, arr.shape):
            shape[a] = n
        return arr.reshape(shape)

    valid = np.ones([updates_shape[a] for a in scatter_axes], bool)
    index = []
    for d in range(len(operand_shape)):
        if d in dims.scatter_dims_to_operand_dims:
            start = idx[..., dims.scatter_dims_to_operand_dims.index(d)]
        elif d in dims.input_batching_dims:
            sd = dims.scatter_indices_batching_dims[dims.input_batching_dims.index(d)]
            axis = batch_dims.index(sd)
            shape = [1] * len(scatter_axes)
            shape[axis] = idx.shape[axis]
            start = np.broadcast_to(np.arange(idx.shape[axis]).reshape(shape), idx.shape[:-1])
        else:
            start = np.zeros(idx.shape[:-1], np.int64)
        size = window_sizes.get(d, 1)
        valid &= (start >= 0) & (start <= operand_shape[d] - size)
        full = place(start, scatter_axes)
        if d in window_sizes:
            full = full + place(np.arange(size), [dims.update_window_dims[window_operand_dims.index(d)]])
        index.append(np.broadcast_to(full, updates_shape))
    return index, np.broadcast_to(place(valid, scatter_axes), updates_shape)


def scatter_ufunc(operand, indices, updates, dims: ScatterDims, ufunc):
    """Scatter whose update computation is a known binary op (`ufunc`, or None to overwrite)."""
    out = np.array(operand)
    updates = np.asarray(updates)
    index, valid = scatter_index(out.shape, indices, updates.shape, dims)
    index = tuple(i[valid] for i in index)
    if ufunc is None:
        out[index] = updates[valid]
    else:
        ufunc.at(out, index, updates[valid])
    return out


# Windows ---------------------------------------------------------------------------------------

def window_view(x, init, window, strides, base_dil, win_dil, padding):
    """Windows of `x` (padded with `init`, base-dilated) as a strided view of shape
    (out..., window...)."""
    x = np.asarray(x)
    n = x.ndim
    if any(d != 1 for d in base_dil) or any(lo or hi for lo, hi in padding):
        x = pad(x, init, [p[0] for p in padding], [p[1] for p in padding], [d - 1 for d in base_dil])
    span = [(w - 1) * d + 1 for w, d in zip(window, win_dil)]
    if any(s > size for s, size in zip(span, x.shape)):
        out_shape = [max((size - s) // st + 1, 0) for size, s, st in zip(x.shape, span, strides)]
        return np.zeros((*out_shape, *window), x.dtype)
    views = sliding_window_view(x, span)
    index = tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in win_dil)
    views = views[index]
    assert views.ndim == 2 * n
    return views


def reduce_window_ufunc(x, init, ufunc, window, strides, base_dil, win_dil, padding):
    views = window_view(x, init, window, strides, base_dil, win_dil, padding)
    n = np.ndim(x)
    axes = tuple(range(n, 2 * n))
    return ufunc(ufunc.reduce(views, axis=axes), init).astype(np.asarray(x).dtype, copy=False)


def reduce_ufunc(x, init, ufunc, axes):
    x = np.asarray(x)
    if any(x.shape[a] == 0 for a in axes):
        # nothing to combine: the init value, as XLA gives (maximum and minimum have no identity
        # for ufunc.reduce to start from)
        shape = [d for i, d in enumerate(x.shape) if i not in axes]
        return np.broadcast_to(np.asarray(init, x.dtype), shape).copy()
    out = ufunc.reduce(x, axis=axes) if axes else x
    return ufunc(out, init).astype(x.dtype, copy=False)


def argreduce(values, indices, init_value, init_index, axis, pick_max):
    """The (value, index) pair of an argmax/argmin reducer over one axis, first index on ties,
    NaN winning as it does in jax's reducer body."""
    values = np.asarray(values)
    if values.shape[axis] == 0:
        shape = values.shape[:axis] + values.shape[axis + 1:]
        return np.broadcast_to(init_value, shape).copy(), np.broadcast_to(init_index, shape).copy()
    pos = np.argmax(values, axis=axis) if pick_max else np.argmin(values, axis=axis)
    pos = np.expand_dims(pos, axis)
    v = np.take_along_axis(values, pos, axis).squeeze(axis)
    i = np.take_along_axis(np.broadcast_to(indices, values.shape), pos, axis).squeeze(axis)
    return v, i


# Sorting and top-k -----------------------------------------------------------------------------

def sort_by_key(operands, key, dimension: int, descending: bool):
    """Stable sort of every operand along `dimension` by an integer or float `key`."""
    key = np.asarray(key)
    if descending:
        rev = np.flip(key, dimension)
        order = np.flip(np.argsort(rev, axis=dimension, kind="stable"), dimension)
        order = key.shape[dimension] - 1 - order
    else:
        order = np.argsort(key, axis=dimension, kind="stable")
    return tuple(np.take_along_axis(np.asarray(x), order, dimension) for x in operands)


@kernel("chlo.top_k")
def _top_k(op: Operation) -> Kernel:
    return Kernel(top_k, Operand(0), common.integer(op.get_attr("k")), result_dtype(op, 1))


def top_k(x, k, index_dtype):
    """The k largest along the last axis, larger index losing ties, NaN largest (total order)."""
    x = np.asarray(x)
    key = total_order_key(x) if x.dtype.kind in "fV" else x
    positions = np.broadcast_to(np.arange(x.shape[-1]), x.shape)
    values, idx = sort_by_key((x, positions), key, x.ndim - 1, descending=True)
    return values[..., :k], idx[..., :k].astype(index_dtype)


# Random bits -----------------------------------------------------------------------------------

@kernel("stablehlo.rng_bit_generator")
def _rng_bit_generator(op: Operation) -> Kernel:
    from loom.backend.rng import rng_bit_generator
    algorithm = common.enum(op.get_attr("rng_algorithm"), "DEFAULT")
    return Kernel(rng_bit_generator, Operand(0), algorithm, result_shape(op, 1), result_dtype(op, 1))


# FFT -------------------------------------------------------------------------------------------

@kernel("stablehlo.fft")
def _fft(op: Operation) -> Kernel:
    return Kernel(fft, Operand(0), common.enum(op.get_attr("fft_type")), common.ints(op.get_attr("fft_length")),
                  result_dtype(op))


def fft(x, fft_type, lengths, dtype):
    axes = tuple(range(-len(lengths), 0))
    if fft_type == "FFT":
        out = np.fft.fftn(x, axes=axes)
    elif fft_type == "IFFT":
        out = np.fft.ifftn(x, axes=axes)
    elif fft_type == "RFFT":
        out = np.fft.rfftn(x, axes=axes)
    else:
        out = np.fft.irfftn(x, s=lengths, axes=axes)
    return out.astype(dtype)


def kernel_for(op: Operation) -> Kernel:
    maker = KERNELS.get(op.name)
    if maker is None:
        raise ExecutionError(f"no numpy kernel for op '{op.name}'")
    return maker(op)


__all__ = ["ALL", "KERNELS", "PACKED", "Kernel", "Operand", "Rest", "kernel", "kernel_for"]
