"""The torch kernel table's machinery: the torch side of `loom.backend.kernels`.

`TORCH_KERNELS[name](op) -> Kernel | None` reads the op's static attributes once and returns the
call the compiled executor emits (`v3 = add(v1, v2)` over torch tensors), or None when this op form
has no torch kernel. The op families of `loom.ops` fill the table: their `<family>_torch` modules
(named with `common.torch_kernels_in`) are imported at the end of this module, that is when torch
is first used, never by `import loom`. An op without a torch kernel (or whose form or element types
torch cannot compute: torch has no arithmetic on uint16/uint32/uint64) runs its numpy kernel on the
tensors' values (`NumpyFallback`: tensors to numpy, the numpy kernel, results back to the device),
so the torch backend runs everything the numpy backend runs, with the same results; on a GPU each
such op is a round trip through the host, and a compiled program lists them (with the reason) in
`TorchExecutable.numpy_ops`. Here: dtypes, conversions between arrays and tensors, the numpy
fallback, unsigned integers on their signed views, and the arithmetic several families share.

Semantics are StableHLO's, as in the numpy table (checked against jax in the conformance tests):
integer division truncates, x/0 is -1 and x%0 is x, INT_MIN/-1 is INT_MIN, shifts by the bit
width or more give 0 (arithmetic: the sign), float->int converts saturate with NaN -> 0, sorts are
stable, gather clamps its start indices and scatter skips out-of-bounds windows; bfloat16 is
torch.bfloat16. Every kernel composes torch ops that run on any device and never read a value
back to the host, so programs made of them can be captured as CUDA graphs.
"""

from __future__ import annotations

import importlib
import operator
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np
import torch

from loom.backend import common
from loom.backend import kernels as kn
from loom.backend.kernels import ALL, PACKED, Kernel, Operand, Rest, operand_dtype, result_dtype
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
LOW_FLOATS = (torch.float16, torch.bfloat16)


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


# Arithmetic shared by op families and the unsigned views below -------------------------------

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


COMPARE = {"EQ": torch.eq, "NE": torch.ne, "LT": torch.lt, "LE": torch.le, "GT": torch.gt, "GE": torch.ge}
_INT_OF_SIZE = {2: torch.int16, 4: torch.int32, 8: torch.int64}


def total_order_key(x):
    """Integers ordering floats totally: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN."""
    it = _INT_OF_SIZE[x.element_size()]
    i = x.contiguous().view(it)
    return torch.where(i < 0, i ^ torch.iinfo(it).max, i)


def below_unsigned(a, b):
    return (a ^ _INT64_MIN) < (b ^ _INT64_MIN)


_INT64_MIN = -(1 << 63)


# Padding (convolutions and windows) -------------------------------------------------------------


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



__all__ = ["ALL", "NUMPY_DTYPES", "PACKED", "SHELL_DTYPES", "TORCH_DTYPES", "TORCH_KERNELS", "Kernel",
           "NumpyFallback", "Operand", "Rest", "fallback", "to_numpy", "to_torch", "torch_dtype", "torch_kernel",
           "torch_kernel_for"]



# Unsigned 16/32/64-bit integers: torch stores them but has almost no kernels for them. Ops that
# only move bits (wrapping add, multiply, bitwise ops, shifts, data movement) run on the signed
# integers of the same width (a view, no copy) and view the result back; comparisons flip the sign
# bit first; conversions go through int64 (16 and 32 bits); uint64 division is long division on
# int64. The rest takes the numpy path.

SIGNED_OF = {torch.uint16: torch.int16, torch.uint32: torch.int32, torch.uint64: torch.int64}
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
        signed = SIGNED_OF.get(x.dtype)
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
        return Kernel(SignedView(compare_unsigned, out), Operand(0), Operand(1), COMPARE[direction])
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
        signed = SIGNED_OF[torch_dtype(result_dtype(op))]
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


def flip_sign_bit(x):
    return x ^ torch.iinfo(x.dtype).min  # unsigned order as signed order


def compare_unsigned(a, b, fn):
    if fn in (torch.eq, torch.ne):
        return fn(a, b)
    return fn(flip_sign_bit(a), flip_sign_bit(b))


def select_unsigned(a, b, fn):
    return torch.where(fn(flip_sign_bit(a), flip_sign_bit(b)), a, b)


def convert_from_unsigned(x, mask, dtype):
    """uint16/uint32 (viewed as signed) to another type, through its int64 value."""
    wide = x.view(SIGNED_OF[x.dtype]).to(torch.int64) & mask
    if dtype == torch.bool:
        return wide != 0
    return wide.to(dtype)


def convert_to_unsigned(x, dtype, high):
    """To uint16/uint32: integers wrap, floats truncate and saturate (NaN -> 0)."""
    signed = SIGNED_OF[dtype]
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



def _divmod_uint64(a, b):
    """Quotient and remainder of uint64 values held in int64 (b != 0). A divisor of 2**63 or more
    goes at most once; a smaller one divides half the dividend (a logical shift: non-negative),
    the quotient doubled and corrected by one step (the remainder left is below 2 * b)."""
    big = b < 0
    half = (a >> 1) & ((1 << 63) - 1)
    safe = torch.where(big, 1, b)
    q = torch.div(half, safe, rounding_mode="trunc") << 1
    r = a - q * safe
    step = ~below_unsigned(r, safe)
    q = torch.where(step, q + 1, q)
    r = torch.where(step, r - safe, r)
    once = ~below_unsigned(a, b)
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



def clamp_unsigned(lo, x, hi):
    """clamp in unsigned order (on the signed views, the sign bits flipped and back)."""
    return flip_sign_bit(torch.minimum(torch.maximum(flip_sign_bit(x), flip_sign_bit(lo)), flip_sign_bit(hi)))


def convert_from_uint64(x, dtype):
    """uint64 to another type: integers wrap; floats round once, values of 2**63 and more
    halved first with the dropped bit kept as a sticky bit (so the halving rounds nothing)."""
    s = x.view(torch.int64)
    if dtype == torch.bool:
        return s != 0
    if dtype.is_floating_point:
        half = ((s >> 1) & ((1 << 63) - 1)) | (s & 1)
        return torch.where(s < 0, half.to(dtype) * 2, s.to(dtype))
    signed = SIGNED_OF.get(dtype)
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
    signed = SIGNED_OF.get(x.dtype)
    if signed is not None:
        return (x.view(signed).to(torch.int64) & ((1 << (x.element_size() * 8)) - 1)).view(torch.uint64)
    return x.to(torch.int64).view(torch.uint64)



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
        args = tuple(index_value(a, self.saturate) if i in positions else _signed_view(a)
                     for i, a in enumerate(args))
        out = self.fn(*args)
        d = self.out[0]
        return out if d is None else out.view(d)


def index_value(x, saturate: bool):
    """Unsigned indices as int64 values; uint64 ones of 2**63 or more saturate (they are past
    any bound) or wrap."""
    if not isinstance(x, torch.Tensor) or x.dtype not in SIGNED_OF:
        return x
    if x.dtype != torch.uint64:
        return x.to(torch.int64)
    wide = x.view(torch.int64)
    return torch.where(wide < 0, (1 << 63) - 1, wide) if saturate else wide




# The op families' torch kernels, registered now that torch is loaded.
for _module in common.TORCH_KERNEL_MODULES:
    importlib.import_module(_module)
