"""The elementwise family: StableHLO's and CHLO's unary and binary elementwise ops, one row each.

A row of `OPS` says everything loom knows about an op besides its declaration:

    Row(stablehlo.LogOp, numpy=float_math(np.log), torch=torch_function("log"),
        derivative=partials(lambda b, g, a: stablehlo.divide(b, g, a.x)), lax="log", lnp="log")

- `numpy`: the kernel maker of `KERNELS` (`ufunc(fn)`, `float_math(fn)`: computed in float32
  for f16/bf16 as XLA does, or a maker reading the op's attributes);
- `torch`: the maker of `TORCH_KERNELS`, resolved when first used (torch is imported then, not
  at `import loom`): `torch_function("log")` is `torch.log`, `torch_kernel("divide_kernel")` a
  maker of `loom.ops.elementwise_torch`; ops without one run their numpy kernel on the tensors;
- `derivative`: ONE rule, both modes. `partials(d0, d1, ...)` gives, per operand, the derivative
  applied to a tangent `g` of the result's shape: `d(b, g, a) -> Value`, where `a.x`, `a.y`,
  `a.xs` are the operands (broadcast to the result's shape) and `a.z` the result. The partial is
  a diagonal linear map, so it is its own transpose: the JVP is the sum of `d_i(t_i)`, the VJP
  gives operand i the cotangent `d_i(ct)`, summed back to a scalar operand's shape (select and
  clamp take scalar operands). `None` marks an operand without a derivative (a predicate, an
  integer exponent), `unsupported(reason)` one whose derivative loom does not compute (an error
  when it is needed). `ZERO` is the derivative of a piecewise constant op (floor, sign, compare,
  ...): no tangent, no cotangent. A whole-op `unsupported(reason)` leaves the op out of both
  tables (declared, so the coverage test knows why);
- `lax`, `lnp`: the names of the op's `loom.lax` and `loom.numpy` functions (strings: the front end
  generates its bindings from them).

Batching and sharding need no row: every op with the `Elementwise` trait gets the elementwise
batching rule (registered below for each such op) and the identity sharding rule
(`loom.transforms.sharding_propagation.identity_rule`, read from the trait), and the compiled
executor's elementwise set is read from the trait.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import ml_dtypes
import numpy as np

from loom.backend import common
from loom.backend import kernels as kn
from loom.backend.common import TORCH_KERNELS, subbyte_integer
from loom.backend.kernels import (
    ALL,
    BF16,
    F16_HOLDS,
    KERNELS,
    LOW_FLOATS,
    Kernel,
    Operand,
    direct,
    identity,
    operand_dtype,
    result_dtype,
    signed_dtype,
    total_order_key,
    unsigned_dtype,
)
from loom.dialects import chlo, stablehlo
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.types import FloatType, f32
from loom.ops.registry import Unsupported, declare, register, unsupported
from loom.transforms import autodiff, forward_ad
from loom.transforms.autodiff import VJP_RULES, full_like, is_float, reduce_sum
from loom.transforms.batching import BATCH_RULES, elementwise_rule
from loom.transforms.forward_ad import JVP_RULES

# Kernels -----------------------------------------------------------------------------------------

# The numpy functions and kernel makers of the rows below; their torch ones are in
# loom.ops.elementwise_torch (imported with torch, when a row's torch kernel is first made).


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



def shift_left(a, s):
    a = np.asarray(a)
    ud = unsigned_dtype(a.dtype)
    bits = a.dtype.itemsize * 8
    amount = np.asarray(s).astype(ud, copy=False) if a.dtype.kind == "i" else np.asarray(s)
    big = amount >= bits
    out = np.left_shift(a.view(ud), np.where(big, 0, amount).astype(ud))
    return np.where(big, 0, out).astype(ud).view(a.dtype)


def shift_right_logical(a, s):
    a = np.asarray(a)
    ud = unsigned_dtype(a.dtype)
    bits = a.dtype.itemsize * 8
    amount = np.asarray(s).view(ud) if np.asarray(s).dtype.kind == "i" else np.asarray(s)
    big = amount >= bits
    out = np.right_shift(a.view(ud), np.where(big, 0, amount).astype(ud))
    return np.where(big, 0, out).astype(ud).view(a.dtype)


def shift_right_arithmetic(a, s):
    a = np.asarray(a)
    sd = signed_dtype(a.dtype)
    bits = a.dtype.itemsize * 8
    amount = np.asarray(s).view(unsigned_dtype(a.dtype)) if np.asarray(s).dtype.kind == "i" else np.asarray(s)
    amount = np.minimum(amount, bits - 1).astype(sd)
    return np.right_shift(a.view(sd), amount).astype(sd).view(a.dtype)


def popcnt(x):
    x = np.asarray(x)
    return np.bitwise_count(x.view(unsigned_dtype(x.dtype))).astype(x.dtype)


def count_leading_zeros(x):
    x = np.asarray(x)
    bits = x.dtype.itemsize * 8
    u = x.view(unsigned_dtype(x.dtype)).astype(np.uint64)
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
    if not np.can_cast(src, dst, "unsafe"):  # two ml_dtypes types with no cast between them (in some versions)
        return Kernel(convert_through_float64, Operand(0), dst)
    return Kernel(convert_plain, Operand(0), dst)


def convert_plain(x, dtype):
    return np.asarray(x).astype(dtype)


def convert_through_float64(x, dtype):
    """float64 holds every value of ml_dtypes' types exactly: one rounding, as a direct cast."""
    return np.asarray(x).astype(np.float64).astype(dtype)


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

KernelMaker = Callable[[Operation], "Kernel | None"]


# chlo.mulhi, chlo.bessel_i1e, chlo.polygamma, chlo._asin_acos_kernel ---------------------------

def mulhi_kernel(op: Operation) -> Kernel:
    return Kernel(mulhi, Operand(0), Operand(1), common.element_bits(op.operands[0].type))


def mulhi(a, b, bits: int):
    """The high `bits` bits of the 2 * `bits`-bit product (signed or unsigned as the operands): in
    64-bit integers for operands of up to 32 bits, in Python's exact integers for 64-bit ones."""
    a, b = np.asarray(a), np.asarray(b)
    if bits <= 32:
        wide = np.int64 if a.dtype.kind == "i" else np.uint64
        return ((a.astype(wide) * b.astype(wide)) >> wide(bits)).astype(a.dtype)
    product = a.astype(object) * b.astype(object)
    return np.asarray(product >> bits).astype(a.dtype)


# Cephes' Chebyshev coefficients of exp(-x) I1(x) / x on [0, 8] (in x / 2 - 2) and of
# exp(-x) sqrt(x) I1(x) on (8, inf) (in 32 / x - 2), highest degree first: the series XLA's
# decomposition of bessel_i1e evaluates.
I1E_SMALL = (
    2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
    -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
    3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
    -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
    9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
    -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
    4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
    -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
    2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
    -1.76416518357834055153e-1, 2.52587186443633654823e-1)
I1E_LARGE = (
    7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
    -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
    -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
    4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
    -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
    3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
    -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
    -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
    7.78576235018280120474e-1)
# The same of exp(-x) I0(x) (bessel_i1e's derivative needs it).
I0E_SMALL = (
    -4.41534164647933937950e-18, 3.33079451882223809783e-17, -2.43127984654795469359e-16,
    1.71539128555513303061e-15, -1.16853328779934516808e-14, 7.67618549860493561688e-14,
    -4.85644678311192946090e-13, 2.95505266312963983461e-12, -1.72682629144155570723e-11,
    9.67580903537323691224e-11, -5.18979560163526290666e-10, 2.65982372468238665035e-9,
    -1.30002500998624804212e-8, 6.04699502254191894932e-8, -2.67079385394061173391e-7,
    1.11738753912010371815e-6, -4.41673835845875056359e-6, 1.64484480707288970893e-5,
    -5.75419501008210370398e-5, 1.88502885095841655729e-4, -5.76375574538582365885e-4,
    1.63947561694133579842e-3, -4.32430999505057594430e-3, 1.05464603945949983183e-2,
    -2.37374148058994688156e-2, 4.93052842396707084878e-2, -9.49010970480476444210e-2,
    1.71620901522208775349e-1, -3.04682672343198398683e-1, 6.76795274409476084995e-1)
I0E_LARGE = (
    -7.23318048787475395456e-18, -4.83050448594418207126e-18, 4.46562142029675999901e-17,
    3.46122286769746109310e-17, -2.82762398051658348494e-16, -3.42548561967721913462e-16,
    1.77256013305652638360e-15, 3.81168066935262242075e-15, -9.55484669882830764870e-15,
    -4.15056934728722208663e-14, 1.54008621752140982691e-14, 3.85277838274214270114e-13,
    7.18012445138366623367e-13, -1.79417853150680611778e-12, -1.32158118404477131188e-11,
    -3.14991652796324136454e-11, 1.18891471078464383424e-11, 4.94060238822496958910e-10,
    3.39623202570838634515e-9, 2.26666899049817806459e-8, 2.04891858946906374183e-7,
    2.89137052083475648297e-6, 6.88975834691682398426e-5, 3.36911647825569408990e-3,
    8.04490411014108831608e-1)


def chebyshev(t, coefficients):
    """Clenshaw's recurrence for a Chebyshev series in Cephes' form (highest degree first, half
    the constant term)."""
    b0, b1, b2 = np.full_like(t, coefficients[0]), np.zeros_like(t), np.zeros_like(t)
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = t * b1 - b2 + c
    return (b0 - b2) * 0.5


def bessel_i1e(x):
    """exp(-|x|) I1(x), computed in float64 (Cephes' series)."""
    dtype = np.asarray(x).dtype
    z = np.abs(np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        small = chebyshev(np.minimum(z, 8.0) / 2 - 2, I1E_SMALL) * z
        large = chebyshev(32 / np.maximum(z, 8.0) - 2, I1E_LARGE) / np.sqrt(np.maximum(z, 8.0))
    out = np.where(z <= 8, small, large)
    return np.where(np.isnan(z), z, np.copysign(out, np.asarray(x, np.float64))).astype(dtype)


def polygamma(n, x):
    """The n-th derivative of digamma at x, as XLA computes it: (-1)^(n+1) n! zeta(n + 1, x) for a
    positive integer n, digamma for n = 0, NaN for any other n; in float64."""
    dtype = np.result_type(n, x)
    n, x = np.broadcast_arrays(np.asarray(n, np.float64), np.asarray(x, np.float64))
    with np.errstate(all="ignore"):
        valid = (n == np.floor(n)) & (n >= 0)
        order = np.where(valid, n, 1.0)
        sign = np.where(np.mod(order, 2) == 1, 1.0, -1.0)
        factorial = np.exp(scalar_map(order + 1, np.frompyfunc(_lgamma, 1, 1), np.float64))
        out = sign * factorial * zeta(order + 1, x)
        out = np.where(n == 0, scalar_map(x, np.frompyfunc(digamma, 1, 1), np.float64), out)
    return np.where(valid, out, np.nan).astype(dtype)


def asin_acos_kernel(z):
    """CHLO's `_asin_acos_kernel`: w with asin(z) = atan2(z.real, w.real) + i sign(z.imag) w.imag,
    that is w = Re(sqrt(1 - z^2)) + i |Im(asin(z))|; in complex128."""
    dtype = np.asarray(z).dtype
    z = np.asarray(z, np.complex128)
    with np.errstate(all="ignore"):
        w = np.sqrt(1 - z * z).real + 1j * np.abs(np.arcsin(z).imag)
    return w.astype(dtype)


# The kernel makers of the rows: `ufunc(fn)` is the numpy function itself, on operands of every
# dtype; `float_math(fn)` (above) computes in float32 for f16/bf16 operands.

ufunc = direct


def torch_function(name: str, real_only: bool = False, dtypes: tuple | None = None) -> KernelMaker:
    """`torch.<name>` (dotted: `special.erf`); with `real_only`, complex operands take the numpy
    path, and so do operands of dtypes other than `dtypes` when given."""
    def make(op: Operation) -> Kernel | None:
        import torch  # optional: imported when a torch program is first compiled
        dt = kn.operand_dtype(op)
        if (real_only and dt.kind == "c") or (dtypes is not None and dt not in dtypes):
            return None
        fn: Any = torch
        for part in name.split("."):
            fn = getattr(fn, part)
        return Kernel(fn)
    make.__qualname__ = f"torch_function({name!r})"
    return make


def torch_kernel(maker_name: str) -> KernelMaker:
    """The kernel maker `maker_name` of `loom.ops.elementwise_torch` (semantics torch lacks)."""
    def make(op: Operation) -> Kernel | None:
        from loom.ops import elementwise_torch  # imports torch
        return getattr(elementwise_torch, maker_name)(op)
    make.__qualname__ = f"torch_kernel({maker_name!r})"
    return make


def torch_loom_function(name: str, real_only: bool = False) -> KernelMaker:
    """A function of `loom.ops.elementwise_torch` on tensors (torch has no such function)."""
    def make(op: Operation) -> Kernel | None:
        from loom.ops import elementwise_torch  # imports torch
        if real_only and kn.operand_dtype(op).kind == "c":
            return None
        return Kernel(getattr(elementwise_torch, name))
    make.__qualname__ = f"torch_loom_function({name!r})"
    return make


def on_own_bits(maker: KernelMaker, storage_extra: bool = False) -> KernelMaker:
    """`maker`'s kernel, whose operands, when sub-byte integers (i4 held in int8), are first
    masked to their own bits: so bit counts and logical shifts see the type's width, not the
    storage's. With `storage_extra`, the storage's extra leading bits are subtracted from the
    result (count_leading_zeros). The wrap after every op restores the sign."""
    def make(op: Operation) -> Kernel | None:
        k = maker(op)
        et = subbyte_integer(op.operands[0].type)
        if k is None or et is None:
            return k
        return Kernel(masked_call, (1 << et.width) - 1, 8 - et.width if storage_extra else 0, k, kn.ALL)
    make.__qualname__ = f"on_own_bits({getattr(maker, '__qualname__', maker)})"
    return make


def masked_call(mask: int, extra: int, k: Kernel, *xs: Any) -> Any:
    out = k([x & mask for x in xs])
    return out - extra if extra else out


def arithmetic_shift_of_own_width(maker: KernelMaker) -> KernelMaker:
    """shift_right_arithmetic's kernel, where an unsigned sub-byte operand (ui4 in uint8) shifts in
    copies of its own top bit, as XLA's ui4 does (8 >> 1 is 12)."""
    def make(op: Operation) -> Kernel | None:
        et = subbyte_integer(op.operands[0].type)
        if et is None or not et.is_unsigned:
            return maker(op)
        return Kernel(unsigned_arithmetic_shift, kn.ALL, et.width)
    make.__qualname__ = f"arithmetic_shift_of_own_width({getattr(maker, '__qualname__', maker)})"
    return make


def unsigned_arithmetic_shift(x: Any, s: Any, width: int) -> Any:
    """`x >> s` on `width`-bit patterns held in uint8 (numpy or torch), the top bit copied in:
    with t = 2^(width-1), the signed value is (x ^ t) - t; a shift by width or more is one by
    width - 1 (all copies of the top bit). The wrap after the op masks the result to width bits."""
    top = 1 << (width - 1)
    s = s.clip(0, width - 1)
    return ((x ^ top) >> s) - ((s * 0 + top) >> s)


def saturating_to_subbyte(maker: KernelMaker) -> KernelMaker:
    """convert's kernel, where a float converted to a sub-byte integer saturates at that type's
    bounds (XLA's i4 from 20.0 is 7), not at its storage's."""
    def make(op: Operation) -> Kernel | None:
        k = maker(op)
        et = subbyte_integer(op.results[0].type)
        if k is None or et is None or kn.operand_dtype(op).kind != "f":
            return k
        lo, hi = (0, (1 << et.width) - 1) if et.is_unsigned else (-(1 << (et.width - 1)), (1 << (et.width - 1)) - 1)
        return Kernel(clipped_call, float(lo), float(hi), k, kn.Operand(0))
    make.__qualname__ = f"saturating_to_subbyte({getattr(maker, '__qualname__', maker)})"
    return make


def clipped_call(lo: float, hi: float, k: Kernel, x: Any) -> Any:
    return k([x.clip(lo, hi)])  # NaN stays NaN (and converts to 0)


# --- derivatives ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class At:
    """Where a partial is taken: the op, its operands (broadcast to the result's shape) and result."""

    op: Operation
    xs: list[Value]
    z: Value

    @property
    def x(self) -> Value:
        return self.xs[0]

    @property
    def y(self) -> Value:
        return self.xs[1]


Partial = Callable[[Builder, Value, At], Value]


@dataclass(frozen=True)
class Partials:
    """Per operand, the derivative applied to a tangent (None: that operand has none;
    `unsupported(reason)`: differentiating with respect to it is an error)."""

    of: tuple[Partial | Unsupported | None, ...]


def partials(*of: Partial | Unsupported | None) -> Partials:
    return Partials(of)


def _refuse(transformation: type, name: str, op: Operation, i: int, why: Unsupported) -> Exception:
    return transformation(f"the {name} transformation has no rule for op '{op.name}' with respect to operand {i} "
                          f"(at {op.location}): {why.reason}")


class _Zero:
    def __repr__(self) -> str:
        return "ZERO"


ZERO = _Zero()  # piecewise constant: the derivative is zero everywhere it exists


def _shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape)


def _widen(b: Builder, v: Value, like: Value) -> Value:
    """A scalar operand (select's predicate, clamp's bounds) broadcast to the result's shape."""
    return v if _shape(v) == _shape(like) else stablehlo.broadcast_in_dim(b, v, _shape(like), [])


def _cast(b: Builder, v: Value, like: Value) -> Value:
    """`v` in the element type of `like` (convert's derivative crosses float types)."""
    et = like.type.element_type
    return v if v.type.element_type == et else stablehlo.convert(b, v, et)


def _at(b: Builder, op: Operation, xs: Sequence[Value]) -> At:
    z = op.results[0]
    return At(op, [_widen(b, x, z) for x in xs], z)


def _jvp_rule(derivative: Partials) -> Callable:
    """tangent = sum over operands of partial_i(t_i)."""
    def jvp(b: Builder, op: Operation, xs: list[Value], ts: list[Value | None]) -> list[Value | None]:
        z = op.results[0]
        if not is_float(z.type):
            return [None]
        active = [(d, t) for d, x, t in zip(derivative.of, xs, ts) if d is not None and t is not None
                  and is_float(x.type)]
        for i, (d, t) in enumerate(zip(derivative.of, ts)):
            if isinstance(d, Unsupported) and t is not None:
                raise _refuse(forward_ad.MissingRuleError, forward_ad.TRANSFORMATION, op, i, d)
        if not active:
            return [None]
        at = _at(b, op, xs)
        out = None
        for d, t in active:
            v = _cast(b, d(b, _widen(b, _cast(b, t, z), z), at), z)
            out = v if out is None else stablehlo.add(b, out, v)
        return [out]
    return jvp


def _vjp_rule(derivative: Partials) -> Callable:
    """The transpose of the JVP: operand i gets partial_i(ct), summed back to its shape."""
    def vjp(b: Builder, op: Operation, cts: list[Value | None]) -> list[Value | None]:
        g = cts[0]
        xs = list(op.operands)
        out: list[Value | None] = []
        at = None
        for i, (d, x) in enumerate(zip(derivative.of, xs)):
            if d is None or not is_float(x.type):
                out.append(None)
                continue
            if isinstance(d, Unsupported):
                if autodiff.is_active(x):
                    raise _refuse(autodiff.MissingRuleError, autodiff.TRANSFORMATION, op, i, d)
                out.append(None)
                continue
            at = at or _at(b, op, xs)
            v = _cast(b, d(b, _cast(b, g, at.z), at), x)
            if _shape(v) != _shape(x):
                v = reduce_sum(b, v, list(range(len(_shape(v)))))
            out.append(v)
        return out
    return vjp


def _zero_jvp(b: Builder, op: Operation, xs: list, ts: list) -> list[None]:
    return [None] * len(op.results)


def _zero_vjp(b: Builder, op: Operation, cts: list) -> list[None]:
    return [None] * len(op.operands)


# helpers for the partials below
def _c(b: Builder, value: float, like: Value) -> Value:
    return full_like(b, value, like)


def _mul(b: Builder, x: Value, y: Value) -> Value:
    return stablehlo.multiply(b, x, y)


def _div(b: Builder, x: Value, y: Value) -> Value:
    return stablehlo.divide(b, x, y)


def _neg(b: Builder, x: Value) -> Value:
    return stablehlo.negate(b, x)


def _chlo(b: Builder, cls: type, x: Value) -> Value:
    return cls.build(b, x).results[0]


def _where(b: Builder, pred: Value, on_true: Value, on_false: Value) -> Value:
    return stablehlo.select(b, pred, on_true, on_false)


def _cmp(b: Builder, x: Value, y: Value, direction: str) -> Value:
    return stablehlo.compare(b, x, y, direction)


def _balanced_eq(b: Builder, x: Value, z: Value, y: Value) -> Value:
    """1 where x == z != y, 0.5 where x == z == y, else 0 (JAX's tie splitting for max / min)."""
    inner = _where(b, _cmp(b, y, z, "EQ"), _c(b, 0.5, z), _c(b, 1, z))
    return _where(b, _cmp(b, x, z, "EQ"), inner, _c(b, 0, z))


def _power_x(b: Builder, g: Value, a: At) -> Value:
    """As JAX: y * x^(y-1), 0 where y == 0 (an integer exponent converted to x's type)."""
    x, y = a.xs
    y = _cast(b, y, x)
    dx = _mul(b, y, stablehlo.power(b, x, stablehlo.subtract(b, y, _c(b, 1, y))))
    return _mul(b, g, _where(b, _cmp(b, y, _c(b, 0, y), "EQ"), _c(b, 0, x), dx))


def _power_y(b: Builder, g: Value, a: At) -> Value:
    """As JAX: z * log(x), with log(1) where x == 0."""
    x = a.x
    safe_x = _where(b, _cmp(b, x, _c(b, 0, x), "EQ"), _c(b, 1, x), x)
    return _mul(b, g, _mul(b, a.z, stablehlo.log(b, safe_x)))


def _truncated_quotient(b: Builder, x: Value, y: Value) -> Value:
    q = _div(b, x, y)
    return _mul(b, stablehlo.sign(b, q), stablehlo.floor(b, stablehlo.abs_(b, q)))


def _atan2_denominator(b: Builder, a: At) -> Value:
    y, x = a.xs
    return stablehlo.add(b, _mul(b, x, x), _mul(b, y, y))


def _clamp_lo(b: Builder, g: Value, a: At) -> Value:
    """As JAX: the lower bound's tangent where it is active (and below the upper bound)."""
    lo, x, hi = a.xs
    active = stablehlo.and_(b, _cmp(b, lo, x, "GT"), _cmp(b, lo, hi, "LT"))
    return _where(b, active, g, _c(b, 0, g))


def _clamp_x(b: Builder, g: Value, a: At) -> Value:
    lo, x, hi = a.xs
    inside = stablehlo.and_(b, _cmp(b, x, lo, "GT"), _cmp(b, x, hi, "LT"))
    return _where(b, inside, g, _c(b, 0, g))


def _clamp_hi(b: Builder, g: Value, a: At) -> Value:
    lo, x, hi = a.xs
    return _where(b, _cmp(b, hi, x, "LT"), g, _c(b, 0, g))


def _gaussian(b: Builder, x: Value, scale: float) -> Value:
    """scale * exp(-x**2)."""
    return _mul(b, _c(b, scale, x), stablehlo.exponential(b, _neg(b, _mul(b, x, x))))


def _rsqrt(b: Builder, x: Value) -> Value:
    return stablehlo.rsqrt(b, x)


def _same_op(b: Builder, g: Value, a: At) -> Value:
    """The op itself on the tangent (a linear op with attributes: reduce_precision)."""
    return b.insert(a.op.clone({a.op.operands[0]: g})).results[0]


def _identity(b: Builder, g: Value, a: At) -> Value:
    return g


def _chebyshev(b: Builder, t: Value, coefficients: Sequence[float]) -> Value:
    """`chebyshev` in IR."""
    b0, b1, b2 = _c(b, coefficients[0], t), _c(b, 0, t), _c(b, 0, t)
    for k in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = stablehlo.add(b, stablehlo.subtract(b, _mul(b, t, b1), b2), _c(b, k, t))
    return _mul(b, stablehlo.subtract(b, b0, b2), _c(b, 0.5, t))


def _bessel_i0e(b: Builder, x: Value) -> Value:
    """exp(-|x|) I0(x) in IR, as JAX's bessel_i0e: Cephes' series, their float32 terms below
    float64, f16 / bf16 computed in float32."""
    et = x.type.element_type
    wide = isinstance(et, FloatType) and et.width == 64
    work = x if wide or (isinstance(et, FloatType) and et.width == 32) else stablehlo.convert(b, x, f32)
    z = stablehlo.abs_(b, work)
    small = _chebyshev(b, stablehlo.subtract(b, _mul(b, z, _c(b, 0.5, z)), _c(b, 2, z)),
                       I0E_SMALL if wide else I0E_SMALL[12:])
    large = _div(b, _chebyshev(b, stablehlo.subtract(b, _div(b, _c(b, 32, z), z), _c(b, 2, z)),
                               I0E_LARGE if wide else I0E_LARGE[18:]), stablehlo.sqrt(b, z))
    out = _where(b, _cmp(b, z, _c(b, 8, z), "LE"), small, large)
    return _cast(b, out, x)


def _bessel_i1e_x(b: Builder, g: Value, a: At) -> Value:
    """As JAX: i0e(x) - i1e(x) (sign(x) + 1 / x), 0.5 where |x| is below the type's epsilon."""
    x, y = a.x, a.z
    eps = float(ml_dtypes.finfo(common.dtype_of(x.type)).eps)
    not_tiny = _cmp(b, stablehlo.abs_(b, x), _c(b, eps, x), "GT")
    safe_x = _where(b, not_tiny, x, _c(b, eps, x))
    slope = stablehlo.add(b, stablehlo.sign(b, safe_x), _div(b, _c(b, 1, x), safe_x))
    dy = stablehlo.subtract(b, _bessel_i0e(b, safe_x), _mul(b, y, slope))
    return _mul(b, g, _where(b, not_tiny, dy, _c(b, 0.5, x)))


def _polygamma(b: Builder, n: Value, x: Value) -> Value:
    return C.PolygammaOp.build(b, n, x).results[0]


NO_COMPLEX = unsupported("complex values are not differentiated (no complex tangent or cotangent)")


# Hurwitz zeta (numpy has none): Euler-Maclaurin summation, as Cephes and XLA compute it.
_ZETA_TERMS = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
               -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
               1.8152105401943546773e17, -7.1661652561756670113e18)


def hurwitz_zeta(x: float, q: float) -> float:
    """zeta(x, q) = sum over k >= 0 of (k + q)^-x, for x > 1 (NaN below, inf at x = 1 and at q a
    non-positive integer)."""
    if x == 1.0:
        return math.inf
    if x < 1.0 or math.isnan(x) or math.isnan(q):
        return math.nan
    if q <= 0.0:
        if q == math.floor(q):
            return math.inf
        if x != math.floor(x):
            return math.nan  # q^-x is not real
    if q > 1e8:  # the asymptotic expansion (DLMF 25.11.43)
        return (1 / (x - 1) + 1 / (2 * q)) * q ** (1 - x)
    eps = 2.0 ** -53
    s, a, b, i = q ** -x, q, 0.0, 0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if abs(b / s) < eps:
            return s
    w = a
    s += b * w / (x - 1.0) - 0.5 * b
    factor, k = 1.0, 0.0
    for term in _ZETA_TERMS:
        factor *= x + k
        b /= w
        t = factor * b / term
        s += t
        if abs(t / s) < eps:
            return s
        k += 1.0
        factor *= x + k
        b /= w
        k += 1.0
    return s


_hurwitz_zeta = np.frompyfunc(hurwitz_zeta, 2, 1)


def zeta(x, q):
    """Elementwise `hurwitz_zeta`, computed in float64."""
    dtype = np.result_type(x, q)
    return np.asarray(_hurwitz_zeta(np.asarray(x, np.float64), np.asarray(q, np.float64)), np.float64).astype(dtype)


# --- the table -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    op: type
    numpy: KernelMaker | Unsupported
    torch: KernelMaker | Unsupported | None
    derivative: Partials | _Zero | Unsupported
    lax: str | None = None
    lnp: str | None = None
    # The dtype kinds (numpy's letters: b, i, u, f, c) the `lax` binding accepts, where jax.lax's
    # differ from the op's own minus complex (the front end does not differentiate complex values).
    lax_dtypes: str | None = None

    @property
    def name(self) -> str:
        return self.op.name


S, C = stablehlo, chlo
OPS: list[Row] = [
    # StableHLO, unary
    Row(S.AbsOp, ufunc(np.abs), torch_kernel("abs_kernel"),
        partials(lambda b, g, a: _mul(b, g, stablehlo.sign(b, a.x))), "abs", "abs"),
    Row(S.NegOp, ufunc(np.negative), torch_function("neg"), partials(lambda b, g, a: _neg(b, g)), "neg", "negative"),
    Row(S.SignOp, ufunc(sign), torch_kernel("sign_kernel"), ZERO, "sign", "sign"),
    Row(S.FloorOp, ufunc(np.floor), torch_function("floor", real_only=True), ZERO, "floor", "floor"),
    Row(S.CeilOp, ufunc(np.ceil), torch_function("ceil", real_only=True), ZERO, "ceil", "ceil"),
    Row(S.RoundNearestEvenOp, ufunc(np.rint), torch_function("round", real_only=True), ZERO, "round", "rint"),
    Row(S.RoundOp, float_math(round_nearest_afz), torch_loom_function("round_nearest_afz", True), ZERO,
        "round", None),
    Row(S.IsFiniteOp, ufunc(np.isfinite), torch_function("isfinite"), ZERO, "is_finite", "isfinite"),
    Row(S.NotOp, ufunc(np.invert), torch_function("bitwise_not"), ZERO, "bitwise_not", "invert"),
    Row(S.PopulationCountOp, on_own_bits(ufunc(popcnt)), on_own_bits(torch_loom_function("popcnt")), ZERO,
        "population_count", "bitwise_count"),
    Row(S.CountLeadingZerosOp, on_own_bits(ufunc(count_leading_zeros), True),
        on_own_bits(torch_loom_function("count_leading_zeros"), True), ZERO,
        "clz", None),
    Row(S.ExponentialOp, float_math(np.exp), torch_function("exp"), partials(lambda b, g, a: _mul(b, g, a.z)),
        "exp", "exp"),
    Row(S.ExponentialMinusOneOp, float_math(np.expm1), torch_function("expm1", real_only=True),
        partials(lambda b, g, a: _mul(b, g, stablehlo.add(b, a.z, _c(b, 1, a.z)))), "expm1", "expm1"),
    Row(S.LogOp, float_math(np.log), torch_function("log"), partials(lambda b, g, a: _div(b, g, a.x)), "log", "log"),
    Row(S.LogPlusOneOp, float_math(np.log1p), torch_function("log1p", real_only=True),
        partials(lambda b, g, a: _div(b, g, stablehlo.add(b, a.x, _c(b, 1, a.x)))), "log1p", "log1p"),
    Row(S.LogisticOp, float_math(logistic), torch_function("sigmoid", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _mul(b, a.z, stablehlo.subtract(b, _c(b, 1, a.z), a.z)))),
        "logistic", None),
    Row(S.TanhOp, float_math(np.tanh), torch_function("tanh"),
        partials(lambda b, g, a: _mul(b, g, stablehlo.subtract(b, _c(b, 1, a.z), _mul(b, a.z, a.z)))),
        "tanh", "tanh"),
    Row(S.SineOp, float_math(np.sin), torch_function("sin"),
        partials(lambda b, g, a: _mul(b, g, stablehlo.cosine(b, a.x))), "sin", "sin"),
    Row(S.CosineOp, float_math(np.cos), torch_function("cos"),
        partials(lambda b, g, a: _neg(b, _mul(b, g, stablehlo.sine(b, a.x)))), "cos", "cos"),
    Row(S.TanOp, float_math(np.tan), torch_function("tan"),
        partials(lambda b, g, a: _mul(b, g, stablehlo.add(b, _c(b, 1, a.z), _mul(b, a.z, a.z)))), "tan", "tan"),
    Row(S.SqrtOp, float_math(np.sqrt), torch_function("sqrt"),
        partials(lambda b, g, a: _div(b, g, _mul(b, a.z, _c(b, 2, a.z)))), "sqrt", "sqrt"),
    Row(S.RsqrtOp, float_math(rsqrt), torch_function("rsqrt"),
        partials(lambda b, g, a: _mul(b, g, _mul(b, _div(b, a.z, a.x), _c(b, -0.5, a.z)))), "rsqrt", None),
    Row(S.CbrtOp, float_math(np.cbrt), torch_loom_function("cbrt", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _div(b, _c(b, 1, a.z), _mul(b, _c(b, 3, a.z), _mul(b, a.z, a.z))))),
        "cbrt", "cbrt"),
    Row(S.RealOp, ufunc(np.real), torch_kernel("real_imag_kernel"), NO_COMPLEX, "real", "real", "c"),
    Row(S.ImagOp, ufunc(np.imag), torch_kernel("real_imag_kernel"), NO_COMPLEX, "imag", "imag", "c"),
    Row(S.ConvertOp, saturating_to_subbyte(convert_kernel), saturating_to_subbyte(torch_kernel("convert_kernel")),
        partials(_identity), "convert_element_type",
        "astype"),
    Row(S.ReducePrecisionOp, reduce_precision_kernel, torch_kernel("reduce_precision_kernel"),
        partials(_same_op), "reduce_precision", None),
    # StableHLO, binary and ternary
    Row(S.AddOp, ufunc(np.add), torch_function("add"), partials(_identity, _identity), "add", "add", "fiu"),
    Row(S.SubtractOp, ufunc(np.subtract), torch_function("sub"),
        partials(_identity, lambda b, g, a: _neg(b, g)), "sub", "subtract"),
    Row(S.MulOp, ufunc(np.multiply), torch_function("mul"),
        partials(lambda b, g, a: _mul(b, g, a.y), lambda b, g, a: _mul(b, g, a.x)), "mul", "multiply", "fiu"),
    Row(S.DivOp, divide_kernel, torch_kernel("divide_kernel"),
        partials(lambda b, g, a: _div(b, g, a.y), lambda b, g, a: _neg(b, _div(b, _mul(b, g, a.z), a.y))),
        "div", "true_divide"),
    Row(S.RemOp, remainder_kernel, torch_kernel("remainder_kernel"),
        partials(_identity, lambda b, g, a: _neg(b, _mul(b, g, _truncated_quotient(b, a.x, a.y)))), "rem", "fmod"),
    Row(S.PowOp, power_kernel, torch_kernel("power_kernel"), partials(_power_x, _power_y), "pow", "power", "f"),
    Row(S.MaxOp, ufunc(np.maximum), torch_function("maximum", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _balanced_eq(b, a.x, a.z, a.y)),
                 lambda b, g, a: _mul(b, g, _balanced_eq(b, a.y, a.z, a.x))), "max", "maximum"),
    Row(S.MinOp, ufunc(np.minimum), torch_function("minimum", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _balanced_eq(b, a.x, a.z, a.y)),
                 lambda b, g, a: _mul(b, g, _balanced_eq(b, a.y, a.z, a.x))), "min", "minimum"),
    Row(S.Atan2Op, float_math(np.arctan2), torch_function("atan2", real_only=True),
        partials(lambda b, g, a: _div(b, _mul(b, g, a.xs[1]), _atan2_denominator(b, a)),
                 lambda b, g, a: _neg(b, _div(b, _mul(b, g, a.xs[0]), _atan2_denominator(b, a)))),
        "atan2", "arctan2"),
    Row(S.AndOp, ufunc(np.bitwise_and), torch_function("bitwise_and"), ZERO, "bitwise_and", "bitwise_and"),
    Row(S.OrOp, ufunc(np.bitwise_or), torch_function("bitwise_or"), ZERO, "bitwise_or", "bitwise_or"),
    Row(S.XorOp, ufunc(np.bitwise_xor), torch_function("bitwise_xor"), ZERO, "bitwise_xor", "bitwise_xor"),
    Row(S.ShiftLeftOp, ufunc(shift_left), torch_kernel("shift_kernel"), ZERO, "shift_left", "left_shift"),
    Row(S.ShiftRightArithmeticOp, arithmetic_shift_of_own_width(ufunc(shift_right_arithmetic)),
        arithmetic_shift_of_own_width(torch_kernel("shift_kernel")), ZERO,
        "shift_right_arithmetic", "right_shift"),
    Row(S.ShiftRightLogicalOp, on_own_bits(ufunc(shift_right_logical)), on_own_bits(torch_kernel("shift_kernel")),
        ZERO, "shift_right_logical", None),
    Row(S.CompareOp, compare_kernel, torch_kernel("compare_kernel"), ZERO, None, None),
    Row(S.ComplexOp, complex_kernel, torch_function("complex"), NO_COMPLEX, "complex", None, "f"),
    Row(S.SelectOp, ufunc(np.where), torch_function("where"),
        partials(None, lambda b, g, a: _where(b, a.x, g, _c(b, 0, g)), lambda b, g, a: _where(b, a.x, _c(b, 0, g), g)),
        "select", "where"),
    Row(S.ClampOp, ufunc(clamp), torch_loom_function("clamp", real_only=True),
        partials(_clamp_lo, _clamp_x, _clamp_hi), "clamp", "clip"),
    # CHLO
    Row(C.SinhOp, float_math(np.sinh), torch_function("sinh", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _chlo(b, C.CoshOp, a.x))), "sinh", "sinh"),
    Row(C.CoshOp, float_math(np.cosh), torch_function("cosh", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _chlo(b, C.SinhOp, a.x))), "cosh", "cosh"),
    Row(C.TanOp, float_math(np.tan), torch_function("tan", real_only=True),
        partials(lambda b, g, a: _mul(b, g, stablehlo.add(b, _c(b, 1, a.z), _mul(b, a.z, a.z)))), None, None),
    Row(C.AsinOp, float_math(np.arcsin), torch_function("asin", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _rsqrt(b, stablehlo.subtract(b, _c(b, 1, a.x), _mul(b, a.x, a.x))))),
        "asin", "arcsin"),
    Row(C.AcosOp, float_math(np.arccos), torch_function("acos", real_only=True),
        partials(lambda b, g, a: _neg(b, _mul(b, g, _rsqrt(b, stablehlo.subtract(b, _c(b, 1, a.x),
                                                                                  _mul(b, a.x, a.x)))))),
        "acos", "arccos"),
    Row(C.AtanOp, float_math(np.arctan), torch_function("atan", real_only=True),
        partials(lambda b, g, a: _div(b, g, stablehlo.add(b, _c(b, 1, a.x), _mul(b, a.x, a.x)))), "atan", "arctan"),
    Row(C.AsinhOp, float_math(np.arcsinh), torch_function("asinh", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _rsqrt(b, stablehlo.add(b, _mul(b, a.x, a.x), _c(b, 1, a.x))))),
        "asinh", "arcsinh"),
    Row(C.AcoshOp, float_math(np.arccosh), torch_function("acosh", real_only=True),
        partials(lambda b, g, a: _mul(b, g, _rsqrt(b, _mul(b, stablehlo.subtract(b, a.x, _c(b, 1, a.x)),
                                                          stablehlo.add(b, a.x, _c(b, 1, a.x)))))),
        "acosh", "arccosh"),
    Row(C.AtanhOp, float_math(np.arctanh), torch_function("atanh", real_only=True),
        partials(lambda b, g, a: _div(b, g, stablehlo.subtract(b, _c(b, 1, a.x), _mul(b, a.x, a.x)))),
        "atanh", "arctanh"),
    Row(C.SquareOp, ufunc(square), ufunc(square),  # x * x: the same function on tensors
        partials(lambda b, g, a: _mul(b, g, _mul(b, _c(b, 2, a.x), a.x))), "square", "square"),
    Row(C.IsInfOp, ufunc(is_inf), torch_function("isinf"), ZERO, None, "isinf"),
    Row(C.IsPosInfOp, ufunc(is_pos_inf), torch_function("isposinf"), ZERO, None, "isposinf"),
    Row(C.IsNegInfOp, ufunc(is_neg_inf), torch_function("isneginf"), ZERO, None, "isneginf"),
    Row(C.NextAfterOp, ufunc(np.nextafter), torch_kernel("next_after_kernel"),
        unsupported("next_after steps to a neighbouring float: no derivative"), "nextafter", "nextafter"),
    Row(C.ConjOp, ufunc(np.conjugate), torch_kernel("conj_kernel"),
        partials(lambda b, g, a: _chlo(b, C.ConjOp, g)), "conj", "conjugate", "fc"),
    Row(C.ErfOp, special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _gaussian(b, a.x, 2 / math.sqrt(math.pi)))), "erf", None),
    Row(C.ErfcOp, special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _gaussian(b, a.x, -2 / math.sqrt(math.pi)))), "erfc", None),
    Row(C.ErfInvOp, special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _mul(b, _c(b, math.sqrt(math.pi) / 2, a.z),
                                                 stablehlo.exponential(b, _mul(b, a.z, a.z))))), "erf_inv", None),
    Row(C.LgammaOp, special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _chlo(b, C.DigammaOp, a.x))), "lgamma", None),
    Row(C.DigammaOp, special_kernel, torch_kernel("special_kernel"),
        partials(lambda b, g, a: _mul(b, g, _polygamma(b, _c(b, 1, a.x), a.x))), "digamma", None),
    Row(C.PolygammaOp, ufunc(polygamma), None,
        partials(unsupported("the derivative in the order n is not computed (nor by JAX)"),
                 lambda b, g, a: _mul(b, g, _polygamma(b, stablehlo.add(b, a.x, _c(b, 1, a.x)), a.y)))),
    Row(C.BesselI1eOp, ufunc(bessel_i1e),
        torch_function("special.i1e", dtypes=(np.dtype(np.float32), np.dtype(np.float64))),
        partials(_bessel_i1e_x)),
    Row(C.MulhiOp, mulhi_kernel, torch_kernel("mulhi_kernel"), ZERO),
    Row(C.AsinAcosKernelOp, ufunc(asin_acos_kernel), None, NO_COMPLEX),
    Row(C.ZetaOp, ufunc(zeta), torch_function("special.zeta", dtypes=(np.dtype(np.float32), np.dtype(np.float64))),
        partials(unsupported("the derivative in x is not computed (nor by JAX)"),
                 lambda b, g, a: _neg(b, _mul(b, g, _mul(b, a.x, C.ZetaOp.build(
                     b, stablehlo.add(b, a.x, _c(b, 1, a.x)), a.y).results[0])))), "zeta", None),
]

# The implicitly broadcasting binary ops: JAX's exporter may emit them; loom's front end emits the
# stablehlo op after explicit broadcasts.
declare([name for name in chlo.DIALECT.ops if name.startswith("chlo.broadcast_")],
        unsupported("parsed and printed only: loom's front end broadcasts explicitly and emits the stablehlo op"))


def _install(row: Row) -> None:
    name = row.name
    if not isinstance(row.numpy, Unsupported):
        register(KERNELS, name, row.numpy)
    if row.torch is not None and not isinstance(row.torch, Unsupported):
        register(TORCH_KERNELS, name, row.torch)
    elif row.torch is None:
        declare(name, unsupported("runs its numpy kernel on the tensors' values"), tables=("torch",))
    d = row.derivative
    if isinstance(d, Unsupported):
        declare(name, d, tables=("jvp", "vjp"))
    elif d is ZERO:
        register(JVP_RULES, name, _zero_jvp)
        register(VJP_RULES, name, _zero_vjp)
    else:
        register(JVP_RULES, name, _jvp_rule(d))
        register(VJP_RULES, name, _vjp_rule(d))


for _row in OPS:
    _install(_row)

# Batching from the trait: every op that has it, with a row or not, batches elementwise.
for _dialect in (stablehlo.DIALECT, chlo.DIALECT):
    for _name, _cls in _dialect.ops.items():
        if _cls.definition is not None and stablehlo.Elementwise in _cls.definition.trait_set:
            register(BATCH_RULES, _name, elementwise_rule)

ROWS: dict[str, Row] = {row.name: row for row in OPS}

__all__ = ["OPS", "ROWS", "ZERO", "At", "Partials", "Row", "float_math", "partials", "torch_function",
           "torch_kernel", "torch_loom_function", "ufunc"]
