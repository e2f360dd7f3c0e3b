"""Constant folding helpers shared by the op families: which operands are small enough to fold
(`FOLD_LIMIT`), numpy arrays in and elements attributes out, and the scalar semantics numpy does not
give directly (integer division and shifts by StableHLO's rules, round-half-away-from-zero, NaN
propagation in min/max, neutral elements)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.ir.attributes import Attribute, DenseElementsAttr
from loom.ir.types import FloatType, IntegerType, RankedTensorType, Type

__all__ = ["FOLD_LIMIT"]


FOLD_LIMIT = 64
"""Constants with more elements than this (other than splats) are not folded."""


def foldable(attrs: Sequence[Attribute | None]) -> list[DenseElementsAttr] | None:
    if not attrs or not all(isinstance(a, DenseElementsAttr) for a in attrs):
        return None
    if all(a.splat for a in attrs) or all(a.type.num_elements <= FOLD_LIMIT for a in attrs):
        return list(attrs)
    return None


def to_arrays(attrs: list[DenseElementsAttr]) -> list[np.ndarray]:
    """The elements (a single 0-d element each when every operand is a splat)."""
    if all(a.splat for a in attrs):
        return [a.to_numpy().reshape(-1)[:1].reshape(()) for a in attrs]
    return [np.asarray(a.to_numpy()) for a in attrs]


def result_attr(value: np.ndarray | None, type: Type) -> DenseElementsAttr | None:
    if value is None or not isinstance(type, RankedTensorType) or not type.has_static_shape:
        return None
    return DenseElementsAttr.get(np.asarray(value), type)


def fold_elementwise(fn: Callable[..., np.ndarray | None] | None, operands: Sequence[Attribute | None],
                     result_type: Type) -> list[Attribute] | None:
    if fn is None:
        return None
    attrs = foldable(operands)
    if attrs is None:
        return None
    with np.errstate(all="ignore"):
        value = fn(*to_arrays(attrs))
    r = result_attr(value, result_type)
    return None if r is None else [r]


_WIDE = {"f16", "bf16", "f32"}


def float_op(np_fn: Callable) -> Callable[[np.ndarray, np.ndarray], np.ndarray | None]:
    """A correctly rounded float op: narrow floats are computed in f64 and rounded once (double
    rounding is innocuous for +, -, *, / and sqrt when the wide format has >= 2p+2 bits)."""
    def fn(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray | None:
        dtype = a.dtype
        wide = dtype.itemsize < 8
        args = (a,) if b is None else (a, b)
        if wide:
            args = tuple(x.astype(np.float64) for x in args)
        return np_fn(*args).astype(dtype)
    return fn


def ints_op(py_fn: Callable[..., int | None]) -> Callable[..., np.ndarray | None]:
    """An integer op computed on Python ints per element; None from any element cancels the fold."""
    def fn(*arrays: np.ndarray) -> np.ndarray | None:
        dtype = arrays[0].dtype
        width = 1 if dtype == np.bool_ else dtype.itemsize * 8
        unsigned = dtype.kind in "ub"
        flat = [a.reshape(-1) for a in np.broadcast_arrays(*arrays)]
        out = []
        for values in zip(*flat):
            v = py_fn(*[int(x) for x in values], width=width, unsigned=unsigned)
            if v is None:
                return None
            out.append(IntegerType(width, "u" if unsigned else "").normalize(v))
        return np.array(out, dtype=np.int64 if not unsigned else np.uint64).astype(dtype).reshape(arrays[0].shape)
    return fn


def _div_int(x: int, y: int, width: int, unsigned: bool) -> int | None:
    if y == 0 or (not unsigned and x == -(1 << (width - 1)) and y == -1):
        return None
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


def _rem_int(x: int, y: int, width: int, unsigned: bool) -> int | None:
    q = _div_int(x, y, width, unsigned)
    return None if q is None else x - y * q


def _shift_amount(s: int, width: int) -> int:
    return s & ((1 << width) - 1)  # the shift operand is read as unsigned


def _shl(x: int, s: int, width: int, unsigned: bool) -> int:
    s = _shift_amount(s, width)
    return 0 if s >= width else x << s


def _shr_logical(x: int, s: int, width: int, unsigned: bool) -> int:
    s = _shift_amount(s, width)
    return 0 if s >= width else (x & ((1 << width) - 1)) >> s


def _shr_arithmetic(x: int, s: int, width: int, unsigned: bool) -> int:
    s = min(_shift_amount(s, width), width - 1)
    return IntegerType(width).normalize(x) >> s


def _power_int(x: int, y: int, width: int, unsigned: bool) -> int | None:
    if y < 0:
        return None
    return pow(x, y, 1 << width)


def popcount_int(x: int, width: int, unsigned: bool) -> int:
    return bin(x & ((1 << width) - 1)).count("1")


def clz_int(x: int, width: int, unsigned: bool) -> int:
    return width - (x & ((1 << width) - 1)).bit_length()


def dtype_kind(dtype: np.dtype) -> str:
    """b(ool), i(nteger), c(omplex) or f(loat, including ml_dtypes' narrow floats)."""
    return "b" if dtype == np.bool_ else "i" if dtype.kind in "iu" else "c" if dtype.kind == "c" else "f"


def by_kind(ints: Callable | None, floats: Callable | None, bools: Callable | None = None,
            complexes: Callable | None = None) -> Callable[..., np.ndarray | None]:
    """Dispatch a folder on the element dtype of the first operand."""
    def fn(*arrays: np.ndarray) -> np.ndarray | None:
        f = {"b": bools, "i": ints, "f": floats, "c": complexes}[dtype_kind(arrays[0].dtype)]
        return None if f is None else f(*arrays)
    return fn


def _minmax(np_fn: Callable) -> Callable[[np.ndarray, np.ndarray], np.ndarray | None]:
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        if dtype_kind(a.dtype) == "f":
            both_zero = (a == 0) & (b == 0)
            if np.any(both_zero & (np.signbit(a) != np.signbit(b))):
                return None  # the sign of max(-0, +0) is not pinned down
        return np_fn(a, b)
    return fn


def round_afz(a: np.ndarray) -> np.ndarray:
    t = np.trunc(a)
    return np.where(np.abs(a - t) >= 0.5, t + np.sign(a), t).astype(a.dtype)


FOLD_NEGATE = by_kind(lambda a: -a, lambda a: -a, complexes=lambda a: -a)
FOLD_ABS = by_kind(np.abs, np.abs)


def splat_value(attr: Attribute | None) -> Any:
    """The single value of a constant whose elements are all equal, else None."""
    if not isinstance(attr, DenseElementsAttr):
        return None
    arr = attr.to_numpy()
    if arr.size == 0:
        return None
    first = arr.reshape(-1)[0]
    if not attr.splat and (arr.size > FOLD_LIMIT or not np.all(arr == first)):
        return None
    return first


def is_additive_identity(v: Any, et: Type) -> bool:
    """0 for integers; only -0.0 for floats (x + 0.0 is +0.0 when x is -0.0)."""
    if isinstance(et, FloatType):
        return bool(v == 0) and bool(np.signbit(v))
    return isinstance(et, IntegerType) and et.width > 1 and v == 0


def is_zero_for_subtract(v: Any, et: Type) -> bool:
    """x - 0 is x for integers and for floats (x - +0.0 keeps -0.0)."""
    if isinstance(et, FloatType):
        return bool(v == 0) and not bool(np.signbit(v))
    return isinstance(et, IntegerType) and et.width > 1 and v == 0


def is_one(v: Any, et: Type) -> bool:
    return isinstance(et, (IntegerType, FloatType)) and bool(v == 1)


def is_all_ones(v: Any, et: Type) -> bool:
    if not isinstance(et, IntegerType):
        return False
    return IntegerType(et.width).normalize(int(v)) == -1 if et.width > 1 else bool(v)


def is_zero_bits(v: Any, et: Type) -> bool:
    return isinstance(et, IntegerType) and int(v) == 0


BINARY_FOLDS: dict[str, Callable] = {
    "add": by_kind(np.add, float_op(np.add), bools=np.logical_or),
    "subtract": by_kind(np.subtract, float_op(np.subtract)),
    "multiply": by_kind(np.multiply, float_op(np.multiply), bools=np.logical_and),
    "divide": by_kind(ints_op(_div_int), float_op(np.divide)),
    "remainder": by_kind(ints_op(_rem_int), np.fmod),
    "maximum": by_kind(np.maximum, _minmax(np.maximum), bools=np.logical_or),
    "minimum": by_kind(np.minimum, _minmax(np.minimum), bools=np.logical_and),
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "shift_left": ints_op(_shl),
    "shift_right_logical": ints_op(_shr_logical),
    "shift_right_arithmetic": ints_op(_shr_arithmetic),
    "power": by_kind(ints_op(_power_int), None),
}
