"""PyTorch kernels for the StableHLO op set, in the shape of `kernels_numpy.KERNELS`.

`TORCH_KERNELS[name](op) -> Kernel | None` reads the op's static attributes once and returns the
call the compiled executor emits (`v3 = add(v1, v2)` over torch tensors), or None when this op form
has no torch kernel. An op without a torch kernel (or whose form or element types torch cannot
compute: torch has no arithmetic on uint16/uint32/uint64) runs its numpy kernel on the tensors'
values (`NumpyFallback`: tensors to numpy, the numpy kernel, results back to the device), so the
torch backend runs everything the numpy backend runs, with the same results; on a GPU each such
op is a round trip through the host, and a compiled program lists them (with the reason) in
`TorchExecutable.numpy_ops`. Other dialects
register torch kernels here the way they register numpy ones:

    from loom.backend.kernels_torch import TORCH_KERNELS, torch_kernel
    @torch_kernel("knn.distances")
    def _distances(op): return Kernel(my_torch_fn, Operand(0), Operand(1), k)

Semantics are StableHLO's, as in the numpy table (checked against jax in the conformance tests):
integer division truncates, x/0 is -1 and x%0 is x, INT_MIN/-1 is INT_MIN, shifts by the bit
width or more give 0 (arithmetic: the sign), float->int converts saturate with NaN -> 0, sorts are
stable, gather clamps its start indices and scatter skips out-of-bounds windows; bfloat16 is
torch.bfloat16. Every kernel composes torch ops that run on any device and never read a value
back to the host, so programs made of them can be captured as CUDA graphs.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import torch

from loom.backend import common, rng
from loom.backend import kernels_numpy as kn
from loom.backend.common import ConvDims, shape_of
from loom.backend.kernels_numpy import ALL, PACKED, Kernel, Operand, Rest, operand_dtype, result_dtype, result_shape
from loom.ir.core import Operation

TorchKernelMaker = Callable[[Operation], "Kernel | None"]
TORCH_KERNELS: dict[str, TorchKernelMaker] = common.TORCH_KERNELS  # torch-free, so op families fill it

BF16 = np.dtype(ml_dtypes.bfloat16)
TORCH_DTYPES: dict[np.dtype, torch.dtype] = {
    np.dtype(np.float32): torch.float32, np.dtype(np.float64): torch.float64, np.dtype(np.float16): torch.float16,
    BF16: torch.bfloat16, np.dtype(np.int8): torch.int8, np.dtype(np.int16): torch.int16,
    np.dtype(np.int32): torch.int32, np.dtype(np.int64): torch.int64, np.dtype(np.uint8): torch.uint8,
    np.dtype(np.uint16): torch.uint16, np.dtype(np.uint32): torch.uint32, np.dtype(np.uint64): torch.uint64,
    np.dtype(np.bool_): torch.bool, np.dtype(np.complex64): torch.complex64,
    np.dtype(np.complex128): torch.complex128,
}
NUMPY_DTYPES: dict[torch.dtype, np.dtype] = {t: d for d, t in TORCH_DTYPES.items()}
# Float types torch has no arithmetic for (float8, float6, float4): tensors hold them in float32 and
# every op's result is rounded to the type, through torch's own dtype where its rounding is
# ml_dtypes' (and XLA's); torch's float8_e4m3fn saturates where they give NaN, and its
# float8_e8m0fnu takes negatives to their magnitude, so those round on the host.
NARROW_FLOATS: dict[np.dtype, torch.dtype | None] = {
    np.dtype(dt): getattr(torch, name, None) for name, dt in (
        ("float8_e5m2", ml_dtypes.float8_e5m2), ("float8_e4m3fnuz", ml_dtypes.float8_e4m3fnuz),
        ("float8_e5m2fnuz", ml_dtypes.float8_e5m2fnuz), ("", ml_dtypes.float8_e4m3fn),
        ("", ml_dtypes.float8_e8m0fnu), ("", ml_dtypes.float8_e4m3b11fnuz), ("", ml_dtypes.float8_e4m3),
        ("", ml_dtypes.float8_e3m4), ("", ml_dtypes.float6_e2m3fn), ("", ml_dtypes.float6_e3m2fn),
        ("", ml_dtypes.float4_e2m1fn))}
TORCH_DTYPES.update({dt: torch.float32 for dt in NARROW_FLOATS})
# Element types torch stores but does not compute on (no add, compare, max... on CPU or CUDA).
SHELL_DTYPES = frozenset({np.dtype(np.uint16), np.dtype(np.uint32), np.dtype(np.uint64)})
_LOW_FLOATS = (torch.float16, torch.bfloat16)


def float_rounding(t: Any, op_name: str = "") -> tuple[Callable, tuple] | None:
    """`(round_float, (dtype, via_f16))` for the result of op `op_name` of a float type tensors
    hold in float32, else None. XLA computes the math of types whose values f16 holds in f16, so
    their results round through f16 first; a convert rounds once."""
    dt = getattr(getattr(t, "element_type", t), "dtype", None)
    if dt is None or np.dtype(dt) not in NARROW_FLOATS:
        return None
    return round_float, (np.dtype(dt), np.dtype(dt) in kn.F16_HOLDS and op_name != "stablehlo.convert")


def round_float(x: torch.Tensor, dtype: np.dtype, via_f16: bool = False) -> torch.Tensor:
    """float32 values rounded to `dtype` (a NARROW_FLOATS type), kept in float32."""
    native = NARROW_FLOATS[dtype]
    if via_f16:
        x = x.to(torch.float16)
    if native is not None:
        return x.to(native).to(torch.float32)
    return torch.from_numpy(x.cpu().numpy().astype(dtype).astype(np.float32)).to(x.device)  # ml_dtypes rounds


def torch_dtype(dt: Any) -> torch.dtype:
    """The torch dtype of a numpy dtype (bfloat16 is ml_dtypes' in numpy, torch's own in torch)."""
    try:
        return TORCH_DTYPES[np.dtype(dt)]
    except KeyError:
        raise TypeError(f"no torch dtype for {np.dtype(dt)}") from None


def numpy_dtype_of(t: torch.dtype) -> np.dtype:
    return NUMPY_DTYPES[t]


def torch_kernel(*names: str):
    """Register a torch kernel maker under one or more op names."""
    def register(maker: TorchKernelMaker) -> TorchKernelMaker:
        for n in names:
            TORCH_KERNELS[n] = maker
        return maker
    return register


# Conversions between numpy arrays and tensors ----------------------------------------------------

def to_numpy(x: Any) -> Any:
    """A tensor's values as a numpy array (host copy for device tensors; bfloat16 through its
    bits); tuples convert element-wise; anything else passes through."""
    if isinstance(x, torch.Tensor):
        x = x.detach()
        if x.device.type != "cpu":
            x = x.cpu()
        if x.dtype == torch.bfloat16:
            return x.view(torch.int16).numpy().view(BF16)
        return x.numpy()
    if isinstance(x, tuple):
        return tuple(to_numpy(v) for v in x)
    return x


def to_torch(x: Any, device: torch.device | None = None, copy: bool = False) -> Any:
    """A numpy array (or scalar, or tuple of them) as a tensor on `device`. Without `copy` a
    contiguous, writeable CPU array is shared, not copied."""
    if isinstance(x, tuple):
        return tuple(to_torch(v, device, copy) for v in x)
    if isinstance(x, torch.Tensor):
        return x if device is None or x.device == device else x.to(device)
    a = np.asarray(x)
    if copy or not a.flags.writeable or not a.flags.c_contiguous:
        a = np.array(a, order="C")
    if a.dtype in NARROW_FLOATS:
        a = a.astype(np.float32)
    if a.dtype == BF16:
        t = torch.from_numpy(a.view(np.int16)).view(torch.bfloat16)
    else:
        t = torch.from_numpy(a)
    if device is not None and device.type != "cpu":
        t = t.to(device)
    return t


class NumpyFallback:
    """A numpy kernel run on tensors: arguments to numpy, results back to the tensors' device
    (copied when the kernel returns a view, so no result shares memory with an argument)."""

    __slots__ = ("fn", "device", "__name__")

    def __init__(self, fn: Callable, device: torch.device | None) -> None:
        self.fn = fn
        self.device = device
        self.__name__ = "numpy_" + getattr(fn, "__name__", "kernel").strip("_").replace("<lambda>", "kernel")

    def __call__(self, *args: Any) -> Any:
        out = self.fn(*(to_numpy(a) for a in args))
        return _back(out, self.device)


def _back(out: Any, device: torch.device | None) -> Any:
    if isinstance(out, tuple):
        return tuple(_back(o, device) for o in out)
    if isinstance(out, (np.ndarray, np.generic)):
        a = np.asarray(out)
        return to_torch(a, device, copy=a.base is not None or not a.flags.owndata)
    return out


# Torch functions with an `out=` parameter, elementwise: results may go into donated buffers.
OUT_FUNCTIONS = frozenset({torch.add, torch.sub, torch.mul, torch.div, torch.maximum, torch.minimum, torch.exp,
                           torch.log, torch.tanh, torch.sin, torch.cos, torch.sqrt, torch.rsqrt, torch.neg,
                           torch.sigmoid, torch.expm1, torch.log1p, torch.atan2, torch.floor, torch.ceil,
                           torch.round, torch.where, torch.bitwise_and, torch.bitwise_or, torch.bitwise_xor})

# Functions that work unchanged on tensors (they only move Python objects or index).
NEUTRAL_FUNCTIONS = frozenset({kn.identity, kn.values_tuple, operator.getitem, kn.reshape})


def _uses_shell_dtypes(op: Operation) -> bool:
    for v in (*op.operands, *op.results):
        t = v.type
        if hasattr(t, "element_type") or hasattr(t, "shape"):
            try:
                if common.dtype_of(t) in SHELL_DTYPES:
                    return True
            except Exception:  # tuple or token types: no element type of their own
                continue
    return False


def torch_kernel_for(op: Operation, numpy_kernels: dict, device: torch.device | None,
                     torch_kernels: dict | None = None) -> Kernel:
    """The torch kernel for `op`, or its numpy kernel wrapped to run on tensors."""
    table = TORCH_KERNELS if torch_kernels is None else torch_kernels
    # ops on quantized tensors: their numpy kernel (dequantize, op, quantize) on the tensors' values
    maker = None if common.has_quantized_values(op) else table.get(op.name)
    if maker is not None:
        if not _uses_shell_dtypes(op):
            k = maker(op)
            if k is not None:
                return k
        else:
            k = unsigned_kernel(op, maker)
            if k is not None:
                return k
    numpy_maker = numpy_kernels.get(op.name)
    if numpy_maker is None:
        raise common.MissingRuleError(op.name, "compiled executor (torch)")
    return fallback(numpy_maker(op), device)


def fallback(k: Kernel, device: torch.device | None) -> Kernel:
    """A numpy Kernel made to run on tensors."""
    if k.fn is None or k.fn in NEUTRAL_FUNCTIONS:
        return k
    return Kernel(NumpyFallback(k.fn, device), *k.template)


def direct(fn: Callable) -> TorchKernelMaker:
    return lambda op: Kernel(fn)


def _is_complex(op: Operation, i: int = 0) -> bool:
    return operand_dtype(op, i).kind == "c"


# Elementwise -------------------------------------------------------------------------------------
# The functions and kernel makers of the elementwise ops; the rows of loom.ops.elementwise
# register them in the table (one row per op).

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
    return Kernel(torch.conj_physical) if _is_complex(op) else Kernel(kn.identity)


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
    if torch_dtype(dt) in _LOW_FLOATS:
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


def integer_power(a, b, bits, signed):
    """Exponentiation by squaring over a fixed number of steps (no value read back), wrapping;
    negative exponents give 0 except for bases 1 and -1."""
    shape = torch.broadcast_shapes(a.shape, b.shape)
    base = a.expand(shape)
    e = b.expand(shape)
    negative = e < 0 if signed else None
    if signed:
        e = torch.where(negative, 0, e)
    result = torch.ones(shape, dtype=a.dtype, device=a.device)
    for _ in range(bits):
        result = torch.where((e & 1) == 1, result * base, result)
        base = base * base
        e = e >> 1
    if signed:
        odd = (b & 1) == 1
        special = torch.where(a == 1, 1, torch.where(a == -1, torch.where(odd, -1, 1), 0)).to(a.dtype)
        result = torch.where(negative, special, result)
    return result


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


# Compare -------------------------------------------------------------------------------------

_COMPARE = {"EQ": torch.eq, "NE": torch.ne, "LT": torch.lt, "LE": torch.le, "GT": torch.gt, "GE": torch.ge}
_INT_OF_SIZE = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def total_order_key(x):
    """Integers ordering floats totally: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN."""
    it = _INT_OF_SIZE[x.element_size()]
    i = x.contiguous().view(it)
    return torch.where(i < 0, i ^ torch.iinfo(it).max, i)


def compare_total_order(a, b, fn):
    return fn(total_order_key(a), total_order_key(b))


def compare_kernel(op: Operation) -> Kernel | None:
    direction = common.enum(op.get_attr("comparison_direction"))
    compare_type = common.enum(op.get_attr("compare_type"), "")
    fn = _COMPARE[direction]
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
        return Kernel(kn.identity)
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


@torch_kernel("stablehlo.bitcast_convert")
def _bitcast_convert(op: Operation) -> Kernel | None:
    in_dtype, dtype = operand_dtype(op), result_dtype(op)
    if in_dtype in NARROW_FLOATS or dtype in NARROW_FLOATS or \
            common.element_bits(op.operands[0].type) != in_dtype.itemsize * 8 or \
            common.element_bits(op.results[0].type) != dtype.itemsize * 8:
        return None  # bits that do not fill their storage: the numpy kernel regroups them
    return Kernel(bitcast_convert, Operand(0), torch_dtype(dtype), result_shape(op))


def bitcast_convert(x, dtype, shape):
    return x.contiguous().reshape(-1).view(dtype).reshape(shape)


# rng_bit_generator -----------------------------------------------------------------------------
# loom.backend.rng's algorithms on device tensors, the key and counters never read back. 32-bit
# words are held in int64 (masked to 32 bits after every add); 64-bit counters are int64 values
# whose wrapping arithmetic is that of uint64, compared as unsigned by flipping the sign bit.

_M32 = 0xFFFFFFFF


@torch_kernel("stablehlo.rng_bit_generator")
def _rng_bit_generator(op: Operation) -> Kernel | None:
    state_dt, out_dt = operand_dtype(op), result_dtype(op, 1)
    if state_dt not in (np.dtype(np.uint64), np.dtype(np.int64)) or out_dt not in TORCH_DTYPES or \
            out_dt.kind not in "iufV":
        return None
    algorithm = common.enum(op.get_attr("rng_algorithm"), "DEFAULT")
    state_shape = shape_of(op.operands[0].type)
    shape = tuple(result_shape(op, 1))
    if algorithm not in ("THREE_FRY", "PHILOX", "DEFAULT") or len(state_shape) != 1 or not state_shape[0] >= 2 or \
            any(d < 0 for d in shape):
        return None
    return Kernel(rng_bit_generator, Operand(0), algorithm, shape, torch_dtype(out_dt))


def rng_bit_generator(state, algorithm: str, shape: tuple[int, ...], dtype: torch.dtype):
    """The new state and `shape` random bits of `dtype`, bit-exact with loom.backend.rng."""
    s = state.view(torch.int64) if state.dtype == torch.uint64 else state
    key = s[0]
    bits = dtype.itemsize * 8
    n = math.prod(shape)
    if algorithm == "THREE_FRY":
        out, counter = (_threefry_bits64 if bits == 64 else _threefry_bits32)(key, s[1], shape)
        new = torch.cat([s[:1], counter.reshape(1), s[2:]])
    else:
        lo, hi = (s[1], s[2]) if s.shape[0] >= 3 else (s[1], s[0])
        blocks = -(-2 * n // 4) if bits == 64 else -(-n // 4)
        words, lo, hi = _philox_blocks(key, lo, hi, blocks)
        if bits == 64:
            words = [words[0] | (words[1] << 32), words[2] | (words[3] << 32)]
        out = torch.stack(words, dim=1).reshape(-1)[:n].reshape(shape)
        new = torch.cat([s[:1], lo.reshape(1), hi.reshape(1), s[3:]]) if s.shape[0] >= 3 else \
            torch.cat([s[:1], lo.reshape(1), s[2:]])
    new = new.view(state.dtype)
    if bits == 64:
        return new, out.view(dtype)
    # 32-bit words truncated to the result's width (int64 -> narrower ints wraps), then its bits
    narrow = {32: torch.int32, 16: torch.int16, 8: torch.int8}[bits]
    return new, out.to(narrow).view(dtype)


def _rotl32(v, d: int):
    return ((v << d) | (v >> (32 - d))) & _M32


def threefry2x32(x0, x1, k0, k1):
    rotations = (13, 15, 26, 6, 17, 29, 16, 24)
    ks = (k0, k1, k0 ^ k1 ^ 0x1BD11BDA)
    x0 = (x0 + k0) & _M32
    x1 = (x1 + k1) & _M32
    for i in range(5):
        for r in (rotations[:4] if i % 2 == 0 else rotations[4:]):
            x0 = (x0 + x1) & _M32
            x1 = _rotl32(x1, r) ^ x0
        x0 = (x0 + ks[(i + 1) % 3]) & _M32
        x1 = (x1 + ks[(i + 2) % 3] + (i + 1)) & _M32
    return x0, x1


def _threefry_inputs(counter, shape: tuple[int, ...]):
    """counter + the row-major linear index over the dims of size >= 2 (uint64 arithmetic)."""
    index = torch.zeros(shape, dtype=torch.int64, device=counter.device)
    product = 1
    for i in range(len(shape) - 1, -1, -1):
        if shape[i] < 2:
            continue
        iota = torch.arange(shape[i], dtype=torch.int64, device=counter.device)
        index = index + iota.reshape([shape[i] if j == i else 1 for j in range(len(shape))]) * product
        product *= shape[i]
    return counter + index


def _threefry_words(key, inputs):
    return threefry2x32(inputs & _M32, (inputs >> 32) & _M32, key & _M32, (key >> 32) & _M32)


def _threefry_bits32(key, counter, shape: tuple[int, ...]):
    half, split = rng._split_halves(shape)  # XLA's SplitShapeIntoHalves
    y0, y1 = _threefry_words(key, _threefry_inputs(counter, half))
    new_counter = counter + math.prod(half)
    if not shape:
        return y0.reshape(()), new_counter
    dims = list(shape)
    dims[split] = half[split] * 2
    combined = torch.cat([y0, y1], dim=split + 1).reshape(dims)
    return combined[tuple(slice(0, d) for d in shape)], new_counter


def _threefry_bits64(key, counter, shape: tuple[int, ...]):
    y0, y1 = _threefry_words(key, _threefry_inputs(counter, shape))
    return y0 | (y1 << 32), counter + math.prod(shape)


def _below_unsigned(a, b):
    return (a ^ _INT64_MIN) < (b ^ _INT64_MIN)


_INT64_MIN = -(1 << 63)


def _mul_hi_lo(a, m: int):
    """The high and low 32-bit words of a * m (a, m < 2**32) without overflowing int64."""
    low = (a & 0xFFFF) * m
    high = (a >> 16) * m
    s = low + ((high & 0xFFFF) << 16)
    return (high >> 16) + (s >> 32), s & _M32


def philox4x32(x: list, k0, k1) -> list:
    key0, key1 = k0, k1
    for _ in range(10):
        hi0, lo0 = _mul_hi_lo(x[0], 0xD2511F53)
        hi1, lo1 = _mul_hi_lo(x[2], 0xCD9E8D57)
        x = [hi1 ^ x[1] ^ key0, lo1, hi0 ^ x[3] ^ key1, lo0]
        key0 = (key0 + 0x9E3779B9) & _M32
        key1 = (key1 + 0xBB67AE85) & _M32
    return x


def _philox_blocks(key, counter_lo, counter_hi, n: int):
    lo = counter_lo + torch.arange(n, dtype=torch.int64, device=key.device)
    hi = counter_hi + _below_unsigned(lo, counter_lo).to(torch.int64)  # the carry out of the low word
    words = [lo & _M32, (lo >> 32) & _M32, hi & _M32, (hi >> 32) & _M32]
    out = philox4x32(words, key & _M32, (key >> 32) & _M32)
    new_lo = counter_lo + n
    new_hi = counter_hi + _below_unsigned(new_lo, counter_lo).to(torch.int64)
    return out, new_lo, new_hi


# Shapes ----------------------------------------------------------------------------------------

@torch_kernel("stablehlo.reshape")
def _reshape(op: Operation) -> Kernel:
    return Kernel(torch.reshape, Operand(0), result_shape(op))


@torch_kernel("stablehlo.transpose")
def _transpose(op: Operation) -> Kernel:
    return Kernel(torch.permute, Operand(0), common.ints(op.get_attr("permutation")))


@torch_kernel("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op: Operation) -> Kernel:
    k = kn.KERNELS["stablehlo.broadcast_in_dim"](op)
    if k.fn is kn.identity:
        return k
    if k.fn is kn.broadcast_transposed:
        return Kernel(broadcast_transposed, *k.template)
    return Kernel(broadcast_in_dim, *k.template)


def broadcast_in_dim(x, expanded, shape):
    return x.reshape(expanded).expand(shape)


def broadcast_transposed(x, perm, expanded, shape):
    return x.permute(perm).reshape(expanded).expand(shape)


@torch_kernel("stablehlo.slice")
def _slice(op: Operation) -> Kernel:
    return kn.KERNELS["stablehlo.slice"](op)  # getitem with positive-step slices works on tensors


@torch_kernel("stablehlo.dynamic_slice")
def _dynamic_slice(op: Operation) -> Kernel:
    return Kernel(dynamic_slice, Operand(0), common.ints(op.get_attr("slice_sizes")), Rest(1))


def _clamped_starts(shape, sizes, starts) -> tuple:
    # int() reads each start index back to the host (one sync per index on a GPU).
    return tuple(slice(s, s + n) for s, n in
                 ((min(max(int(i), 0), d - n), n) for i, d, n in zip(starts, shape, sizes)))


def dynamic_slice(x, sizes, *starts):
    return x[_clamped_starts(x.shape, sizes, starts)]


def dynamic_update_slice(x, update, *starts):
    out = x.clone()
    out[_clamped_starts(x.shape, update.shape, starts)] = update
    return out


TORCH_KERNELS["stablehlo.dynamic_update_slice"] = direct(dynamic_update_slice)


@torch_kernel("stablehlo.concatenate")
def _concatenate(op: Operation) -> Kernel:
    return Kernel(torch.cat, PACKED, common.integer(op.get_attr("dimension")))


@torch_kernel("stablehlo.reverse")
def _reverse(op: Operation) -> Kernel:
    return Kernel(torch.flip, Operand(0), common.ints(op.get_attr("dimensions")))


@torch_kernel("stablehlo.pad")
def _pad(op: Operation) -> Kernel:
    return Kernel(pad, Operand(0), Operand(1), common.ints(op.get_attr("edge_padding_low")),
                  common.ints(op.get_attr("edge_padding_high")), common.ints(op.get_attr("interior_padding")))


def pad(x, value, low, high, interior):
    """Edge padding (negative: cropping) and interior padding; the padding value stays on the
    device (expanded, never read back)."""
    big_shape, inner, crop = [], [], []
    for d, lo, hi, it in zip(x.shape, low, high, interior):
        spread = d + max(d - 1, 0) * it
        lo_p, hi_p = max(lo, 0), max(hi, 0)
        size = lo_p + spread + hi_p
        big_shape.append(size)
        inner.append(slice(lo_p, lo_p + spread, it + 1))
        crop.append(slice(-min(lo, 0), size + min(hi, 0)))
    out = value.to(x.dtype).expand(big_shape).clone()
    out[tuple(inner)] = x
    return out[tuple(crop)]


# Linear algebra --------------------------------------------------------------------------------

@torch_kernel("stablehlo.dot_general")
def _dot_general(op: Operation) -> Kernel | None:
    f = common.struct_fields(op.get_attr("dot_dimension_numbers"))
    lb, rb = f.get("lhs_batching_dimensions", ()), f.get("rhs_batching_dimensions", ())
    lc, rc = f.get("lhs_contracting_dimensions", ()), f.get("rhs_contracting_dimensions", ())
    out_dt = result_dtype(op)
    if out_dt == np.bool_ or operand_dtype(op, 0) == np.bool_:
        return None
    lrank, rrank = len(shape_of(op.operands[0].type)), len(shape_of(op.operands[1].type))
    out = torch_dtype(out_dt)
    same = operand_dtype(op, 0) == out_dt and operand_dtype(op, 1) == out_dt
    if out_dt.kind in "iu":
        return Kernel(integer_dot, Operand(0), Operand(1), (lb, rb, lc, rc), out)
    if same:
        direct = _matmul_form(lb, rb, lc, rc, lrank, rrank)
        if direct is not None:
            return Kernel(direct)
    return Kernel(dot_general, Operand(0), Operand(1), (lb, rb, lc, rc), out)


def matmul_tn(a, b):
    return torch.matmul(a.mT, b)


def matmul_nt(a, b):
    return torch.matmul(a, b.mT)


def matmul_tt(a, b):
    return torch.matmul(a.mT, b.mT)


def _matmul_form(lb, rb, lc, rc, lrank, rrank) -> Callable | None:
    """One (batched) matmul, the operands transposed in their last two dims as needed, when the
    dimension numbers are those of a matmul: leading batch dims in order on both sides, one
    contracting dim among the last two; or an N-d lhs contracting its last dim with a matrix."""
    nb = len(lb)
    if len(lc) != 1 or len(rc) != 1:
        return None
    if lb != tuple(range(nb)) or rb != tuple(range(nb)):
        return None
    if not nb and lrank > 2 and rrank == 2 and lc == (lrank - 1,):
        return torch.matmul if rc == (0,) else matmul_nt
    if lrank != nb + 2 or rrank != nb + 2 or lc[0] < nb or rc[0] < nb:
        return None
    transpose_l = lc[0] == nb          # contracting the first of the two: lhs^T
    transpose_r = rc[0] == nb + 1      # contracting the second: rhs^T
    return {(False, False): torch.matmul, (True, False): matmul_tn, (False, True): matmul_nt,
            (True, True): matmul_tt}[(transpose_l, transpose_r)]


def dot_general(lhs, rhs, dims, out_dtype):
    """Batch dims first, then lhs free dims, then rhs free dims: permute, reshape, one matmul."""
    lb, rb, lc, rc = dims
    lhs = lhs.to(out_dtype)
    rhs = rhs.to(out_dtype)
    lf = [d for d in range(lhs.ndim) if d not in lb and d not in lc]
    rf = [d for d in range(rhs.ndim) if d not in rb and d not in rc]
    batch_shape = [lhs.shape[d] for d in lb]
    lf_shape = [lhs.shape[d] for d in lf]
    rf_shape = [rhs.shape[d] for d in rf]
    nb = 1
    for n in batch_shape:
        nb *= n
    nl = 1
    for n in lf_shape:
        nl *= n
    nr = 1
    for n in rf_shape:
        nr *= n
    nc = 1
    for d in lc:
        nc *= lhs.shape[d]
    a = lhs.permute((*lb, *lf, *lc)).reshape(nb, nl, nc)
    b = rhs.permute((*rb, *rc, *rf)).reshape(nb, nc, nr)
    return torch.matmul(a, b).reshape((*batch_shape, *lf_shape, *rf_shape))


def integer_dot(lhs, rhs, dims, out_dtype):
    """Integer dot products wrap; CUDA has no integer matmul, so there they are float64 ones of
    the operands' bytes (`exact_integer_product`)."""
    if lhs.device.type == "cpu":
        return dot_general(lhs, rhs, dims, out_dtype)
    return exact_integer_product(dot_general, lhs, rhs, out_dtype, dims, torch.float64)


def exact_integer_product(product: Callable, lhs, rhs, out_dtype, *args):
    """A bilinear integer product (a dot product, a convolution) modulo 2**bits of `out_dtype`,
    from float64 ones: the operands (converted to `out_dtype`, so narrower ones sign-extend) are
    split into bytes, and each product of two byte planes is exact in float64 (its sums stay
    below 255 * 255 * 2**37 < 2**53); the planes' products, shifted into place, add up modulo
    2**64 in int64, and the result keeps the low bits. Bytes whose shifts reach past the result's
    width are skipped."""
    nbytes = torch.empty((), dtype=out_dtype).element_size()
    a = lhs.to(out_dtype).to(torch.int64)
    b = rhs.to(out_dtype).to(torch.int64)
    a_bytes = [((a >> (8 * i)) & 0xFF).to(torch.float64) for i in range(nbytes)]
    b_bytes = [((b >> (8 * j)) & 0xFF).to(torch.float64) for j in range(nbytes)]
    total = None
    for i in range(nbytes):
        for j in range(nbytes - i):
            # rounded: a library may compute a float64 conv by a transform (FFT, Winograd)
            # whose error, far below 0.5 here, would otherwise truncate to the wrong integer
            part = torch.round(product(a_bytes[i], b_bytes[j], *args)).to(torch.int64) << (8 * (i + j))
            total = part if total is None else total + part
    return total.to(out_dtype)


@torch_kernel("stablehlo.convolution")
def _convolution(op: Operation) -> Kernel | None:
    dims = ConvDims(op.get_attr("dimension_numbers"))
    n = len(dims.input_spatial)
    out_dt = result_dtype(op)
    bgc = common.integer(op.get_attr("batch_group_count"), 1)
    kinds = operand_dtype(op, 0).kind + operand_dtype(op, 1).kind
    if n not in (1, 2, 3) or out_dt.kind not in "fViu" or "c" in kinds or (out_dt.kind in "iu" and not
                                                                           set(kinds) <= set("biu")):
        return None
    strides = common.ints(op.get_attr("window_strides"), [1] * n)
    padding = common.padding_pairs(op.get_attr("padding"), n)
    lhs_dil = common.ints(op.get_attr("lhs_dilation"), [1] * n)
    rhs_dil = common.ints(op.get_attr("rhs_dilation"), [1] * n)
    reversal = common.bools(op.get_attr("window_reversal"), n)
    fgc = common.integer(op.get_attr("feature_group_count"), 1)
    config = (dims, tuple(strides), tuple(tuple(p) for p in padding), tuple(lhs_dil), tuple(rhs_dil),
              tuple(reversal), fgc, bgc, torch_dtype(out_dt))
    return Kernel(integer_convolution if out_dt.kind in "iu" else convolution, Operand(0), Operand(1), config)


def integer_convolution(lhs, rhs, config):
    """An integer convolution (wrapping, as the numpy kernel's) from float64 ones of the
    operands' bytes: torch has no integer convolution."""
    return exact_integer_product(convolution, lhs, rhs, config[-1], (*config[:-1], torch.float64))


_CONV = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d, 3: torch.nn.functional.conv3d}


def convolution(lhs, rhs, config):
    """StableHLO convolution as torch's conv: layouts permuted to (N, C, spatial...) x
    (O, I, spatial...); base dilation as interior padding; asymmetric or negative padding
    applied before the conv; computed in the result's type (operands converted to it, as the
    numpy kernel does), low precision in float32 on the CPU or when an operand has another
    type. A batch group count G splits the batch into G contiguous parts, part g convolved
    with the g-th G-th of the output features: the parts are moved into the feature dim and
    the conv runs with G feature groups."""
    dims, strides, padding, lhs_dil, rhs_dil, reversal, fgc, bgc, dtype = config
    n = len(dims.input_spatial)
    work = dtype
    if work in _LOW_FLOATS and (lhs.device.type == "cpu" or lhs.dtype != dtype or rhs.dtype != dtype):
        work = torch.float32
    x = lhs.permute((dims.input_batch, dims.input_feature, *dims.input_spatial)).to(work)
    if bgc > 1:
        batch, features = x.shape[0], x.shape[1]
        x = x.reshape(bgc, batch // bgc, features, *x.shape[2:]).transpose(0, 1)
        x = x.reshape(batch // bgc, bgc * features, *x.shape[3:])
        fgc = bgc
    w = rhs.permute((dims.kernel_output_feature, dims.kernel_input_feature, *dims.kernel_spatial)).to(work)
    flips = [2 + i for i in range(n) if reversal[i]]
    if flips:
        w = torch.flip(w, flips)
    if any(d != 1 for d in lhs_dil):
        zero = torch.zeros((), dtype=work, device=x.device)
        x = pad(x, zero, [0] * (n + 2), [0] * (n + 2), [0, 0, *(d - 1 for d in lhs_dil)])
    if any(lo or hi for lo, hi in padding):
        flat = []
        for lo, hi in reversed(padding):
            flat += [lo, hi]
        x = torch.nn.functional.pad(x, flat)
    out = _CONV[n](x, w, stride=strides, dilation=rhs_dil, groups=fgc)
    perm = [0] * (n + 2)
    perm[dims.output_batch] = 0
    perm[dims.output_feature] = 1
    for i, d in enumerate(dims.output_spatial):
        perm[d] = 2 + i
    return out.permute(perm).to(dtype)


# Gather and scatter ----------------------------------------------------------------------------

class FlatIndex:
    """Where each element of a gather's result or a scatter's updates lives in the flattened
    operand, for static shapes: the start indices' part computed per call (clamped for a gather;
    checked for a scatter, whose out-of-bounds windows XLA skips), the rest (window offsets,
    batching coordinates) once, when the kernel is built. `starts`: (operand stride, largest
    start in bounds) of each component of the index vector. `layout`: the shape of the start
    part (the index batch dims in place, ones elsewhere), broadcast with `static`."""

    __slots__ = ("ivd", "append", "strides", "limits", "layout", "static", "_on")

    def __init__(self, idx_shape: tuple[int, ...], ivd: int, starts: list[tuple[int, int]], static: np.ndarray,
                 layout: tuple[int, ...]) -> None:
        self.ivd, self.append = ivd, ivd == len(idx_shape)
        self.strides = [s for s, _ in starts]
        self.limits = [lim for _, lim in starts]
        self.layout = layout
        self.static = None if static.size == 1 and not static.any() else static
        self._on: dict = {}

    def _device(self, device) -> tuple:
        got = self._on.get(device)
        if got is None:
            def tensor(x):
                return torch.as_tensor(np.asarray(x, np.int64), device=device)
            got = self._on[device] = (None if self.static is None else tensor(self.static),
                                      tensor(self.strides), tensor(self.limits))
        return got

    def __call__(self, indices, clamp: bool) -> tuple:
        """(flat indices, the in-bounds mask of the start part or None when `clamp`)."""
        static, strides, limits = self._device(indices.device)
        valid = None
        if not self.strides:
            flat = torch.zeros(self.layout, dtype=torch.int64, device=indices.device)
        else:
            idx = indices.to(torch.int64)
            idx = idx.unsqueeze(-1) if self.append else torch.movedim(idx, self.ivd, -1)
            if len(self.strides) == 1:
                idx = idx[..., 0]
                if clamp:
                    idx = idx.clamp(0, self.limits[0])
                else:
                    valid = ((idx >= 0) & (idx <= self.limits[0])).reshape(self.layout)
                flat = idx if self.strides[0] == 1 else idx * self.strides[0]
            else:
                if clamp:
                    idx = torch.minimum(idx.clamp(min=0), limits)
                else:
                    valid = ((idx >= 0) & (idx <= limits)).all(-1).reshape(self.layout)
                flat = (idx * strides).sum(-1)
            flat = flat.reshape(self.layout)
        return (flat if static is None else flat + static), valid


def _placed(sizes: dict[int, int], rank: int) -> list[int]:
    """A shape of `rank` ones but for `sizes` (axis: size)."""
    return [sizes.get(a, 1) for a in range(rank)]


def _static_offsets(terms: list[tuple[int, int, int]], rank: int) -> np.ndarray:
    """sum of arange(size) * stride laid along axis, over the (axis, size, stride) terms."""
    out = np.zeros((1,) * rank, np.int64)
    for axis, size, stride in terms:
        out = out + (np.arange(size, dtype=np.int64) * stride).reshape(_placed({axis: size}, rank))
    return out


def _strides(shape: tuple[int, ...]) -> list[int]:
    return [math.prod(shape[d + 1:]) for d in range(len(shape))]


class Gather:
    """A gather over static shapes: one read (`torch.take`) of flat indices, the start indices
    clamped so every slice is in bounds, as StableHLO specifies."""

    __slots__ = ("index", "perm", "__name__")

    def __init__(self, operand_shape: tuple[int, ...], idx_shape: tuple[int, ...], dims: kn.GatherDims,
                 slice_sizes: tuple[int, ...]) -> None:
        ivd = dims.index_vector_dim
        batch = tuple(n for a, n in enumerate(idx_shape) if a != ivd)
        batch_axes = kn._batch_coordinates((*idx_shape, 1) if ivd == len(idx_shape) else idx_shape, ivd)
        nb = len(batch)
        kept = [d for d in range(len(operand_shape)) if d not in dims.collapsed_slice_dims and
                d not in dims.operand_batching_dims]
        stride = _strides(operand_shape)
        terms = [(nb + i, slice_sizes[d], stride[d]) for i, d in enumerate(kept)]
        for d, sd in zip(dims.operand_batching_dims, dims.start_indices_batching_dims):
            terms.append((batch_axes.index(sd), batch[batch_axes.index(sd)], stride[d]))
        rank = nb + len(kept)
        starts = [(stride[d], operand_shape[d] - slice_sizes[d]) for d in dims.start_index_map]
        self.index = FlatIndex(idx_shape, ivd, starts, _static_offsets(terms, rank),
                               (*batch, *(1,) * len(kept)))
        perm = kn.gather_permutation(dims, nb, rank)
        self.perm = None if perm == sorted(perm) else tuple(perm)
        self.__name__ = "gather"

    def __call__(self, operand, start_indices):
        out = torch.take(operand, self.index(start_indices, clamp=True)[0])
        return out if self.perm is None else out.permute(self.perm)


@torch_kernel("stablehlo.gather")
def _gather(op: Operation) -> Kernel | None:
    if not common.static_operands(op):
        return None
    dims = kn.GatherDims(op.get_attr("dimension_numbers"))
    sizes = tuple(common.ints(op.get_attr("slice_sizes")))
    plan = Gather(shape_of(op.operands[0].type), shape_of(op.operands[1].type), dims, sizes)
    return Kernel(plan, Operand(0), Operand(1))


_SCATTER_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


def scatter_flat_index(operand_shape: tuple[int, ...], idx_shape: tuple[int, ...], updates_shape: tuple[int, ...],
                       dims: kn.ScatterDims) -> FlatIndex:
    """The flat operand index of every update element of a scatter (its `FlatIndex` plan)."""
    ivd = dims.index_vector_dim
    rank = len(updates_shape)
    batch_axes = kn._batch_coordinates((*idx_shape, 1) if ivd == len(idx_shape) else idx_shape, ivd)
    scatter_axes = [a for a in range(rank) if a not in dims.update_window_dims]
    window_dims = [d for d in range(len(operand_shape)) if d not in dims.inserted_window_dims and
                   d not in dims.input_batching_dims]
    stride = _strides(operand_shape)
    sizes = {d: updates_shape[u] for d, u in zip(window_dims, dims.update_window_dims)}
    terms = [(u, updates_shape[u], stride[d]) for d, u in zip(window_dims, dims.update_window_dims)]
    for d, sd in zip(dims.input_batching_dims, dims.scatter_indices_batching_dims):
        axis = scatter_axes[batch_axes.index(sd)]
        terms.append((axis, updates_shape[axis], stride[d]))
    starts = [(stride[d], operand_shape[d] - sizes.get(d, 1)) for d in dims.scatter_dims_to_operand_dims]
    layout = tuple(_placed({a: updates_shape[a] for a in scatter_axes}, rank))
    return FlatIndex(idx_shape, ivd, starts, _static_offsets(terms, rank), layout)


class Scatter:
    """A scatter over static shapes whose update computation is overwrite (`kind` None) or add,
    mul, max, min: flat indices computed once per call, windows out of bounds (which XLA skips)
    sent to a scratch slot past the end, so nothing is read back to the host. `unsigned`: 16, 32
    and 64-bit unsigned operands, updated on their signed views (max and min with the sign bit
    flipped)."""

    __slots__ = ("index", "updates_shape", "kind", "unsigned", "__name__")

    def __init__(self, operand_shape: tuple[int, ...], idx_shape: tuple[int, ...], updates_shape: tuple[int, ...],
                 dims: kn.ScatterDims, kind: str | None, unsigned: bool = False) -> None:
        self.index = scatter_flat_index(operand_shape, idx_shape, updates_shape, dims)
        self.updates_shape, self.kind, self.unsigned = tuple(updates_shape), kind, unsigned
        self.__name__ = "scatter_unsigned" if unsigned else "scatter"

    def __call__(self, operand, indices, updates):
        if self.unsigned:
            indices = _index_value(indices, False)
            signed = _SIGNED.get(operand.dtype)
            if signed is not None:
                x, u = operand.view(signed), updates.view(signed)
                if self.kind in ("max", "min"):
                    return _flip(self.apply(_flip(x), indices, _flip(u))).view(operand.dtype)
                return self.apply(x, indices, u).view(operand.dtype)
        return self.apply(operand, indices, updates)

    def apply(self, operand, indices, updates):
        size = operand.numel()
        flat, valid = self.index(indices, clamp=False)
        if valid is not None:
            flat = torch.where(valid, flat, size)
        target = flat.expand(self.updates_shape).reshape(-1)
        out = torch.cat([operand.reshape(-1), operand.new_zeros(1)])
        values = updates.reshape(-1)
        kind = self.kind
        if kind is None:
            # XLA applies colliding updates in order, the last one staying; torch's index_put_
            # picks any of them on CUDA: keep only each target's last update
            position = torch.arange(target.numel(), device=target.device)
            last = torch.full((size + 1,), -1, dtype=position.dtype, device=target.device)
            last.scatter_reduce_(0, target, position, "amax")
            keep = last[target] == position
            out.index_put_((target[keep],), values[keep])
        elif kind == "add" and operand.dtype != torch.bool:
            out.index_put_((target,), values, accumulate=True)
        elif operand.dtype == torch.bool:
            reduce = {"add": "amax", "max": "amax", "mul": "amin", "min": "amin"}[kind]
            out = out.to(torch.uint8).scatter_reduce_(0, target, values.to(torch.uint8), reduce).to(torch.bool)
        else:
            out.scatter_reduce_(0, target, values, _SCATTER_REDUCE[kind])
        return out[:size].reshape(operand.shape)


class ScatterRounds:
    """A scatter over static shapes with any elementwise update computation `body` (and any
    number of operands), applied as XLA does, one update after the other in update order: the
    updates are grouped into rounds, round r holding each target's r-th update, so within a round
    every target is distinct and `body` runs on whole vectors. One host read (the number of
    rounds) per call; windows out of bounds are dropped."""

    __slots__ = ("index", "updates_shape", "__name__")

    def __init__(self, operand_shape: tuple[int, ...], idx_shape: tuple[int, ...], updates_shape: tuple[int, ...],
                 dims: kn.ScatterDims) -> None:
        self.index = scatter_flat_index(operand_shape, idx_shape, updates_shape, dims)
        self.updates_shape = tuple(updates_shape)
        self.__name__ = "scatter_rounds"

    def __call__(self, body: Callable, inputs: tuple, indices, updates: tuple) -> tuple:
        flat, valid = self.index(indices, clamp=False)
        target = flat.expand(self.updates_shape).reshape(-1)
        values = [u.reshape(-1) for u in updates]
        if valid is not None:
            keep = valid.expand(self.updates_shape).reshape(-1)
            target, values = target[keep], [v[keep] for v in values]
        outs = [x.reshape(-1).clone() for x in inputs]
        n = target.numel()
        if n == 0:
            return tuple(o.reshape(x.shape) for o, x in zip(outs, inputs))
        sorted_target, order = torch.sort(target, stable=True)
        position = torch.arange(n, device=target.device)
        first = torch.ones(n, dtype=torch.bool, device=target.device)
        first[1:] = sorted_target[1:] != sorted_target[:-1]
        rank = position - torch.cummax(torch.where(first, position, 0), 0).values
        for r in range(int(rank.max()) + 1):
            chosen = order[rank == r]
            where = target[chosen]
            new = body(*(o[where] for o in outs), *(v[chosen] for v in values))
            for o, v in zip(outs, new):
                o[where] = v
        return tuple(o.reshape(x.shape) for o, x in zip(outs, inputs))


# Sorting and top-k -----------------------------------------------------------------------------

def sort_by_key(operands, key, dimension: int, descending: bool):
    """Stable sort of every operand along `dimension` by `key`."""
    order = torch.sort(key, dim=dimension, descending=descending, stable=True).indices
    return tuple(torch.take_along_dim(x, order, dimension) for x in operands)


@torch_kernel("chlo.top_k")
def _top_k(op: Operation) -> Kernel | None:
    if operand_dtype(op).kind == "c":
        return None
    return Kernel(top_k, Operand(0), common.integer(op.get_attr("k")), torch_dtype(result_dtype(op, 1)))


def top_k(x, k, index_dtype):
    """The k largest along the last axis, the smaller index first on ties, NaN largest."""
    key = total_order_key(x) if x.is_floating_point() else x
    order = torch.sort(key, dim=-1, descending=True, stable=True).indices[..., :k]
    return torch.take_along_dim(x, order, -1), order.to(index_dtype)


# FFT -------------------------------------------------------------------------------------------

@torch_kernel("stablehlo.fft")
def _fft(op: Operation) -> Kernel:
    return Kernel(fft, Operand(0), common.enum(op.get_attr("fft_type")),
                  tuple(common.ints(op.get_attr("fft_length"))), torch_dtype(result_dtype(op)))


def fft(x, fft_type, lengths, dtype):
    dims = tuple(range(-len(lengths), 0))
    if fft_type == "FFT":
        out = torch.fft.fftn(x, dim=dims)
    elif fft_type == "IFFT":
        out = torch.fft.ifftn(x, dim=dims)
    elif fft_type == "RFFT":
        out = torch.fft.rfftn(x, dim=dims)
    else:
        out = torch.fft.irfftn(x, s=lengths, dim=dims)
    return out.to(dtype)


# Special functions -----------------------------------------------------------------------------

def special_kernel(op: Operation) -> Kernel | None:
    """erf, erfc, lgamma, erf_inv and digamma, in float32 for f16/bf16."""
    dt = operand_dtype(op)
    if dt.kind not in "fV":
        return None
    fn = {"chlo.erf": torch.special.erf, "chlo.erfc": torch.special.erfc, "chlo.lgamma": torch.lgamma,
          "chlo.erf_inv": torch.special.erfinv, "chlo.digamma": digamma}[op.name]
    return Kernel(in_f32(fn)) if torch_dtype(dt) in _LOW_FLOATS else Kernel(fn)


def digamma(x):
    """psi(x), NaN at the poles (0, -1, -2, ...) as XLA computes it."""
    return torch.where((x <= 0) & (x == torch.floor(x)), torch.nan, torch.special.digamma(x))


# Structural ------------------------------------------------------------------------------------

for _name in ("stablehlo.optimization_barrier", "stablehlo.tuple", "stablehlo.get_tuple_element",
              "sdy.sharding_constraint"):
    TORCH_KERNELS[_name] = kn.KERNELS[_name]


__all__ = ["ALL", "NUMPY_DTYPES", "PACKED", "SHELL_DTYPES", "TORCH_DTYPES", "TORCH_KERNELS", "Kernel",
           "NumpyFallback", "Operand", "Rest", "fallback", "to_numpy", "to_torch", "torch_dtype", "torch_kernel",
           "torch_kernel_for"]


# Region ops: runtime helpers of the torch code generation rules (loom.backend.compiled) ---------

_COMBINE = {"add": torch.add, "mul": torch.mul, "max": torch.maximum, "min": torch.minimum,
            "any": torch.logical_or, "all": torch.logical_and}


def reduce(x, dims, init, kind: str, dtype, combine: bool):
    """A reduction by a known binary op over `dims` (none of size 0), then with `init` unless it
    is the op's identity. With no dims each element is combined with `init` alone."""
    if not dims:
        return _COMBINE[kind](x, init)
    if kind == "add":
        out = torch.sum(x, dims, dtype=dtype)
        return out + init if combine else out
    if kind == "mul":
        out = x
        for d in sorted(dims, reverse=True):
            out = torch.prod(out, d, dtype=dtype)
        return out * init if combine else out
    if kind == "max":
        out = torch.amax(x, dims)
        return torch.maximum(out, init) if combine else out
    if kind == "min":
        out = torch.amin(x, dims)
        return torch.minimum(out, init) if combine else out
    if kind == "any":
        out = torch.any(x, dim=dims) if len(dims) != 1 else torch.any(x, dims[0])
        return out | init if combine else out
    out = torch.all(x, dim=dims) if len(dims) != 1 else torch.all(x, dims[0])  # "all"
    return out & init if combine else out


def reduce_tree(body: Callable, xs, inits, axes: tuple[int, ...]) -> tuple:
    """Reduce with an elementwise body applied to whole halves at once (a pairwise tree)."""
    nd = xs[0].ndim
    keep = [d for d in range(nd) if d not in axes]
    out_shape = tuple(xs[0].shape[d] for d in keep)
    xs = [x.permute(keep + list(axes)).reshape(out_shape + (-1,)) for x in xs]
    n = xs[0].shape[-1]
    if n == 0:
        return tuple(i.expand(out_shape).clone() for i in inits)
    while n > 1:
        half = n // 2
        ys = body(*(x[..., :half] for x in xs), *(x[..., half:2 * half] for x in xs))
        ys = [y.expand(out_shape + (half,)) for y in ys]
        if n % 2:
            ys = [torch.cat([y, x[..., 2 * half:]], dim=-1) for y, x in zip(ys, xs)]
        xs = ys
        n = half + n % 2
    values = [x[..., 0] for x in xs]
    outs = body(*(i.expand(out_shape) for i in inits), *values)
    return tuple(y.expand(out_shape).to(x.dtype) for y, x in zip(outs, values))


def argreduce(values, indices, init_value, init_index, axis, pick_max, body):
    """The (value, index) pair of jax's argmax/argmin reducer over one axis (of nonzero size):
    first index on ties, NaN winning; then the body once with the init values."""
    pos = torch.argmax(values, dim=axis, keepdim=True) if pick_max else torch.argmin(values, dim=axis, keepdim=True)
    v = torch.take_along_dim(values, pos, axis).squeeze(axis)
    i = torch.take_along_dim(indices.expand(values.shape), pos, axis).squeeze(axis)
    out = body(init_value.expand(v.shape), init_index.expand(i.shape), v, i)
    return tuple(y.expand(v.shape) for y in out)


def apply_map(body: Callable, xs, shape):
    return body(*xs)[0].expand(shape)


def window_view(x, init, window, strides, base_dil, win_dil, padding):
    """Windows of `x` (padded with `init`, base-dilated) as a strided view of shape
    (out..., window...)."""
    n = x.ndim
    if any(d != 1 for d in base_dil) or any(lo or hi for lo, hi in padding):
        x = pad(x, init, [p[0] for p in padding], [p[1] for p in padding], [d - 1 for d in base_dil])
    for dim in range(n):
        x = x.unfold(dim, (window[dim] - 1) * win_dil[dim] + 1, strides[dim])
    if any(d != 1 for d in win_dil):
        x = x[(slice(None),) * n + tuple(slice(None, None, d) for d in win_dil)]
    return x


def reduce_window(x, init, kind, config, dtype, combine):
    """reduce_window by a known binary op: a strided view of the windows, one reduction."""
    window, strides, base_dil, win_dil, padding = config
    views = window_view(x, init, window, strides, base_dil, win_dil, padding)
    n = x.ndim
    return reduce(views, tuple(range(n, 2 * n)), init, kind, dtype, combine)


def reduce_window_tree(body: Callable, xs, inits, config) -> tuple:
    views = [window_view(x, i, *config[:4], config[4]) for x, i in zip(xs, inits)]
    n = xs[0].ndim
    return reduce_tree(body, views, inits, tuple(range(n, 2 * n)))


# Unsigned 16/32/64-bit integers: torch stores them but has almost no kernels for them. Ops that
# only move bits (wrapping add, multiply, bitwise ops, shifts, data movement) run on the signed
# integers of the same width (a view, no copy) and view the result back; comparisons flip the sign
# bit first; conversions go through int64 (16 and 32 bits); uint64 division is long division on
# int64. The rest takes the numpy path.

_SIGNED = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}
BIT_PRESERVING = frozenset("stablehlo." + n for n in (
    "add subtract multiply and or xor not negate shift_left shift_right_logical shift_right_arithmetic select "
    "reshape transpose broadcast_in_dim slice dynamic_slice dynamic_update_slice concatenate reverse pad gather "
    "bitcast_convert").split())
# Ops whose kernels give the right bits on the signed view of their unsigned operands.
SIGNED_VIEW_OPS = BIT_PRESERVING | {"stablehlo.popcnt", "stablehlo.count_leading_zeros"}
# Ops reading indices: an unsigned index is a value (2**31 + 1 is not negative), not bits. The
# kernel arguments holding indices (from, to: a slice of the arguments), and whether uint64 ones
# past 2**63 saturate (the numpy kernel reads them with int(): past any bound) or wrap (it
# converts them with astype(int64)).
INDEXED = {"stablehlo.gather": (1, 2, False), "stablehlo.dynamic_slice": (2, None, True),
           "stablehlo.dynamic_update_slice": (2, None, True)}
# Ops whose torch kernels take unsigned operands as they are (they view them as needed).
UNSIGNED_AWARE = frozenset({"stablehlo.rng_bit_generator"})


class SignedView:
    """A kernel run on the signed view of its unsigned arguments, its results viewed back."""

    __slots__ = ("fn", "out", "__name__")

    def __init__(self, fn: Callable, out: tuple) -> None:
        self.fn = fn
        self.out = out
        self.__name__ = "signed_" + getattr(fn, "__name__", "kernel")

    def __call__(self, *args: Any) -> Any:
        out = self.fn(*(_signed_view(a) for a in args))
        if isinstance(out, tuple):
            return tuple(o if d is None else o.view(d) for o, d in zip(out, self.out))
        d = self.out[0]
        return out if d is None else out.view(d)


def _signed_view(x: Any) -> Any:
    if isinstance(x, torch.Tensor):
        signed = _SIGNED.get(x.dtype)
        return x if signed is None else x.view(signed)
    if isinstance(x, tuple):
        return tuple(_signed_view(v) for v in x)
    return x


def unsigned_kernel(op: Operation, maker: TorchKernelMaker) -> Kernel | None:
    """A torch kernel for an op on uint16/uint32/uint64 values, or None (numpy path)."""
    out = tuple(_shell_torch_dtype(r.type) for r in op.results)
    if op.name in UNSIGNED_AWARE:
        return maker(op)
    if op.name in INDEXED:
        k = maker(op)
        if k is None or k.fn is None:
            return k
        return Kernel(IndexedSignedView(k.fn, out, INDEXED[op.name]), *k.template)
    if op.name in SIGNED_VIEW_OPS:
        k = maker(op)
        if k is None or k.fn is None:
            return k
        return Kernel(SignedView(k.fn, out), *k.template)
    if op.name == "stablehlo.compare":
        direction = common.enum(op.get_attr("comparison_direction"))
        return Kernel(SignedView(compare_unsigned, out), Operand(0), Operand(1), _COMPARE[direction])
    if op.name in ("stablehlo.maximum", "stablehlo.minimum"):
        fn = torch.gt if op.name.endswith("maximum") else torch.lt
        return Kernel(SignedView(select_unsigned, out), Operand(0), Operand(1), fn)
    if op.name in ("stablehlo.divide", "stablehlo.remainder"):
        if result_dtype(op) == np.uint64:
            fn = divide_uint64 if op.name.endswith("divide") else remainder_uint64
            return Kernel(SignedView(fn, out))
        fn = unsigned_divide if op.name.endswith("divide") else unsigned_remainder
        return Kernel(SignedView(fn, out), Operand(0), Operand(1), (1 << (result_dtype(op).itemsize * 8)) - 1)
    if op.name == "stablehlo.clamp":
        return Kernel(SignedView(clamp_unsigned, out))
    if op.name in ("stablehlo.dot_general", "stablehlo.convolution") and \
            operand_dtype(op, 0) == operand_dtype(op, 1) == result_dtype(op):
        # products and sums wrap alike on the signed views: the kernel, computing in the signed type
        k = maker(op)
        if k is None:
            return None
        signed = _SIGNED[torch_dtype(result_dtype(op))]
        *head, last = k.template
        last = signed if op.name == "stablehlo.dot_general" else (*last[:-1], signed)
        return Kernel(SignedView(k.fn, out), *head, last)
    if op.name == "stablehlo.power":
        return Kernel(SignedView(integer_power, out), Operand(0), Operand(1), result_dtype(op).itemsize * 8, False)
    if op.name == "stablehlo.convert":
        src, dst = operand_dtype(op), result_dtype(op)
        if src.kind == "c" or dst.kind == "c":
            return None
        if src == np.uint64:
            return Kernel(convert_from_uint64, Operand(0), torch_dtype(dst))
        if dst == np.uint64:
            return Kernel(convert_to_uint64, Operand(0))
        if dst in SHELL_DTYPES:
            info = np.iinfo(dst)
            return Kernel(convert_to_unsigned, Operand(0), torch_dtype(dst), float(info.max))
        return Kernel(convert_from_unsigned, Operand(0), (1 << (src.itemsize * 8)) - 1, torch_dtype(dst))
    return None


def _shell_torch_dtype(t: Any) -> torch.dtype | None:
    try:
        dt = common.dtype_of(t)
    except Exception:
        return None
    return torch_dtype(dt) if dt in SHELL_DTYPES else None


def _flip(x):
    return x ^ torch.iinfo(x.dtype).min  # unsigned order as signed order


def compare_unsigned(a, b, fn):
    if fn in (torch.eq, torch.ne):
        return fn(a, b)
    return fn(_flip(a), _flip(b))


def select_unsigned(a, b, fn):
    return torch.where(fn(_flip(a), _flip(b)), a, b)


def convert_from_unsigned(x, mask, dtype):
    """uint16/uint32 (viewed as signed) to another type, through its int64 value."""
    wide = x.view(_SIGNED[x.dtype]).to(torch.int64) & mask
    if dtype == torch.bool:
        return wide != 0
    return wide.to(dtype)


def convert_to_unsigned(x, dtype, high):
    """To uint16/uint32: integers wrap, floats truncate and saturate (NaN -> 0)."""
    signed = _SIGNED[dtype]
    if x.is_floating_point():
        t = torch.trunc(x.to(torch.float64))
        t = torch.where(torch.isnan(t), 0.0, torch.clamp(t, 0.0, high))
        return t.to(torch.int64).to(signed).view(dtype)
    return x.to(torch.int64).to(signed).view(dtype)


def unsigned_divide(a, b, mask):
    """uint16/uint32 division through int64; x/0 is all ones."""
    wa, wb = a.to(torch.int64) & mask, b.to(torch.int64) & mask
    zero = wb == 0
    q = torch.div(wa, torch.where(zero, 1, wb), rounding_mode="trunc")
    return torch.where(zero, mask, q).to(a.dtype)


def unsigned_remainder(a, b, mask):
    """uint16/uint32 remainder through int64; x%0 is x."""
    wa, wb = a.to(torch.int64) & mask, b.to(torch.int64) & mask
    zero = wb == 0
    return torch.where(zero, wa, torch.remainder(wa, torch.where(zero, 1, wb))).to(a.dtype)


def select_and_scatter(operand, source, init, window, strides, padding, keep):
    """select_and_scatter whose select is a comparison `keep(selected, candidate)` and whose
    scatter adds: each window's selection is the fold XLA defines (the candidate replaces the
    selection when `keep` is false; padding is never selected), done for all windows at once,
    one window position per step, so NaNs select exactly as in XLA and nothing is read back."""
    rank = operand.ndim
    ones = (1,) * rank
    no = torch.zeros((), dtype=torch.bool, device=operand.device)
    valid = window_view(torch.ones(operand.shape, dtype=torch.bool, device=operand.device), no, window, strides,
                        ones, ones, padding)
    zero = torch.zeros((), dtype=operand.dtype, device=operand.device)
    values = window_view(operand, zero, window, strides, ones, ones, padding)
    out_shape = tuple(values.shape[:rank])
    flat_valid = valid.reshape(out_shape + (-1,))
    flat = values.reshape(out_shape + (-1,))
    selected = flat[..., 0]
    position = torch.zeros(out_shape, dtype=torch.int64, device=operand.device)
    chosen = flat_valid[..., 0]
    for k in range(1, flat.shape[-1]):
        candidate = flat[..., k]
        switch = flat_valid[..., k] & (~chosen | ~keep(selected, candidate))
        selected = torch.where(switch, candidate, selected)
        position = torch.where(switch, k, position)
        chosen = chosen | flat_valid[..., k]
    # The operand index of each window's selection: window start + offset in the window.
    offsets = torch.stack(torch.unravel_index(position, tuple(window)), 0) if rank else position[None]
    index = torch.zeros(out_shape, dtype=torch.int64, device=operand.device)
    stride = 1
    for d in range(rank - 1, -1, -1):
        start = torch.arange(out_shape[d], device=operand.device) * strides[d] - padding[d][0]
        shape = [1] * rank
        shape[d] = out_shape[d]
        index = index + (start.reshape(shape) + offsets[d]) * stride
        stride *= operand.shape[d]
    size = operand.numel()
    target = torch.where(chosen, index, size).reshape(-1)
    result = torch.cat([init.to(operand.dtype).expand(size), init.to(operand.dtype).reshape(1)])
    result.index_put_((target,), source.reshape(-1).to(operand.dtype), accumulate=True)
    return result[:size].reshape(operand.shape)


def _divmod_uint64(a, b):
    """Quotient and remainder of uint64 values held in int64 (b != 0). A divisor of 2**63 or more
    goes at most once; a smaller one divides half the dividend (a logical shift: non-negative),
    the quotient doubled and corrected by one step (the remainder left is below 2 * b)."""
    big = b < 0
    half = (a >> 1) & ((1 << 63) - 1)
    safe = torch.where(big, 1, b)
    q = torch.div(half, safe, rounding_mode="trunc") << 1
    r = a - q * safe
    step = ~_below_unsigned(r, safe)
    q = torch.where(step, q + 1, q)
    r = torch.where(step, r - safe, r)
    once = ~_below_unsigned(a, b)
    q = torch.where(big, once.to(torch.int64), q)
    r = torch.where(big, torch.where(once, a - b, a), r)
    return q, r


def divide_uint64(a, b):
    """uint64 division (on the int64 views); x/0 is all ones."""
    zero = b == 0
    q, _ = _divmod_uint64(a, torch.where(zero, 1, b))
    return torch.where(zero, -1, q)


def remainder_uint64(a, b):
    """uint64 remainder (on the int64 views); x%0 is x."""
    zero = b == 0
    _, r = _divmod_uint64(a, torch.where(zero, 1, b))
    return torch.where(zero, a, r)


# Sorting by several keys -----------------------------------------------------------------------

def sortable(key, total: bool):
    """A sort key as a tensor torch.sort orders as the comparator does: floats by total order
    when the comparator compares TOTALORDER (else as torch does: NaN last), unsigned
    16/32/64-bit keys through their signed bits with the sign flipped, booleans as uint8."""
    if key.dtype == torch.bool:
        return key.to(torch.uint8)
    if key.dtype in _SIGNED:
        return _flip(key.view(_SIGNED[key.dtype]))
    if total and key.is_floating_point():
        return total_order_key(key)
    return key


def sort_lexicographic(operands, keys, descending, dimension: int):
    """Stable sort of every operand along `dimension` by the first key, ties by the next, ...:
    stable sorts by each key from the last to the first (a later sort keeps the order of the
    earlier ones among its ties)."""
    order = None
    for key, down in zip(reversed(keys), reversed(descending)):
        k = key if order is None else torch.take_along_dim(key, order, dimension)
        step = torch.sort(k, dim=dimension, descending=down, stable=True).indices
        order = step if order is None else torch.take_along_dim(order, step, dimension)
    return tuple(_take_along(x, order, dimension) for x in operands)


def _take_along(x, order, dimension: int):
    signed = _SIGNED.get(x.dtype)
    if signed is None:
        return torch.take_along_dim(x, order, dimension)
    return torch.take_along_dim(x.view(signed), order, dimension).view(x.dtype)  # no gather on unsigned


def sort_pairwise(comparator: Callable, xs, dimension: int) -> tuple:
    """Stable sort by any elementwise comparator, as the numpy rule computes it: each element's
    rank is the number of elements before it (less, or equivalent and earlier), from the n x n
    matrix of comparator results."""
    xs = [torch.movedim(x, dimension, -1) for x in xs]
    n = xs[0].shape[-1]
    if n <= 1:
        return tuple(torch.movedim(x, -1, dimension).clone() for x in xs)
    args = []
    for x in xs:
        args += [x.unsqueeze(-1), x.unsqueeze(-2)]
    less = comparator(*args)[0].expand((*xs[0].shape, n))
    greater = less.transpose(-1, -2)
    earlier = torch.ones((n, n), dtype=torch.bool, device=xs[0].device).tril(-1)
    rank = greater.sum(-1) + (~less & ~greater & earlier).sum(-1)
    order = torch.sort(rank, dim=-1, stable=True).indices
    return tuple(torch.movedim(_take_along(x, order, -1), -1, dimension) for x in xs)


def clamp_unsigned(lo, x, hi):
    """clamp in unsigned order (on the signed views, the sign bits flipped and back)."""
    return _flip(torch.minimum(torch.maximum(_flip(x), _flip(lo)), _flip(hi)))


def convert_from_uint64(x, dtype):
    """uint64 to another type: integers wrap; floats round once, values of 2**63 and more
    halved first with the dropped bit kept as a sticky bit (so the halving rounds nothing)."""
    s = x.view(torch.int64)
    if dtype == torch.bool:
        return s != 0
    if dtype.is_floating_point:
        half = ((s >> 1) & ((1 << 63) - 1)) | (s & 1)
        return torch.where(s < 0, half.to(dtype) * 2, s.to(dtype))
    signed = _SIGNED.get(dtype)
    if signed is not None:
        return s.to(signed).view(dtype)
    return s.to(dtype)


def convert_to_uint64(x):
    """To uint64: integers wrap (unsigned ones zero-extended); floats truncate and saturate to
    [0, 2**64 - 1], NaN -> 0, values of 2**63 and more through their offset from 2**63."""
    if x.is_floating_point():
        t = torch.trunc(x.to(torch.float64))
        too_big = t >= 2.0 ** 64
        t = torch.where(torch.isnan(t) | (t < 0) | too_big, 0.0, t)
        high = t >= 2.0 ** 63
        wide = torch.where(high, (torch.where(high, t - 2.0 ** 63, 0.0)).to(torch.int64) ^ _INT64_MIN,
                           torch.where(high, 0.0, t).to(torch.int64))
        return torch.where(too_big, -1, wide).view(torch.uint64)
    signed = _SIGNED.get(x.dtype)
    if signed is not None:
        return (x.view(signed).to(torch.int64) & ((1 << (x.element_size() * 8)) - 1)).view(torch.uint64)
    return x.to(torch.int64).view(torch.uint64)


def reduce_empty(inits, shapes) -> tuple:
    """A reduction over a dimension of size 0: the init values."""
    return tuple(i.expand(shape).clone() for i, shape in zip(inits, shapes))


def reduce_unsigned(x, dims, init, kind: str, combine: bool):
    """`reduce` over unsigned 16/32/64-bit values: sums and products wrap alike on the signed
    views; max and min compare them with the sign bits flipped."""
    signed = _SIGNED[x.dtype]
    xs, i = x.view(signed), init.view(signed)
    if kind in ("max", "min"):
        return _flip(reduce(_flip(xs), dims, _flip(i), kind, signed, combine)).view(x.dtype)
    return reduce(xs, dims, i, kind, signed, combine).view(x.dtype)


def reduce_window_unsigned(x, init, kind: str, config, combine: bool):
    """`reduce_window` over unsigned 16/32/64-bit values, as `reduce_unsigned` reduces."""
    signed = _SIGNED[x.dtype]
    xs, i = x.view(signed), init.view(signed)
    if kind in ("max", "min"):
        return _flip(reduce_window(_flip(xs), _flip(i), kind, config, signed, combine)).view(x.dtype)
    return reduce_window(xs, i, kind, config, signed, combine).view(x.dtype)


class IndexedSignedView:
    """A kernel on the signed views of its unsigned data arguments, its unsigned index arguments
    given as int64 values."""

    __slots__ = ("fn", "out", "indices", "saturate", "__name__")

    def __init__(self, fn: Callable, out: tuple, indexed: tuple) -> None:
        self.fn = fn
        self.out = out
        first, last, self.saturate = indexed
        self.indices = slice(first, last)
        self.__name__ = "signed_" + getattr(fn, "__name__", "kernel")

    def __call__(self, *args: Any) -> Any:
        positions = range(len(args))[self.indices]
        args = tuple(_index_value(a, self.saturate) if i in positions else _signed_view(a)
                     for i, a in enumerate(args))
        out = self.fn(*args)
        d = self.out[0]
        return out if d is None else out.view(d)


def _index_value(x, saturate: bool):
    """Unsigned indices as int64 values; uint64 ones of 2**63 or more saturate (they are past
    any bound) or wrap."""
    if not isinstance(x, torch.Tensor) or x.dtype not in _SIGNED:
        return x
    if x.dtype != torch.uint64:
        return x.to(torch.int64)
    wide = x.view(torch.int64)
    return torch.where(wide < 0, (1 << 63) - 1, wide) if saturate else wide


