"""More of `jax.numpy`'s names in `loom.numpy`: the remaining dtype names and abstract scalar types
(`int_`, `double`, `floating`, ...) with `can_cast` and `isdtype`; NaN-ignoring quantiles
(`nanmedian`, `nanquantile`, `nanpercentile`); assembling arrays (`block`, `r_`, `c_`, `mgrid`,
`ogrid`, `fromfunction`); `gradient`, `unwrap`, `insert`, `choose`, `compress`, `extract`,
`fill_diagonal`, `array_equiv`, `apply_over_axes`, `trim_zeros`; set operations with JAX's static
`size=`/`fill_value=` (`intersect1d`, `union1d`, `setdiff1d`, `setxor1d`, `unique_values`,
`unique_counts`, `unique_inverse`, `unique_all`); and `i0`, `kaiser`, `spacing`,
`histogram_bin_edges`. Each is composed from other `loom.numpy` functions, so inside `loom.jit` it
lowers to StableHLO and is differentiable wherever its parts are, with JAX's dtypes; on plain arrays
it runs NumPy (NumPy's dtypes), as the rest of loom.numpy. Static index tables (the positions of
`insert`, the grids of `mgrid`) are computed with NumPy at trace time.
"""

from __future__ import annotations

import builtins
import operator
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np

from loom.frontend.tracing import Tracer, TracerError, user_line
from loom.numpy import (
    ArrayLike,
    _floating,
    abs,
    argsort,
    astype,
    broadcast_to,
    concatenate,
    cumsum,
    diff,
    equal,
    exp,
    expand_dims,
    isin,
    isnan,
    logical_and,
    logical_not,
    logical_xor,
    nextafter,
    not_equal,
    ravel,
    remainder,
    reshape,
    sort,
    sqrt,
    stack,
    sum,
    take,
    take_along_axis,
    where,
)
from loom.numpy import all as all_
from loom.numpy import histogram as histogram_
from loom.numpy import ndim as ndim_
from loom.numpy import shape as shape_
from loom.numpy import unique as unique_
from loom.numpy._common import _first_true, _sized_message, _traced, static_quantiles

# --- dtype names: NumPy's own scalar types, as jax.numpy exposes them --------------------------------

bool = np.bool_  # noqa: A001 - JAX's name
int_ = np.int64
uint = np.uint64
uint16, uint64 = np.uint16, np.uint64
float_ = double = np.float64
single = np.float32
dtype = np.dtype
generic, number, integer, signedinteger, unsignedinteger = (np.generic, np.number, np.integer, np.signedinteger,
                                                            np.unsignedinteger)
inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating

_ML_FLOATS = {np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)}


def _dtype_of(x: Any) -> np.dtype:
    if isinstance(x, (np.dtype, type, str)):
        return np.dtype(x)
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def can_cast(from_: Any, to: Any, casting: str = "safe") -> builtins.bool:
    """Whether `from_` (a dtype or an array) converts to the dtype `to` under the `casting` rule:
    NumPy's `can_cast`, as `jax.numpy.can_cast` is (ml_dtypes registers bfloat16's casts with it)."""
    return builtins.bool(np.can_cast(_dtype_of(from_), np.dtype(to), casting))


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f" or d in _ML_FLOATS,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc" or d in _ML_FLOATS,
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """The array API's `isdtype`: whether `dtype` is of `kind` (a dtype, one of the names 'bool',
    'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating',
    'numeric', or a tuple of these); bfloat16 and float8 are real floating, as in JAX."""
    d = np.dtype(dtype)
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r} (at {user_line()}); expected one of {sorted(_KINDS)}")
            if _KINDS[k](d):
                return True
        elif d == np.dtype(k):
            return True
    return False


# --- NaN-ignoring quantiles --------------------------------------------------------------------------


def _unsupported(name: str, out: Any, overwrite_input: builtins.bool, weights: Any = None) -> None:
    if out is not None:
        raise ValueError(f"{name}: out= is not supported; arrays are immutable, use the result (at {user_line()})")
    if weights is not None:
        raise NotImplementedError(f"{name}: weights= is not supported (at {user_line()})")
    del overwrite_input  # only a hint, as in JAX


def _nanquantile(x: Tracer, qs: np.ndarray, axis: Any, keepdims: builtins.bool, name: str) -> Any:
    rank = x.ndim
    axes = tuple(range(rank)) if axis is None else tuple(
        a % rank for a in ((axis,) if isinstance(axis, int) else axis))
    if any(not -rank <= a < rank for a in ((axis,) if isinstance(axis, int) else axis or ())):
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {rank} (at {user_line()})")
    if x.dtype.kind in "biu":
        x = astype(x, _floating(x.dtype))
    kept = [a for a in range(rank) if a not in axes]
    moved = _transpose(x, kept + list(axes))
    lead = tuple(x.shape[a] for a in kept)
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    flat = reshape(moved, lead + (n,))
    nan = isnan(flat)
    # NaN sorts as +inf: the first `count` sorted values are the non-NaN ones
    s = sort(where(nan, np.inf, flat), axis=-1)
    count = sum(astype(logical_not(nan), np.int32), axis=-1, keepdims=True)
    outs = []
    for q in qs.reshape(-1):
        pos = astype(count - 1, x.dtype) * float(q)  # a Python float stays weak: x.dtype
        lo = astype(pos, np.int32)  # pos >= 0 where any value is left: truncation is floor
        lo = where(lo < 0, 0, lo)
        hi = where(lo + 1 < count, lo + 1, lo)
        frac = pos - astype(lo, x.dtype)
        vlo, vhi = take_along_axis(s, lo, axis=-1), take_along_axis(s, hi, axis=-1)
        v = vlo + (vhi - vlo) * frac
        outs.append(where(count == 0, np.nan, v)[..., 0])
    out = stack(outs, axis=0)  # (len(q), *lead)
    if keepdims:
        full = [1 if a in axes else x.shape[a] for a in range(rank)]
        out = reshape(out, (len(outs), *full))
    return reshape(out, qs.shape + tuple(out.shape[1:]))


def _transpose(x: Any, perm: list[int]) -> Any:
    from loom.numpy import transpose
    return x if perm == sorted(perm) else transpose(x, tuple(perm))


def nanquantile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
                overwrite_input: builtins.bool = False, method: str = "linear", keepdims: builtins.bool = False, *,
                weights: ArrayLike | None = None) -> Any:
    """The `q`-th quantiles (`q` in `[0, 1]`, static inside `loom.jit`) over `axis`, ignoring NaN
    (NaN where a slice is all NaN); `method` 'linear' only inside `loom.jit`."""
    _unsupported("nanquantile", out, overwrite_input, weights)
    if not isinstance(a, Tracer) and not isinstance(q, Tracer):
        return np.nanquantile(a, q, axis=axis, method=method, keepdims=keepdims)
    qs = static_quantiles("nanquantile", q, method)
    if qs.ndim > 1:
        raise ValueError(f"nanquantile: `q` must have rank <= 1 (as in JAX), got shape {qs.shape} (at {user_line()})")
    return _nanquantile(a, qs, axis, keepdims, "nanquantile")


def nanpercentile(a: ArrayLike, q: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
                  overwrite_input: builtins.bool = False, method: str = "linear",
                  keepdims: builtins.bool = False) -> Any:
    """The `q`-th percentiles (`q` in `[0, 100]`) ignoring NaN, as `nanquantile(a, q / 100)`."""
    _unsupported("nanpercentile", out, overwrite_input)
    if not isinstance(a, Tracer):
        return np.nanpercentile(a, q, axis=axis, method=method, keepdims=keepdims)
    if isinstance(q, Tracer):
        raise TracerError(f"nanpercentile: `q` must be a static value inside loom.jit (at {user_line()})")
    return nanquantile(a, np.asarray(q, dtype=np.float64) / 100.0, axis, method=method, keepdims=keepdims)


def nanmedian(a: ArrayLike, axis: int | tuple[int, ...] | None = None, out: None = None,
              overwrite_input: builtins.bool = False, keepdims: builtins.bool = False) -> Any:
    """The median over `axis` ignoring NaN (NaN where a slice is all NaN)."""
    _unsupported("nanmedian", out, overwrite_input)
    if not isinstance(a, Tracer):
        return np.nanmedian(a, axis=axis, keepdims=keepdims)
    return _nanquantile(a, np.asarray(0.5), axis, keepdims, "nanmedian")


# --- assembling arrays -------------------------------------------------------------------------------------


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
    leaves = [_asarray(a) for a in _leaves(arrays)]
    rank = builtins.max([depth] + [ndim_(a) for a in leaves])
    it = iter(leaves)

    def build(x: Any, level: int) -> Any:
        if not isinstance(x, list):
            a = next(it)
            return reshape(a, (1,) * (rank - ndim_(a)) + tuple(shape_(a)))
        return concatenate([build(e, level + 1) for e in x], axis=rank - depth + level)

    return build(arrays, 0)


def _result_type(*xs: Any) -> np.dtype:
    from loom.numpy import result_type
    return np.dtype(result_type(*xs))


def _asarray(x: Any) -> Any:
    from loom.numpy import asarray
    return asarray(x)


def _slice_range(sl: slice) -> np.ndarray:
    """The 1-D range a slice of an index trick stands for: a complex step is a count of points
    (endpoints included), a real one a step; JAX's dtypes (int32 or float32)."""
    from loom.numpy import arange, linspace
    start = 0 if sl.start is None else sl.start
    step = 1 if sl.step is None else sl.step
    if isinstance(step, complex):
        return linspace(start, sl.stop, int(builtins.abs(step)), endpoint=True, dtype=np.float32)
    return arange(start, sl.stop, step)


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
            a = _slice_range(item) if isinstance(item, slice) else _asarray(item)
            rank = ndim_(a)
            if rank < ndmin:
                a = reshape(a, (1,) * (ndmin - rank) + tuple(shape_(a)))
                if trans1d != -1:
                    # NumPy's rule: the piece's own axes start at position trans1d
                    k2, k1 = ndmin - rank, trans1d
                    k1 = k1 + k2 + 1 if k1 < 0 else k1
                    order = list(range(ndmin))
                    a = _transpose(a, order[:k1] + order[k2:] + order[k1:k2])
            pieces.append(a)
        if not pieces:
            return np.zeros((0,), np.float32)
        # JAX's promotion (int32 with float32 is float32), which NumPy's concatenate would widen
        d = _result_type(*pieces)
        pieces = [astype(reshape(p, (1,)) if ndim_(p) == 0 else p, d) for p in pieces]
        return concatenate(pieces, axis=axis)


r_ = _AxisConcatenator("r_", 0, 1, -1)
c_ = _AxisConcatenator("c_", -1, 2, 0)


class _Grid:
    """`mgrid` (a dense grid: all coordinate arrays stacked) and `ogrid` (open: one broadcastable
    array per axis), from slices as in `r_`; static NumPy arrays with JAX's dtypes."""

    def __init__(self, sparse: builtins.bool) -> None:
        self.sparse = sparse

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, slice):
            return _slice_range(key)
        ranges = [_slice_range(k) for k in key]
        d = _result_type(*ranges) if ranges else np.dtype(np.int32)
        grids = np.meshgrid(*[r.astype(d) for r in ranges], indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else np.stack(grids, axis=0) if grids else np.zeros((0,), d)


mgrid = _Grid(sparse=False)
ogrid = _Grid(sparse=True)


def fromfunction(function: Callable[..., Any], shape: Sequence[int], *, dtype: Any = float, **kwargs: Any) -> Any:
    """`function` called with one coordinate array per axis of `shape` (of `dtype`: float32 by
    default, 64-bit types narrowed as JAX does), and `kwargs`."""
    d = np.dtype(dtype)
    d = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32),
         np.dtype(np.uint64): np.dtype(np.uint32), np.dtype(np.complex128): np.dtype(np.complex64)}.get(d, d)
    shape = tuple(operator.index(n) for n in shape)
    return function(*np.indices(shape, dtype=d), **kwargs)


# --- differences ---------------------------------------------------------------------------------------


def _slice(x: Any, axis: int, start: int, stop: int) -> Any:
    return take(x, np.arange(start, stop, dtype=np.int32), axis=axis)


def _along(v: Any, axis: int, rank: int) -> Any:
    """The vector `v` shaped to broadcast along `axis` of a rank-`rank` array."""
    return reshape(v, tuple(-1 if i == axis else 1 for i in range(rank)))


def _gradient_1d(f: Any, h: Any, axis: int) -> Any:
    n = shape_(f)[axis]
    if n < 2:
        raise ValueError(f"gradient: the axis {axis} has {n} element(s); at least 2 are needed (at {user_line()})")
    first = (_slice(f, axis, 1, 2) - _slice(f, axis, 0, 1))
    last = (_slice(f, axis, n - 1, n) - _slice(f, axis, n - 2, n - 1))
    if ndim_(h) == 0:
        inner = (_slice(f, axis, 2, n) - _slice(f, axis, 0, n - 2)) / (h * 2.0)
        return concatenate([first / h, inner, last / h], axis=axis)
    if shape_(h) != (n,):
        raise ValueError(f"gradient: the coordinates of axis {axis} must have shape ({n},), got {shape_(h)} "
                         f"(at {user_line()})")
    dx = diff(h)
    rank = ndim_(f)
    dx1, dx2 = _along(_slice(dx, 0, 0, n - 2), axis, rank), _along(_slice(dx, 0, 1, n - 1), axis, rank)
    # NumPy's second-order differences on an uneven grid
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    inner = a * _slice(f, axis, 0, n - 2) + b * _slice(f, axis, 1, n - 1) + c * _slice(f, axis, 2, n)
    return concatenate([first / _slice(dx, 0, 0, 1), inner, last / _slice(dx, 0, n - 2, n - 1)], axis=axis)


def gradient(f: ArrayLike, *varargs: ArrayLike, axis: int | Sequence[int] | None = None,
             edge_order: int | None = None) -> Any:
    """The gradient of `f` by central differences inside and one-sided ones at the edges, along
    `axis` (all axes by default: a list, one array per axis); `varargs` are the spacings, one for
    all axes or one per axis, each a scalar or the coordinates along its axis."""
    if edge_order is not None:
        raise NotImplementedError(f"gradient: edge_order is not supported, as in JAX (at {user_line()})")
    rank = ndim_(f)
    axes = list(range(rank)) if axis is None else [axis] if isinstance(axis, int) else list(axis)
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"gradient: axis {a} is out of bounds for an array of rank {rank} (at {user_line()})")
    axes = [a % rank for a in axes]
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError(f"gradient: {len(varargs)} spacings for {len(axes)} axes (at {user_line()})")
    if _dtype_of(f).kind in "biu":
        f = astype(f, np.float32)
    out = [_gradient_1d(f, h, a) for h, a in zip(spacings, axes)]
    return out[0] if len(out) == 1 else out


def unwrap(p: ArrayLike, discont: ArrayLike | None = None, axis: int = -1, period: ArrayLike = 2 * np.pi) -> Any:
    """`p` with jumps of more than `discont` (`period / 2` by default) along `axis` taken back by
    multiples of `period`."""
    if _dtype_of(p).kind == "c":
        raise ValueError(f"unwrap: complex input is not supported, as in JAX (at {user_line()})")
    integral = _dtype_of(p).kind in "biu"
    if integral and _dtype_of(period).kind == "f":
        # JAX promotes p with a float period (2 pi by default): float32
        p, integral = astype(p, np.float32), False
    if discont is None:
        discont = period / 2
    interval = period // 2 if integral else period / 2
    axis = axis % builtins.max(ndim_(p), 1)
    dd = diff(p, axis=axis)
    ddmod = remainder(dd + interval, period) - interval
    ddmod = where(logical_and(ddmod == -interval, dd > 0), interval, ddmod)
    correct = where(abs(dd) < discont, 0, ddmod - dd)
    n = shape_(p)[axis]
    return concatenate([_slice(p, axis, 0, 1), _slice(p, axis, 1, n) + cumsum(correct, axis=axis)], axis=axis)


# --- building and selecting ------------------------------------------------------------------------------


def _static(x: Any, name: str, what: str) -> None:
    if _traced(x):
        raise TracerError(f"{name}: `{what}` must be static (concrete) inside loom.jit, not a traced value "
                          f"(at {user_line()})")


def _gather_ids(arrays: Sequence[Any], ids: np.ndarray, dtype: np.dtype) -> Any:
    """The elements of the flattened `arrays`, joined, at the static positions `ids` (shaped as `ids`)."""
    flat = concatenate([ravel(astype(a, dtype)) for a in arrays], axis=0)
    return reshape(take(flat, ids.reshape(-1).astype(np.int32), axis=0), ids.shape)


def insert(arr: ArrayLike, obj: ArrayLike | slice, values: ArrayLike, axis: int | None = None) -> Any:
    """`arr` with `values` inserted before the positions `obj` (static: an index, indices or a
    slice) along `axis` (of the flattened array when None), as NumPy's `insert`."""
    _static(obj, "insert", "obj")
    d = _dtype_of(arr)
    # NumPy's insert on the element numbers of arr and values says where each output element comes from
    size = int(np.prod(shape_(arr), dtype=np.int64))
    ids = np.arange(size).reshape(shape_(arr))
    value_ids = size + np.arange(int(np.prod(shape_(values), dtype=np.int64))).reshape(shape_(values))
    out = np.insert(ids, obj, value_ids, axis=axis)
    return _gather_ids([arr, values], out, d)


def fill_diagonal(a: ArrayLike, val: ArrayLike, wrap: builtins.bool = False, *,
                  inplace: builtins.bool = True) -> Any:
    """`a` with its main diagonal set to `val` (repeated as needed), returned as a new array; JAX's
    functional form: pass `inplace=False` (the default `True` is an error, as in JAX)."""
    if inplace:
        raise ValueError(f"fill_diagonal: inplace=True is not supported; arrays are immutable, pass inplace=False "
                         f"and use the result (at {user_line()})")
    if ndim_(a) < 2:
        raise ValueError(f"fill_diagonal: a must be at least 2-D, got shape {shape_(a)} (at {user_line()})")
    s = shape_(a)
    size = int(np.prod(s, dtype=np.int64))
    ids = np.arange(size).reshape(s)
    np.fill_diagonal(ids, size + np.arange(builtins.max(int(np.prod(shape_(val), dtype=np.int64)), 1)), wrap=wrap)
    return _gather_ids([a, val], ids, _dtype_of(a))


def choose(a: ArrayLike, choices: Sequence[ArrayLike], out: None = None, mode: str = "raise") -> Any:
    """`choices[a]` elementwise (all broadcast together); out-of-range indices are an error
    ('raise', concrete `a` only), wrapped ('wrap') or clipped ('clip')."""
    if out is not None:
        raise ValueError(f"choose: out= is not supported; use the result (at {user_line()})")
    n = len(choices)
    if mode == "raise":
        if _traced(a):
            raise TracerError(f"choose: mode='raise' needs a concrete `a`; inside loom.jit use mode='wrap' or "
                              f"mode='clip' (at {user_line()})")
        c = np.asarray(a)
        if c.size and (c.min() < 0 or c.max() >= n):
            raise ValueError(f"choose: `a` has values outside [0, {n}) (at {user_line()})")
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = where(a < 0, 0, where(a >= n, n - 1, a))
    else:
        raise ValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r} (at {user_line()})")
    result = choices[0]
    for i in range(1, n):
        result = where(equal(a, i), choices[i], result)
    return broadcast_to(result, np.broadcast_shapes(shape_(a), *(shape_(c) for c in choices)))


def compress(condition: ArrayLike, a: ArrayLike, axis: int | None = None, *, size: int | None = None,
             fill_value: ArrayLike = 0, out: None = None) -> Any:
    """The slices of `a` along `axis` (of the flattened `a` when None) where the 1-D `condition`
    holds; a shorter `condition` drops the rest. Inside `loom.jit` `size` is required: the first
    `size` slices, padded with `fill_value`."""
    if out is not None:
        raise ValueError(f"compress: out= is not supported; use the result (at {user_line()})")
    if ndim_(condition) != 1:
        raise ValueError(f"compress: condition must be 1-D, got shape {shape_(condition)} (at {user_line()})")
    if axis is None:
        a, axis = ravel(a), 0
    rank = ndim_(a)
    if not -rank <= axis < rank:
        raise ValueError(f"compress: axis {axis} is out of bounds for an array of rank {rank} (at {user_line()})")
    axis %= rank
    c, n = shape_(condition)[0], shape_(a)[axis]
    if c > n:
        raise ValueError(f"compress: condition has {c} entries, more than the {n} of axis {axis} (at {user_line()})")
    a = _slice(a, axis, 0, c)
    if not _traced(condition) and size is None:
        return take(a, np.flatnonzero(np.asarray(condition)).astype(np.int32), axis=axis)
    if size is None:
        raise TracerError(_sized_message("compress"))
    if not 0 < size <= c:
        raise ValueError(f"compress: size must be positive and at most the length of the condition ({c}), as in "
                         f"JAX; got size={size} (at {user_line()})")
    from loom.numpy import not_equal
    mask = not_equal(condition, 0)
    if not _traced(mask):
        keep = np.flatnonzero(mask)[:size]
        picked = take(a, np.concatenate([keep, np.zeros(size - len(keep), np.int64)]).astype(np.int32), axis=axis)
        valid = np.arange(size) < len(keep)
    else:
        pos, valid = _first_true(mask, int(size))
        picked = take(a, where(pos < c, pos, 0), axis=axis) if c else broadcast_to(
            astype(np.asarray(fill_value), _dtype_of(a)), shape_(a)[:axis] + (size,) + shape_(a)[axis + 1:])
    return where(_along(valid, axis, rank), picked, astype(np.asarray(fill_value), _dtype_of(a)))


def extract(condition: ArrayLike, arr: ArrayLike, *, size: int | None = None, fill_value: ArrayLike = 0) -> Any:
    """The elements of `arr` where `condition` is nonzero, flattened (`size` required inside `loom.jit`)."""
    return compress(ravel(condition), ravel(arr), size=size, fill_value=fill_value)


def array_equiv(a1: ArrayLike, a2: ArrayLike) -> Any:
    """Whether `a1` and `a2` broadcast together and are equal everywhere."""
    try:
        np.broadcast_shapes(shape_(a1), shape_(a2))
    except ValueError:
        return np.False_
    return all_(equal(a1, a2))


def apply_over_axes(func: Callable[[Any, int], Any], a: ArrayLike, axes: Sequence[int]) -> Any:
    """`func(a, axis)` applied for each of `axes` in turn, a reduced axis put back with length 1."""
    for axis in axes:
        b = func(a, axis)
        if ndim_(b) == ndim_(a) - 1:
            b = expand_dims(b, axis)
        elif ndim_(b) != ndim_(a):
            raise ValueError(f"apply_over_axes: func must keep the rank or reduce one axis, but rank {ndim_(a)} "
                             f"became {ndim_(b)} (at {user_line()})")
        a = b
    return a


def trim_zeros(filt: ArrayLike, trim: str = "fb", axis: int | Sequence[int] | None = None) -> Any:
    """`filt` without its leading ('f') and/or trailing ('b') zeros; concrete input only, since the
    result's shape depends on the values (as in JAX)."""
    _static(filt, "trim_zeros", "filt")
    return np.trim_zeros(np.asarray(filt), trim, axis=axis)


# --- set operations (static sizes inside loom.jit, as JAX) -----------------------------------------------


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
    flat = ravel(x)
    n = shape_(flat)[0]
    order = argsort(flat)
    s = take(flat, order)
    starts = concatenate([np.ones(1, np.bool_), not_equal(_slice(s, 0, 1, n), _slice(s, 0, 0, n - 1))], axis=0)
    return s, order, starts


def _first_values(s: Any, mask: Any, size: int, fill_value: Any, default: Any) -> Any:
    """The first `size` entries of the sorted `s` where `mask` holds, padded with `fill_value`, by
    default `default(values, valid)`."""
    n = shape_(s)[0]
    pos, valid = _first_true(mask, int(size))
    values = take(s, where(pos < n, pos, n - 1))
    fill = default(values, valid) if fill_value is None else astype(np.asarray(fill_value), _dtype_of(s))
    return where(valid, values, fill)


def _smallest(values: Any, valid: Any) -> Any:
    # JAX's default fill: the smallest value found (0 when there is none)
    return where(valid[0], values[0], _zero_of(values))


def _zero_of(values: Any) -> Any:
    return astype(np.zeros((), np.int8), _dtype_of(values))


def _check_size(name: str, x: Any, size: int | None) -> None:
    if size is None and _traced(x):
        raise TracerError(_sized_message(name))
    if _traced(x) and int(np.prod(shape_(x), dtype=np.int64)) == 0:
        raise ValueError(f"{name}: an empty array has no values (at {user_line()})")


def unique_values(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values of the flattened `x` (the array API's name for `unique`); `size`
    required inside `loom.jit`, padding with `fill_value` (by default the smallest value)."""
    _check_size("unique_values", x, size)
    return unique_(x, size=size, fill_value=fill_value)


def unique_all(x: ArrayLike, /, *, size: int | None = None, fill_value: ArrayLike | None = None) -> UniqueAllResult:
    """The sorted unique values of `x`, the index of the first occurrence of each, the index of each
    element's value among them (shaped as `x`), and the counts; `size` required inside `loom.jit`
    (values padded with `fill_value`, indices with the first one's, counts with 0)."""
    _check_size("unique_all", x, size)
    if not _traced(x):
        v, i, inv, c = np.unique(np.asarray(x), return_index=True, return_inverse=True, return_counts=True)
        fill = (v.min() if v.size else 0) if fill_value is None else fill_value
        return UniqueAllResult(_pad(v, size, fill), _pad(i, size, i[0] if i.size else 0),
                               inv.reshape(shape_(x)), _pad(c, size, 0))
    s, order, starts = _sorted_groups(x)
    n = shape_(s)[0]
    values = _first_values(s, starts, size, fill_value, lambda v, ok: v[0])
    pos, valid = _first_true(starts, int(size))
    indices = take(order, where(pos < n, pos, n - 1))
    indices = astype(where(valid, indices, indices[0]), np.int32)
    group = cumsum(astype(starts, np.int32)) - 1  # the group of each sorted element
    counts = sum(astype(equal(expand_dims(group, -1), np.arange(size, dtype=np.int32)), np.int32), axis=0)
    inverse = reshape(take(group, argsort(order)), shape_(x))  # argsort(order) undoes the sort
    return UniqueAllResult(values, indices, astype(inverse, np.int32), counts)


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
    both = concatenate([ravel(ar1), ravel(ar2)], axis=0)
    _check_size("union1d", both, size)
    return unique_(both, size=size, fill_value=fill_value)


def _set_op(name: str, ar1: Any, ar2: Any, size: int | None, fill_value: Any, default: Any, np_fn: Any,
            np_default: Any, keep: Any, pool: Any) -> Any:
    if not _traced(ar1, ar2):
        out = np_fn(np.asarray(ar1), np.asarray(ar2))
        return _pad(out, size, np_default(out) if fill_value is None else fill_value)
    if size is None:  # traced: either array may be the traced one
        raise TracerError(_sized_message(name))
    if int(np.prod(shape_(pool), dtype=np.int64)) == 0:
        raise ValueError(f"{name}: an empty array has no values (at {user_line()})")
    s, _, starts = _sorted_groups(pool)
    return _first_values(s, logical_and(starts, keep(s)), size, fill_value, default)


def intersect1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False,
                return_indices: builtins.bool = False, *, size: int | None = None,
                fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values in both arrays (`size` required inside `loom.jit`, padding with
    `fill_value`, by default the smallest one); `return_indices` only on concrete arrays without `size`."""
    if return_indices:
        if _traced(ar1, ar2) or size is not None:
            raise NotImplementedError(f"intersect1d: return_indices is only supported on concrete arrays without "
                                      f"size= (at {user_line()})")
        return np.intersect1d(np.asarray(ar1), np.asarray(ar2), assume_unique, return_indices=True)
    return _set_op("intersect1d", ar1, ar2, size, fill_value, _smallest, np.intersect1d,
                   lambda o: o.min() if o.size else 0, lambda s: isin(s, ar2), ar1)


def setdiff1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False, *, size: int | None = None,
              fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values of `ar1` not in `ar2` (`size` required inside `loom.jit`, padding
    with `fill_value`, 0 by default as in JAX)."""
    return _set_op("setdiff1d", ar1, ar2, size, fill_value, lambda v, ok: _zero_of(v), np.setdiff1d,
                   lambda o: 0, lambda s: logical_not(isin(s, ar2)), ar1)


def setxor1d(ar1: ArrayLike, ar2: ArrayLike, assume_unique: builtins.bool = False, *, size: int | None = None,
             fill_value: ArrayLike | None = None) -> Any:
    """The sorted unique values in exactly one of the arrays (`size` required inside `loom.jit`,
    padding with `fill_value`, by default the smallest one)."""
    both = concatenate([ravel(ar1), ravel(ar2)], axis=0) if _traced(ar1, ar2) else None
    return _set_op("setxor1d", ar1, ar2, size, fill_value, _smallest, np.setxor1d,
                   lambda o: o.min() if o.size else 0, lambda s: logical_xor(isin(s, ar1), isin(s, ar2)), both)


# --- special functions, windows, bins --------------------------------------------------------------------

# Cephes' Chebyshev coefficients for exp(-x) I0(x) on [0, 8] and for exp(-x) sqrt(x) I0(x) on (8, inf),
# the ones NumPy's i0 uses
_I0A = (
    -4.4153416464793395e-18, 3.3307945188222384e-17, -2.431279846547955e-16, 1.715391285555133e-15,
    -1.1685332877993451e-14, 7.676185498604936e-14, -4.856446783111929e-13, 2.95505266312964e-12,
    -1.726826291441556e-11, 9.675809035373237e-11, -5.189795601635263e-10, 2.6598237246823866e-09,
    -1.300025009986248e-08, 6.046995022541919e-08, -2.670793853940612e-07, 1.1173875391201037e-06,
    -4.4167383584587505e-06, 1.6448448070728896e-05, -5.754195010082104e-05, 0.00018850288509584165,
    -0.0005763755745385824, 0.0016394756169413357, -0.004324309995050576, 0.010546460394594998,
    -0.02373741480589947, 0.04930528423967071, -0.09490109704804764, 0.17162090152220877, -0.3046826723431984,
    0.6767952744094761
)
_I0B = (
    -7.233180487874754e-18, -4.830504485944182e-18, 4.46562142029676e-17, 3.461222867697461e-17,
    -2.8276239805165836e-16, -3.425485619677219e-16, 1.7725601330565263e-15, 3.8116806693526224e-15,
    -9.554846698828307e-15, -4.150569347287222e-14, 1.54008621752141e-14, 3.8527783827421426e-13,
    7.180124451383666e-13, -1.7941785315068062e-12, -1.3215811840447713e-11, -3.1499165279632416e-11,
    1.1889147107846439e-11, 4.94060238822497e-10, 3.3962320257083865e-09, 2.266668990498178e-08,
    2.0489185894690638e-07, 2.8913705208347567e-06, 6.889758346916825e-05, 0.0033691164782556943,
    0.8044904110141088
)


def _chbevl(x: Any, coefficients: Sequence[float]) -> Any:
    b0, b1, b2 = coefficients[0], 0.0, 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return (b0 - b2) * 0.5


def i0(x: ArrayLike) -> Any:
    """The modified Bessel function of the first kind, order 0, elementwise (float32 for integer
    input, as JAX), by Cephes' Chebyshev expansions as NumPy."""
    if not _traced(x):
        return np.i0(x)
    if _dtype_of(x).kind in "biu":
        x = astype(x, np.float32)
    ax = abs(x)
    small = ax <= 8.0
    # each branch sees only arguments in its own range, so neither makes NaN or inf (nor their gradients)
    a = where(small, ax, 8.0)
    b = where(small, 9.0, ax)
    return where(small, exp(a) * _chbevl(a / 2.0 - 2.0, _I0A), exp(b) * _chbevl(32.0 / b - 2.0, _I0B) / sqrt(b))


def kaiser(M: int, beta: ArrayLike) -> Any:  # noqa: N803 - NumPy's name
    """The Kaiser window of M points with shape parameter `beta` (float32, as JAX's; `beta` may be traced)."""
    M = operator.index(M)  # noqa: N806
    if not _traced(beta):
        return np.kaiser(M, float(np.asarray(beta))).astype(np.float32)
    if M <= 1:
        # ones, but built from beta so the window stays a traced value of beta (with a zero derivative)
        return broadcast_to(astype(np.ones(()), np.float32), (builtins.max(M, 0),)) * astype(beta, np.float32) ** 0
    alpha = (M - 1) / 2.0
    n = np.arange(M, dtype=np.float32)
    beta = astype(beta, np.float32)
    return i0(beta * np.sqrt(1.0 - ((n - alpha) / alpha) ** 2).astype(np.float32)) / i0(beta)


def spacing(x: ArrayLike, /) -> Any:
    """The distance from each element to the next representable number away from zero (negative
    for negative `x`; the smallest subnormal at zero, NaN at infinities)."""
    if not _traced(x):
        return np.spacing(x)
    if _dtype_of(x).kind in "biu":
        x = astype(x, np.float32)
    return nextafter(x, where(x < 0, -np.inf, np.inf)) - x


def histogram_bin_edges(a: ArrayLike, bins: ArrayLike = 10, range: Any = None,  # noqa: A002 - NumPy's name
                        weights: ArrayLike | None = None) -> Any:
    """The edges `histogram` would use: `bins` equal bins over `range` (the data's minimum and
    maximum by default), or the given edges."""
    if not _traced(a, bins, weights):
        return np.histogram_bin_edges(a, bins, range=range, weights=weights)
    return histogram_(a, bins, range=range, weights=weights)[1]


# `bool` is left out of the star-export: loom/numpy/__init__.py tests `type(x) in (bool, ...)` at call
# time, and exporting NumPy's bool there would rebind that global
__all__ = [
    "block", "c_", "fromfunction", "mgrid", "ogrid", "r_",
    "histogram_bin_edges", "i0", "kaiser", "spacing",
    "intersect1d", "setdiff1d", "setxor1d", "union1d", "unique_all", "unique_counts", "unique_inverse",
    "unique_values",
    "apply_over_axes", "array_equiv", "choose", "compress", "extract", "fill_diagonal", "gradient", "insert",
    "trim_zeros", "unwrap",
    "bool", "can_cast", "complexfloating", "double", "dtype", "float_", "floating", "generic", "inexact", "int_",
    "integer", "isdtype", "nanmedian", "nanpercentile", "nanquantile", "number", "signedinteger", "single", "uint",
    "uint16", "uint64", "unsignedinteger",
]
