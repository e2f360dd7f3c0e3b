"""The numpy kernel table: `Kernel`, the operand markers, `KERNELS`, and the array helpers several
op families share.

`KERNELS[name](op) -> Kernel` reads the op's static attributes once and returns the call to make:
`Kernel(fn, *template)`, where the template lists what `fn` receives: operand markers (`ALL`,
`PACKED`, `Operand(i)`) and static values. The compiled executor turns a Kernel into one line of
Python (`v3 = np_add(v1, v2)`, static values hoisted to constants of the generated module); the
interpreter calls it directly. The kernels themselves are in their op families (`loom.ops`), which
fill the table when `loom.ops` is imported.

Semantics follow StableHLO as XLA computes it on CPU (checked against jax in the conformance
tests): integer division truncates, x/0 is -1 (all ones) and x%0 is x, INT_MIN/-1 is INT_MIN,
shifts by the bit width or more give 0 (arithmetic: the sign), float->int converts saturate with
NaN -> 0, f16/bf16 arithmetic that numpy lacks is done in f32 and rounded.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from loom.backend.common import ExecutionError, dtype_of, shape_of
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


# The ml_dtypes float types narrower than 16 bits whose values f16 holds (all but f8E8M0FNU).
F16_HOLDS = frozenset(np.dtype(t) for t in (
    ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2, ml_dtypes.float8_e4m3fnuz, ml_dtypes.float8_e5m2fnuz,
    ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e4m3, ml_dtypes.float8_e3m4, ml_dtypes.float6_e2m3fn,
    ml_dtypes.float6_e3m2fn, ml_dtypes.float4_e2m1fn))
NARROW_FLOATS = F16_HOLDS | {np.dtype(ml_dtypes.float8_e8m0fnu)}  # the torch backend holds them in float32

def unsigned_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(f"u{dt.itemsize}")


def signed_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(f"i{dt.itemsize}")


def total_order_key(x):
    """Integers ordering floats totally: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN."""
    x = np.asarray(x)
    sd = signed_dtype(x.dtype)
    i = x.view(sd)
    return np.where(i < 0, i ^ np.iinfo(sd).max, i)

def identity(x):
    return x


# Array helpers the op families share ---------------------------------------------------------


def reshape(x, shape):
    return x.reshape(shape)





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



def values_tuple(*xs):
    return tuple(xs)




def _compute_dtype(dt: np.dtype) -> np.dtype:
    return np.dtype(np.float32) if dt in LOW_FLOATS else dt






def kernel_for(op: Operation) -> Kernel:
    maker = KERNELS.get(op.name)
    if maker is None:
        raise ExecutionError(f"no numpy kernel for op '{op.name}'")
    return maker(op)


__all__ = ["ALL", "KERNELS", "PACKED", "Kernel", "Operand", "Rest", "kernel", "kernel_for"]
