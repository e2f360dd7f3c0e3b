"""`loom.numpy` (imported as `lnp`): NumPy's API over traced values and plain arrays.

Inside `loom.jit` the functions take `Tracer`s and insert StableHLO ops, promoting dtypes as JAX
does (Python scalars are weakly typed: `x_f32 + 1.0` stays float32) and broadcasting as NumPy does.
Called on plain arrays outside tracing, they run NumPy directly. Creation functions (`zeros`,
`arange`, ...) return NumPy arrays with JAX's default dtypes (float32, int32); combined with
tracers they become constants.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np

from loom.dialects import stablehlo
from loom.dialects.stablehlo import DotDimensionNumbers
from loom.frontend.tracing import (
    TraceContext,  # noqa: F401 - part of the namespace
    Tracer,
    TracerError,  # noqa: F401 - part of the namespace
    ir_element_type,
    is_floating,
    promote_types,
    result_type,
    scalar_dtype,
    user_line,
)
from loom.frontend.tracing import broadcast_shapes as _broadcast_shapes
from loom.frontend.tracing import broadcast_to_shape as _broadcast
from loom.frontend.tracing import floating_dtype as _floating
from loom.frontend.tracing import lift as _lift
from loom.frontend.tracing import promote as _promote
from loom.frontend.tracing import trace_of as _trace_of

ndarray = np.ndarray
# ml_dtypes' bfloat16, the same type as jax.numpy.bfloat16 (importing ml_dtypes also makes
# np.dtype("bfloat16") work, so dtype="bfloat16" is accepted wherever a dtype is)
bfloat16 = ml_dtypes.bfloat16
float16, float32, float64 = np.float16, np.float32, np.float64
int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64
uint8, uint32 = np.uint8, np.uint32
bool_ = np.bool_
inf, nan, pi, e = np.inf, np.nan, np.pi, np.e

ArrayLike = Any
Axis = int | Sequence[int] | None


# --- helpers -----------------------------------------------------------------------------------






_HALF_FLOATS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _in_float32(x: Tracer, body: Callable[[Tracer], Tracer]) -> Tracer:
    """`body(x)`, computed in float32 and rounded back to `x`'s dtype when `x` is float16 or
    bfloat16: JAX's reductions (sum, prod, mean, var) accumulate half-precision values in
    float32, so long sums lose no more than the final rounding."""
    if x.dtype not in _HALF_FLOATS:
        return body(x)
    out = body(astype(x, np.float32))
    return _lift(out.trace, out, x.dtype, x.weak)


def _elementwise_binary(np_fn: Callable, hlo_fn: Callable) -> Callable[[ArrayLike, ArrayLike], Any]:
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        trace = _trace_of(x, y)
        if trace is None:
            return np_fn(x, y)
        a, b = _promote(trace, x, y)
        return Tracer(hlo_fn(trace.emit(), a.value, b.value), trace, a.weak and b.weak)
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"Elementwise `numpy.{np_fn.__name__}`, with JAX's dtype promotion and broadcasting."
    return fn


def _elementwise_unary(np_fn: Callable, hlo_fn: Callable, to_float: bool = False) -> Callable[[ArrayLike], Any]:
    def fn(x: ArrayLike) -> Any:
        trace = _trace_of(x)
        if trace is None:
            return np_fn(x)
        d = _floating(x.dtype) if to_float else x.dtype
        t = _lift(trace, x, d, x.weak)
        return Tracer(hlo_fn(trace.emit(), t.value), trace, t.weak)
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"Elementwise `numpy.{np_fn.__name__}`."
    return fn


def _comparison(np_fn: Callable, direction: str) -> Callable[[ArrayLike, ArrayLike], Any]:
    def fn(x: ArrayLike, y: ArrayLike) -> Any:
        trace = _trace_of(x, y)
        if trace is None:
            return np_fn(x, y)
        a, b = _promote(trace, x, y)
        return Tracer(stablehlo.compare(trace.emit(), a.value, b.value, direction), trace)
    fn.__name__ = fn.__qualname__ = np_fn.__name__
    fn.__doc__ = f"Elementwise `numpy.{np_fn.__name__}` (a bool array)."
    return fn


def _axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ValueError(f"axis {a} is out of bounds for an array of rank {ndim} (at {user_line()})")
        out.append(a % ndim)
    return tuple(sorted(set(out)))


# --- creation ----------------------------------------------------------------------------------


def _is_python_data(x: Any) -> bool:
    """Python scalars, or lists and tuples nesting only them."""
    if isinstance(x, (list, tuple)):
        return all(_is_python_data(v) for v in x)
    return type(x) in (builtins.bool, int, float, complex)


# JAX's dtypes for Python data (64-bit types off): numpy's defaults halved.
_PYTHON_DEFAULTS = {np.dtype(np.int64): np.dtype(np.int32), np.dtype(np.float64): np.dtype(np.float32),
                    np.dtype(np.complex128): np.dtype(np.complex64)}


def _from_python(x: Any) -> np.ndarray:
    """Python data as an array of JAX's default dtypes (int32, float32, complex64); integers that
    int32 cannot hold are an error, as in JAX, not wrapped."""
    out = np.array(x)
    dtype = _PYTHON_DEFAULTS.get(out.dtype)
    if dtype is None:
        if out.dtype.kind in "uO":  # beyond int64 (numpy picks uint64 or object)
            raise OverflowError(f"Python int too large to convert to int32 (at {user_line()})")
        return out
    if dtype.kind == "i" and out.size and (out.min() < -2**31 or out.max() >= 2**31):
        raise OverflowError(f"Python int {int(out.max() if out.max() >= 2**31 else out.min())} too large to "
                            f"convert to int32 (at {user_line()})")
    return out.astype(dtype)


def array(x: ArrayLike, dtype: Any = None) -> Any:
    """An array of `x` (a tracer stays a tracer, converted to `dtype` if given). Python scalars
    and lists of them get JAX's default dtypes (float32, int32, complex64); numpy arrays keep
    theirs."""
    if isinstance(x, Tracer):
        return x if dtype is None else astype(x, dtype)
    if _trace_of(x) is not None:
        return stack(list(x)) if dtype is None else astype(stack(list(x)), dtype)
    if dtype is None and _is_python_data(x):
        return _from_python(x)
    return np.array(x, dtype=dtype)


def asarray(x: ArrayLike, dtype: Any = None) -> Any:
    """As `array`, without copying a numpy array that already has the dtype."""
    if isinstance(x, Tracer) or _trace_of(x) is not None:
        return array(x, dtype)
    if dtype is None and _is_python_data(x):
        return _from_python(x)
    return np.asarray(x, dtype=dtype)


def _shape(shape: int | Sequence[int]) -> tuple[int, ...]:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)


def zeros(shape: int | Sequence[int], dtype: Any = np.float32) -> np.ndarray:
    """An array of zeros (float32 by default, as JAX)."""
    return np.zeros(_shape(shape), dtype=dtype)


def ones(shape: int | Sequence[int], dtype: Any = np.float32) -> np.ndarray:
    """An array of ones (float32 by default, as JAX)."""
    return np.ones(_shape(shape), dtype=dtype)


def full(shape: int | Sequence[int], fill_value: Any, dtype: Any = None) -> Any:
    """An array filled with `fill_value` (a tracer fill value is broadcast)."""
    if isinstance(fill_value, Tracer):
        out = broadcast_to(fill_value, _shape(shape))
        return out if dtype is None else astype(out, dtype)
    if dtype is None:
        dtype = scalar_dtype(fill_value)[0]
    return np.full(_shape(shape), fill_value, dtype=dtype)


def arange(start: Any, stop: Any = None, step: Any = 1, dtype: Any = None) -> np.ndarray:
    """`numpy.arange` with JAX's default dtypes (int32 for ints, float32 for floats)."""
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        floats = builtins.any(isinstance(v, float) for v in (start, stop, step))
        dtype = np.float32 if floats else np.int32
    return np.arange(start, stop, step, dtype=dtype)


def zeros_like(x: ArrayLike, dtype: Any = None) -> Any:
    """Zeros of the shape and dtype of `x`."""
    return full_like(x, 0, dtype)


def ones_like(x: ArrayLike, dtype: Any = None) -> Any:
    """Ones of the shape and dtype of `x`."""
    return full_like(x, 1, dtype)


def full_like(x: ArrayLike, fill_value: Any, dtype: Any = None) -> Any:
    """`fill_value` in the shape (and dtype, unless given) of `x`."""
    if isinstance(x, Tracer):
        d = np.dtype(dtype) if dtype is not None else x.dtype
        return Tracer(x.trace.constant(np.asarray(fill_value, dtype=d), shape=x.shape), x.trace,
                      x.weak and dtype is None)
    return np.full_like(x, fill_value, dtype=dtype)


# --- elementwise -------------------------------------------------------------------------------

add = _elementwise_binary(np.add, stablehlo.add)
subtract = _elementwise_binary(np.subtract, stablehlo.subtract)
multiply = _elementwise_binary(np.multiply, stablehlo.multiply)
maximum = _elementwise_binary(np.maximum, stablehlo.maximum)
minimum = _elementwise_binary(np.minimum, stablehlo.minimum)
power = _elementwise_binary(np.power, stablehlo.power)
exp = _elementwise_unary(np.exp, stablehlo.exponential, to_float=True)
log = _elementwise_unary(np.log, stablehlo.log, to_float=True)
tanh = _elementwise_unary(np.tanh, stablehlo.tanh, to_float=True)
sin = _elementwise_unary(np.sin, stablehlo.sine, to_float=True)
cos = _elementwise_unary(np.cos, stablehlo.cosine, to_float=True)
sqrt = _elementwise_unary(np.sqrt, stablehlo.sqrt, to_float=True)
negative = _elementwise_unary(np.negative, stablehlo.negate)
_abs = _elementwise_unary(np.abs, stablehlo.abs_)


def abs(x: ArrayLike) -> Any:  # noqa: A001 - numpy's name
    """Elementwise absolute value (unsigned integers and bools are returned unchanged)."""
    if isinstance(x, Tracer) and x.dtype.kind in "ub":
        return x
    return _abs(x)


absolute = abs
less = _comparison(np.less, "LT")
less_equal = _comparison(np.less_equal, "LE")
greater = _comparison(np.greater, "GT")
greater_equal = _comparison(np.greater_equal, "GE")
equal = _comparison(np.equal, "EQ")
not_equal = _comparison(np.not_equal, "NE")


def divide(x: ArrayLike, y: ArrayLike) -> Any:
    """True division; integer operands give float32 (as JAX)."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.divide(x, y)
    d, weak = promote_types(scalar_dtype(x), scalar_dtype(y))
    a, b = _promote(trace, x, y, dtype=_floating(d))
    return Tracer(stablehlo.divide(trace.emit(), a.value, b.value), trace, weak and is_floating(d))


true_divide = divide


def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike) -> Any:
    """`x` where `condition` holds, else `y` (broadcast together)."""
    trace = _trace_of(condition, x, y)
    if trace is None:
        return np.where(condition, x, y)
    c = condition if isinstance(condition, Tracer) else _lift(trace, np.asarray(condition, dtype=np.bool_))
    if c.dtype != np.bool_:
        c = not_equal(c, 0)
    a, b = _promote(trace, x, y)
    shape = _broadcast_shapes(c.shape, a.shape)
    c, a, b = _broadcast(c, shape), _broadcast(a, shape), _broadcast(b, shape)
    return Tracer(stablehlo.select(trace.emit(), c.value, a.value, b.value), trace, a.weak and b.weak)


def astype(x: ArrayLike, dtype: Any) -> Any:
    """`x` converted to `dtype`."""
    if not isinstance(x, Tracer):
        return np.asarray(x).astype(dtype)
    d = np.dtype(dtype)
    if d == x.dtype:
        return Tracer(x.value, x.trace, False)
    if d == np.bool_:
        return not_equal(x, 0)
    return Tracer(stablehlo.convert(x.trace.emit(), x.value, ir_element_type(d)), x.trace)


# --- reductions --------------------------------------------------------------------------------


def _reduce(x: Tracer, axis: Axis, keepdims: bool, init: Any, body: Callable) -> Tracer:
    trace = x.trace
    axes = _axes(axis, x.ndim)
    init_value = trace.constant(np.asarray(init, dtype=x.dtype))
    v = stablehlo.reduce(trace.emit(), [x.value], [init_value], list(axes),
                         lambda b, args: [body(b, args[0], args[1])])
    out = Tracer(v, trace, x.weak)
    if keepdims:
        out = reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
    return out


def _identity(dtype: np.dtype, largest: bool) -> Any:
    if is_floating(dtype):
        return np.inf if largest else -np.inf
    if dtype.kind == "b":
        return largest
    info = np.iinfo(dtype)
    return info.max if largest else info.min


def sum(x: ArrayLike, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Any:  # noqa: A001
    """Sum over `axis` (all axes when None); bool and small ints sum as int32, as JAX."""
    if not isinstance(x, Tracer):
        return np.sum(x, axis=axis, keepdims=keepdims, dtype=dtype)
    if dtype is not None:
        x = astype(x, dtype)
    elif x.dtype.kind == "b" or (x.dtype.kind in "iu" and x.dtype.itemsize < 4):
        x = astype(x, np.int32 if x.dtype.kind != "u" else np.uint32)
    return _in_float32(x, lambda xf: _reduce(xf, axis, keepdims, 0, stablehlo.add))


def max(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Maximum over `axis`."""
    if not isinstance(x, Tracer):
        return np.max(x, axis=axis, keepdims=keepdims)
    return _reduce(x, axis, keepdims, _identity(x.dtype, False), stablehlo.maximum)


def min(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Minimum over `axis`."""
    if not isinstance(x, Tracer):
        return np.min(x, axis=axis, keepdims=keepdims)
    return _reduce(x, axis, keepdims, _identity(x.dtype, True), stablehlo.minimum)


amax, amin = max, min


def mean(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Mean over `axis`; integer inputs give float32, as JAX."""
    if not isinstance(x, Tracer):
        return np.mean(x, axis=axis, keepdims=keepdims)
    axes = _axes(axis, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    xf = astype(x, _floating(x.dtype))
    return _in_float32(xf, lambda t: divide(sum(t, axis=axes, keepdims=keepdims), float(count)))


# --- linear algebra ----------------------------------------------------------------------------


def matmul(x: ArrayLike, y: ArrayLike) -> Any:
    """Matrix product with numpy's rules (1-D operands, broadcast batch dimensions), lowered to
    `stablehlo.dot_general`."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.matmul(x, y)
    d, weak = promote_types(scalar_dtype(x), scalar_dtype(y))
    a, b = _lift(trace, x, d, weak), _lift(trace, y, d, weak)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must not be scalars, got shapes {a.shape} and {b.shape} "
                         f"(at {user_line()})")
    ka = a.shape[-1]
    kb_dim = 0 if b.ndim == 1 else b.ndim - 2
    if ka != b.shape[kb_dim]:
        raise ValueError(f"matmul: contracting dimensions differ: shapes {a.shape} and {b.shape} "
                         f"({ka} != {b.shape[kb_dim]}) at {user_line()}")
    if (a.ndim >= 3 or b.ndim >= 3) and a.ndim >= 2 and b.ndim >= 2:
        bshape = _broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = _broadcast(a, (*bshape, *a.shape[-2:]))
        b = _broadcast(b, (*bshape, *b.shape[-2:]))
        batch = len(bshape)
    else:
        batch = 0
    dims = tuple(range(batch))
    dn = DotDimensionNumbers.get(lhs_batching_dimensions=dims, rhs_batching_dimensions=dims,
                             lhs_contracting_dimensions=(a.ndim - 1,),
                             rhs_contracting_dimensions=(0 if b.ndim == 1 else b.ndim - 2,))
    return Tracer(stablehlo.dot_general(trace.emit(), a.value, b.value, dn), trace, weak)


def dot(x: ArrayLike, y: ArrayLike) -> Any:
    """`numpy.dot` for operands of rank at most 2 (scalars multiply)."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.dot(x, y)
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return multiply(x, y)
    if np.ndim(x) > 2 or np.ndim(y) > 2:
        raise NotImplementedError(f"dot of operands of rank > 2 is not supported yet (at {user_line()})")
    return matmul(x, y)


# --- shapes ------------------------------------------------------------------------------------


def reshape(x: ArrayLike, shape: int | Sequence[int]) -> Any:
    """`x` with a new shape (one entry may be -1)."""
    if not isinstance(x, Tracer):
        return np.reshape(x, shape)
    shape = list(_shape(shape))
    if shape.count(-1) == 1:
        known = int(np.prod([s for s in shape if s != -1], dtype=np.int64))
        shape[shape.index(-1)] = x.size // known if known else 0
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise ValueError(f"cannot reshape an array of shape {x.shape} into shape {tuple(shape)} (at {user_line()})")
    if tuple(shape) == x.shape:
        return x
    return Tracer(stablehlo.reshape(x.trace.emit(), x.value, shape), x.trace, x.weak)


def transpose(x: ArrayLike, axes: Sequence[int] | None = None) -> Any:
    """`x` with its axes permuted (reversed by default)."""
    if not isinstance(x, Tracer):
        return np.transpose(x, axes)
    perm = list(range(x.ndim))[::-1] if axes is None else [a % x.ndim for a in axes]
    if perm == list(range(x.ndim)):
        return x
    return Tracer(stablehlo.transpose(x.trace.emit(), x.value, perm), x.trace, x.weak)


def broadcast_to(x: ArrayLike, shape: int | Sequence[int]) -> Any:
    """`x` broadcast to `shape`, as numpy."""
    if not isinstance(x, Tracer):
        return np.broadcast_to(x, shape)
    shape = _shape(shape)
    if _broadcast_shapes(x.shape, shape) != shape:
        raise ValueError(f"cannot broadcast shape {x.shape} to {shape} (at {user_line()})")
    return _broadcast(x, shape)


def expand_dims(x: ArrayLike, axis: int | Sequence[int]) -> Any:
    """`x` with size-1 axes inserted at `axis`."""
    if not isinstance(x, Tracer):
        return np.expand_dims(x, axis)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = x.ndim + len(axes)
    axes = sorted(a % n for a in axes)
    shape = list(x.shape)
    for a in axes:
        shape.insert(a, 1)
    return reshape(x, shape)


def squeeze(x: ArrayLike, axis: int | Sequence[int] | None = None) -> Any:
    """`x` without size-1 axes (all of them, or those in `axis`)."""
    if not isinstance(x, Tracer):
        return np.squeeze(x, axis)
    axes = [i for i, d in enumerate(x.shape) if d == 1] if axis is None else _axes(axis, x.ndim)
    for a in axes:
        if x.shape[a] != 1:
            raise ValueError(f"cannot squeeze axis {a} of size {x.shape[a]} (at {user_line()})")
    return reshape(x, [d for i, d in enumerate(x.shape) if i not in axes])


def concatenate(arrays: Sequence[ArrayLike], axis: int = 0) -> Any:
    """The arrays joined along `axis` (dtypes promoted)."""
    trace = _trace_of(*arrays)
    if trace is None:
        return np.concatenate(arrays, axis=axis)
    d, weak = promote_types(*(scalar_dtype(a) for a in arrays))
    ts = [_lift(trace, a, d, weak) for a in arrays]
    ndim = ts[0].ndim
    if ndim == 0:
        raise ValueError(f"zero-dimensional arrays cannot be concatenated (at {user_line()})")
    axis %= ndim
    return Tracer(stablehlo.concatenate(trace.emit(), [t.value for t in ts], axis), trace, weak)


def stack(arrays: Sequence[ArrayLike], axis: int = 0) -> Any:
    """The arrays stacked along a new `axis`."""
    trace = _trace_of(*arrays)
    if trace is None:
        return np.stack(arrays, axis=axis)
    return concatenate([expand_dims(_lift(trace, a), axis) for a in arrays], axis=axis)


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating-point dtype (`eps`, `max`, `tiny`, ...), bfloat16 included
    (numpy's own `finfo` rejects it), as `jax.numpy.finfo`."""
    if isinstance(dtype, Tracer):
        dtype = dtype.dtype
    return ml_dtypes.finfo(dtype)


def iinfo(dtype: Any) -> np.iinfo:
    """Machine limits of an integer dtype, as `numpy.iinfo`."""
    if isinstance(dtype, Tracer):
        dtype = dtype.dtype
    return np.iinfo(dtype)


def shape(x: ArrayLike) -> tuple[int, ...]:
    """The shape of `x`."""
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def ndim(x: ArrayLike) -> int:
    """The rank of `x`."""
    return len(shape(x))


__all__ = [
    "abs", "absolute", "add", "amax", "amin", "arange", "array", "asarray", "astype", "bfloat16", "bool_",
    "broadcast_to", "concatenate", "cos", "divide", "dot", "equal", "exp", "expand_dims", "finfo", "float16",
    "float32", "float64", "full", "full_like", "greater", "greater_equal", "iinfo", "int8", "int16", "int32", "int64",
    "less", "less_equal", "log", "matmul", "max", "maximum", "mean", "min", "minimum", "multiply", "ndim", "negative",
    "not_equal", "ones", "ones_like", "power", "reshape", "result_type", "shape", "sin", "sqrt", "squeeze", "stack",
    "subtract", "sum", "tanh", "transpose", "true_divide", "uint8", "uint32", "where", "zeros", "zeros_like",
]


from loom.numpy._more import *  # noqa: E402, F403 - the second part of the API
from loom.numpy._more import __all__ as _more_all  # noqa: E402

__all__ += _more_all

from loom.numpy._indexing import take, take_along_axis  # noqa: E402 - gathers over the core API

__all__ += ["take", "take_along_axis"]

from loom.numpy._elementwise import *  # noqa: E402, F403 - the rest of the elementwise math
from loom.numpy._elementwise import __all__ as _elementwise_all  # noqa: E402

__all__ += _elementwise_all

from loom.numpy._common import *  # noqa: E402, F403 - more of jax.numpy's common functions
from loom.numpy._common import __all__ as _common_all  # noqa: E402

__all__ += _common_all

from loom.numpy._extra import *  # noqa: E402, F403 - the array-API names and the rest of the common API
from loom.numpy._extra import __all__ as _extra_all  # noqa: E402

__all__ += _extra_all

from loom.numpy._parity import *  # noqa: E402, F403 - more of jax.numpy's names, checked against it
from loom.numpy._parity import __all__ as _parity_all  # noqa: E402

__all__ += _parity_all

from loom.numpy import _array_methods, linalg  # noqa: E402, F401 - built from the functions above

_array_methods.register()
