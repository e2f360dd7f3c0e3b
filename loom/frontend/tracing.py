"""Tracing Python into loom's IR: a `Tracer` stands for an IR value of a `func.func` being built,
with JAX's dtype promotion (weak types for Python scalars) and numpy broadcasting.

A `TraceContext` owns the module, the function and a `Builder`; while it is active (a `with`
block) `loom.numpy` functions applied to tracers insert StableHLO ops. Every op gets a
`FileLineColLoc` of the user's line: the first frame on the Python stack outside the loom package.

Traces nest (grad, vmap, jvp inside `loom.jit` trace the inner function in a trace of its own).
A tracer of an enclosing active trace read by the inner function (a closure, as JAX allows) is
captured (`TraceContext.capture`): it becomes an extra argument appended to the inner function's
inputs, and the transformation passes the outer tracer for it when inlining into the enclosing
trace. A tracer of a trace that is no longer active (leaked) is never captured: using it raises.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from loom.dialects import builtin, func, stablehlo
from loom.ir.attributes import FileLineColLoc, Location, TypeAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Value
from loom.ir.types import FloatType, FunctionType, IntegerType, RankedTensorType, Type

_LOOM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class TracerError(TypeError):
    """A traced value was used where a concrete Python value is needed."""


class TracerBoolConversionError(TracerError):
    """Python control flow (`if`, `while`, `and`, `bool(...)`) on a traced value."""


# --- dtypes ------------------------------------------------------------------------------------

# bfloat16 is ml_dtypes' (as jax.numpy.bfloat16); numpy gives it kind "V", so "is this a float"
# is asked through `is_floating`, never through `dtype.kind`.
bfloat16 = np.dtype(ml_dtypes.bfloat16)

_IR_TYPES: dict[np.dtype, Type] = {
    np.dtype(np.bool_): IntegerType(1),
    np.dtype(np.int8): IntegerType(8), np.dtype(np.int16): IntegerType(16),
    np.dtype(np.int32): IntegerType(32), np.dtype(np.int64): IntegerType(64),
    np.dtype(np.uint8): IntegerType(8, "u"), np.dtype(np.uint16): IntegerType(16, "u"),
    np.dtype(np.uint32): IntegerType(32, "u"), np.dtype(np.uint64): IntegerType(64, "u"),
    bfloat16: FloatType("bf16"), np.dtype(np.float16): FloatType("f16"), np.dtype(np.float32): FloatType("f32"),
    np.dtype(np.float64): FloatType("f64"),
}
_NP_DTYPES = {t: d for d, t in _IR_TYPES.items()}


def ir_element_type(dtype: Any) -> Type:
    """The IR element type of a numpy dtype."""
    d = np.dtype(dtype)
    if d not in _IR_TYPES:
        raise TypeError(f"loom does not trace values of dtype {d} (at {user_line()})")
    return _IR_TYPES[d]


def np_dtype(t: Type) -> np.dtype:
    """The numpy dtype of an IR element type."""
    return _NP_DTYPES[t]


def is_floating(dtype: Any) -> bool:
    """Whether `dtype` is a real floating-point dtype (bfloat16 included, which numpy's
    `dtype.kind` and `np.issubdtype(d, np.floating)` do not count)."""
    d = np.dtype(dtype)
    return d.kind == "f" or d == bfloat16


def dtype_kind(dtype: Any) -> str:
    """numpy's `dtype.kind`, with bfloat16 counted as a float ("f") rather than "V"."""
    return "f" if is_floating(dtype) else np.dtype(dtype).kind


def tensor_type(shape: Sequence[int], dtype: Any) -> RankedTensorType:
    """`tensor<shape x dtype>`."""
    return RankedTensorType(tuple(int(d) for d in shape), ir_element_type(dtype), None)


# JAX's type promotion lattice; "i*", "f*" and "c*" are the weak categories of Python ints,
# floats and complex numbers.
_LATTICE: dict[str, list[str]] = {
    "bool": ["i*"], "i*": ["uint8", "int8"], "uint8": ["int16", "uint16"], "uint16": ["int32", "uint32"],
    "uint32": ["int64", "uint64"], "uint64": ["f*"], "int8": ["int16"], "int16": ["int32"], "int32": ["int64"],
    "int64": ["f*"], "f*": ["c*", "bfloat16", "float16"], "c*": ["complex64"], "bfloat16": ["float32"],
    "float16": ["float32"], "float32": ["float64", "complex64"], "float64": ["complex128"],
    "complex64": ["complex128"], "complex128": [],
}


def _upper(node: str, memo: dict[str, frozenset[str]] = {}) -> frozenset[str]:  # noqa: B006 - a cache
    if node not in memo:
        out = {node}
        for n in _LATTICE[node]:
            out |= _upper(n)
        memo[node] = frozenset(out)
    return memo[node]


def _node(dtype: np.dtype, weak: bool) -> str:
    if weak and dtype.kind in "iu":
        return "i*"
    if weak and is_floating(dtype):
        return "f*"
    if weak and dtype.kind == "c":
        return "c*"
    return dtype.name


def promote_types(*items: tuple[np.dtype, bool]) -> tuple[np.dtype, bool]:
    """The common dtype of `(dtype, weak)` pairs, as JAX's lattice (least upper bound), and whether
    it is weak. A weak int stays the strong int's width; a weak float takes float32 by default."""
    common = frozenset(_LATTICE)
    for d, w in items:
        common &= _upper(_node(np.dtype(d), w))
    best = max(common, key=lambda n: len(_upper(n)), default=None)
    if best is None or len(_upper(best)) != len(common):
        raise TypeError(f"no common dtype for {[str(d) for d, _ in items]}")
    if best == "i*":
        widest = [np.dtype(d) for d, w in items if np.dtype(d).kind in "iu"]
        return (widest[0] if widest else np.dtype(np.int32)), True
    if best == "f*":
        floats = [np.dtype(d) for d, w in items if is_floating(d)]
        return (floats[0] if floats else np.dtype(np.float32)), True
    if best == "c*":
        complexes = [np.dtype(d) for d, w in items if np.dtype(d).kind == "c"]
        return (complexes[0] if complexes else np.dtype(np.complex64)), True
    return np.dtype(best), False


def scalar_dtype(x: Any) -> tuple[np.dtype, bool]:
    """(dtype, weak) of a Python scalar, numpy value or tracer."""
    if isinstance(x, Tracer):
        return x.dtype, x.weak
    if isinstance(x, np.generic):  # before float: np.float64 subclasses it, but is strongly typed
        return x.dtype, False
    if isinstance(x, bool):
        return np.dtype(np.bool_), False
    if isinstance(x, int):
        return np.dtype(np.int32), True
    if isinstance(x, float):
        return np.dtype(np.float32), True
    if isinstance(x, complex):
        return np.dtype(np.complex64), True
    return np.asarray(x).dtype, False


# --- trace context -----------------------------------------------------------------------------

_STACK: list[TraceContext] = []


def current_trace() -> TraceContext | None:
    """The innermost active trace, or None outside tracing."""
    return _STACK[-1] if _STACK else None


def user_location() -> Location:
    """A `FileLineColLoc` of the innermost frame on the stack outside the loom package."""
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.startswith(_LOOM_DIR):
        frame = frame.f_back
    if frame is None:
        return FileLineColLoc("<unknown>", 0, 0)
    return FileLineColLoc(frame.f_code.co_filename, frame.f_lineno, 1)


def user_line() -> str:
    """`file:line` of the user's calling line, for error messages."""
    loc = user_location()
    return f"{loc.filename}:{loc.line}"


class TraceContext:
    """Builds `func.func @name` inside a fresh `builtin.module` from the argument types; the
    traced function's ops go through `builder`. Use as a context manager."""

    def __init__(self, arg_types: Sequence[RankedTensorType], name: str = "main") -> None:
        self.module = builtin.ModuleOp.build()
        self.func = func.FuncOp.build(name, FunctionType(tuple(arg_types), ()))
        self.module.body.append(self.func)
        self.builder = Builder(InsertionPoint.at_end(self.func.entry_block))
        # closure capture: tracers of enclosing active traces this function reads, in order; each
        # became an extra (implicit) argument appended to the function's inputs
        self.captures: list[Tracer] = []
        self._captured: dict[int, Tracer] = {}

    def __enter__(self) -> TraceContext:
        _STACK.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _STACK.remove(self)

    def arguments(self, weak: Sequence[bool] | None = None) -> list[Tracer]:
        args = self.func.entry_block.args
        weak = weak or [False] * len(args)
        return [Tracer(v, self, w) for v, w in zip(args, weak)]

    def capture(self, outer: Tracer) -> Tracer:
        """`outer`, a tracer of an enclosing active trace (one lower on the stack), as a tracer of
        this trace: a new block argument appended to the function's inputs (one per outer value),
        recorded in `captures`. Callers that inline this function into the enclosing trace pass
        `captures` as the extra inputs."""
        key = id(outer._value)
        t = self._captured.get(key)
        if t is None:
            block = self.func.entry_block
            arg = block.add_argument(outer._value.type)
            ftype = self.func.type
            self.func.properties["function_type"] = TypeAttr(FunctionType((*ftype.inputs, arg.type), ftype.results))
            t = Tracer(arg, self, outer.weak)
            self.captures.append(outer)
            self._captured[key] = t
        if t.weak != outer.weak:
            return Tracer(t._value, self, outer.weak)
        return t

    def emit(self) -> Builder:
        """The builder, its location set to the user's current line. Raises `TracerError` when the
        trace is not the innermost active one (a tracer leaked out of its function)."""
        if not _STACK or _STACK[-1] is not self:
            raise TracerError(f"a traced value was used outside the function that traced it (at {user_line()}); "
                              "return it from the jitted function instead of storing it")
        self.builder.location = user_location()
        return self.builder

    def finish(self, outputs: Sequence[Tracer]) -> None:
        """Return `outputs` from the function and set its type."""
        b = self.emit()
        b.insert(func.ReturnOp.build([t.value for t in outputs], b.location))
        ftype = FunctionType(self.func.type.inputs, tuple(t.value.type for t in outputs))
        self.func.properties["function_type"] = TypeAttr(ftype)

    def constant(self, value: Any, dtype: Any = None, shape: Sequence[int] | None = None) -> Value:
        """A `stablehlo.constant` (a splat when `value` is a scalar and `shape` is given)."""
        arr = np.asarray(value, dtype=dtype)
        shape = arr.shape if shape is None else tuple(shape)
        if arr.shape != shape:
            if arr.size == 1:
                arr = arr.reshape(())
            else:
                arr = np.broadcast_to(arr, shape)
        return stablehlo.constant(self.emit(), np.ascontiguousarray(arr), tensor_type(shape, arr.dtype))


# --- tracers -----------------------------------------------------------------------------------


class Tracer:
    """A traced array: an IR `value` of a ranked tensor type, with `shape`, `dtype` and whether
    its dtype is `weak` (it came from a Python scalar). Supports numpy's operators."""

    __array_priority__ = 100

    def __init__(self, value: Value, trace: TraceContext, weak: bool = False) -> None:
        self._value = value
        self._trace = trace
        self.weak = weak
        t = value.type
        self.shape: tuple[int, ...] = tuple(t.shape)
        self.dtype: np.dtype = np_dtype(t.element_type)

    def _resolved(self) -> Tracer:
        """This tracer, or its capture into the innermost active trace when it belongs to an
        enclosing active trace (a closure of a function traced by grad, vmap, jvp...). A tracer of
        a trace that is no longer active (leaked) is returned as is: using it raises."""
        t = self._trace
        if not _STACK or _STACK[-1] is t or not any(s is t for s in _STACK):
            return self
        return _STACK[-1].capture(self)

    @property
    def value(self) -> Value:
        """The IR value, in the innermost active trace (see `_resolved`)."""
        t = self._trace
        if not _STACK or _STACK[-1] is t:
            return self._value
        return self._resolved()._value

    @property
    def trace(self) -> TraceContext:
        """The trace the value belongs to: the innermost active one for a captured closure value."""
        t = self._trace
        if not _STACK or _STACK[-1] is t:
            return t
        return self._resolved()._trace

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def T(self) -> Tracer:  # noqa: N802 - numpy's name
        return _lnp().transpose(self)

    def __repr__(self) -> str:
        weak = ", weak_type=True" if self.weak else ""
        return f"Tracer(shape={self.shape}, dtype={self.dtype}{weak})"

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def __bool__(self) -> bool:
        raise TracerBoolConversionError(
            f"the truth value of a traced array {self.shape} {self.dtype} is not known while tracing "
            f"(at {user_line()}); use lax.cond or lax.switch for data-dependent branches, lax.while_loop "
            "for data-dependent loops, or lnp.where to select elementwise")

    def _concrete(self, what: str) -> Any:
        raise TracerError(f"{what}() of a traced array is not known while tracing (at {user_line()})")

    def __int__(self) -> int:
        return self._concrete("int")

    def __float__(self) -> float:
        return self._concrete("float")

    def __index__(self) -> int:
        return self._concrete("index")

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        return self._concrete("numpy.asarray")

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def astype(self, dtype: Any) -> Tracer:
        return _lnp().astype(self, dtype)

    def reshape(self, *shape: Any) -> Tracer:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _lnp().reshape(self, shape)

    def sum(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _lnp().sum(self, axis=axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _lnp().mean(self, axis=axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _lnp().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _lnp().min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis: int | None = None, keepdims: bool = False) -> Tracer:
        return _lnp().argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis: int | None = None, keepdims: bool = False) -> Tracer:
        return _lnp().argmin(self, axis=axis, keepdims=keepdims)

    def prod(self, axis: Any = None, keepdims: bool = False, dtype: Any = None) -> Tracer:
        return _lnp().prod(self, axis=axis, keepdims=keepdims, dtype=dtype)

    def var(self, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Tracer:
        return _lnp().var(self, axis=axis, keepdims=keepdims, ddof=ddof)

    def std(self, axis: Any = None, keepdims: bool = False, ddof: int = 0) -> Tracer:
        return _lnp().std(self, axis=axis, keepdims=keepdims, ddof=ddof)

    def any(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _lnp().any(self, axis=axis, keepdims=keepdims)

    def all(self, axis: Any = None, keepdims: bool = False) -> Tracer:
        return _lnp().all(self, axis=axis, keepdims=keepdims)

    def cumsum(self, axis: int | None = None, dtype: Any = None) -> Tracer:
        return _lnp().cumsum(self, axis=axis, dtype=dtype)

    def cumprod(self, axis: int | None = None, dtype: Any = None) -> Tracer:
        return _lnp().cumprod(self, axis=axis, dtype=dtype)

    def sort(self, axis: int | None = -1) -> Tracer:
        return _lnp().sort(self, axis=axis)

    def argsort(self, axis: int | None = -1) -> Tracer:
        return _lnp().argsort(self, axis=axis)

    def flatten(self) -> Tracer:
        return _lnp().reshape(self, (-1,))

    ravel = flatten

    def swapaxes(self, axis1: int, axis2: int) -> Tracer:
        return _lnp().swapaxes(self, axis1, axis2)

    def clip(self, min: Any = None, max: Any = None) -> Tracer:  # noqa: A002 - numpy's names
        return _lnp().clip(self, min, max)

    def round(self, decimals: int = 0) -> Tracer:
        return _lnp().round(self, decimals)

    def squeeze(self, axis: Any = None) -> Tracer:
        return _lnp().squeeze(self, axis)

    def transpose(self, *axes: Any) -> Tracer:
        if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], (tuple, list))):
            axes = axes[0]
        return _lnp().transpose(self, tuple(axes) if axes else None)

    def __getitem__(self, index: Any) -> Tracer:
        if isinstance(index, tuple) and len(index) == 1:
            index = index[0]
        if isinstance(index, Tracer) and index.shape == () and index.dtype.kind in "iu" and self.shape:
            return _take_scalar(self, index)
        return getitem(self, index)

    @property
    def at(self) -> Any:
        """Functional updates, `x.at[idx].set(v)` and friends, as in JAX."""
        from loom.numpy._indexing import at
        return at(self)

    def __add__(self, o: Any) -> Tracer:
        return _lnp().add(self, o)

    def __radd__(self, o: Any) -> Tracer:
        return _lnp().add(o, self)

    def __sub__(self, o: Any) -> Tracer:
        return _lnp().subtract(self, o)

    def __rsub__(self, o: Any) -> Tracer:
        return _lnp().subtract(o, self)

    def __mul__(self, o: Any) -> Tracer:
        return _lnp().multiply(self, o)

    def __rmul__(self, o: Any) -> Tracer:
        return _lnp().multiply(o, self)

    def __truediv__(self, o: Any) -> Tracer:
        return _lnp().divide(self, o)

    def __rtruediv__(self, o: Any) -> Tracer:
        return _lnp().divide(o, self)

    def __pow__(self, o: Any) -> Tracer:
        return _lnp().power(self, o)

    def __rpow__(self, o: Any) -> Tracer:
        return _lnp().power(o, self)

    def __matmul__(self, o: Any) -> Tracer:
        return _lnp().matmul(self, o)

    def __rmatmul__(self, o: Any) -> Tracer:
        return _lnp().matmul(o, self)

    def __floordiv__(self, o: Any) -> Tracer:
        return _lnp().floor_divide(self, o)

    def __rfloordiv__(self, o: Any) -> Tracer:
        return _lnp().floor_divide(o, self)

    def __mod__(self, o: Any) -> Tracer:
        return _lnp().remainder(self, o)

    def __rmod__(self, o: Any) -> Tracer:
        return _lnp().remainder(o, self)

    def __and__(self, o: Any) -> Tracer:
        return _lnp().bitwise_and(self, o)

    def __rand__(self, o: Any) -> Tracer:
        return _lnp().bitwise_and(o, self)

    def __or__(self, o: Any) -> Tracer:
        return _lnp().bitwise_or(self, o)

    def __ror__(self, o: Any) -> Tracer:
        return _lnp().bitwise_or(o, self)

    def __xor__(self, o: Any) -> Tracer:
        return _lnp().bitwise_xor(self, o)

    def __rxor__(self, o: Any) -> Tracer:
        return _lnp().bitwise_xor(o, self)

    def __invert__(self) -> Tracer:
        return _lnp().invert(self)

    def __neg__(self) -> Tracer:
        return _lnp().negative(self)

    def __pos__(self) -> Tracer:
        return self

    def __abs__(self) -> Tracer:
        return _lnp().abs(self)

    def __lt__(self, o: Any) -> Tracer:
        return _lnp().less(self, o)

    def __le__(self, o: Any) -> Tracer:
        return _lnp().less_equal(self, o)

    def __gt__(self, o: Any) -> Tracer:
        return _lnp().greater(self, o)

    def __ge__(self, o: Any) -> Tracer:
        return _lnp().greater_equal(self, o)

    def __eq__(self, o: Any) -> Tracer:  # type: ignore[override]
        return _lnp().equal(self, o)

    def __ne__(self, o: Any) -> Tracer:  # type: ignore[override]
        return _lnp().not_equal(self, o)

    __hash__ = object.__hash__


def _lnp() -> Any:
    import loom.numpy as lnp
    return lnp


def _take_scalar(x: Tracer, i: Tracer) -> Tracer:
    """`x[i]` for a traced integer scalar `i` (a loop counter): one `dynamic_slice` of the leading
    dimension, as JAX rewrites this case. The general path (a gather over a grid of indices) gives
    the same values (negative indices wrap, others clamp) but costs a full advanced-indexing read
    per call in the executors, and its gradient is a scatter instead of a `dynamic_update_slice`."""
    from loom.lax import ops as lax_ops
    row = lax_ops.dynamic_slice_in_dim(x, i, 1, 0)  # wraps a negative start, as jax.lax.dynamic_slice
    return lax_ops.reshape(row, x.shape[1:])


def getitem(x: Tracer, index: Any) -> Tracer:
    """`x[index]`; the rules live in loom.numpy._indexing."""
    from loom.numpy._indexing import getitem as _getitem
    return _getitem(x, index)


__all__ = ["TraceContext", "Tracer", "TracerBoolConversionError", "TracerError", "current_trace", "getitem",
           "ir_element_type", "np_dtype", "promote_types", "scalar_dtype", "tensor_type", "user_location",
           "user_line"]
