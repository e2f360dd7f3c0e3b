"""`loom.lax` operations that map one to one onto StableHLO ops, with the signatures and semantics
of `jax.lax`'s: no dtype promotion between arrays (Python scalars take the array's dtype), shapes
given explicitly.

Inside `loom.jit` (and `grad`, `vmap`, ...) they insert their op into the trace; called on plain
arrays they trace and run themselves through `loom.jit`, so they also work eagerly.
"""

from __future__ import annotations

import builtins
import functools
import inspect
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.dialects import ad, stablehlo
from loom.dialects.stablehlo import ConvDimensionNumbers, DotDimensionNumbers
from loom.frontend.jit import jit
from loom.frontend.pytree import tree_map
from loom.frontend.tracing import (
    TraceContext,
    Tracer,
    broadcast_to_shape,
    canonical_dtype,
    current_trace,
    dtype_kind,
    ir_element_type,
    is_floating,
    lift,
    result_type,
    tensor_type,
    trace_of,
    user_line,
)
from loom.ir.attributes import IntegerAttr
from loom.ir.core import Operation
from loom.ir.types import IntegerType
from loom.ops import elementwise
from loom.transforms.rule_builders import clamp_starts, in_bounds
from loom.transforms.rule_builders import dimension_numbers as conv_dimension_numbers

Array = Any


def traced_op(*array_params: str) -> Callable[[Callable], Callable]:
    """Run the decorated function on tracers inside a trace; outside, trace it with `loom.jit`
    over the parameters `array_params` (the others are static) and run it."""
    def decorate(fn: Callable) -> Callable:
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            bound = sig.bind(*args, **kwargs)
            bound.apply_defaults()
            arrays = {n: bound.arguments[n] for n in array_params}
            if current_trace() is not None or trace_of(*arrays.values()) is not None:
                return fn(*args, **kwargs)
            static = {n: v for n, v in bound.arguments.items() if n not in array_params}
            return jit(lambda arrs: fn(**arrs, **static))(arrays)
        return wrapped
    return decorate


def _trace(*xs: Any) -> TraceContext:
    t = trace_of(*xs) or current_trace()
    if t is None:
        raise TypeError(f"no active trace (at {user_line()})")
    return t


def _lift(x: Any, dtype: Any = None) -> Tracer:
    trace = _trace(x)
    if isinstance(x, Tracer):
        return x if dtype is None or x.dtype == np.dtype(dtype) else lift(trace, x, np.dtype(dtype))
    return lift(trace, np.asarray(x, dtype=dtype) if dtype is not None else x)


def same_dtype(*xs: Any) -> list[Tracer]:
    """The operands as tracers of one dtype: arrays must agree (as `jax.lax`); Python scalars and
    weakly typed values take the dtype of the strongly typed arrays."""
    strong = [x for x in xs if isinstance(x, Tracer) and not x.weak] + \
        [np.asarray(x) for x in xs if isinstance(x, (np.ndarray, np.generic))]
    dtypes = {np.dtype(x.dtype) for x in strong}
    if len(dtypes) > 1:
        raise TypeError(f"lax operations require arguments of one dtype, got {sorted(str(d) for d in dtypes)} "
                        f"(at {user_line()}); convert them with lax.convert_element_type")
    if dtypes:
        dtype = dtypes.pop()
    else:
        dtype = result_type(*xs)
    _trace(*xs)
    out = [_lift(x if isinstance(x, Tracer) else np.asarray(x, dtype=dtype), dtype) for x in xs]
    weak = all(not isinstance(x, (np.ndarray, np.generic)) and (not isinstance(x, Tracer) or x.weak) for x in xs)
    return [Tracer(t.value, t.trace, weak) for t in out]


def _broadcast_scalars(ts: list[Tracer]) -> list[Tracer]:
    shapes = {t.shape for t in ts if t.ndim}
    if len(shapes) > 1:
        raise TypeError(f"lax operations require arrays of one shape, got {sorted(shapes)} (at {user_line()})")
    shape = shapes.pop() if shapes else ()
    return [broadcast_to_shape(t, shape) for t in ts]


def _wrap(v: Any, like: Tracer, weak: bool | None = None) -> Tracer:
    return Tracer(v, like.trace, like.weak if weak is None else weak)


# --- elementwise -------------------------------------------------------------------------------


def unary_op(name: str, hlo: Callable, kinds: str = "f", doc: str = "") -> Callable[[Array], Array]:
    @traced_op("x")
    def fn(x: Array) -> Array:
        t = same_dtype(x)[0]
        if dtype_kind(t.dtype) not in kinds:
            raise TypeError(f"lax.{name} does not accept dtype {t.dtype} (at {user_line()})")
        return _wrap(hlo(t.trace.emit(), t.value), t)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc or f"Elementwise `stablehlo.{hlo.__name__.rstrip('_')}`, as `jax.lax.{name}`."
    return fn


def _binary(name: str, hlo: Callable, kinds: str = "fiu", result_bool: bool = False) -> Callable:
    @traced_op("x", "y")
    def fn(x: Array, y: Array) -> Array:
        a, b = _broadcast_scalars(same_dtype(x, y))
        if dtype_kind(a.dtype) not in kinds:
            raise TypeError(f"lax.{name} does not accept dtype {a.dtype} (at {user_line()})")
        v = hlo(a.trace.emit(), a.value, b.value)
        return Tracer(v, a.trace, False if result_bool else a.weak and b.weak)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `stablehlo.{getattr(hlo, '__name__', name).rstrip('_')}`, as `jax.lax.{name}`."
    return fn


def _compare(direction: str) -> Callable:
    def hlo(b: Any, x: Any, y: Any) -> Any:
        return stablehlo.compare(b, x, y, direction)
    hlo.__name__ = "compare"
    return hlo


# The comparisons: one op, `stablehlo.compare`, whose direction is an attribute.
eq = _binary("eq", _compare("EQ"), "fiub", True)
ne = _binary("ne", _compare("NE"), "fiub", True)
lt = _binary("lt", _compare("LT"), "fiub", True)
le = _binary("le", _compare("LE"), "fiub", True)
gt = _binary("gt", _compare("GT"), "fiub", True)
ge = _binary("ge", _compare("GE"), "fiub", True)


# Every other elementwise op: one binding per row of the op table (loom.ops.elementwise) that
# names a jax.lax function, made from the row: the op, its arity, the dtypes it accepts. The rows
# whose binding takes more than arrays, or that jax.lax computes by a formula, are written out by
# hand (below, or in lax/special.py), each listed here with the reason.
BOUND_BY_HAND = {
    "round": "jax.lax.round's rounding_method chooses between two ops",
    "convert_element_type": "takes the new dtype",
    "reduce_precision": "takes the exponent and mantissa bits",
    "select": "a predicate and two cases", "clamp": "scalar bounds broadcast to the operand",
    "square": "x * x, as jax.lax.square lowers",
    **dict.fromkeys(("sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh"),
                    "a formula of StableHLO ops, as XLA expands the CHLO op"),
}
# Rows with a jax.lax name that loom.lax does not bind yet, with the reason.
NOT_BOUND = dict.fromkeys(("complex", "real", "imag", "conj"), "the front end has no complex dtype")
# op kinds (predicate, integer, signed integer, float) -> numpy's
_KIND_LETTERS = {"p": "b", "i": "iu", "s": "i", "f": "f"}


def elementwise_binding(row: Any) -> Callable:
    """The `jax.lax`-style function of an elementwise op's row: operands of one dtype (Python
    scalars take it), scalars broadcast to the arrays' one shape, the op emitted."""
    op, name = row.op, row.lax
    accepted = row.lax_dtypes
    if accepted is None:  # the op's own kinds, minus complex
        kinds = op.definition.operands[0].constraint.kinds
        accepted = "".join(_KIND_LETTERS[k] for k in "pisf" if k in kinds)

    def emit(*xs: Any) -> Tracer:
        ts = _broadcast_scalars(same_dtype(*xs))
        if dtype_kind(ts[0].dtype) not in accepted:
            raise TypeError(f"lax.{name} does not accept dtype {ts[0].dtype} (at {user_line()})")
        v = op.build(ts[0].trace.emit(), *(t.value for t in ts)).results[0]
        return Tracer(v, ts[0].trace, builtins.all(t.weak for t in ts))

    if len(op.definition.operands) == 1:
        def fn(x: Array) -> Array:
            return emit(x)
        fn = traced_op("x")(fn)
    else:
        def fn(x: Array, y: Array) -> Array:  # type: ignore[misc]
            return emit(x, y)
        fn = traced_op("x", "y")(fn)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"Elementwise `{op.name}`, as `jax.lax.{name}`."
    return fn


ELEMENTWISE_BINDINGS = {row.lax: elementwise_binding(row) for row in elementwise.OPS
                        if row.lax is not None and row.lax not in BOUND_BY_HAND and row.lax not in NOT_BOUND}
globals().update(ELEMENTWISE_BINDINGS)
@traced_op("operand")
def reduce_precision(operand: Array, exponent_bits: int, mantissa_bits: int) -> Array:
    """`operand` rounded to the float format of `exponent_bits` and `mantissa_bits`, in its own
    dtype (`stablehlo.reduce_precision`), as `jax.lax.reduce_precision`."""
    t = same_dtype(operand)[0]
    if dtype_kind(t.dtype) != "f":
        raise TypeError(f"lax.reduce_precision does not accept dtype {t.dtype} (at {user_line()})")
    b = t.trace.emit()
    props = {"exponent_bits": IntegerAttr.get(int(exponent_bits), IntegerType(32)),
             "mantissa_bits": IntegerAttr.get(int(mantissa_bits), IntegerType(32))}
    op = Operation.create(stablehlo.ReducePrecisionOp.name, [t.value], [t.value.type], props, {}, (), (), b.location)
    return _wrap(b.insert(op).results[0], t)


round = unary_op("round", stablehlo.round_nearest_afz,  # noqa: A001 - jax.lax's name
                 doc="Elementwise rounding half away from zero (`stablehlo.round_nearest_afz`), as `jax.lax.round`.")


@traced_op("x")
def square(x: Array) -> Array:
    """`x * x`, as `jax.lax.square`."""
    t = same_dtype(x)[0]
    return _wrap(stablehlo.multiply(t.trace.emit(), t.value, t.value), t)


@traced_op("x")
def integer_pow(x: Array, y: int) -> Array:
    """`x ** y` for a static integer `y`, by repeated squaring (as `jax.lax.integer_pow`)."""
    t = same_dtype(x)[0]
    b = t.trace.emit()
    if y == 0:
        return Tracer(t.trace.constant(np.asarray(1, t.dtype), shape=t.shape), t.trace, t.weak)
    base, n, acc = t.value, builtins.abs(y), None
    while n:
        if n & 1:
            acc = base if acc is None else stablehlo.multiply(b, acc, base)
        n >>= 1
        if n:
            base = stablehlo.multiply(b, base, base)
    if y < 0:
        acc = stablehlo.divide(b, t.trace.constant(np.asarray(1, t.dtype), shape=t.shape), acc)
    return _wrap(acc, t)


@traced_op("x")
def convert_element_type(x: Array, new_dtype: Any) -> Array:
    """`x` converted to `new_dtype` (`stablehlo.convert`)."""
    t = _lift(x)
    d = canonical_dtype(new_dtype)
    if d == t.dtype:
        return Tracer(t.value, t.trace, False)
    return Tracer(stablehlo.convert(t.trace.emit(), t.value, ir_element_type(d)), t.trace)


def stop_gradient(x: Any) -> Any:
    """`x` unchanged in value, with no derivative: `grad` passes no cotangent through it, `jvp`
    gives it a zero tangent, as `jax.lax.stop_gradient`. `x` may be a pytree of arrays; leaves of
    integer or boolean dtype (which carry no derivative anyway) are returned as they are.

    Traced, each floating leaf becomes an `ad.stop_gradient` op (loom.dialects.ad), which the jit
    pipeline keeps, so a function can be differentiated after it was traced and optimised."""

    def leaf(v: Any) -> Any:
        if isinstance(v, Tracer):
            if dtype_kind(v.dtype) not in "fc":
                return v
            t = _lift(v)
            return _wrap(ad.stop_gradient(t.trace.emit(), t.value), t)
        if current_trace() is not None or trace_of(v) is not None:
            return v  # a constant inside a trace: nothing to stop
        return np.asarray(v)
    return tree_map(leaf, x)


@traced_op("x")
def bitcast_convert_type(x: Array, new_dtype: Any) -> Array:
    """`x`'s bits reinterpreted as `new_dtype` (`stablehlo.bitcast_convert`); a narrower type
    adds a trailing dimension, a wider one consumes it, as `jax.lax.bitcast_convert_type`."""
    t = _lift(x)
    d = canonical_dtype(new_dtype)
    shape = list(t.shape)
    if d.itemsize < t.dtype.itemsize:
        shape.append(t.dtype.itemsize // d.itemsize)
    elif d.itemsize > t.dtype.itemsize:
        if not shape or shape[-1] != d.itemsize // t.dtype.itemsize:
            raise ValueError(f"bitcast_convert_type: the last dimension of {t.shape} must be "
                             f"{d.itemsize // t.dtype.itemsize} to convert {t.dtype} to {d} (at {user_line()})")
        shape.pop()
    v = stablehlo.BitcastConvertOp.insert(t.trace.emit(), [t.value], result_types=[tensor_type(shape, d)]).results[0]
    return Tracer(v, t.trace)


@traced_op("pred", "on_true", "on_false")
def select(pred: Array, on_true: Array, on_false: Array) -> Array:
    """`on_true` where `pred`, else `on_false` (`stablehlo.select`; `pred` may be a scalar)."""
    a, b = _broadcast_scalars(same_dtype(on_true, on_false))
    p = _lift(pred)
    if p.dtype != np.bool_:
        raise TypeError(f"select: the predicate must be boolean, got {p.dtype} (at {user_line()})")
    if p.ndim and p.shape != a.shape:
        raise TypeError(f"select: the predicate shape {p.shape} must be () or {a.shape} (at {user_line()})")
    return Tracer(stablehlo.select(a.trace.emit(), p.value, a.value, b.value), a.trace, a.weak and b.weak)


@traced_op("min", "x", "max")
def clamp(min: Array, x: Array, max: Array) -> Array:  # noqa: A002 - jax.lax's names
    """`x` clamped into `[min, max]` (`stablehlo.clamp`; the bounds may be scalars)."""
    lo, t, hi = same_dtype(min, x, max)
    return _wrap(stablehlo.clamp(t.trace.emit(), lo.value, t.value, hi.value), t)


# --- shapes ------------------------------------------------------------------------------------


@traced_op("operand")
def broadcast_in_dim(operand: Array, shape: Sequence[int], broadcast_dimensions: Sequence[int]) -> Array:
    """`stablehlo.broadcast_in_dim`: operand dimension i becomes result dimension
    `broadcast_dimensions[i]`."""
    t = _lift(operand)
    v = stablehlo.broadcast_in_dim(t.trace.emit(), t.value, tuple(int(s) for s in shape),
                                   [int(d) for d in broadcast_dimensions])
    return _wrap(v, t)


@traced_op("operand")
def broadcast(operand: Array, sizes: Sequence[int]) -> Array:
    """`operand` with leading dimensions `sizes` added."""
    t = _lift(operand)
    n = len(sizes)
    return broadcast_in_dim(t, (*sizes, *t.shape), list(range(n, n + t.ndim)))


@traced_op("operand")
def reshape(operand: Array, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None) -> Array:
    """`operand` (transposed by `dimensions` first, when given) reshaped to `new_sizes`."""
    t = _lift(operand)
    if dimensions is not None:
        t = transpose(t, dimensions)
    v = stablehlo.reshape(t.trace.emit(), t.value, [int(s) for s in new_sizes])
    return _wrap(v, t)


@traced_op("operand")
def transpose(operand: Array, permutation: Sequence[int]) -> Array:
    """`stablehlo.transpose`."""
    t = _lift(operand)
    return _wrap(stablehlo.transpose(t.trace.emit(), t.value, [int(p) for p in permutation]), t)


@traced_op("operand")
def rev(operand: Array, dimensions: Sequence[int]) -> Array:
    """`operand` reversed along `dimensions` (`stablehlo.reverse`)."""
    t = _lift(operand)
    return _wrap(stablehlo.reverse(t.trace.emit(), t.value, [int(d) for d in dimensions]), t)


@traced_op("operand", "padding_value")
def pad(operand: Array, padding_value: Array, padding_config: Sequence[tuple[int, int, int]]) -> Array:
    """`stablehlo.pad` with `(low, high, interior)` per dimension (negative low / high crop)."""
    t, p = same_dtype(operand, padding_value)
    cfg = [tuple(int(v) for v in c) for c in padding_config]
    v = stablehlo.pad(t.trace.emit(), t.value, p.value, [c[0] for c in cfg], [c[1] for c in cfg], [c[2] for c in cfg])
    return _wrap(v, t)


@traced_op("operands")
def concatenate(operands: Sequence[Array], dimension: int) -> Array:
    """The operands joined along `dimension` (`stablehlo.concatenate`)."""
    ts = same_dtype(*operands)
    return _wrap(stablehlo.concatenate(ts[0].trace.emit(), [t.value for t in ts], int(dimension)), ts[0])


@traced_op("operand")
def slice(operand: Array, start_indices: Sequence[int], limit_indices: Sequence[int],  # noqa: A001
          strides: Sequence[int] | None = None) -> Array:
    """`stablehlo.slice` (static bounds)."""
    t = _lift(operand)
    strides = [1] * t.ndim if strides is None else [int(s) for s in strides]
    v = stablehlo.slice_(t.trace.emit(), t.value, [int(s) for s in start_indices], [int(s) for s in limit_indices],
                         strides)
    return _wrap(v, t)


def slice_in_dim(operand: Array, start_index: int | None, limit_index: int | None, stride: int = 1,
                 axis: int = 0) -> Array:
    """`operand[start:limit:stride]` along `axis`."""
    shape = np.shape(operand) if not isinstance(operand, Tracer) else operand.shape
    axis %= len(shape)
    start, limit, _ = builtins.slice(start_index, limit_index).indices(shape[axis])
    starts, limits, strides = [0] * len(shape), list(shape), [1] * len(shape)
    starts[axis], limits[axis], strides[axis] = start, builtins.max(start, limit), stride
    return slice(operand, starts, limits, strides)


def index_in_dim(operand: Array, index: int, axis: int = 0, keepdims: bool = True) -> Array:
    """Element `index` along `axis` (the axis kept with size 1 unless `keepdims` is False)."""
    shape = np.shape(operand) if not isinstance(operand, Tracer) else operand.shape
    axis %= len(shape)
    index = index % shape[axis]
    out = slice_in_dim(operand, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


@traced_op("array")
def squeeze(array: Array, dimensions: Sequence[int]) -> Array:
    """`array` without the size-1 `dimensions`."""
    t = _lift(array)
    dims = {d % t.ndim for d in dimensions}
    for d in dims:
        if t.shape[d] != 1:
            raise ValueError(f"squeeze: dimension {d} of shape {t.shape} is not of size 1 (at {user_line()})")
    return reshape(t, [s for i, s in enumerate(t.shape) if i not in dims])


@traced_op("array")
def expand_dims(array: Array, dimensions: Sequence[int]) -> Array:
    """`array` with size-1 dimensions inserted at `dimensions`."""
    t = _lift(array)
    n = t.ndim + len(dimensions)
    shape = list(t.shape)
    for d in sorted(d % n for d in dimensions):
        shape.insert(d, 1)
    return reshape(t, shape)


def iota(dtype: Any, size: int) -> Array:
    """`[0, 1, ..., size - 1]` of `dtype` (`stablehlo.iota`)."""
    return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Array:
    """The index along `dimension`, in an array of `shape` (`stablehlo.iota`)."""
    trace = current_trace()
    if trace is None:
        return np.broadcast_to(np.arange(shape[dimension], dtype=dtype).reshape(
            [-1 if i == dimension else 1 for i in range(len(shape))]), tuple(shape)).copy()
    v = stablehlo.iota(trace.emit(), tensor_type(shape, dtype), int(dimension))
    return Tracer(v, trace)


# --- dynamic slicing ---------------------------------------------------------------------------


def _start_scalars(t: Tracer, start_indices: Sequence[Any]) -> list[Any]:
    starts = list(start_indices) if not isinstance(start_indices, Tracer) else \
        [index_in_dim(start_indices, i, 0, False) for i in range(start_indices.shape[0])]
    if len(starts) != t.ndim:
        raise ValueError(f"expected {t.ndim} start indices for an operand of shape {t.shape}, got {len(starts)} "
                         f"(at {user_line()})")
    lifted = [_lift(s) for s in starts]
    dtype = np.dtype(np.int64) if any(s.dtype == np.int64 for s in lifted) else np.dtype(np.int32)
    out = []
    for s, size in zip(lifted, t.shape):
        if s.ndim:
            raise ValueError(f"start indices must be scalars, got shape {s.shape} (at {user_line()})")
        s = convert_element_type(s, dtype)
        if dtype.kind == "i":  # as JAX: a negative start counts from the end (then it is clamped)
            s = select(lt(s, np.zeros((), dtype)), ELEMENTWISE_BINDINGS["add"](s, np.asarray(size, dtype)), s)
        out.append(s.value)
    return out


@traced_op("operand", "start_indices")
def dynamic_slice(operand: Array, start_indices: Sequence[Array], slice_sizes: Sequence[int]) -> Array:
    """A `slice_sizes` block of `operand` at run-time `start_indices` (clamped into bounds, as
    `stablehlo.dynamic_slice`)."""
    t = _lift(operand)
    starts = _start_scalars(t, start_indices)
    return _wrap(stablehlo.dynamic_slice(t.trace.emit(), t.value, starts, [int(s) for s in slice_sizes]), t)


@traced_op("operand", "update", "start_indices")
def dynamic_update_slice(operand: Array, update: Array, start_indices: Sequence[Array]) -> Array:
    """`operand` with `update` written at run-time `start_indices` (clamped into bounds)."""
    t, u = same_dtype(operand, update)
    starts = _start_scalars(t, start_indices)
    return _wrap(stablehlo.dynamic_update_slice(t.trace.emit(), t.value, u.value, starts), t)


def dynamic_slice_in_dim(operand: Array, start_index: Array, slice_size: int, axis: int = 0) -> Array:
    """`dynamic_slice` along one axis."""
    shape = np.shape(operand) if not isinstance(operand, Tracer) else operand.shape
    axis %= len(shape)
    starts = [np.int32(0)] * len(shape)
    starts[axis] = start_index
    sizes = list(shape)
    sizes[axis] = slice_size
    return dynamic_slice(operand, starts, sizes)


def dynamic_index_in_dim(operand: Array, index: Array, axis: int = 0, keepdims: bool = True) -> Array:
    """The slice at `index` along `axis` (a `dynamic_slice` of size 1), as `jax.lax.dynamic_index_in_dim`:
    without `keepdims` the axis is dropped."""
    out = dynamic_slice_in_dim(operand, index, 1, axis)
    if keepdims:
        return out
    shape = np.shape(operand) if not isinstance(operand, Tracer) else operand.shape
    return squeeze(out, [axis % len(shape)])


def dynamic_update_slice_in_dim(operand: Array, update: Array, start_index: Array, axis: int) -> Array:
    """`dynamic_update_slice` along one axis."""
    shape = np.shape(operand) if not isinstance(operand, Tracer) else operand.shape
    axis %= len(shape)
    starts = [np.int32(0)] * len(shape)
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts)


# --- gather and scatter ------------------------------------------------------------------------


def GatherDimensionNumbers(offset_dims: Sequence[int], collapsed_slice_dims: Sequence[int],  # noqa: N802
                           start_index_map: Sequence[int], operand_batching_dims: Sequence[int] = (),
                           start_indices_batching_dims: Sequence[int] = ()) -> Any:
    """The dimension numbers of `gather`, as `jax.lax.GatherDimensionNumbers` (the index vector is
    the last dimension of the indices)."""
    return {"offset_dims": tuple(offset_dims), "collapsed_slice_dims": tuple(collapsed_slice_dims),
            "start_index_map": tuple(start_index_map), "operand_batching_dims": tuple(operand_batching_dims),
            "start_indices_batching_dims": tuple(start_indices_batching_dims)}


def ScatterDimensionNumbers(update_window_dims: Sequence[int], inserted_window_dims: Sequence[int],  # noqa: N802
                            scatter_dims_to_operand_dims: Sequence[int], operand_batching_dims: Sequence[int] = (),
                            scatter_indices_batching_dims: Sequence[int] = ()) -> Any:
    """The dimension numbers of `scatter`, as `jax.lax.ScatterDimensionNumbers`."""
    return {"update_window_dims": tuple(update_window_dims), "inserted_window_dims": tuple(inserted_window_dims),
            "scatter_dims_to_operand_dims": tuple(scatter_dims_to_operand_dims),
            "input_batching_dims": tuple(operand_batching_dims),
            "scatter_indices_batching_dims": tuple(scatter_indices_batching_dims)}


def _fields(dn: Any, names: Sequence[str], renames: dict[str, str] | None = None) -> dict[str, tuple[int, ...]]:
    """Dimension numbers from our dicts or from objects with the fields (jax's named tuples)."""
    renames = renames or {}
    out = {}
    for n in names:
        src = renames.get(n, n)
        value = dn[n] if isinstance(dn, dict) else getattr(dn, src, ())
        out[n] = tuple(int(v) for v in value)
    return out


def _index_operand(indices: Any) -> Tracer:
    t = _lift(indices)
    if t.dtype.kind not in "iu":
        raise TypeError(f"indices must be integers, got {t.dtype} (at {user_line()})")
    return t


@traced_op("operand", "start_indices")
def gather(operand: Array, start_indices: Array, dimension_numbers: Any, slice_sizes: Sequence[int], *,
           unique_indices: bool = False, indices_are_sorted: bool = False, mode: Any = None,
           fill_value: Any = None) -> Array:
    """`stablehlo.gather` with the index vector the last dimension of `start_indices`. Modes:
    'clip' / 'promise_in_bounds' (out-of-bounds starts are clamped, StableHLO's semantics) and
    'fill' (the default, as JAX: slices that are out of bounds give `fill_value`, NaN for floats)."""
    t = _lift(operand)
    idx = _index_operand(start_indices)
    f = _fields(dimension_numbers, ("offset_dims", "collapsed_slice_dims", "start_index_map",
                                    "operand_batching_dims", "start_indices_batching_dims"))
    dn = stablehlo.GatherDimensionNumbers.get(index_vector_dim=idx.ndim - 1, **f)
    sizes = [int(s) for s in slice_sizes]
    v = Tracer(stablehlo.gather(t.trace.emit(), t.value, idx.value, dn, sizes, indices_are_sorted), t.trace, t.weak)
    mode = _mode_name(mode, "fill")
    if mode in ("clip", "promise_in_bounds"):
        return v
    # fill: a slice whose start is out of bounds gives the fill value
    ok = Tracer(in_bounds(t.trace.emit(), idx.value, f["start_index_map"], idx.ndim - 1, t.shape, sizes), t.trace)
    batch_dims = [d for d in range(v.ndim) if d not in f["offset_dims"]]
    mask = broadcast_in_dim(ok, v.shape, batch_dims)
    fill = out_of_bounds_fill(t.dtype) if fill_value is None else fill_value
    filler = broadcast_to_shape(lift(t.trace, np.asarray(fill, t.dtype)), v.shape)
    return Tracer(stablehlo.select(t.trace.emit(), mask.value, v.value, filler.value), t.trace)


def out_of_bounds_fill(dtype: np.dtype) -> Any:
    """JAX's fill value for out-of-bounds reads: NaN, the smallest signed / largest unsigned
    integer, or True."""
    if is_floating(dtype):
        return np.nan
    if dtype.kind == "i":
        return np.iinfo(dtype).min
    if dtype.kind == "u":
        return np.iinfo(dtype).max
    return True


def _mode_name(mode: Any, default: str) -> str:
    if mode is None:
        return default
    name = str(getattr(mode, "name", mode)).lower()
    return {"fill_or_drop": "fill", "drop": "fill", "clip": "clip", "promise_in_bounds": "promise_in_bounds",
            "fill": "fill"}.get(name, name)


def _scatter(name: str, combine: Callable | None) -> Callable:
    @traced_op("operand", "scatter_indices", "updates")
    def fn(operand: Array, scatter_indices: Array, updates: Array, dimension_numbers: Any, *,
           indices_are_sorted: bool = False, unique_indices: bool = False, mode: Any = None) -> Array:
        t, u = same_dtype(operand, updates)
        idx = _index_operand(scatter_indices)
        f = _fields(dimension_numbers, ("update_window_dims", "inserted_window_dims", "scatter_dims_to_operand_dims",
                                        "input_batching_dims", "scatter_indices_batching_dims"),
                    {"input_batching_dims": "operand_batching_dims"})
        dn = stablehlo.ScatterDimensionNumbers.get(index_vector_dim=idx.ndim - 1, **f)
        indices = idx.value
        if _mode_name(mode, "fill") == "clip":  # clamp the windows into bounds instead of dropping them
            window_dims = [d for d in range(t.ndim)
                           if d not in f["inserted_window_dims"] and d not in f["input_batching_dims"]]
            sizes = [1] * t.ndim
            for d, ud in zip(window_dims, f["update_window_dims"]):
                sizes[d] = u.shape[ud]
            indices = clamp_starts(t.trace.emit(), indices, f["scatter_dims_to_operand_dims"], idx.ndim - 1, t.shape,
                                    sizes)

        def body(bb: Any, args: list) -> list:
            return [args[1] if combine is None else combine(bb, args[0], args[1])]
        v = stablehlo.scatter(t.trace.emit(), [t.value], indices, [u.value], dn, body, indices_are_sorted,
                              unique_indices)
        return _wrap(v, t)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"`stablehlo.scatter` ({name.replace('scatter_', '') if combine else 'overwrite'}), as "
                  f"`jax.lax.{name}`: the index vector is the last dimension of `scatter_indices`; updates of "
                  f"out-of-bounds windows are dropped (mode 'fill' / 'drop', the default) or clamped into bounds "
                  f"(mode 'clip').")
    return fn


scatter = _scatter("scatter", None)
scatter_add = _scatter("scatter_add", stablehlo.add)
scatter_mul = _scatter("scatter_mul", stablehlo.multiply)
scatter_min = _scatter("scatter_min", stablehlo.minimum)
scatter_max = _scatter("scatter_max", stablehlo.maximum)


# --- linear algebra and convolution ------------------------------------------------------------


def _preferred(v: Tracer, preferred_element_type: Any) -> Tracer:
    if preferred_element_type is None:
        return v
    return convert_element_type(v, preferred_element_type)


@traced_op("lhs", "rhs")
def dot_general(lhs: Array, rhs: Array, dimension_numbers: Any, precision: Any = None,
                preferred_element_type: Any = None) -> Array:
    """`stablehlo.dot_general`: `dimension_numbers` is `((lhs_contracting, rhs_contracting),
    (lhs_batch, rhs_batch))`; the result has the batch, lhs free, then rhs free dimensions."""
    a, b = same_dtype(lhs, rhs)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = DotDimensionNumbers.get(lhs_batching_dimensions=tuple(lb), rhs_batching_dimensions=tuple(rb),
                                 lhs_contracting_dimensions=tuple(lc), rhs_contracting_dimensions=tuple(rc))
    for x, y in zip((*lc, *lb), (*rc, *rb)):
        if a.shape[x] != b.shape[y]:
            raise TypeError(f"dot_general: dimension {x} of lhs {a.shape} and dimension {y} of rhs {b.shape} "
                            f"differ (at {user_line()})")
    v = Tracer(stablehlo.dot_general(a.trace.emit(), a.value, b.value, dn), a.trace, a.weak and b.weak)
    return _preferred(v, preferred_element_type)


def dot(lhs: Array, rhs: Array, precision: Any = None, preferred_element_type: Any = None) -> Array:
    """Vector / matrix products of rank-1 and rank-2 operands, as `jax.lax.dot`."""
    lhs_ndim = len(lhs.shape) if isinstance(lhs, Tracer) else np.ndim(lhs)
    return dot_general(lhs, rhs, (((lhs_ndim - 1,), (0,)), ((), ())), precision, preferred_element_type)


def _conv_specs(dimension_numbers: Any, ndim: int) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    """(lhs, rhs, out) specs `(batch / out-feature, feature / in-feature, *spatial)` from None
    (NCHW, OIHW, NCHW), three layout strings ('NHWC', 'HWIO', 'NHWC'), or three specs."""
    if dimension_numbers is None:
        spec = tuple(range(ndim))
        return spec, spec, spec
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        d = dimension_numbers
        return ((d.input_batch_dimension, d.input_feature_dimension, *d.input_spatial_dimensions),
                (d.kernel_output_feature_dimension, d.kernel_input_feature_dimension, *d.kernel_spatial_dimensions),
                (d.output_batch_dimension, d.output_feature_dimension, *d.output_spatial_dimensions))
    lhs, rhs, out = dimension_numbers
    if isinstance(lhs, str):
        def spec(layout: str, first: str, second: str) -> tuple[int, ...]:
            spatial = [i for i, c in enumerate(layout) if c not in (first, second)]
            # spatial dimensions are ordered as in the kernel layout's spatial letters
            order = [c for c in rhs if c not in "OI"]
            spatial = sorted(spatial, key=lambda i: order.index(layout[i]) if layout[i] in order else i)
            return (layout.index(first), layout.index(second), *spatial)
        return spec(lhs, "N", "C"), spec(rhs, "O", "I"), spec(out, "N", "C")
    return tuple(lhs), tuple(rhs), tuple(out)


def _conv_padding(padding: Any, in_shape: Sequence[int], window: Sequence[int], strides: Sequence[int],
                  lhs_dilation: Sequence[int], rhs_dilation: Sequence[int]) -> list[tuple[int, int]]:
    if not isinstance(padding, str):
        return [(int(lo), int(hi)) for lo, hi in padding]
    mode = padding.upper()
    if mode == "VALID":
        return [(0, 0)] * len(in_shape)
    if mode not in ("SAME", "SAME_LOWER"):
        raise ValueError(f"unknown padding {padding!r}; expected 'SAME', 'SAME_LOWER', 'VALID' or pairs "
                         f"(at {user_line()})")
    out = []
    for n, w, s, ld, rd in zip(in_shape, window, strides, lhs_dilation, rhs_dilation):
        n = 0 if n == 0 else (n - 1) * ld + 1
        w = 0 if w == 0 else (w - 1) * rd + 1
        size = -(-n // s)
        total = builtins.max(0, (size - 1) * s + w - n)
        lo = total // 2 if mode == "SAME" else total - total // 2
        out.append((lo, total - lo))
    return out


@traced_op("lhs", "rhs")
def conv_general_dilated(lhs: Array, rhs: Array, window_strides: Sequence[int], padding: Any,
                         lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
                         dimension_numbers: Any = None, feature_group_count: int = 1, batch_group_count: int = 1,
                         precision: Any = None, preferred_element_type: Any = None) -> Array:
    """`stablehlo.convolution`, as `jax.lax.conv_general_dilated`: `padding` is 'SAME', 'VALID' or
    one `(low, high)` pair per spatial dimension; `dimension_numbers` None (NCHW / OIHW / NCHW),
    layout strings such as `('NHWC', 'HWIO', 'NHWC')`, or `(lhs_spec, rhs_spec, out_spec)`."""
    a, b = same_dtype(lhs, rhs)
    ls, rs, os_ = _conv_specs(dimension_numbers, a.ndim)
    n = a.ndim - 2
    strides = [int(s) for s in window_strides] if window_strides else [1] * n
    ld = [int(d) for d in lhs_dilation] if lhs_dilation else [1] * n
    rd = [int(d) for d in rhs_dilation] if rhs_dilation else [1] * n
    pads = _conv_padding(padding, [a.shape[d] for d in ls[2:]], [b.shape[d] for d in rs[2:]], strides, ld, rd)
    dn = conv_dimension_numbers(ls, rs, os_)
    v = stablehlo.convolution(a.trace.emit(), a.value, b.value, dn, window_strides=strides,
                              padding=pads, lhs_dilation=ld, rhs_dilation=rd,
                              feature_group_count=int(feature_group_count), batch_group_count=int(batch_group_count))
    return _preferred(Tracer(v, a.trace, a.weak and b.weak), preferred_element_type)


def conv(lhs: Array, rhs: Array, window_strides: Sequence[int], padding: Any, precision: Any = None,
         preferred_element_type: Any = None) -> Array:
    """`conv_general_dilated` in NCHW / OIHW layout without dilation."""
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


# --- reductions and windows --------------------------------------------------------------------

_MONOIDS: dict[str, tuple[Callable, Callable[[np.dtype], Any]]] = {
    "add": (stablehlo.add, lambda d: 0),
    "mul": (stablehlo.multiply, lambda d: 1),
    "max": (stablehlo.maximum, lambda d: -np.inf if is_floating(d) else (False if d.kind == "b" else np.iinfo(d).min)),
    "min": (stablehlo.minimum, lambda d: np.inf if is_floating(d) else (True if d.kind == "b" else np.iinfo(d).max)),
    "and": (stablehlo.and_, lambda d: True if d.kind == "b" else -1),
    "or": (stablehlo.or_, lambda d: False if d.kind == "b" else 0),
}


def _reducer(kind: str) -> Callable:
    hlo, identity = _MONOIDS[kind]

    @traced_op("operand")
    def fn(operand: Array, axes: Sequence[int]) -> Array:
        t = _lift(operand)
        init = t.trace.constant(np.asarray(identity(t.dtype), t.dtype))
        axes_ = sorted({int(a) % t.ndim for a in axes}) if t.ndim else []
        v = stablehlo.reduce(t.trace.emit(), [t.value], [init], axes_, lambda bb, args: [hlo(bb, args[0], args[1])])
        return _wrap(v, t)
    name = {"add": "reduce_sum", "mul": "reduce_prod", "max": "reduce_max", "min": "reduce_min",
            "and": "reduce_and", "or": "reduce_or"}[kind]
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"`stablehlo.reduce` over `axes` with `{hlo.__name__.rstrip('_')}`, as `jax.lax.{name}`."
    return fn


reduce_sum = _reducer("add")
reduce_prod = _reducer("mul")
reduce_max = _reducer("max")
reduce_min = _reducer("min")
reduce_and = _reducer("and")
reduce_or = _reducer("or")


def _monoid_of(computation: Callable) -> str:
    for name, fn in (("add", ELEMENTWISE_BINDINGS["add"]), ("mul", ELEMENTWISE_BINDINGS["mul"]),
                     ("max", ELEMENTWISE_BINDINGS["max"]), ("min", ELEMENTWISE_BINDINGS["min"]),
                     ("and", ELEMENTWISE_BINDINGS["bitwise_and"]), ("or", ELEMENTWISE_BINDINGS["bitwise_or"])):
        if computation is fn or getattr(computation, "__name__", None) == name:
            return name
    raise NotImplementedError(f"reduce_window: the computation must be lax.add, mul, max, min, bitwise_and or "
                              f"bitwise_or (at {user_line()})")


@traced_op("operand", "init_value")
def reduce_window(operand: Array, init_value: Array, computation: Callable, window_dimensions: Sequence[int],
                  window_strides: Sequence[int] | None = None, padding: Any = "VALID",
                  base_dilation: Sequence[int] | None = None, window_dilation: Sequence[int] | None = None) -> Array:
    """`stablehlo.reduce_window` of one operand with a `computation` among lax.add, mul, max, min,
    bitwise_and, bitwise_or; `padding` is 'SAME', 'VALID' or `(low, high)` pairs."""
    t, init = same_dtype(operand, init_value)
    hlo = _MONOIDS[_monoid_of(computation)][0]
    n = t.ndim
    window = [int(w) for w in window_dimensions]
    strides = [int(s) for s in window_strides] if window_strides else [1] * n
    bd = [int(d) for d in base_dilation] if base_dilation else [1] * n
    wd = [int(d) for d in window_dilation] if window_dilation else [1] * n
    pads = _conv_padding(padding, t.shape, window, strides, bd, wd)
    v = stablehlo.reduce_window(t.trace.emit(), [t.value], [init.value], window,
                                lambda bb, args: [hlo(bb, args[0], args[1])], window_strides=strides,
                                base_dilations=bd, window_dilations=wd, padding=pads)
    return _wrap(v, t)


def _cumulative(name: str, kind: str) -> Callable:
    @traced_op("operand")
    def fn(operand: Array, axis: int = 0, reverse: bool = False) -> Array:
        t = _lift(operand)
        ax = int(axis) % t.ndim
        n = t.shape[ax]
        window = [1] * t.ndim
        window[ax] = builtins.max(n, 1)
        pads = [(0, 0)] * t.ndim
        pads[ax] = (0, builtins.max(n - 1, 0)) if reverse else (builtins.max(n - 1, 0), 0)
        hlo, identity = _MONOIDS[kind]
        init = t.trace.constant(np.asarray(identity(t.dtype), t.dtype))
        v = stablehlo.reduce_window(t.trace.emit(), [t.value], [init], window,
                                    lambda bb, args: [hlo(bb, args[0], args[1])], padding=pads)
        return _wrap(v, t)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The running {kind} along `axis` (from the end when `reverse`), as `jax.lax.{name}`."
    return fn


cumsum = _cumulative("cumsum", "add")
cumprod = _cumulative("cumprod", "mul")
cummax = _cumulative("cummax", "max")
cummin = _cumulative("cummin", "min")


def _arg_extremum(name: str, largest: bool) -> Callable:
    @traced_op("operand")
    def fn(operand: Array, axis: int, index_dtype: Any) -> Array:
        out = arg_reduce(_lift(operand), int(axis), False, largest)
        return convert_element_type(out, index_dtype)
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = f"The index of the {'largest' if largest else 'smallest'} element along `axis`, as `jax.lax.{name}`."
    return fn


def arg_reduce(x: Tracer, axis: int | None, keepdims: bool, largest: bool) -> Tracer:
    """The int32 index of the largest (smallest) element of `x` along `axis` (of the flattened
    array when None): the first on ties and the first NaN, as numpy."""
    trace = x.trace
    if x.dtype == np.bool_:
        x = convert_element_type(x, np.int32)
    if axis is None:
        out = arg_reduce(_reshaped(x, (x.size,)), 0, False, largest)
        return _reshaped(out, (1,) * x.ndim) if keepdims else out
    if x.ndim == 0:
        raise ValueError(f"argmax/argmin of a 0-d array needs axis=None (at {user_line()})")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis {axis} is out of bounds for an array of rank {x.ndim} (at {user_line()})")
    ax = axis % x.ndim
    if x.shape[ax] == 0:
        raise ValueError(f"attempt to get argmax/argmin of an empty sequence (at {user_line()})")
    b = trace.emit()
    idx = stablehlo.iota(b, tensor_type(x.shape, np.int32), ax)
    is_float = is_floating(x.dtype)
    if is_float:
        init = -np.inf if largest else np.inf
    else:
        info = np.iinfo(x.dtype)
        init = info.min if largest else info.max
    init_v = trace.constant(np.asarray(init, dtype=x.dtype))
    init_i = trace.constant(np.asarray(np.iinfo(np.int32).max, dtype=np.int32))
    direction = "GT" if largest else "LT"

    def body(bb: Any, args: list) -> list:
        av, ai, bv, bi = args[0], args[1], args[2], args[3]
        wins = stablehlo.compare(bb, av, bv, direction)
        eq = stablehlo.compare(bb, av, bv, "EQ")
        if is_float:  # NaN wins (numpy returns the first NaN)
            a_nan = stablehlo.compare(bb, av, av, "NE")
            b_nan = stablehlo.compare(bb, bv, bv, "NE")
            wins = stablehlo.or_(bb, wins, a_nan)
            eq = stablehlo.or_(bb, eq, stablehlo.and_(bb, a_nan, b_nan))
        val = stablehlo.select(bb, wins, av, bv)
        ind = stablehlo.select(bb, eq, stablehlo.minimum(bb, ai, bi), stablehlo.select(bb, wins, ai, bi))
        return [val, ind]

    # `reduce`'s body arguments are (acc..., x...): values and indices of both sides.
    results = stablehlo.reduce(b, [x.value, idx], [init_v, init_i], [ax], body)
    out = Tracer(results[1], trace)
    if keepdims:
        out = _reshaped(out, tuple(1 if i == ax else d for i, d in enumerate(x.shape)))
    return out


def _reshaped(x: Tracer, shape: tuple[int, ...]) -> Tracer:
    return x if x.shape == shape else _wrap(stablehlo.reshape(x.trace.emit(), x.value, list(shape)), x)


argmax = _arg_extremum("argmax", True)
argmin = _arg_extremum("argmin", False)


# --- sorting -----------------------------------------------------------------------------------


@traced_op("operand")
def sort(operand: Array | Sequence[Array], dimension: int = -1, is_stable: bool = True, num_keys: int = 1) -> Any:
    """`stablehlo.sort` of one array or several of one shape sorted together by the first
    `num_keys` (lexicographically, NaNs last), as `jax.lax.sort`."""
    single = not isinstance(operand, (list, tuple))
    ts = [_lift(x) for x in ([operand] if single else operand)]
    rank = ts[0].ndim
    if rank == 0:
        raise ValueError(f"sort of a 0-d array (at {user_line()})")
    dim = int(dimension) % rank
    floats = [is_floating(t.dtype) for t in ts]

    def comparator(bb: Any, args: list) -> list:
        # lexicographic: key 0 decides unless equal, then key 1, ...
        result = None
        for k in reversed(range(num_keys)):
            lhs, rhs = args[2 * k], args[2 * k + 1]
            less = less_total_order(bb, lhs, rhs, floats[k])
            if result is None:
                result = less
            else:
                greater = less_total_order(bb, rhs, lhs, floats[k])
                equal = stablehlo.not_(bb, stablehlo.or_(bb, less, greater))
                result = stablehlo.or_(bb, less, stablehlo.and_(bb, equal, result))
        return [result]

    res = stablehlo.sort(ts[0].trace.emit(), [t.value for t in ts], dim, comparator, is_stable=is_stable)
    res = [res] if not isinstance(res, (list, tuple)) else list(res)
    outs = [Tracer(v, t.trace, t.weak) for v, t in zip(res, ts)]
    return outs[0] if single else tuple(outs)


def less_total_order(b: Any, lhs: Any, rhs: Any, is_float: bool) -> Any:
    """`lhs < rhs` with NaNs sorted last (as numpy): the comparator of sorts."""
    lt = stablehlo.compare(b, lhs, rhs, "LT")
    if not is_float:
        return lt
    lhs_nan = stablehlo.compare(b, lhs, lhs, "NE")
    rhs_nan = stablehlo.compare(b, rhs, rhs, "NE")
    # lhs < rhs, or rhs is NaN and lhs is not
    return stablehlo.or_(b, lt, stablehlo.and_(b, rhs_nan, stablehlo.not_(b, lhs_nan)))


def sort_key_val(keys: Array, values: Array, dimension: int = -1, is_stable: bool = True) -> tuple[Array, Array]:
    """`keys` sorted along `dimension`, and `values` permuted the same way."""
    return sort((keys, values), dimension, is_stable, 1)


__all__ = [
    "GatherDimensionNumbers", "ScatterDimensionNumbers", "argmax", "argmin", "bitcast_convert_type", "broadcast",
    "broadcast_in_dim", "broadcasted_iota", "clamp", "concatenate", "conv", "conv_general_dilated",
    "convert_element_type", "cummax", "cummin", "cumprod", "cumsum", "dot", "dot_general", "dynamic_index_in_dim",
    "dynamic_slice", "dynamic_slice_in_dim", "dynamic_update_slice", "dynamic_update_slice_in_dim", "eq",
    "expand_dims", "gather", "ge", "gt", "index_in_dim", "integer_pow", "iota", "le", "lt", "ne", "pad",
    "reduce_and", "reduce_max", "reduce_min", "reduce_or", "reduce_precision", "reduce_prod", "reduce_sum",
    "reduce_window",
    "reshape", "rev", "round", "scatter", "scatter_add", "scatter_max", "scatter_min", "scatter_mul", "select",
    "slice", "slice_in_dim", "sort", "sort_key_val", "square", "squeeze", "stop_gradient", "transpose"
] + sorted(ELEMENTWISE_BINDINGS)
