"""Array creation, shape manipulation, selection, differences, convolution, interpolation and
the other array functions of `jax.numpy` that are not ufuncs or reductions.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.frontend.shard_map import mark_varying
from loom.frontend.tracing import (
    ConcretizationError,
    IncompatibleShapesError,
    Tracer,
    TracerError,
    canonical_dtype,
    default_dtype,
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
from loom.numpy import _indexing as indexing
from loom.numpy import _reductions as reductions
from loom.numpy import _sorting as sorting
from loom.numpy import _tensor_contractions as tensor_contractions
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import (
    ArrayLike,
    Axis,
    AxisError,
    array_dtype,
    as_tracer,
    asarray_of_result_type,
    canonical_axes,
    dtype_of,
    first_true,
    is_traced,
    lift_all,
    positive_axis,
    sized_message,
    slice_along,
    take_slice,
)


def _is_python_data(x: Any) -> bool:
    """Python scalars, or lists and tuples nesting only them."""
    if isinstance(x, (list, tuple)):
        return builtins.all(_is_python_data(v) for v in x)
    return type(x) in (builtins.bool, int, float, complex)


def _from_python(x: Any) -> np.ndarray:
    """Python data as an array of JAX's default dtypes (int32, float32, complex64; 64-bit ones with
    enable_x64); integers that int32 cannot hold are an error, as in JAX, not wrapped."""
    out = np.array(x)
    dtype = canonical_dtype(out.dtype) if out.dtype.kind in "ifc" else None
    if dtype is None:
        if out.dtype.kind in "uO":  # beyond int64 (numpy picks uint64 or object)
            raise OverflowError(f"Python int too large to convert to int32 (at {user_line()})")
        return out
    if dtype == np.int32 and out.size and (out.min() < -2**31 or out.max() >= 2**31):
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


def _float_default(dtype: Any) -> Any:
    """`dtype`, or the default float dtype (float32; float64 with enable_x64) when it is None."""
    return dtype if dtype is not None else default_dtype("f")


def zeros(shape: int | Sequence[int], dtype: Any = None) -> np.ndarray:
    """An array of zeros (float32 by default, as JAX)."""
    return np.zeros(_shape(shape), dtype=_float_default(dtype))


def ones(shape: int | Sequence[int], dtype: Any = None) -> np.ndarray:
    """An array of ones (float32 by default, as JAX)."""
    return np.ones(_shape(shape), dtype=_float_default(dtype))


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
        dtype = default_dtype("f" if floats else "i")
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
        out = Tracer(x.trace.constant(np.asarray(fill_value, dtype=d), shape=x.shape), x.trace,
                     x.weak and dtype is None)
        mark_varying(out, like=(x,))  # in a shard_map body it varies as x does, as JAX types it
        return out
    return np.full_like(x, fill_value, dtype=dtype)


def where(condition: ArrayLike, x: ArrayLike, y: ArrayLike) -> Any:
    """`x` where `condition` holds, else `y` (broadcast together)."""
    trace = _trace_of(condition, x, y)
    if trace is None:
        return np.where(condition, x, y)
    c = condition if isinstance(condition, Tracer) else _lift(trace, np.asarray(condition, dtype=np.bool_))
    if c.dtype != np.bool_:
        c = ufuncs.not_equal(c, 0)
    a, b = _promote(trace, x, y)
    shape = _broadcast_shapes(c.shape, a.shape)
    c, a, b = _broadcast(c, shape), _broadcast(a, shape), _broadcast(b, shape)
    return Tracer(stablehlo.select(trace.emit(), c.value, a.value, b.value), trace, a.weak and b.weak)


def astype(x: ArrayLike, dtype: Any) -> Any:
    """`x` converted to `dtype`."""
    if not isinstance(x, Tracer):
        return np.asarray(x).astype(dtype)
    d = canonical_dtype(dtype)
    if d == x.dtype:
        return Tracer(x.value, x.trace, False)
    if d == np.bool_:
        return ufuncs.not_equal(x, 0)
    return Tracer(stablehlo.convert(x.trace.emit(), x.value, ir_element_type(d)), x.trace)


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
    axes = [i for i, d in enumerate(x.shape) if d == 1] if axis is None else canonical_axes(axis, x.ndim)
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
    axis = positive_axis(axis, ndim, "concatenate")
    shapes = [t.shape for t in ts]
    if any(len(s) != ndim or s[:axis] + s[axis + 1:] != shapes[0][:axis] + shapes[0][axis + 1:] for s in shapes):
        raise IncompatibleShapesError(f"concatenate: the arrays' shapes {', '.join(map(str, shapes))} differ "
                                      f"outside axis {axis} (at {user_line()})")
    return Tracer(stablehlo.concatenate(trace.emit(), [t.value for t in ts], axis), trace, weak)


def stack(arrays: Sequence[ArrayLike], axis: int = 0) -> Any:
    """The arrays stacked along a new `axis`."""
    trace = _trace_of(*arrays)
    if trace is None:
        return np.stack(arrays, axis=axis)
    return concatenate([expand_dims(_lift(trace, a), axis) for a in arrays], axis=axis)


def shape(x: ArrayLike) -> tuple[int, ...]:
    """The shape of `x`."""
    return x.shape if isinstance(x, Tracer) else np.shape(x)


def ndim(x: ArrayLike) -> int:
    """The rank of `x`."""
    return len(shape(x))


def linspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: Any = None) -> np.ndarray:
    """`numpy.linspace`, float32 by default (as JAX)."""
    return np.linspace(start, stop, num, endpoint=endpoint).astype(_float_default(dtype))


def eye(n: int, m: int | None = None, k: int = 0, dtype: Any = None) -> np.ndarray:
    """The identity-like `n x m` matrix with ones on diagonal `k`, float32 by default."""
    return np.eye(n, m, k, dtype=_float_default(dtype))


def swapaxes(x: ArrayLike, axis1: int, axis2: int) -> Any:
    """`x` with two axes exchanged."""
    if not isinstance(x, Tracer):
        return np.swapaxes(x, axis1, axis2)
    perm = list(range(x.ndim))
    a, b = canonical_axes(axis1, x.ndim)[0], canonical_axes(axis2, x.ndim)[0]
    perm[a], perm[b] = perm[b], perm[a]
    return transpose(x, perm)


def moveaxis(x: ArrayLike, source: int | Sequence[int], destination: int | Sequence[int]) -> Any:
    """`x` with axes `source` moved to positions `destination`, the others in order."""
    if not isinstance(x, Tracer):
        return np.moveaxis(x, source, destination)
    src = [source] if isinstance(source, int) else list(source)
    dst = [destination] if isinstance(destination, int) else list(destination)
    if len(src) != len(dst):
        raise ValueError(f"moveaxis: source and destination must have the same length (at {user_line()})")
    src = [s % x.ndim for s in src]
    dst = [d % x.ndim for d in dst]
    perm = [i for i in range(x.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        perm.insert(d, s)
    return transpose(x, perm)


def split(x: ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """`x` cut along `axis` into equal sections or at the given indices."""
    if not isinstance(x, Tracer):
        return np.split(x, indices_or_sections, axis)
    ax = canonical_axes(axis, x.ndim)[0]
    n = x.shape[ax]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k <= 0 or n % k:
            raise ValueError(f"array split does not result in an equal division: {n} into {k} "
                             f"(at {user_line()})")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0, *(builtins.min(builtins.max(int(i) if i >= 0 else int(i) + n, 0), n)
                       for i in indices_or_sections), n]
    return [take_slice(x, ax, lo, builtins.max(lo, hi)) for lo, hi in zip(bounds[:-1], bounds[1:])]


def flip(x: ArrayLike, axis: Axis = None) -> Any:
    """`x` reversed along `axis` (all axes when None)."""
    if not isinstance(x, Tracer):
        return np.flip(x, axis)
    axes = canonical_axes(axis, x.ndim)
    if not axes:
        return x
    return Tracer(stablehlo.reverse(x.trace.emit(), x.value, list(axes)), x.trace, x.weak)


def tile(x: ArrayLike, reps: int | Sequence[int]) -> Any:
    """`x` repeated `reps` times along each axis, as `numpy.tile`."""
    if not isinstance(x, Tracer):
        return np.tile(x, reps)
    reps = (int(reps),) if isinstance(reps, (int, np.integer)) else tuple(int(r) for r in reps)
    n = builtins.max(len(reps), x.ndim)
    reps = (1,) * (n - len(reps)) + reps
    shape = (1,) * (n - x.ndim) + x.shape
    t = reshape(x, shape)
    # broadcast to (r0, s0, r1, s1, ...) then merge pairs
    expanded = reshape(t, [d for s in shape for d in (1, s)])
    b = _broadcast(expanded, tuple(d for r, s in zip(reps, shape) for d in (r, s)))
    return reshape(b, [r * s for r, s in zip(reps, shape)])


def repeat(x: ArrayLike, repeats: int, axis: int | None = None) -> Any:
    """Each element of `x` repeated `repeats` times along `axis` (of the flattened array when None);
    `repeats` must be an int inside `loom.jit`."""
    if not isinstance(x, Tracer):
        return np.repeat(x, repeats, axis)
    if not isinstance(repeats, (int, np.integer)):
        raise ConcretizationError(f"repeat: only an int `repeats` is supported inside loom.jit (at {user_line()})")
    if axis is None:
        x, axis = reshape(x, (-1,)), 0
    ax = canonical_axes(axis, x.ndim)[0]
    r = int(repeats)
    shape = list(x.shape)
    t = reshape(x, shape[:ax + 1] + [1] + shape[ax + 1:])
    t = _broadcast_dims(t, tuple(shape[:ax + 1] + [r] + shape[ax + 1:]))
    return reshape(t, shape[:ax] + [shape[ax] * r] + shape[ax + 1:])


def _broadcast_dims(x: Tracer, shape: tuple[int, ...]) -> Tracer:
    """Broadcast `x` (of the same rank as `shape`) to `shape`."""
    if x.shape == shape:
        return x
    v = stablehlo.broadcast_in_dim(x.trace.emit(), x.value, shape, list(range(len(shape))))
    return Tracer(v, x.trace, x.weak)


def pad(x: ArrayLike, pad_width: Any, mode: str = "constant", constant_values: Any = 0) -> Any:
    """`x` padded with `constant_values` (mode 'constant' only inside `loom.jit`); `pad_width` is
    an int, a `(before, after)` pair, or one pair per axis."""
    if not isinstance(x, Tracer):
        return np.pad(x, pad_width, mode=mode, constant_values=constant_values) if mode == "constant" \
            else np.pad(x, pad_width, mode=mode)
    if mode != "constant":
        raise ConcretizationError(f"pad: mode {mode!r} is not supported inside loom.jit; only 'constant' "
                                  f"(at {user_line()})")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (x.ndim, 2))
    if (widths < 0).any():
        raise ValueError(f"pad: negative pad widths {widths.tolist()} (at {user_line()})")
    value = x.trace.constant(np.asarray(constant_values, dtype=x.dtype))
    v = stablehlo.pad(x.trace.emit(), x.value, value, [int(w) for w in widths[:, 0]], [int(w) for w in widths[:, 1]])
    return Tracer(v, x.trace, x.weak)


def roll(x: ArrayLike, shift: int | Sequence[int], axis: Axis = None) -> Any:
    """`x` shifted cyclically by `shift` along `axis` (of the flattened array when None)."""
    if not isinstance(x, Tracer):
        return np.roll(x, shift, axis)
    if axis is None:
        return reshape(roll(reshape(x, (-1,)), shift, 0), x.shape)
    shifts = [shift] if isinstance(shift, (int, np.integer)) else list(shift)
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    if len(shifts) == 1:
        shifts = shifts * len(axes)
    if len(shifts) != len(axes):
        raise ValueError(f"roll: shift and axis must have the same length (at {user_line()})")
    for s, a in zip(shifts, axes):
        ax = canonical_axes(int(a), x.ndim)[0]
        n = x.shape[ax]
        if n == 0:
            continue
        k = int(s) % n
        if k:
            x = concatenate([take_slice(x, ax, n - k, n), take_slice(x, ax, 0, n - k)], axis=ax)
    return x


newaxis = None


def permute_dims(x: ArrayLike, axes: Sequence[int]) -> Any:
    """The array API's name for `transpose(x, axes)`."""
    return transpose(x, tuple(axes))


def concat(arrays: Sequence[ArrayLike], axis: int | None = 0) -> Any:
    """The array API's name for `concatenate` (`axis=None` joins the flattened arrays)."""
    if axis is None:
        return concatenate([ravel(a) for a in arrays], axis=0)
    return concatenate(arrays, axis=axis)


def matrix_transpose(x: ArrayLike) -> Any:
    """Swap the last two axes (a stack of matrices transposed)."""
    if ndim(x) < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, but got shape {shape(x)}")
    return swapaxes(x, -1, -2)


def unstack(x: ArrayLike, axis: int = 0) -> tuple[Any, ...]:
    """The slices of `x` along `axis`, as a tuple."""
    axis = positive_axis(axis, ndim(x), "unstack")
    moved = moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(shape(x)[axis]))


def iscomplexobj(x: ArrayLike) -> bool:
    """Whether `x` has a complex dtype."""
    return array_dtype(x).kind == "c"


def isrealobj(x: ArrayLike) -> bool:
    """Whether `x` has a non-complex dtype."""
    return not iscomplexobj(x)


def isreal(x: ArrayLike) -> Any:
    """Whether each element has a zero imaginary part (all True for real dtypes)."""
    return ones_like(x, dtype=np.bool_)


def iscomplex(x: ArrayLike) -> Any:
    """Whether each element has a nonzero imaginary part (all False for real dtypes)."""
    return zeros_like(x, dtype=np.bool_)


def isscalar(x: Any) -> bool:
    """JAX's `isscalar`: Python and NumPy scalars and 0-d arrays (traced or not) are scalars."""
    if isinstance(x, (builtins.bool, int, float, complex, np.generic)):
        return True
    return hasattr(x, "shape") and tuple(x.shape) == ()


def size(x: ArrayLike, axis: int | None = None) -> int:
    """The number of elements (along `axis`)."""
    s = shape(x)
    return int(np.prod(s, dtype=np.int64)) if axis is None else int(s[axis])


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape arrays of `shapes` broadcast to."""
    return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))


def geomspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> np.ndarray:
    """Numbers spaced evenly on a log scale (float32 unless `dtype`)."""
    return np.geomspace(start, stop, num, endpoint=endpoint, axis=axis).astype(dtype or np.float32)


def append(arr: ArrayLike, values: ArrayLike, axis: int | None = None) -> Any:
    """`arr` followed by `values` (both flattened when `axis` is None)."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)], axis=0)
    return concatenate([arr, values], axis=axis)


def delete(arr: ArrayLike, obj: int | slice | Sequence[int], axis: int | None = None) -> Any:
    """`arr` without the entries `obj` (static: an index, a slice or indices) along `axis`
    (of the flattened array when `axis` is None)."""
    if axis is None:
        arr, axis = ravel(arr), 0
    n = shape(arr)[axis]
    gone = np.zeros(n, bool)
    gone[np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj, dtype=np.int64)] = True
    return indexing.take(arr, np.flatnonzero(~gone).astype(np.int32), axis=axis)


def diagflat(v: ArrayLike, k: int = 0) -> Any:
    """A matrix with the flattened `v` on its k-th diagonal."""
    return diag(ravel(v), k)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Any:
    """NumPy's `rollaxis`: move `axis` to before position `start`."""
    rank = ndim(a)
    axis = positive_axis(axis, rank, "rollaxis")
    if not -rank <= start <= rank:
        raise ValueError(f"rollaxis: start {start} is out of bounds for an array of rank {rank}")
    start = start % (rank + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Any:  # noqa: N803 - NumPy's name
    """The Vandermonde matrix of the vector `x`: columns x**(N-1), ..., x, 1 (reversed with
    `increasing`)."""
    if ndim(x) != 1:
        raise ValueError(f"vander: x must be 1-D, but got shape {shape(x)}")
    n = shape(x)[0] if N is None else operator.index(N)
    powers = np.arange(n)
    if not increasing:
        powers = powers[::-1]
    return stack([ufuncs.power(x, int(p)) for p in powers], axis=1)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: int = -1) -> Any:
    """The integral of `y` along `axis` by the trapezoidal rule (sample points `x`, or spacing `dx`)."""
    axis = positive_axis(axis, ndim(y), "trapezoid")
    n = shape(y)[axis]
    head = indexing.take(y, np.arange(1, n), axis=axis)
    tail = indexing.take(y, np.arange(0, n - 1), axis=axis)
    if x is None:
        return reductions.sum(head + tail, axis=axis) * (dx / 2)
    if ndim(x) == 1:
        d = indexing.take(x, np.arange(1, n), axis=0) - indexing.take(x, np.arange(0, n - 1), axis=0)
        d = _along(d, axis, ndim(y))
    else:
        d = indexing.take(x, np.arange(1, n), axis=axis) - indexing.take(x, np.arange(0, n - 1), axis=axis)
    return reductions.sum(d * (head + tail), axis=axis) / 2


def _along(v: Any, axis: int, rank: int) -> Any:
    """A vector shaped to broadcast along `axis` of a rank-`rank` array."""
    for _ in range(axis):
        v = expand_dims(v, 0)
    for _ in range(rank - axis - 1):
        v = expand_dims(v, -1)
    return v


def copy(x: ArrayLike) -> Any:
    """A copy of `x` (traced values are immutable: the value itself)."""
    return x if isinstance(x, Tracer) else np.array(x, copy=True)


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False) -> Any:
    """The index of the bin of each x in the monotonic `bins` (NumPy's convention at the edges)."""
    if ndim(bins) != 1:
        raise ValueError(f"digitize: bins must be 1-D, but got shape {shape(bins)}")
    side = "left" if right else "right"
    if isinstance(bins, Tracer) or isinstance(x, Tracer):
        increasing = bins[-1] >= bins[0]
        forward = sorting.searchsorted(bins, x, side=side)
        backward = shape(bins)[0] - sorting.searchsorted(flip(bins, 0), x, side="right" if right else "left")
        return astype(where(increasing, forward, backward), np.int32)
    return np.digitize(np.asarray(x), np.asarray(bins), right=right)


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *, length: int | None = None) -> Any:
    """Counts (or summed `weights`) of each non-negative integer in `x`; under jit the number of
    bins must be static (`length`), as in JAX; negative values count nowhere and values past the
    last bin are dropped."""
    if length is None:
        if isinstance(x, Tracer):
            raise ConcretizationError("bincount: the number of bins of a traced x must be given as length=... (the "
                            "output shape cannot depend on values)")
        length = builtins.max(int(minlength), int(np.max(np.asarray(x), initial=-1)) + 1)
    hits = ufuncs.equal(expand_dims(x, -1), np.arange(length, dtype=np.int32))
    if weights is None:
        return reductions.sum(astype(hits, np.int32), axis=tuple(range(ndim(x))))
    return reductions.sum(where(hits, expand_dims(weights, -1), 0), axis=tuple(range(ndim(x))))


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Any:
    """`a` flattened, repeated as often as needed and cut to `new_shape`."""
    new_shape = (operator.index(new_shape),) if not isinstance(new_shape, Sequence) else tuple(new_shape)
    total = int(np.prod(new_shape, dtype=np.int64))
    flat = ravel(a)
    n = shape(flat)[0]
    if n == 0:
        raise ValueError("resize: a is empty")
    return reshape(indexing.take(flat, (np.arange(total) % n).astype(np.int32), axis=0), new_shape)


def _nesting(x: Any, where_: str) -> int:
    if isinstance(x, tuple):
        raise TypeError(f"block: {where_} is a tuple; only lists nest blocks (at {user_line()})")
    if not isinstance(x, list):
        return 0
    if not x:
        raise ValueError(f"block: {where_} is an empty list (at {user_line()})")
    depths = {_nesting(e, f"{where_}[{i}]") for i, e in enumerate(x)}
    if len(depths) != 1:
        raise ValueError(f"block: the lists in {where_} are nested to different depths {sorted(depths)} "
                         f"(at {user_line()})")
    return 1 + depths.pop()


def _leaves(x: Any) -> list[Any]:
    return [leaf for e in x for leaf in _leaves(e)] if isinstance(x, list) else [x]


def block(arrays: ArrayLike | list[Any]) -> Any:
    """The array assembled from nested lists of blocks: the innermost lists joined along the last
    axis, the next ones along the one before, ... (blocks given leading axes of length 1 as needed)."""
    depth = _nesting(arrays, "arrays")
    leaves = [asarray_of_result_type(a) for a in _leaves(arrays)]
    rank = builtins.max([depth] + [ndim(a) for a in leaves])
    it = iter(leaves)

    def build(x: Any, level: int) -> Any:
        if not isinstance(x, list):
            a = next(it)
            return reshape(a, (1,) * (rank - ndim(a)) + tuple(shape(a)))
        return concatenate([build(e, level + 1) for e in x], axis=rank - depth + level)

    return build(arrays, 0)


def fromfunction(function: Callable[..., Any], shape: Sequence[int], *, dtype: Any = float, **kwargs: Any) -> Any:
    """`function` called with one coordinate array per axis of `shape` (of `dtype`: float32 by
    default, 64-bit types narrowed as JAX does), and `kwargs`."""
    d = np.dtype(dtype)
    d = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32),
         np.dtype(np.uint64): np.dtype(np.uint32), np.dtype(np.complex128): np.dtype(np.complex64)}.get(d, d)
    shape = tuple(operator.index(n) for n in shape)
    return function(*np.indices(shape, dtype=d), **kwargs)


def _along_axis(v: Any, axis: int, rank: int) -> Any:
    """The vector `v` shaped to broadcast along `axis` of a rank-`rank` array."""
    return reshape(v, tuple(-1 if i == axis else 1 for i in range(rank)))


def _gradient_1d(f: Any, h: Any, axis: int) -> Any:
    n = shape(f)[axis]
    if n < 2:
        raise ValueError(f"gradient: the axis {axis} has {n} element(s); at least 2 are needed (at {user_line()})")
    first = (slice_along(f, axis, 1, 2) - slice_along(f, axis, 0, 1))
    last = (slice_along(f, axis, n - 1, n) - slice_along(f, axis, n - 2, n - 1))
    if ndim(h) == 0:
        inner = (slice_along(f, axis, 2, n) - slice_along(f, axis, 0, n - 2)) / (h * 2.0)
        return concatenate([first / h, inner, last / h], axis=axis)
    if shape(h) != (n,):
        raise ValueError(f"gradient: the coordinates of axis {axis} must have shape ({n},), got {shape(h)} "
                         f"(at {user_line()})")
    dx = diff(h)
    rank = ndim(f)
    dx1, dx2 = (
        _along_axis(slice_along(dx, 0, 0, n - 2), axis, rank),
        _along_axis(slice_along(dx, 0, 1, n - 1), axis, rank),
    )
    # NumPy's second-order differences on an uneven grid
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inner = a * slice_along(f, axis, 0, n - 2) + b * slice_along(f, axis, 1, n - 1) + c * slice_along(f, axis, 2, n)
    return concatenate([first / slice_along(dx, 0, 0, 1), inner, last / slice_along(dx, 0, n - 2, n - 1)], axis=axis)


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """The gradient of `f` by central differences inside and one-sided ones at the edges, along
    `axis` (all axes by default: a list, one array per axis); `varargs` are the spacings, one for
    all axes or one per axis, each a scalar or the coordinates along its axis."""
    if edge_order is not None:
        raise NotImplementedError(f"gradient: edge_order is not supported, as in JAX (at {user_line()})")
    rank = ndim(f)
    axes = list(range(rank)) if axis is None else [axis] if isinstance(axis, int) else list(axis)
    for a in axes:
        if not -rank <= a < rank:
            raise AxisError(f"gradient: axis {a} is out of bounds for an array of rank {rank} (at {user_line()})")
    axes = [a % rank for a in axes]
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes (at {user_line()})")
    if dtype_of(f).kind in "biu":
        f = astype(f, np.float32)
    out = [_gradient_1d(f, h, a) for h, a in zip(spacings, axes)]
    return out[0] if len(out) == 1 else out


def unwrap(p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi) -> Any:
    """`p` with jumps of more than `discont` (`period / 2` by default) along `axis` taken back by
    multiples of `period`."""
    if dtype_of(p).kind == "c":
        raise ValueError(f"unwrap: complex input is not supported, as in JAX (at {user_line()})")
    integral = dtype_of(p).kind in "biu"
    if integral and dtype_of(period).kind == "f":
        # JAX promotes p with a float period (2 pi by default): float32
        p, integral = astype(p, np.float32), False
    if discont is None:
        discont = period / 2
    interval = period // 2 if integral else period / 2
    axis = axis % builtins.max(ndim(p), 1)
    dd = diff(p, axis=axis)
    ddmod = ufuncs.remainder(dd + interval, period) - interval
    ddmod = where(ufuncs.logical_and(ddmod == -interval, dd > 0), interval, ddmod)
    correct = where(ufuncs.abs(dd) < discont, 0, ddmod - dd)
    n = shape(p)[axis]
    return concatenate(
        [slice_along(p, axis, 0, 1), slice_along(p, axis, 1, n) + reductions.cumsum(correct, axis=axis)], axis=axis
    )


def _static(x: Any, name: str, what: str) -> None:
    if is_traced(x):
        raise TracerError(f"{name}: `{what}` must be static (concrete) inside loom.jit, not a traced value "
                          f"(at {user_line()})")


def _gather_ids(arrays: Sequence[Any], ids: np.ndarray, dtype: np.dtype) -> Any:
    """The elements of the flattened `arrays`, joined, at the static positions `ids` (shaped as `ids`)."""
    flat = concatenate([ravel(astype(a, dtype)) for a in arrays], axis=0)
    return reshape(indexing.take(flat, ids.reshape(-1).astype(np.int32), axis=0), ids.shape)


def insert(arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike, axis: int | None = None) -> Any:
    """`arr` with `values` inserted before the positions `obj` (static: an index, indices or a
    slice) along `axis` (of the flattened array when None), as NumPy's `insert`."""
    _static(obj, "insert", "obj")
    d = dtype_of(arr)
    # NumPy's insert on the element numbers of arr and values says where each output element comes from
    size = int(np.prod(shape(arr), dtype=np.int64))
    ids = np.arange(size).reshape(shape(arr))
    value_ids = size + np.arange(int(np.prod(shape(values), dtype=np.int64))).reshape(shape(values))
    out = np.insert(ids, obj, value_ids, axis=axis)
    return _gather_ids([arr, values], out, d)


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: builtins.bool = False, *,
                  inplace: builtins.bool = True) -> Any:
    """`a` with its main diagonal set to `val` (repeated as needed), returned as a new array; JAX's
    functional form: pass `inplace=False` (the default `True` is an error, as in JAX)."""
    if inplace:
        raise ValueError(f"fill_diagonal: inplace=True is not supported; arrays are immutable, pass inplace=False "
                         f"and use the result (at {user_line()})")
    if ndim(a) < 2:
        raise ValueError(f"fill_diagonal: a must be at least 2-D, got shape {shape(a)} (at {user_line()})")
    s = shape(a)
    size = int(np.prod(s, dtype=np.int64))
    ids = np.arange(size).reshape(s)
    np.fill_diagonal(ids, size + np.arange(builtins.max(int(np.prod(shape(val), dtype=np.int64)), 1)), wrap=wrap)
    return _gather_ids([a, val], ids, dtype_of(a))


def choose(a: ArrayLike, choices: Sequence[ArrayLike], out: None = None, mode: str = "raise") -> Any:
    """`choices[a]` elementwise (all broadcast together); out-of-range indices are an error
    ('raise', concrete `a` only), wrapped ('wrap') or clipped ('clip')."""
    if out is not None:
        raise ValueError(f"choose: out= is not supported; use the result (at {user_line()})")
    n = len(choices)
    if mode == "raise":
        if is_traced(a):
            raise TracerError(f"choose: mode='raise' needs a concrete `a`; inside loom.jit use mode='wrap' or "
                              f"mode='clip' (at {user_line()})")
        c = np.asarray(a)
        if c.size and (c.min() < 0 or c.max() >= n):
            raise ValueError(f"choose: `a` has values outside [0, {n}) (at {user_line()})")
    elif mode == "wrap":
        a = ufuncs.remainder(a, n)
    elif mode == "clip":
        a = where(a < 0, 0, where(a >= n, n - 1, a))
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r} (at {user_line()})")
    result = choices[0]
    for i in range(1, n):
        result = where(ufuncs.equal(a, i), choices[i], result)
    return broadcast_to(result, np.broadcast_shapes(shape(a), *(shape(c) for c in choices)))


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, *, size: int | None = None,
             fill_value: ArrayLike = 0, out: None = None) -> Any:
    """The slices of `a` along `axis` (of the flattened `a` when None) where the 1-D `condition`
    holds; a shorter `condition` drops the rest. Inside `loom.jit` `size` is required: the first
    `size` slices, padded with `fill_value`."""
    if out is not None:
        raise ValueError(f"compress: out= is not supported; use the result (at {user_line()})")
    if ndim(condition) != 1:
        raise ValueError(f"compress: condition must be 1-D, got shape {shape(condition)} (at {user_line()})")
    if axis is None:
        a, axis = ravel(a), 0
    rank = ndim(a)
    if not -rank <= axis < rank:
        raise AxisError(f"compress: axis {axis} is out of bounds for an array of rank {rank} (at {user_line()})")
    axis %= rank
    c, n = shape(condition)[0], shape(a)[axis]
    if c > n:
        raise ValueError(f"compress: condition has {c} entries, more than the {n} of axis {axis} (at {user_line()})")
    a = slice_along(a, axis, 0, c)
    if not is_traced(condition) and size is None:
        return indexing.take(a, np.flatnonzero(np.asarray(condition)).astype(np.int32), axis=axis)
    if size is None:
        raise TracerError(sized_message("compress"))
    if not 0 < size <= c:
        raise ValueError(f"compress: size must be positive and at most the length of the condition ({c}), as in "
                         f"JAX; got size={size} (at {user_line()})")
    mask = ufuncs.not_equal(condition, 0)
    if not is_traced(mask):
        keep = np.flatnonzero(mask)[:size]
        picked = indexing.take(
            a, np.concatenate([keep, np.zeros(size - len(keep), np.int64)]).astype(np.int32), axis=axis
        )
        valid = np.arange(size) < len(keep)
    else:
        pos, valid = first_true(mask, int(size))
        picked = indexing.take(a, where(pos < c, pos, 0), axis=axis) if c else broadcast_to(
            astype(np.asarray(fill_value), dtype_of(a)), shape(a)[:axis] + (size,) + shape(a)[axis + 1:])
    return where(_along_axis(valid, axis, rank), picked, astype(np.asarray(fill_value), dtype_of(a)))


def extract(condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0) -> Any:
    """The elements of `arr` where `condition` is nonzero, flattened (`size` required inside `loom.jit`)."""
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Whether `a1` and `a2` broadcast together and are equal everywhere."""
    try:
        np.broadcast_shapes(shape(a1), shape(a2))
    except ValueError:
        return np.False_
    return reductions.all(ufuncs.equal(a1, a2))


def apply_over_axes(func: Callable[[Any, int], Any], a: ArrayLike, axes: Sequence[int]) -> Any:
    """`func(a, axis)` applied for each of `axes` in turn, a reduced axis put back with length 1."""
    for axis in axes:
        b = func(a, axis)
        if ndim(b) == ndim(a) - 1:
            b = expand_dims(b, axis)
        elif ndim(b) != ndim(a):
            raise ValueError(f"apply_over_axes: func must keep the rank or reduce one axis, but rank {ndim(a)} "
                             f"became {ndim(b)} (at {user_line()})")
        a = b
    return a


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Any:
    """`filt` without its leading ('f') and/or trailing ('b') zeros; concrete input only, since the
    result's shape depends on the values (as in JAX)."""
    _static(filt, "trim_zeros", "filt")
    return np.trim_zeros(np.asarray(filt), trim, axis=axis)


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10, range: Any = None,  # noqa: A002 - NumPy's name
                        weights: ArrayLike | None = None) -> Any:
    """The edges `histogram` would use: `bins` equal bins over `range` (the data's minimum and
    maximum by default), or the given edges."""
    if not is_traced(a, bins, weights):
        return np.histogram_bin_edges(a, bins, range=range, weights=weights)
    return histogram(a, bins, range=range, weights=weights)[1]


def identity(n: int, dtype: Any = None) -> np.ndarray:
    """The `n x n` identity matrix, float32 by default (as JAX)."""
    return np.identity(n, dtype=_float_default(dtype))


def tri(n: int, m: int | None = None, k: int = 0, dtype: Any = None) -> np.ndarray:
    """Ones at and below diagonal `k`, float32 by default (as JAX)."""
    return np.tri(n, m, k, dtype=_float_default(dtype))


def indices(dimensions: Sequence[int], dtype: Any = None) -> np.ndarray:
    """The grid of indices of an array of shape `dimensions`, int32 by default (as JAX)."""
    return np.indices(dimensions, dtype=dtype if dtype is not None else default_dtype("i"))


def empty(shape_: int | Sequence[int], dtype: Any = None) -> np.ndarray:
    """Zeros (JAX arrays are never uninitialized), float32 by default."""
    return np.zeros(shape_, dtype=_float_default(dtype))


def empty_like(x: ArrayLike, dtype: Any = None) -> Any:
    """Zeros of the shape and dtype of `x` (as `zeros_like`)."""
    return zeros_like(x, dtype)


def logspace(start: float, stop: float, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype: Any = None) -> np.ndarray:
    """`numpy.logspace`, float32 by default (as JAX)."""
    return np.logspace(start, stop, num, endpoint=endpoint, base=base).astype(dtype or np.float32)


def meshgrid(*xs: ArrayLike, indexing: str = "xy") -> list[Any]:
    """Coordinate matrices from 1-D coordinate vectors, as `numpy.meshgrid` (`indexing` 'xy' or 'ij')."""
    if not is_traced(*xs):
        return [np.array(g) for g in np.meshgrid(*xs, indexing=indexing)]
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r} (at {user_line()})")
    sizes = [shape(x)[0] if len(shape(x)) else 1 for x in xs]
    if indexing == "xy" and len(xs) >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        axis = i
        if indexing == "xy" and len(xs) >= 2 and i < 2:
            axis = 1 - i
        s = [1] * len(xs)
        s[axis] = -1
        out.append(broadcast_to(reshape(as_tracer(x, xs), s), tuple(sizes)))
    return out


def ravel(x: ArrayLike) -> Any:
    """`x` flattened to 1-D (row-major)."""
    if not isinstance(x, Tracer):
        return np.ravel(x)
    return reshape(x, (-1,))


def _atleast(x: Any, n: int) -> Any:
    if not isinstance(x, Tracer):
        return (np.atleast_1d, np.atleast_2d, np.atleast_3d)[n - 1](x)
    if x.ndim >= n:
        return x
    if n == 3 and x.ndim == 2:
        return reshape(x, (*x.shape, 1))
    if n == 3 and x.ndim == 1:
        return reshape(x, (1, *x.shape, 1))
    return reshape(x, (1,) * (n - x.ndim) + x.shape)


def atleast_1d(*xs: ArrayLike) -> Any:
    """Each input with at least one dimension (one result for one input, else a list)."""
    out = [_atleast(x, 1) for x in xs]
    return out[0] if len(out) == 1 else out


def atleast_2d(*xs: ArrayLike) -> Any:
    """Each input with at least two dimensions (new axes in front)."""
    out = [_atleast(x, 2) for x in xs]
    return out[0] if len(out) == 1 else out


def atleast_3d(*xs: ArrayLike) -> Any:
    """Each input with at least three dimensions (as `numpy.atleast_3d`)."""
    out = [_atleast(x, 3) for x in xs]
    return out[0] if len(out) == 1 else out


def hstack(arrays: Sequence[ArrayLike]) -> Any:
    """The arrays joined along axis 1 (axis 0 for 1-D arrays)."""
    if not is_traced(*arrays):
        return np.hstack(arrays)
    arrs = [atleast_1d(a) for a in lift_all(arrays)]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1)


def vstack(arrays: Sequence[ArrayLike]) -> Any:
    """The arrays (made at least 2-D) joined along axis 0."""
    if not is_traced(*arrays):
        return np.vstack(arrays)
    return concatenate([atleast_2d(a) for a in lift_all(arrays)], axis=0)


def dstack(arrays: Sequence[ArrayLike]) -> Any:
    """The arrays (made at least 3-D) joined along axis 2."""
    if not is_traced(*arrays):
        return np.dstack(arrays)
    return concatenate([atleast_3d(a) for a in lift_all(arrays)], axis=2)


def column_stack(arrays: Sequence[ArrayLike]) -> Any:
    """1-D arrays as columns (2-D arrays as they are), joined along axis 1."""
    if not is_traced(*arrays):
        return np.column_stack(arrays)
    arrs = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in lift_all(arrays)]
    return concatenate(arrs, axis=1)


def array_split(x: ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """`x` cut along `axis` into `n` nearly equal sections (the first ones one longer), or at indices."""
    if not isinstance(x, Tracer):
        return np.array_split(x, indices_or_sections, axis)
    if not isinstance(indices_or_sections, (int, np.integer)):
        return split(x, indices_or_sections, axis)
    n = x.shape[canonical_axes(axis, x.ndim)[0]]
    k = int(indices_or_sections)
    if k <= 0:
        raise ValueError(f"array_split: the number of sections must be positive, got {k} (at {user_line()})")
    sizes = [n // k + (1 if i < n % k else 0) for i in range(k)]
    return split(x, list(np.cumsum(sizes)[:-1]), axis)


def hsplit(x: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Any]:
    """`split` along axis 1 (axis 0 for 1-D arrays)."""
    if not isinstance(x, Tracer):
        return np.hsplit(x, indices_or_sections)
    return split(x, indices_or_sections, 0 if x.ndim == 1 else 1)


def vsplit(x: ArrayLike, indices_or_sections: int | Sequence[int]) -> list[Any]:
    """`split` along axis 0."""
    if not isinstance(x, Tracer):
        return np.vsplit(x, indices_or_sections)
    return split(x, indices_or_sections, 0)


def fliplr(x: ArrayLike) -> Any:
    """`x` reversed along axis 1."""
    return flip(x, 1)


def flipud(x: ArrayLike) -> Any:
    """`x` reversed along axis 0."""
    return flip(x, 0)


def rot90(x: ArrayLike, k: int = 1, axes: tuple[int, int] = (0, 1)) -> Any:
    """`x` rotated by 90 degrees `k` times in the plane of `axes` (from the first towards the second)."""
    if not isinstance(x, Tracer):
        return np.rot90(x, k, axes)
    k %= 4
    a, b = axes
    if k == 0:
        return x
    if k == 2:
        return flip(flip(x, a), b)
    if k == 1:
        return swapaxes(flip(x, b), a, b)
    return flip(swapaxes(x, a, b), b)


def broadcast_arrays(*xs: ArrayLike) -> list[Any]:
    """The inputs broadcast to their common shape."""
    if not is_traced(*xs):
        return [np.array(a) for a in np.broadcast_arrays(*xs)]
    target = tuple(np.broadcast_shapes(*(shape(x) for x in xs)))
    return [broadcast_to(a, target) for a in lift_all(xs)]


def _tri_mask(n: int, m: int, k: int, lower: bool) -> np.ndarray:
    mask = np.tri(n, m, k, dtype=bool)
    return mask if lower else ~np.tri(n, m, k - 1, dtype=bool)


def tril(x: ArrayLike, k: int = 0) -> Any:
    """`x` with the elements above diagonal `k` (of the last two axes) zeroed."""
    if not isinstance(x, Tracer):
        return np.tril(x, k)
    return where(_tri_mask(*x.shape[-2:], k, True), x, 0)


def triu(x: ArrayLike, k: int = 0) -> Any:
    """`x` with the elements below diagonal `k` (of the last two axes) zeroed."""
    if not isinstance(x, Tracer):
        return np.triu(x, k)
    return where(_tri_mask(*x.shape[-2:], k, False), x, 0)


def diagonal(x: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The diagonal `offset` of the `axis1`/`axis2` planes, as a last axis."""
    if not isinstance(x, Tracer):
        return np.diagonal(x, offset, axis1, axis2)
    t = moveaxis(x, (axis1, axis2), (-2, -1))
    n, m = t.shape[-2:]
    length = builtins.max(0, builtins.min(n + builtins.min(offset, 0), m - builtins.max(offset, 0)))
    rows = np.arange(length) + builtins.max(-offset, 0)
    cols = np.arange(length) + builtins.max(offset, 0)
    return t[..., rows, cols]


def diag(v: ArrayLike, k: int = 0) -> Any:
    """The diagonal `k` of a 2-D `v`, or a 2-D array with 1-D `v` on diagonal `k`."""
    if not isinstance(v, Tracer):
        return np.diag(v, k)
    if v.ndim == 2:
        return diagonal(v, k)
    if v.ndim != 1:
        raise ValueError(f"diag: `v` must be 1-D or 2-D, got shape {v.shape} (at {user_line()})")
    n = v.shape[0] + builtins.abs(k)
    padded = pad(v, (0, builtins.abs(k)))
    full = reshape(padded, (-1, 1) if k >= 0 else (1, -1))
    return where(np.eye(n, n, k, dtype=bool), full, 0)


def trace(x: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The sum of diagonal `offset` (bools and small ints sum as int32, as JAX)."""
    if not isinstance(x, Tracer):
        return np.trace(x, offset, axis1, axis2)
    return reductions.sum(diagonal(x, offset, axis1, axis2), axis=-1)


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: Any = None, right: Any = None) -> Any:
    """Piecewise-linear interpolation of the points `(xp, fp)` (`xp` increasing) at `x`; float results."""
    if not is_traced(x, xp, fp):
        return np.interp(x, xp, fp, left, right)
    x, xp, fp = lift_all([x, xp, fp])
    d = _floating(result_type(x.dtype, xp.dtype, fp.dtype))
    x, xp, fp = astype(x, d), astype(xp, d), astype(fp, d)
    n = xp.shape[0]
    i = ufuncs.clip(ufuncs.subtract(sorting.searchsorted(xp, x, "right"), 1), 0, builtins.max(n - 2, 0))
    x0, x1 = indexing.take(xp, i), indexing.take(xp, ufuncs.minimum(ufuncs.add(i, 1), n - 1))
    y0, y1 = indexing.take(fp, i), indexing.take(fp, ufuncs.minimum(ufuncs.add(i, 1), n - 1))
    dx = ufuncs.subtract(x1, x0)
    t = ufuncs.divide(ufuncs.subtract(x, x0), where(ufuncs.equal(dx, 0), 1.0, dx))
    out = ufuncs.add(y0, ufuncs.multiply(t, ufuncs.subtract(y1, y0)))
    out = where(ufuncs.less(x, xp[0]), fp[0] if left is None else left, out)
    return where(ufuncs.less(xp[n - 1], x), fp[n - 1] if right is None else right, out)


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Any:
    """Elementwise `|a - b| <= atol + rtol * |b|` (infinities equal only to themselves)."""
    if not is_traced(a, b):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    a, b = lift_all([a, b])
    close = ufuncs.less_equal(ufuncs.abs(ufuncs.subtract(a, b)), ufuncs.add(atol, ufuncs.multiply(rtol, ufuncs.abs(b))))
    if not is_floating(result_type(a.dtype, b.dtype)):
        return close
    inf = ufuncs.logical_or(ufuncs.isinf(a), ufuncs.isinf(b))
    close = where(inf, ufuncs.equal(a, b), close)
    if equal_nan:
        close = ufuncs.logical_or(close, ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b)))
    return close


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Any:
    """Whether `isclose` holds everywhere."""
    if not is_traced(a, b):
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    return reductions.all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a: ArrayLike, b: ArrayLike, equal_nan: bool = False) -> Any:
    """Whether the shapes and all elements are equal (False for different shapes)."""
    if not is_traced(a, b):
        return bool(np.array_equal(a, b, equal_nan=equal_nan))
    if tuple(shape(a)) != tuple(shape(b)):
        return False
    a, b = lift_all([a, b])
    eq = ufuncs.equal(a, b)
    if equal_nan:
        eq = ufuncs.logical_or(eq, ufuncs.logical_and(ufuncs.isnan(a), ufuncs.isnan(b)))
    return reductions.all(eq)


def diff(x: ArrayLike, n: int = 1, axis: int = -1) -> Any:
    """The `n`-th discrete difference along `axis` (for bools, `not_equal`)."""
    if not isinstance(x, Tracer):
        return np.diff(x, n, axis)
    ax = canonical_axes(axis, x.ndim)[0]
    for _ in range(n):
        m = x.shape[ax]
        hi, lo = take_slice(x, ax, 1, m), take_slice(x, ax, 0, builtins.max(m - 1, 0))
        x = ufuncs.not_equal(hi, lo) if x.dtype == np.bool_ else ufuncs.subtract(hi, lo)
    return x


def ediff1d(x: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None) -> Any:
    """Differences of consecutive elements of the flattened `x`, with optional ends."""
    if not is_traced(x, to_end, to_begin):
        return np.ediff1d(x, to_end, to_begin)
    x = as_tracer(x, [x, to_end, to_begin])
    parts = [diff(ravel(x))]
    if to_begin is not None:
        parts.insert(0, ravel(astype(as_tracer(to_begin, x), x.dtype)))
    if to_end is not None:
        parts.append(ravel(astype(as_tracer(to_end, x), x.dtype)))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def _correlate_full(a: Tracer, v: Tracer) -> Tracer:
    """`out[k] = sum_j a[k + j - (m - 1)] v[j]` for `k` in `[0, n + m - 1)`, as one gather and a matmul."""
    n, m = a.shape[0], v.shape[0]
    padded = pad(a, (m - 1, m - 1))
    idx = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    return tensor_contractions.matmul(indexing.take(padded, idx), v)


def _mode_slice(full: Tracer, n: int, m: int, mode: str) -> Tracer:
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2  # callers make n >= m
        size = builtins.max(n, m)
        return take_slice(full, 0, start, start + size)
    if mode == "valid":
        lo, hi = builtins.min(n, m) - 1, builtins.max(n, m)
        return take_slice(full, 0, lo, hi)
    raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r} (at {user_line()})")


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Any:
    """The cross-correlation of two 1-D arrays, `c[k] = sum_n a[n + k] conj(v[n])` (modes as numpy)."""
    if not is_traced(a, v):
        return np.correlate(a, v, mode)
    a, v = lift_all([a, v])
    n, m = a.shape[0], v.shape[0]
    if n < m:  # as numpy: swap and reverse
        return flip(correlate(v, a, mode))
    return _mode_slice(_correlate_full(a, ufuncs.conjugate(v)), n, m, mode)


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Any:
    """The discrete linear convolution of two 1-D arrays (modes as numpy)."""
    if not is_traced(a, v):
        return np.convolve(a, v, mode)
    a, v = lift_all([a, v])
    if a.shape[0] < v.shape[0]:
        a, v = v, a
    return _mode_slice(_correlate_full(a, flip(v)), a.shape[0], v.shape[0], mode)


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: Any = 0) -> Any:
    """The choice of the first true condition, elementwise (`default` where none holds)."""
    if not is_traced(*condlist, *choicelist, default):
        return np.select(condlist, choicelist, default)
    if len(condlist) != len(choicelist):
        raise ValueError(f"select: condlist and choicelist differ in length ({len(condlist)} != {len(choicelist)}) "
                         f"(at {user_line()})")
    out = default
    for c, v in zip(reversed(condlist), reversed(choicelist)):
        out = where(c, v, out)
    return out


def piecewise(x: ArrayLike, condlist: Sequence[ArrayLike], funclist: Sequence[Any], *args: Any, **kw: Any) -> Any:
    """`funclist[i](x)` where `condlist[i]` holds (the last true one wins, as numpy); an extra function
    is the default. Every function is evaluated on all of `x` inside `loom.jit`."""
    if not is_traced(x, *condlist):
        return np.piecewise(x, condlist, funclist, *args, **kw)
    x = as_tracer(x, [x, *condlist])
    if len(funclist) not in (len(condlist), len(condlist) + 1):
        raise ValueError(f"piecewise: {len(funclist)} functions for {len(condlist)} conditions (at {user_line()})")

    def value(f: Any) -> Any:
        out = f(x, *args, **kw) if callable(f) else f
        return broadcast_to(astype(as_tracer(out, x), x.dtype), x.shape)

    out = value(funclist[-1]) if len(funclist) > len(condlist) else ufuncs.multiply(x, 0)
    for c, f in zip(condlist, funclist):
        out = where(c, value(f), out)
    return out


def histogram(a: ArrayLike, bins: int | ArrayLike = 10, range: tuple[float, float] | None = None,  # noqa: A002
              weights: ArrayLike | None = None, density: bool = False) -> tuple[Any, Any]:
    """Counts of the flattened `a` in `bins` (a count of equal bins over `range`, by default the data's
    minimum and maximum, or increasing edges) and the edges; the last bin includes its right edge.
    Inside `loom.jit` the counts are float (as JAX), computed by comparing each value with all edges."""
    if not is_traced(a, bins, weights):
        return np.histogram(a, bins, range=range, weights=weights, density=density)
    a = ravel(as_tracer(a, [a, bins, weights]))
    d = _floating(a.dtype)
    af = astype(a, d)
    if isinstance(bins, (int, np.integer)):
        n = int(bins)
        if range is None:
            lo, hi = reductions.min(af), reductions.max(af)
        else:
            lo, hi = _lift(a.trace, np.asarray(range[0], d)), _lift(a.trace, np.asarray(range[1], d))
        same = ufuncs.equal(lo, hi)
        lo, hi = where(same, ufuncs.subtract(lo, 0.5), lo), where(same, ufuncs.add(hi, 0.5), hi)
        steps = ufuncs.divide(arange(n + 1), float(n))
        edges = ufuncs.add(lo, ufuncs.multiply(ufuncs.subtract(hi, lo), astype(steps, d)))
        edges = concatenate([take_slice(edges, 0, 0, n), reshape(hi, (1,))])  # the last edge exactly
    else:
        edges = astype(as_tracer(bins, a), d) if is_traced(bins) or isinstance(bins, np.ndarray) else \
            _lift(a.trace, np.asarray(bins, d))
        n = edges.shape[0] - 1
    index = ufuncs.subtract(sorting.searchsorted(edges, af, "right"), 1)
    index = where(ufuncs.equal(af, edges[n]), n - 1, index)
    inside = ufuncs.logical_and(ufuncs.less_equal(edges[0], af), ufuncs.less_equal(af, edges[n]))
    one_hot = ufuncs.logical_and(ufuncs.equal(expand_dims(index, -1), arange(n)), expand_dims(inside, -1))
    w = astype(one_hot, d)
    if weights is not None:
        w = ufuncs.multiply(w, expand_dims(ravel(astype(as_tracer(weights, a), d)), -1))
    counts = reductions.sum(w, axis=0)
    if density:
        counts = ufuncs.divide(
            ufuncs.divide(counts, reductions.sum(counts)),
            ufuncs.subtract(take_slice(edges, 0, 1, n + 1), take_slice(edges, 0, 0, n)),
        )
    return counts, edges


def nonzero(x: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> tuple[Any, ...]:
    """The indices of the nonzero elements, one int32 array per axis. Inside `loom.jit` `size` is
    required: the first `size` indices, padded with `fill_value` (0 by default), as JAX."""
    if not isinstance(x, Tracer):
        out = np.nonzero(x)
        if size is None:
            return out
        fill = 0 if fill_value is None else fill_value
        return tuple(np.concatenate([o[:size], np.full(builtins.max(size - len(o), 0), fill, o.dtype)]) for o in out)
    if size is None:
        raise TracerError(sized_message("nonzero"))
    mask = ravel(ufuncs.not_equal(x, 0))
    pos, valid = first_true(mask, int(size))
    out = []
    stride = 1
    for d in reversed(x.shape):
        out.append(pos if d == x.size else _int_mod(_int_div(pos, stride), d))
        stride *= d
    fill = 0 if fill_value is None else fill_value
    return tuple(where(valid, o, astype(as_tracer(np.asarray(fill), o), o.dtype)) for o in reversed(out))


def _int_div(x: Tracer, k: int) -> Tracer:
    return x if k == 1 else ufuncs.floor_divide(x, k)


def _int_mod(x: Tracer, k: int) -> Tracer:
    return ufuncs.remainder(x, k)


def flatnonzero(x: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the nonzero elements of the flattened `x` (`size` required inside `loom.jit`)."""
    if not isinstance(x, Tracer) and size is None:
        return np.flatnonzero(x)
    if isinstance(x, Tracer) and size is None:
        raise TracerError(sized_message("flatnonzero"))
    return nonzero(ravel(x), size=size, fill_value=fill_value)[0]


def argwhere(x: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero elements, one row each (`size` required inside `loom.jit`)."""
    if not isinstance(x, Tracer) and size is None:
        return np.argwhere(x)
    if isinstance(x, Tracer) and size is None:
        raise TracerError(sized_message("argwhere"))
    if np.ndim(x) == 0:
        x = reshape(x, (1,)) if isinstance(x, Tracer) else np.reshape(x, (1,))
        return argwhere(x, size=size, fill_value=fill_value)[:, :0]
    cols = nonzero(x, size=size, fill_value=fill_value)
    if isinstance(x, Tracer):
        return stack(cols, axis=1)
    return np.stack(cols, axis=1)


__all__ = ["allclose", "append", "apply_over_axes", "arange", "argwhere", "array", "array_equal", "array_equiv",
    "array_split", "asarray", "astype", "atleast_1d", "atleast_2d", "atleast_3d", "bincount", "block",
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "choose", "column_stack", "compress", "concat",
    "concatenate", "convolve", "copy", "correlate", "delete", "diag", "diagflat", "diagonal", "diff", "digitize",
    "dstack", "ediff1d", "empty", "empty_like", "expand_dims", "extract", "eye", "fill_diagonal", "flatnonzero",
    "flip", "fliplr", "flipud", "fromfunction", "full", "full_like", "geomspace", "gradient", "histogram",
    "histogram_bin_edges", "hsplit", "hstack", "identity", "indices", "insert", "interp", "isclose", "iscomplex",
    "iscomplexobj", "isreal", "isrealobj", "isscalar", "linspace", "logspace", "matrix_transpose", "meshgrid",
    "moveaxis", "ndim", "newaxis", "nonzero", "ones", "ones_like", "pad", "permute_dims", "piecewise", "ravel",
    "repeat", "reshape", "resize", "roll", "rollaxis", "rot90", "select", "shape", "size", "split", "squeeze",
    "stack", "swapaxes", "tile", "trace", "transpose", "trapezoid", "tri", "tril", "trim_zeros", "triu", "unstack",
    "unwrap", "vander", "vsplit", "vstack", "where", "zeros", "zeros_like"]
