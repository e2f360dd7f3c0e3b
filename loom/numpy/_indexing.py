"""Indexing of traced arrays: `x[idx]` and `x.at[idx].set/add/...`."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.frontend.tracing import Tracer, user_line


def getitem(x: Tracer, index: Any) -> Tracer:
    """Basic indexing: integers, slices, None and Ellipsis, lowered to `stablehlo.slice` and
    `stablehlo.reshape` (and `stablehlo.reverse` for negative steps)."""
    if not isinstance(index, tuple):
        index = (index,)
    if any(isinstance(i, Tracer) or isinstance(i, (list, np.ndarray)) for i in index):
        raise NotImplementedError(f"advanced indexing of traced arrays is not supported yet (at {user_line()})")
    n_real = sum(1 for i in index if i is not None and i is not Ellipsis)
    if n_real > x.ndim:
        raise IndexError(f"too many indices ({n_real}) for an array of rank {x.ndim} (at {user_line()})")
    if Ellipsis in index:
        k = index.index(Ellipsis)
        index = (*index[:k], *([slice(None)] * (x.ndim - n_real)), *index[k + 1:])
    else:
        index = (*index, *([slice(None)] * (x.ndim - n_real)))
    starts, limits, strides, out_shape, reversed_dims = [], [], [], [], []
    dim = 0
    for i in index:
        if i is None:
            out_shape.append(1)
            continue
        size = x.shape[dim]
        if isinstance(i, slice):
            start, stop, step = i.indices(size)
            n = len(range(start, stop, step))
            if step < 0:  # reverse the axis, then slice forwards
                reversed_dims.append(dim)
                start, step = size - 1 - start, -step
            starts.append(start)
            limits.append(start + max(0, (n - 1) * step + 1) if n else start)
            strides.append(step)
            out_shape.append(n)
        else:
            j = int(i)
            if not -size <= j < size:
                raise IndexError(f"index {j} is out of bounds for axis {dim} of size {size} (at {user_line()})")
            j %= size
            starts.append(j)
            limits.append(j + 1)
            strides.append(1)
        dim += 1
    b = x.trace.emit()
    v = x.value
    if reversed_dims:
        v = stablehlo.reverse(b, v, reversed_dims)
    if starts != [0] * x.ndim or limits != list(x.shape) or strides != [1] * x.ndim:
        v = stablehlo.slice_(b, v, starts, limits, strides)
    if tuple(out_shape) != tuple(v.type.shape):
        v = stablehlo.reshape(b, v, out_shape)
    return Tracer(v, x.trace, x.weak)


def at(x: Tracer) -> Any:
    raise NotImplementedError(f"x.at[...] is not supported yet (at {user_line()})")
