"""The elementwise rows' torch kernels that torch lacks as one function (imported with torch, when a
row of `loom.ops.elementwise` first makes its torch kernel): StableHLO's integer division and
shifts, comparisons in total order, bit counts, reduce_precision, saturating conversions, the
special functions."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import torch

from loom.backend import common
from loom.backend.kernels import Kernel, Operand, identity, operand_dtype, result_dtype
from loom.backend.torch_kernels import (
    COMPARE,
    LOW_FLOATS,
    TorchKernelMaker,
    integer_power,
    torch_dtype,
    total_order_key,
)
from loom.ir.core import Operation


def _is_complex(op: Operation, i: int = 0) -> bool:
    return operand_dtype(op, i).kind == "c"


def real_only(fn: Callable) -> TorchKernelMaker:
    """A kernel for real operands; complex ones take the numpy path."""
    return lambda op: None if _is_complex(op) else Kernel(fn)


def real_imag_kernel(op: Operation) -> Kernel | None:
    if not _is_complex(op):
        return None
    return Kernel(real if op.name.endswith("real") else imag)


def real(x):
    return torch.real(x).clone()


def imag(x):
    return torch.imag(x).clone()


def conj_kernel(op: Operation) -> Kernel:
    return Kernel(torch.conj_physical) if _is_complex(op) else Kernel(identity)


def next_after_kernel(op: Operation) -> Kernel | None:
    return Kernel(torch.nextafter) if operand_dtype(op).kind == "f" else None


def abs_kernel(op: Operation) -> Kernel | None:
    return None if operand_dtype(op) == np.bool_ else Kernel(torch.abs)


def cbrt(x):
    return torch.sign(x) * torch.abs(x).pow(1.0 / 3.0)


def sign(x):
    """sign with sign(+-0) = +-0 and sign(NaN) = NaN."""
    return torch.where(x == 0, x, torch.where(torch.isnan(x), x, torch.sign(x))) if x.is_floating_point() \
        else torch.sign(x)


def sign_kernel(op: Operation) -> Kernel:
    return Kernel(torch.sgn) if _is_complex(op) else Kernel(sign)


def round_nearest_afz(x):
    t = torch.trunc(x)
    return torch.where(torch.abs(x - t) >= 0.5, t + torch.sign(x), t)


def _minus_one(dt: np.dtype) -> int:
    return int(np.array(-1).astype(dt))


def divide_kernel(op: Operation) -> Kernel:
    dt = result_dtype(op)
    if dt.kind in "iu":
        low = int(np.iinfo(dt).min) if dt.kind == "i" else None
        return Kernel(integer_divide, Operand(0), Operand(1), _minus_one(dt), low)
    return Kernel(torch.div)


def _safe_divisor(a, b, low):
    zero = b == 0
    safe = torch.where(zero, torch.ones_like(b), b)
    if low is not None:
        safe = torch.where((a == low) & (b == -1), torch.ones_like(b), safe)
    return zero, safe


def integer_divide(a, b, minus_one, low):
    """Truncating division; x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN (divided by 1 instead)."""
    zero, safe = _safe_divisor(a, b, low)
    return torch.where(zero, minus_one, torch.div(a, safe, rounding_mode="trunc"))


def integer_remainder(a, b, low):
    """Remainder with the dividend's sign; x%0 = x, INT_MIN%-1 = 0."""
    zero, safe = _safe_divisor(a, b, low)
    return torch.where(zero, a, torch.fmod(a, safe))


def in_f32(fn: Callable) -> Callable:
    def low_precision(*xs):
        return fn(*(x.float() for x in xs)).to(xs[0].dtype)
    low_precision.__name__ = f"{fn.__name__}_in_f32"
    return low_precision


def remainder_kernel(op: Operation) -> Kernel | None:
    dt = result_dtype(op)
    if dt.kind in "iu":
        return Kernel(integer_remainder, Operand(0), Operand(1), int(np.iinfo(dt).min) if dt.kind == "i" else None)
    if dt.kind == "c":
        return None
    if torch_dtype(dt) in LOW_FLOATS:
        return Kernel(fmod_in_f32)
    return Kernel(torch.fmod)


fmod_in_f32 = in_f32(torch.fmod)


def power_kernel(op: Operation) -> Kernel | None:
    dt = result_dtype(op)
    if dt == np.bool_:
        return None
    if dt.kind in "iu":
        return Kernel(integer_power, Operand(0), Operand(1), dt.itemsize * 8, dt.kind == "i")
    return Kernel(torch.pow)



# Shifts: amounts are read as unsigned (a negative amount is a huge one).
def shift_kernel(op: Operation) -> Kernel | None:
    dt = operand_dtype(op)
    if dt.kind not in "iu":
        return None
    bits = dt.itemsize * 8
    fn = {"stablehlo.shift_left": shift_left, "stablehlo.shift_right_logical": shift_right_logical,
          "stablehlo.shift_right_arithmetic": shift_right_arithmetic}[op.name]
    return Kernel(fn, Operand(0), Operand(1), bits)


def _big_shift(s, bits):
    return (s < 0) | (s >= bits) if s.dtype != torch.uint8 else s >= bits


def shift_left(a, s, bits):
    big = _big_shift(s, bits)
    return torch.where(big, 0, torch.bitwise_left_shift(a, torch.where(big, 0, s)))


def shift_right_arithmetic(a, s, bits):
    big = _big_shift(s, bits)
    if a.dtype == torch.uint8:  # the bits as signed, as XLA shifts them
        amount = torch.where(big, bits - 1, s).view(torch.int8)
        return torch.bitwise_right_shift(a.view(torch.int8), amount).view(torch.uint8)
    return torch.bitwise_right_shift(a, torch.where(big, bits - 1, s))


def shift_right_logical(a, s, bits):
    big = _big_shift(s, bits)
    amount = torch.where(big, 0, s)
    if a.dtype == torch.uint8:
        return torch.where(big, 0, torch.bitwise_right_shift(a, amount))
    # Signed: shift arithmetically, then clear the copies of the sign bit. The mask
    # (1 << (bits - amount)) - 1 wraps to all ones' complement correctly for amount >= 1.
    one = torch.ones((), dtype=a.dtype, device=a.device)
    mask = torch.bitwise_left_shift(one, torch.clamp(bits - amount, max=bits - 1).to(a.dtype)) - 1
    shifted = torch.bitwise_right_shift(a, amount) & mask
    return torch.where(big, 0, torch.where(amount == 0, a, shifted))


def clamp(lo, x, hi):
    return torch.minimum(torch.maximum(x, lo), hi)



def compare_total_order(a, b, fn):
    return fn(total_order_key(a), total_order_key(b))


def compare_kernel(op: Operation) -> Kernel | None:
    direction = common.enum(op.get_attr("comparison_direction"))
    compare_type = common.enum(op.get_attr("compare_type"), "")
    fn = COMPARE[direction]
    dt = operand_dtype(op)
    if dt.kind == "c" and direction not in ("EQ", "NE"):
        return None
    if compare_type == "TOTALORDER" and dt.kind in "fV":
        return Kernel(compare_total_order, Operand(0), Operand(1), fn)
    return Kernel(fn)


# Bit counts --------------------------------------------------------------------------------------
# torch has no popcount or count-leading-zeros; both are built from shifts and masks on the
# operand's own width (unsigned 16/32/64-bit operands arrive as their signed views).

def _wrap(value: int, bits: int) -> int:
    """`value` modulo 2**bits as the signed integer of that width (a literal torch accepts)."""
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _repeat_byte(byte: int, nbytes: int) -> int:
    return int.from_bytes(bytes([byte]) * nbytes, "little")


def popcnt(x):
    """Set bits per element (SWAR: per 2 bits, per nibble, then the bytes summed). Arithmetic
    shifts of negative values are harmless: every mask clears the bits they copy in."""
    bits = x.element_size() * 8
    nbytes = bits // 8
    m1, m2, m4 = (_wrap(_repeat_byte(b, nbytes), bits) for b in (0x55, 0x33, 0x0F))
    x = x - ((x >> 1) & m1)
    x = (x & m2) + ((x >> 2) & m2)
    x = (x + (x >> 4)) & m4  # each byte now holds its count (<= 8): every value is non-negative
    shift = 8
    while shift < bits:
        x = x + (x >> shift)
        shift *= 2
    return x & 0x7F


def count_leading_zeros(x):
    """Leading zero bits per element: a binary search for the highest set bit of the
    non-negative values (where arithmetic and logical shifts agree); negative ones have none."""
    bits = x.element_size() * 8
    signed = x.dtype != torch.uint8
    v = torch.where(x < 0, 0, x) if signed else x
    length = torch.zeros_like(x)
    k = bits // 2
    while k >= 1:
        high = (v >> k) != 0
        length = torch.where(high, length + k, length)
        v = torch.where(high, v >> k, v)
        k //= 2
    length = length + (v != 0).to(x.dtype)
    clz = bits - length
    return torch.where(x < 0, 0, clz) if signed else clz


# reduce_precision ------------------------------------------------------------------------------

_FLOAT_BITS = {torch.float16: (torch.int16, 5, 10), torch.bfloat16: (torch.int16, 8, 7),
               torch.float32: (torch.int32, 8, 23), torch.float64: (torch.int64, 11, 52)}


def reduce_precision_kernel(op: Operation) -> Kernel | None:
    dt = operand_dtype(op)
    if dt.kind not in "fV":
        return None
    return Kernel(reduce_precision, Operand(0), common.integer(op.get_attr("exponent_bits")),
                  common.integer(op.get_attr("mantissa_bits")))


def reduce_precision(x, exponent_bits: int, mantissa_bits: int):
    """Round to a float format with the given exponent and mantissa widths as XLA does, on the
    operand's own bits (so float16 subnormals round where their bits are): the mantissa rounds
    to nearest even; exponents above the format's range give inf, at or below its minimum (its
    subnormals included) a signed zero; NaN is returned unchanged."""
    if x.dtype == torch.bfloat16:
        return _reduce_precision_bf16(x, exponent_bits, mantissa_bits)
    int_type, src_exp, src_mant = _FLOAT_BITS[x.dtype]
    bits = 1 + src_exp + src_mant
    if mantissa_bits >= src_mant and exponent_bits >= src_exp:
        return x.clone()  # a no-op XLA removes
    u = x.contiguous().view(int_type)
    if mantissa_bits < src_mant:
        drop = src_mant - mantissa_bits
        last = (u >> drop) & 1
        bias = last + ((1 << (drop - 1)) - 1)
        u = (u + bias) & _wrap(~((1 << drop) - 1), bits)
    if exponent_bits < src_exp:
        exp_mask = ((1 << src_exp) - 1) << src_mant
        src_bias = (1 << (src_exp - 1)) - 1
        dst_bias = (1 << (exponent_bits - 1)) - 1
        exponent = u & exp_mask
        signs = u & _wrap(1 << (bits - 1), bits)
        u = torch.where(exponent > (src_bias + dst_bias) << src_mant, signs | exp_mask,
                        torch.where(exponent <= (src_bias - dst_bias) << src_mant, signs, u))
    return torch.where(torch.isnan(x), x, u.view(x.dtype))


def _reduce_precision_bf16(x, exponent_bits: int, mantissa_bits: int):
    """XLA computes bfloat16 in float32 and converts the result back (rounding bfloat16
    subnormals a second time, and leaving each NaN the quiet NaN of its sign); so does this."""
    if mantissa_bits >= 23 and exponent_bits >= 8:
        return x.clone()  # a no-op on float32, which XLA removes: NaN payloads stay
    out = reduce_precision(x.float(), exponent_bits, mantissa_bits).to(torch.bfloat16)
    quiet = (x.view(torch.int16) & _wrap(0x8000, 16)) | 0x7FC0  # torch's conversion drops the sign
    return torch.where(torch.isnan(x), quiet.view(torch.bfloat16), out)


# Conversions ---------------------------------------------------------------------------------

def convert_kernel(op: Operation) -> Kernel | None:
    src, dst = operand_dtype(op), result_dtype(op)
    if src == dst:
        return Kernel(identity)
    if src.kind in "fVc" and dst.kind in "iu":
        info = np.iinfo(dst)
        return Kernel(convert_complex_to_int if src.kind == "c" else convert_float_to_int, Operand(0),
                      torch_dtype(dst), float(2 ** (info.bits - (1 if info.min < 0 else 0))), float(info.min),
                      int(info.max), int(info.min))
    if src.kind == "c" and dst.kind != "c":  # the real part, as the numpy kernel converts
        return Kernel(complex_to_bool) if dst == np.bool_ else Kernel(complex_to_float, Operand(0), torch_dtype(dst))
    if dst == np.bool_:
        return Kernel(convert_to_bool)
    return Kernel(convert_plain, Operand(0), torch_dtype(dst))


def convert_plain(x, dtype):
    return x.to(dtype)


def convert_to_bool(x):
    return x != 0


def complex_to_bool(x):
    return torch.real(x) != 0


def complex_to_float(x, dtype):
    return torch.real(x).to(dtype)


def convert_complex_to_int(x, dtype, upper, lower, high, low):
    return convert_float_to_int(torch.real(x), dtype, upper, lower, high, low)


def convert_float_to_int(x, dtype, upper, lower, high, low):
    """Truncate toward zero, saturate at the type's bounds, NaN -> 0 (computed in float64 so
    every bound is exact)."""
    t = torch.trunc(x.to(torch.float64))
    too_big = t >= upper
    too_small = t < lower
    bad = too_big | too_small | torch.isnan(t)
    out = torch.where(bad, 0.0, t).to(dtype)
    out = torch.where(too_big, high, out)
    return torch.where(too_small, low, out)



# Special functions -----------------------------------------------------------------------------

def special_kernel(op: Operation) -> Kernel | None:
    """erf, erfc, lgamma, erf_inv and digamma, in float32 for f16/bf16."""
    dt = operand_dtype(op)
    if dt.kind not in "fV":
        return None
    fn = {"chlo.erf": torch.special.erf, "chlo.erfc": torch.special.erfc, "chlo.lgamma": torch.lgamma,
          "chlo.erf_inv": torch.special.erfinv, "chlo.digamma": digamma}[op.name]
    return Kernel(in_f32(fn)) if torch_dtype(dt) in LOW_FLOATS else Kernel(fn)


def digamma(x):
    """psi(x), NaN at the poles (0, -1, -2, ...) as XLA computes it."""
    return torch.where((x <= 0) & (x == torch.floor(x)), torch.nan, torch.special.digamma(x))






def mulhi_kernel(op: Operation) -> Kernel | None:
    bits = common.element_bits(op.operands[0].type)
    if bits > 32:
        return None  # the high half of a 128-bit product: the numpy kernel's exact integers
    return Kernel(mulhi, Operand(0), Operand(1), bits)


def mulhi(a, b, bits: int):
    """The high `bits` bits of the product, computed in int64."""
    return ((a.to(torch.int64) * b.to(torch.int64)) >> bits).to(a.dtype)
