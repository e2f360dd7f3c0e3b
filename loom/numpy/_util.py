"""Helpers the loom.numpy modules share: axis normalisation, lifting several operands, dtype
queries, static slices and the messages of value-dependent shapes.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.frontend.tracing import (
    Tracer,
    is_floating,
    result_type,
    user_line,
)
from loom.frontend.tracing import lift as _lift
from loom.frontend.tracing import trace_of as _trace_of
from loom.numpy import _indexing as indexing
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _reductions as reductions
from loom.numpy import _sorting as sorting
from loom.numpy import _ufuncs as ufuncs

inf, nan, pi, e = np.inf, np.nan, np.pi, np.e

ArrayLike = Any
Axis = int | Sequence[int] | None


# An axis out of range: a ValueError and an IndexError (NumPy's class), as JAX raises one or the
# other depending on the function (sum: ValueError, argmax: IndexError).
AxisError = np.exceptions.AxisError


def canonical_axes(axis: Axis, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise AxisError(f"axis {a} is out of bounds for an array of rank {ndim} (at {user_line()})")
        out.append(a % ndim)
    return tuple(sorted(set(out)))


def as_bool(x: Any) -> Tracer:
    return x if x.dtype == np.bool_ else lax_numpy.astype(x, np.bool_)


def take_slice(x: Tracer, axis: int, start: int, stop: int) -> Tracer:
    starts = [0] * x.ndim
    limits = list(x.shape)
    starts[axis], limits[axis] = start, stop
    if starts == [0] * x.ndim and limits == list(x.shape):
        return x
    return Tracer(stablehlo.slice_(x.trace.emit(), x.value, starts, limits, [1] * x.ndim), x.trace, x.weak)


def positive_axis(axis: int, rank: int, name: str) -> int:
    if not -rank <= axis < rank:
        raise AxisError(f"{name}: axis {axis} is out of bounds for an array of rank {rank} (at {user_line()})")
    return axis % rank


def array_dtype(x: Any) -> np.dtype:
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def dtype_of(x: Any) -> np.dtype:
    if isinstance(x, (np.dtype, type, str)):
        return np.dtype(x)
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def transpose_unless_sorted(x: Any, perm: list[int]) -> Any:
    return x if perm == sorted(perm) else lax_numpy.transpose(x, tuple(perm))


def result_dtype(*xs: Any) -> np.dtype:
    return np.dtype(result_type(*xs))


def asarray_of_result_type(x: Any) -> Any:
    return lax_numpy.asarray(x)


def slice_range(sl: slice) -> np.ndarray:
    """The 1-D range a slice of an index trick stands for: a complex step is a count of points
    (endpoints included), a real one a step; JAX's dtypes (int32 or float32)."""
    start = 0 if sl.start is None else sl.start
    step = 1 if sl.step is None else sl.step
    if isinstance(step, complex):
        return lax_numpy.linspace(start, sl.stop, int(builtins.abs(step)), endpoint=True, dtype=np.float32)
    return lax_numpy.arange(start, sl.stop, step)


def slice_along(x: Any, axis: int, start: int, stop: int) -> Any:
    return indexing.take(x, np.arange(start, stop, dtype=np.int32), axis=axis)


def is_traced(*xs: Any) -> bool:
    return _trace_of(*xs) is not None


def as_tracer(x: Any, like: Any) -> Tracer:
    return x if isinstance(x, Tracer) else _lift(_trace_of(like), x)


def lift_all(arrays: Sequence[Any]) -> list[Any]:
    trace = _trace_of(*arrays)
    return [a if trace is None or isinstance(a, Tracer) else _lift(trace, a) for a in arrays]


def sized_message(name: str) -> str:
    return (f"{name}: the output shape depends on the values of its argument, which are not known inside loom.jit; "
            f"pass a static size= (as in JAX) or call it on a concrete array (at {user_line()})")


def first_true(mask: Tracer, size: int) -> tuple[Tracer, Tracer]:
    """Flat positions of the first `size` true entries of the 1-D `mask` (in order) and which of the
    `size` slots hold one, by a stable sort of the positions keyed on the mask."""
    n = mask.shape[0]
    order = sorting.argsort(lax_numpy.astype(mask, np.int32) * -1 + 1)  # trues (key 0) first, stable
    if size > n:
        order = lax_numpy.pad(order, (0, size - n))
    order = take_slice(order, 0, 0, size)
    valid = ufuncs.less(lax_numpy.arange(size), reductions.sum(mask))
    return order, valid


def as_floating(x: Any) -> Any:
    """`x`, converted to float32 unless its dtype is a floating one."""
    return x if is_floating(result_type(x)) else lax_numpy.astype(x, np.float32)


def square_size(a: Any, name: str) -> int:
    """The size of the square matrices `a` holds; an error naming `name` if they are not square."""
    s = tuple(lax_numpy.shape(a))
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{name}: a must be a square matrix or a stack of them, but got shape {s} "
                         f"(at {user_line()})")
    return s[-1]
