"""Index helpers with static sizes: the index tables (`tril_indices`, `diag_indices`,
`unravel_index`, `ravel_multi_index`, `ix_`) and the index expressions `r_`, `c_`, `mgrid`,
`ogrid`, `s_`, `index_exp`.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.frontend.tracing import (
    ConcretizationError,
    Tracer,
    user_line,
)
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import (
    ArrayLike,
    array_dtype,
    asarray_of_result_type,
    result_dtype,
    slice_range,
    transpose_unless_sorted,
)


def _indices(rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return rows.astype(np.int32), cols.astype(np.int32)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the lower triangle of an n x m matrix."""
    return _indices(*np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the upper triangle of an n x m matrix."""
    return _indices(*np.triu_indices(n, k, m))


def _matrix_shape(arr: ArrayLike, name: str) -> tuple[int, int]:
    s = lax_numpy.shape(arr)
    if len(s) != 2:
        raise ValueError(f"{name}: arr must be 2-D, but got shape {s}")
    return s


def tril_indices_from(arr: ArrayLike, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`tril_indices` for the shape of the matrix `arr`."""
    n, m = _matrix_shape(arr, "tril_indices_from")
    return tril_indices(n, k, m)


def triu_indices_from(arr: ArrayLike, k: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """`triu_indices` for the shape of the matrix `arr`."""
    n, m = _matrix_shape(arr, "triu_indices_from")
    return triu_indices(n, k, m)


def diag_indices(n: int, ndim: int = 2) -> tuple[np.ndarray, ...]:
    """Indices of the main diagonal of an n x ... x n array."""
    return tuple(np.arange(n, dtype=np.int32) for _ in range(ndim))


def diag_indices_from(arr: ArrayLike) -> tuple[np.ndarray, ...]:
    """`diag_indices` for the (square) shape of `arr`."""
    s = lax_numpy.shape(arr)
    if len(s) < 2 or len(set(s)) != 1:
        raise ValueError(f"diag_indices_from: arr must have at least 2 equal dimensions, but got shape {s}")
    return diag_indices(s[0], len(s))


def _index_dtype(*xs: Any) -> Any:
    return np.int32 if all(array_dtype(x).itemsize <= 4 for x in xs) else np.int64


def ravel_multi_index(multi_index: Sequence[ArrayLike], dims: Sequence[int], mode: str = "raise",
                      order: str = "C") -> Any:
    """Flat indices of the coordinate arrays `multi_index` into an array of shape `dims`.
    `mode` "clip" and "wrap" work traced; "raise" checks the bounds of concrete coordinates."""
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dimensions")
    if mode not in ("raise", "clip", "wrap"):
        raise ValueError(f"ravel_multi_index: mode must be 'raise', 'clip' or 'wrap', but got {mode!r}")
    if order not in ("C", "F"):
        raise ValueError(f"ravel_multi_index: order must be 'C' or 'F', but got {order!r}")
    coords = list(multi_index)
    if mode == "raise":
        if any(isinstance(c, Tracer) for c in coords):
            raise ConcretizationError("ravel_multi_index: mode='raise' needs concrete indices; under jit use "
                                      "mode='clip' or mode='wrap'")
        for i, (c, d) in enumerate(zip(coords, dims)):
            c = np.asarray(c)
            if c.size and (c.min() < 0 or c.max() >= d):
                raise ValueError(f"ravel_multi_index: index {i} has values outside [0, {d})")
    elif mode == "clip":
        coords = [ufuncs.clip(c, 0, d - 1) for c, d in zip(coords, dims)]
    else:
        coords = [ufuncs.remainder(c, d) for c, d in zip(coords, dims)]
    order_dims = range(len(dims)) if order == "C" else reversed(range(len(dims)))
    flat = None
    for i in order_dims:
        flat = coords[i] if flat is None else flat * dims[i] + coords[i]
    return lax_numpy.astype(flat, _index_dtype(*multi_index))


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Any, ...]:
    """The coordinates of the flat `indices` in an array of `shape` (C order). Out-of-range
    indices are clipped to the array, as JAX does."""
    shape = tuple(operator.index(d) for d in shape)
    total = int(np.prod(shape, dtype=np.int64))
    flat = ufuncs.clip(indices, -total, total - 1)
    flat = lax_numpy.where(flat < 0, flat + total, flat)
    out = []
    for d in reversed(shape):
        out.append(ufuncs.remainder(flat, d))
        flat = ufuncs.floor_divide(flat, d)
    return tuple(reversed(out))


def ix_(*args: ArrayLike) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-D sequences (for `x[ix_(rows, cols)]`)."""
    out = []
    for i, a in enumerate(args):
        if lax_numpy.ndim(a) != 1:
            raise ValueError(f"ix_: argument {i} must be 1-D, but got shape {lax_numpy.shape(a)}")
        shape = [1] * len(args)
        shape[i] = lax_numpy.shape(a)[0]
        out.append(lax_numpy.reshape(a, tuple(shape)))
    return tuple(out)


s_ = np.s_


index_exp = np.index_exp


class _AxisConcatenator:
    """`r_` and `c_`: slices (ranges), arrays and scalars joined along an axis; a leading string
    'axis[,ndmin[,trans1d]]' sets the axis, the least rank of each piece, and where a piece's own
    axes go when it is given more."""

    def __init__(self, name: str, axis: int, ndmin: int, trans1d: int) -> None:
        self.name, self.axis, self.ndmin, self.trans1d = name, axis, ndmin, trans1d

    def __getitem__(self, key: Any) -> Any:
        items = list(key) if isinstance(key, tuple) else [key]
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            directive = items.pop(0)
            if directive in ("r", "c"):
                raise NotImplementedError(f"{self.name}: the matrix directives 'r' and 'c' are not supported, as in "
                                          f"JAX (at {user_line()})")
            try:
                numbers = [int(v) for v in directive.split(",")]
            except ValueError:
                raise ValueError(f"{self.name}: could not understand the directive {directive!r} "
                                 f"(at {user_line()})") from None
            if not 1 <= len(numbers) <= 3:
                raise ValueError(f"{self.name}: the directive {directive!r} must be 'axis[,ndmin[,trans1d]]' "
                                 f"(at {user_line()})")
            axis = numbers[0]
            ndmin = numbers[1] if len(numbers) > 1 else ndmin
            trans1d = numbers[2] if len(numbers) > 2 else trans1d
        pieces = []
        for item in items:
            a = slice_range(item) if isinstance(item, slice) else asarray_of_result_type(item)
            rank = lax_numpy.ndim(a)
            if rank < ndmin:
                a = lax_numpy.reshape(a, (1,) * (ndmin - rank) + tuple(lax_numpy.shape(a)))
                if trans1d != -1:
                    # NumPy's rule: the piece's own axes start at position trans1d
                    k2, k1 = ndmin - rank, trans1d
                    k1 = k1 + k2 + 1 if k1 < 0 else k1
                    order = list(range(ndmin))
                    a = transpose_unless_sorted(a, order[:k1] + order[k2:] + order[k1:k2])
            pieces.append(a)
        if not pieces:
            return np.zeros((0,), np.float32)
        # JAX's promotion (int32 with float32 is float32), which NumPy's concatenate would widen
        d = result_dtype(*pieces)
        pieces = [lax_numpy.astype(lax_numpy.reshape(p, (1,)) if lax_numpy.ndim(p) == 0 else p, d) for p in pieces]
        return lax_numpy.concatenate(pieces, axis=axis)


r_ = _AxisConcatenator("r_", 0, 1, -1)


c_ = _AxisConcatenator("c_", -1, 2, 0)


class _Grid:
    """`mgrid` (a dense grid: all coordinate arrays stacked) and `ogrid` (open: one broadcastable
    array per axis), from slices as in `r_`; static NumPy arrays with JAX's dtypes."""

    def __init__(self, sparse: builtins.bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return slice_range(key)
        ranges = [slice_range(k) for k in key]
        d = result_dtype(*ranges) if ranges else np.dtype(np.int32)
        grids = np.meshgrid(*[r.astype(d) for r in ranges], indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else np.stack(grids, axis=0) if grids else np.zeros((0,), d)


mgrid = _Grid(sparse=False)


ogrid = _Grid(sparse=True)


__all__ = ["c_", "diag_indices", "diag_indices_from", "index_exp", "ix_", "mgrid", "ogrid", "r_",
    "ravel_multi_index", "s_", "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from",
    "unravel_index"]
