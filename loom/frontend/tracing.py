"""The front-end core: tracing Python into loom's IR. A `Tracer` stands for an IR value of a
`func.func` being built; `lift`, `promote` (JAX's dtype lattice, weak types for Python scalars),
`broadcast_to_shape`, `trace_of` and `result_type` are what loom.lax builds on (and loom.numpy on
loom.lax). Dtypes are canonicalized by one policy (`canonical_dtype`, `loom.config`): 64-bit values
are 32-bit unless `enable_x64`. The tracer's array methods and operators (`x + y`, `x.sum()`,
`x[i]`) are loom.numpy's functions, set on `Tracer` when loom.numpy is imported.

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
import threading
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from loom.dialects import builtin, func, stablehlo
from loom.frontend.config import config
from loom.frontend.placement import PLACEMENT_LISTENER
from loom.ir.attributes import FileLineColLoc, Location, TypeAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Value
from loom.ir.types import FloatType, FunctionType, IntegerType, RankedTensorType, Type

_LOOM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


class TracerError(TypeError):
    """A traced value was used where a concrete Python value is needed."""


class ConcretizationError(TracerError, NotImplementedError, ValueError, IndexError):
    """A call that needs concrete values, or that loom implements only on them (a traced `repeats`
    array, a `pad` mode): under jit an error (of each kind such calls were reported with), while
    eager calls of loom.numpy run NumPy instead, as JAX's eager calls see concrete values."""


class IncompatibleShapesError(ValueError, TypeError):
    """Operand shapes that do not fit together (broadcasting, contraction, concatenation): a
    ValueError, as NumPy's, and a TypeError, as JAX's."""


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
    it is weak. A weak int stays the strong int's width; a weak float takes float32 (float64 with
    64-bit values enabled)."""
    common = frozenset(_LATTICE)
    for d, w in items:
        common &= _upper(_node(np.dtype(d), w))
    best = max(common, key=lambda n: len(_upper(n)), default=None)
    if best is None or len(_upper(best)) != len(common):
        raise TypeError(f"no common dtype for {[str(d) for d, _ in items]}")
    if best == "i*":
        widest = [np.dtype(d) for d, w in items if np.dtype(d).kind in "iu"]
        return (widest[0] if widest else default_dtype("i")), True
    if best == "f*":
        floats = [np.dtype(d) for d, w in items if is_floating(d)]
        return (floats[0] if floats else default_dtype("f")), True
    if best == "c*":
        complexes = [np.dtype(d) for d, w in items if np.dtype(d).kind == "c"]
        return (complexes[0] if complexes else default_dtype("c")), True
    return canonical_dtype(best), False  # int8 with uint32 is int64: int32 unless enable_x64, as JAX


# 64-bit dtypes and the 32-bit ones they become unless `loom.config.enable_x64` (as JAX)
_NARROW = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32),
           np.dtype(np.uint64): np.dtype(np.uint32), np.dtype(np.complex128): np.dtype(np.complex64)}


def canonical_dtype(dtype: Any) -> np.dtype:
    """`dtype` as loom computes in it: 64-bit dtypes become 32-bit unless 64-bit values are
    enabled (`loom.config.update("enable_x64", True)`)."""
    d = np.dtype(dtype)
    return d if config.enable_x64 else _NARROW.get(d, d)


def default_dtype(kind: str) -> np.dtype:
    """The dtype of Python ints ("i"), floats ("f") and complex numbers ("c"): 32-bit, or 64-bit
    with 64-bit values enabled."""
    return canonical_dtype({"i": np.int64, "f": np.float64, "c": np.complex128}[kind])


def scalar_dtype(x: Any) -> tuple[np.dtype, bool]:
    """(dtype, weak) of a Python scalar, numpy value or tracer, canonicalized (`canonical_dtype`)."""
    if isinstance(x, Tracer):
        return x.dtype, x.weak
    if isinstance(x, np.generic):  # before float: np.float64 subclasses it, but is strongly typed
        return canonical_dtype(x.dtype), False
    if isinstance(x, bool):
        return np.dtype(np.bool_), False
    if isinstance(x, int):
        return default_dtype("i"), True
    if isinstance(x, float):
        return default_dtype("f"), True
    if isinstance(x, complex):
        return default_dtype("c"), True
    dtype = np.asarray(x).dtype
    if dtype.kind not in "biufcV":  # None, strings, objects: not an operand of array arithmetic
        raise TypeError(f"{type(x).__name__} is not an array or a number (dtype {dtype})")
    return canonical_dtype(dtype), False


# --- trace context -----------------------------------------------------------------------------

class _PerThread(threading.local):
    """Each thread traces on its own: its active traces, innermost last."""

    def __init__(self) -> None:
        self.traces: list[TraceContext] = []


_LOCAL = _PerThread()


def current_trace() -> TraceContext | None:
    """The innermost active trace, or None outside tracing."""
    return _LOCAL.traces[-1] if _LOCAL.traces else None


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
        # the mesh the traced program runs on (set by shard_map, sharding constraints and sharded jit)
        self.mesh: Any = None

    def __enter__(self) -> TraceContext:
        _LOCAL.traces.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _LOCAL.traces.remove(self)

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
        if not _LOCAL.traces or _LOCAL.traces[-1] is not self:
            raise TracerError(f"a traced value was used outside the function that traced it (at {user_line()}); "
                              "return it from the jitted function instead of storing it")
        self.builder.location = user_location()
        self.builder.listener = PLACEMENT_LISTENER  # marks ops traced under `loom.placement(device)`
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
        if not _LOCAL.traces or _LOCAL.traces[-1] is t or not any(s is t for s in _LOCAL.traces):
            return self
        return _LOCAL.traces[-1].capture(self)

    @property
    def value(self) -> Value:
        """The IR value, in the innermost active trace (see `_resolved`)."""
        t = self._trace
        if not _LOCAL.traces or _LOCAL.traces[-1] is t:
            return self._value
        return self._resolved()._value

    @property
    def trace(self) -> TraceContext:
        """The trace the value belongs to: the innermost active one for a captured closure value."""
        t = self._trace
        if not _LOCAL.traces or _LOCAL.traces[-1] is t:
            return t
        return self._resolved()._trace

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

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

    __hash__ = object.__hash__



# --- lifting, promotion, broadcasting ----------------------------------------------------------


def trace_of(*xs: Any) -> TraceContext | None:
    """The trace the tracers among `xs` (and in lists or tuples among them) belong to, or None;
    tracers of different traces are an error (one leaked out of its function)."""
    found = None
    for x in xs:
        t = x.trace if isinstance(x, Tracer) else trace_of(*x) if isinstance(x, (list, tuple)) else None
        if t is None:
            continue
        if found is not None and t is not found:
            raise TracerError(f"traced values of different functions were mixed (at {user_line()}); a tracer "
                              "leaked out of the function that traced it")
        found = t
    return found


def lift(trace: TraceContext, x: Any, dtype: np.dtype | None = None, weak: bool = False) -> Tracer:
    """`x` as a tracer (a constant if it is not one), converted to `dtype` when given."""
    if not isinstance(x, Tracer):
        d, w = scalar_dtype(x)
        arr = np.asarray(x, dtype=dtype if dtype is not None else d)
        return Tracer(trace.constant(arr), trace, weak if dtype is not None else w)
    if dtype is not None and x.dtype != dtype:
        return Tracer(stablehlo.convert(x.trace.emit(), x.value, ir_element_type(dtype)), x.trace, weak)
    if dtype is not None and x.weak != weak:
        return Tracer(x.value, x.trace, weak)
    return x


def broadcast_shapes(*shapes: tuple[int, ...]) -> tuple[int, ...]:
    """numpy's broadcast of `shapes`; an error naming the shapes and the user's line."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise IncompatibleShapesError(f"shapes {', '.join(map(str, shapes))} cannot be broadcast together "
                                      f"(at {user_line()})") from None


def broadcast_to_shape(x: Tracer, shape: tuple[int, ...]) -> Tracer:
    """`x` broadcast to `shape` (its dimensions aligned to the trailing ones)."""
    if x.shape == shape:
        return x
    dims = list(range(len(shape) - x.ndim, len(shape)))
    v = stablehlo.broadcast_in_dim(x.trace.emit(), x.value, shape, dims)
    return Tracer(v, x.trace, x.weak)


def promote(trace: TraceContext, *xs: Any, dtype: np.dtype | None = None) -> list[Tracer]:
    """The operands as tracers of their common dtype (or `dtype`), broadcast to a common shape."""
    common, weak = promote_types(*(scalar_dtype(x) for x in xs))
    if dtype is not None:
        common, weak = np.dtype(dtype), False
    shape = broadcast_shapes(*(np.shape(x) if not isinstance(x, Tracer) else x.shape for x in xs))
    out = []
    for x in xs:
        if not isinstance(x, Tracer) and np.ndim(x) == 0:
            # a scalar: one splat constant of the full shape
            out.append(Tracer(trace.constant(np.asarray(x, dtype=common), shape=shape), trace, weak))
        else:
            out.append(broadcast_to_shape(lift(trace, x, common, weak), shape))
    return out


def floating_dtype(d: np.dtype) -> np.dtype:
    """`d` when it is a floating dtype, else the float dtype integer math converts to, as JAX's:
    float32, float64 for 64-bit integers (which exist only with 64-bit values enabled)."""
    return d if is_floating(d) else np.dtype(np.float64 if d.kind in "iu" and d.itemsize == 8 else np.float32)


def filled_like(x: Tracer, fill_value: Any) -> Tracer:
    """`fill_value` in the shape and dtype of `x` (one splat constant), as weak as `x`."""
    return Tracer(x.trace.constant(np.asarray(fill_value, dtype=x.dtype), shape=x.shape), x.trace, x.weak)


def result_type(*xs: Any) -> np.dtype:
    """The dtype JAX's promotion gives for `xs` (arrays, dtypes or Python scalars)."""
    items = []
    for x in xs:
        if isinstance(x, (type, np.dtype)) and not isinstance(x, Tracer):
            items.append((np.dtype(x), False))
        else:
            items.append(scalar_dtype(x))
    return promote_types(*items)[0]


__all__ = ["ConcretizationError", "IncompatibleShapesError", "TraceContext", "Tracer", "TracerBoolConversionError",
           "TracerError", "broadcast_shapes", "broadcast_to_shape", "canonical_dtype", "current_trace",
           "default_dtype", "filled_like", "floating_dtype", "ir_element_type", "lift", "np_dtype", "promote",
           "promote_types", "result_type", "scalar_dtype", "tensor_type", "trace_of", "user_location", "user_line"]
