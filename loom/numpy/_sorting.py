"""Sorting and searching: sort, argsort, lexsort, partition, argpartition, searchsorted.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.frontend.tracing import (
    Tracer,
    default_dtype,
    is_floating,
    tensor_type,
    user_line,
)
from loom.lax.ops import less_total_order
from loom.numpy import _indexing as indexing
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _reductions as reductions
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import ArrayLike, canonical_axes, is_traced, lift_all


def _sort(x: Tracer, axis: int | None, with_indices: bool) -> list[Tracer]:
    if axis is None:
        x, axis = lax_numpy.reshape(x, (-1,)), 0
    if x.ndim == 0:
        raise ValueError(f"sort of a 0-d array needs axis=None (at {user_line()})")
    ax = canonical_axes(axis, x.ndim)[0]
    is_float = is_floating(x.dtype)
    b = x.trace.emit()
    inputs = [x.value]
    if with_indices:
        inputs.append(stablehlo.iota(b, tensor_type(x.shape, default_dtype("i")), ax))
    results = stablehlo.sort(b, inputs, ax, lambda bb, args: [less_total_order(bb, args[0], args[1], is_float)],
                             is_stable=True)
    results = [results] if not isinstance(results, (list, tuple)) else list(results)
    return [Tracer(results[0], x.trace, x.weak)] + [Tracer(r, x.trace) for r in results[1:]]


def sort(x: ArrayLike, axis: int | None = -1) -> Any:
    """`x` sorted ascending along `axis` (NaNs last), via `stablehlo.sort`."""
    if not isinstance(x, Tracer):
        return np.sort(x, axis=axis)
    return _sort(x, axis, False)[0]


def argsort(x: ArrayLike, axis: int | None = -1) -> Any:
    """Indices that sort `x` along `axis` (a stable sort; the default integer, as JAX)."""
    if not isinstance(x, Tracer):
        return np.argsort(x, axis=axis, kind="stable")
    return _sort(x, axis, True)[1]


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left") -> Any:
    """Indices where `v`'s elements would be inserted into the sorted 1-D `a` (int32); by comparing
    each value with all of `a` inside `loom.jit`."""
    if not is_traced(a, v):
        return np.searchsorted(a, v, side=side)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r} (at {user_line()})")
    a, v = lift_all([a, v])
    if a.ndim != 1:
        raise ValueError(f"searchsorted: `a` must be 1-D, got shape {a.shape} (at {user_line()})")
    cmp = ufuncs.less if side == "left" else ufuncs.less_equal
    return reductions.sum(cmp(a, lax_numpy.expand_dims(v, -1)), axis=-1)


def partition(x: ArrayLike, kth: int, axis: int = -1) -> Any:
    """`x` with the `kth` element in sorted position, smaller ones before and larger after (inside
    `loom.jit` a full sort, which satisfies that)."""
    if not isinstance(x, Tracer):
        return np.partition(x, kth, axis)
    return sort(x, axis)


def argpartition(x: ArrayLike, kth: int, axis: int = -1) -> Any:
    """Indices that partition `x` around `kth` (inside `loom.jit` those of a stable sort)."""
    if not isinstance(x, Tracer):
        return np.argpartition(x, kth, axis)
    return argsort(x, axis)


def lexsort(keys: Sequence[ArrayLike], axis: int = -1) -> Any:
    """Indices that sort by the last key, then the one before, ... (stable sorts, int32)."""
    if not is_traced(*keys):
        return np.lexsort(keys, axis)
    keys = lift_all(list(keys))
    order = None
    for k in keys:
        if order is None:
            order = argsort(k, axis)
        else:
            order = indexing.take_along_axis(order, argsort(indexing.take_along_axis(k, order, axis), axis), axis)
    return order


__all__ = ["argpartition", "argsort", "lexsort", "partition", "searchsorted", "sort"]
