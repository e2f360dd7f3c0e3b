"""Set operations with JAX's static `size=` inside loom.jit: unique and its variants,
union1d, intersect1d, setdiff1d, setxor1d, isin.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

import builtins
from typing import Any, NamedTuple

import numpy as np

from loom.frontend.tracing import (
    ConcretizationError,
    Tracer,
    TracerError,
    user_line,
)
from loom.frontend.tracing import lift as _lift
from loom.numpy import _indexing as indexing
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _reductions as reductions
from loom.numpy import _sorting as sorting
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import ArrayLike, dtype_of, first_true, is_traced, sized_message, slice_along, take_slice


def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False, invert: bool = False) -> Any:
    """Whether each element of `element` is in `test_elements` (the shape of `element`)."""
    found = reductions.any(ufuncs.equal(lax_numpy.expand_dims(element, -1), lax_numpy.ravel(test_elements)), axis=-1)
    return ufuncs.logical_not(found) if invert else found


class UniqueCountsResult(NamedTuple):
    """The result of `unique_counts`."""
    values: Any
    counts: Any


class UniqueInverseResult(NamedTuple):
    """The result of `unique_inverse`."""
    values: Any
    inverse_indices: Any


class UniqueAllResult(NamedTuple):
    """The result of `unique_all`."""
    values: Any
    indices: Any
    inverse_indices: Any
    counts: Any


def _pad(out: np.ndarray, size: int | None, fill: Any) -> np.ndarray:
    """The concrete `out` cut or padded to `size` with `fill`."""
    if size is None:
        return out
    return np.concatenate([out[:size], np.full(builtins.max(size - len(out), 0), fill, out.dtype)])


def _sorted_groups(x: Any) -> tuple[Any, Any, Any]:
    """The flattened traced `x` sorted (stably), the sorting order, and where each run of equal values starts."""
    flat = lax_numpy.ravel(x)
    n = lax_numpy.shape(flat)[0]
    order = sorting.argsort(flat)
    s = indexing.take(flat, order)
    starts = lax_numpy.concatenate(
        [np.ones(1, np.bool_), ufuncs.not_equal(slice_along(s, 0, 1, n), slice_along(s, 0, 0, n - 1))], axis=0
    )
    return s, order, starts


def _first_values(s: Any, mask: Any, size: int, fill_value: Any, default: Any) -> Any:
    """The first `size` entries of the sorted `s` where `mask` holds, padded with `fill_value`, by
    default `default(values, valid)`."""
    n = lax_numpy.shape(s)[0]
    pos, valid = first_true(mask, int(size))
    values = indexing.take(s, lax_numpy.where(pos < n, pos, n - 1))
    fill = default(values, valid) if fill_value is None else lax_numpy.astype(np.asarray(fill_value), dtype_of(s))
    return lax_numpy.where(valid, values, fill)


def _smallest(values: Any, valid: Any) -> Any:
    # JAX's default fill: the smallest value found (0 when there is none)
    return lax_numpy.where(valid[0], values[0], _zero_of(values))


def _zero_of(values: Any) -> Any:
    return lax_numpy.astype(np.zeros((), np.int8), dtype_of(values))


def _check_size(name: str, x: Any, size: int | None) -> None:
    if size is None and is_traced(x):
        raise TracerError(sized_message(name))
    if is_traced(x) and int(np.prod(lax_numpy.shape(x), dtype=np.int64)) == 0:
        raise ValueError(f"{name}: an empty array has no values (at {user_line()})")


def unique_values(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values of the flattened `x` (the array API's name for `unique`); `size`
    required inside `loom.jit`, padding with `fill_value` (by default the smallest value)."""
    _check_size("unique_values", x, size)
    return unique(x, size=size, fill_value=fill_value)


def unique_all(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> UniqueAllResult:
    """The sorted unique values of `x`, the index of the first occurrence of each, the index of each
    element's value among them (shaped as `x`), and the counts; `size` required inside `loom.jit`
    (values padded with `fill_value`, indices with the first one's, counts with 0)."""
    _check_size("unique_all", x, size)
    if not is_traced(x):
        v, i, inv, c = np.unique(np.asarray(x), return_index=True, return_inverse=True, return_counts=True)
        fill = (v.min() if v.size else 0) if fill_value is None else fill_value
        return UniqueAllResult(_pad(v, size, fill), _pad(i, size, i[0] if i.size else 0),
                               inv.reshape(lax_numpy.shape(x)), _pad(c, size, 0))
    s, order, starts = _sorted_groups(x)
    n = lax_numpy.shape(s)[0]
    values = _first_values(s, starts, size, fill_value, lambda v, ok: v[0])
    pos, valid = first_true(starts, int(size))
    indices = indexing.take(order, lax_numpy.where(pos < n, pos, n - 1))
    indices = lax_numpy.astype(lax_numpy.where(valid, indices, indices[0]), np.int32)
    group = reductions.cumsum(lax_numpy.astype(starts, np.int32)) - 1  # the group of each sorted element
    counts = reductions.sum(
        lax_numpy.astype(ufuncs.equal(lax_numpy.expand_dims(group, -1), np.arange(size, dtype=np.int32)), np.int32),
        axis=0,
    )
    inverse = lax_numpy.reshape(
        indexing.take(group, sorting.argsort(order)), lax_numpy.shape(x)
    )  # argsort(order) undoes the sort
    return UniqueAllResult(values, indices, lax_numpy.astype(inverse, np.int32), counts)


def unique_counts(x: ArrayLike, /, *, size: int | None = None,
                  fill_value: ArrayLike | None = None) -> UniqueCountsResult:
    """The sorted unique values of `x` and how often each occurs (`size` required inside `loom.jit`;
    counts padded with 0)."""
    _check_size("unique_counts", x, size)
    out = unique_all(x, size=size, fill_value=fill_value)
    return UniqueCountsResult(out.values, out.counts)


def unique_inverse(x: ArrayLike, /, *, size: int | None = None,
                   fill_value: ArrayLike | None = None) -> UniqueInverseResult:
    """The sorted unique values of `x` and the index of each element's value among them (shaped as
    `x`; `size` required inside `loom.jit`)."""
    _check_size("unique_inverse", x, size)
    out = unique_all(x, size=size, fill_value=fill_value)
    return UniqueInverseResult(out.values, out.inverse_indices)


def union1d(ar1: ArrayLike, ar2: ArrayLike, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values in either array (`size` required inside `loom.jit`)."""
    both = lax_numpy.concatenate([lax_numpy.ravel(ar1), lax_numpy.ravel(ar2)], axis=0)
    _check_size("union1d", both, size)
    return unique(both, size=size, fill_value=fill_value)


def _set_op(name: str, ar1: Any, ar2: Any, size: int | None, fill_value: Any, default: Any, np_fn: Any,
            np_default: Any, keep: Any, pool: Any) -> Any:
    if not is_traced(ar1, ar2):
        out = np_fn(np.asarray(ar1), np.asarray(ar2))
        return _pad(out, size, np_default(out) if fill_value is None else fill_value)
    if size is None:  # traced: either array may be the traced one
        raise TracerError(sized_message(name))
    if int(np.prod(lax_numpy.shape(pool), dtype=np.int64)) == 0:
        raise ValueError(f"{name}: an empty array has no values (at {user_line()})")
    s, _, starts = _sorted_groups(pool)
    return _first_values(s, ufuncs.logical_and(starts, keep(s)), size, fill_value, default)


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False,
                return_indices: builtins.bool = False, *, size: int | None = None,
                fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values in both arrays (`size` required inside `loom.jit`, padding with
    `fill_value`, by default the smallest one); `return_indices` only on concrete arrays without `size`."""
    if return_indices:
        if is_traced(ar1, ar2) or size is not None:
            raise ConcretizationError(f"intersect1d: return_indices is only supported on concrete arrays without "
                                      f"size= (at {user_line()})")
        return np.intersect1d(np.asarray(ar1), np.asarray(ar2), assume_unique, return_indices=True)
    return _set_op("intersect1d", ar1, ar2, size, fill_value, _smallest, np.intersect1d,
                   lambda o: o.min() if o.size else 0, lambda s: isin(s, ar2), ar1)


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False, *, size: int | None = None,
              fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values of `ar1` not in `ar2` (`size` required inside `loom.jit`, padding
    with `fill_value`, 0 by default as in JAX)."""
    return _set_op("setdiff1d", ar1, ar2, size, fill_value, lambda v, ok: _zero_of(v), np.setdiff1d,
                   lambda o: 0, lambda s: ufuncs.logical_not(isin(s, ar2)), ar1)


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False, *, size: int | None = None,
             fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values in exactly one of the arrays (`size` required inside `loom.jit`,
    padding with `fill_value`, by default the smallest one)."""
    both = lax_numpy.concatenate([lax_numpy.ravel(ar1), lax_numpy.ravel(ar2)], axis=0) if is_traced(ar1, ar2) else None
    return _set_op("setxor1d", ar1, ar2, size, fill_value, _smallest, np.setxor1d,
                   lambda o: o.min() if o.size else 0, lambda s: ufuncs.logical_xor(isin(s, ar1), isin(s, ar2)), both)


def unique(x: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The sorted unique values of the flattened `x`. Inside `loom.jit` `size` is required: the first
    `size` of them, padded with `fill_value` (by default the smallest value, as JAX). The
    `return_index` / `return_counts` variants are not implemented."""
    if not isinstance(x, Tracer):
        out = np.unique(x)
        if size is None:
            return out
        fill = (out.min() if out.size else 0) if fill_value is None else fill_value
        return np.concatenate([out[:size], np.full(builtins.max(size - len(out), 0), fill, out.dtype)])
    if size is None:
        raise TracerError(sized_message("unique"))
    s = sorting.sort(lax_numpy.ravel(x))
    n = s.shape[0]
    if n == 0:
        raise ValueError(f"unique: an empty array has no values to fill with (at {user_line()})")
    first = lax_numpy.concatenate([_lift(s.trace, np.asarray([True])), ufuncs.not_equal(take_slice(s, 0, 1, n),
                                                                          take_slice(s, 0, 0, n - 1))])
    pos, valid = first_true(first, int(size))
    values = indexing.take(s, ufuncs.minimum(pos, n - 1))
    fill = s[0] if fill_value is None else fill_value
    return lax_numpy.where(valid, values, fill)


__all__ = ["intersect1d", "isin", "setdiff1d", "setxor1d", "union1d", "unique", "unique_all", "unique_counts",
    "unique_inverse", "unique_values"]
