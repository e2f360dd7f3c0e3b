"""More of `jax.numpy`'s common functions in `loom.numpy`: matrices (diag, trace, tril, kron,
...), statistics (average, cov, median, quantile, nan-reductions), searching and interpolation,
comparisons (isclose, allclose), differences and 1-D convolution, stacking and splitting. Each
is composed from other `loom.numpy` functions, so inside `loom.jit` it lowers to StableHLO and is
differentiable wherever its parts are; on plain arrays it runs NumPy directly. Functions whose
output shape depends on values (`unique`, `nonzero`, `argwhere`, `flatnonzero`) only run on plain
arrays.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.frontend.tracing import Tracer, TracerError, is_floating, user_line
from loom.numpy import (
    ArrayLike,
    Axis,
    _axes,
    _floating,
    _lift,
    _trace_of,
    abs,
    add,
    astype,
    broadcast_to,
    concatenate,
    divide,
    equal,
    expand_dims,
    finfo,
    less,
    less_equal,
    matmul,
    max,
    min,
    minimum,
    multiply,
    not_equal,
    reshape,
    result_type,
    shape,
    sqrt,
    subtract,
    sum,
    transpose,
    where,
)
from loom.numpy._elementwise import conjugate
from loom.numpy._indexing import take
from loom.numpy._more import (
    _take_slice,
    any,
    argsort,
    clip,
    flip,
    isinf,
    isnan,
    logical_and,
    logical_or,
    moveaxis,
    sort,
    split,
    swapaxes,
    tensordot,
)


def _traced(*xs: Any) -> bool:
    return _trace_of(*xs) is not None


def _as_tracer(x: Any, like: Any) -> Tracer:
    return x if isinstance(x, Tracer) else _lift(_trace_of(like), x)


# --- creation ------------------------------------------------------------------------------------


def identity(n: int, dtype: Any = np.float32) -> np.ndarray:
    """The `n x n` identity matrix, float32 by default (as JAX)."""
    return np.identity(n, dtype=dtype)


def tri(n: int, m: int | None = None, k: int = 0, dtype: Any = np.float32) -> np.ndarray:
    """Ones at and below diagonal `k`, float32 by default (as JAX)."""
    return np.tri(n, m, k, dtype=dtype)


def indices(dimensions: Sequence[int], dtype: Any = np.int32) -> np.ndarray:
    """The grid of indices of an array of shape `dimensions`, int32 by default (as JAX)."""
    return np.indices(dimensions, dtype=dtype)


def empty(shape_: int | Sequence[int], dtype: Any = np.float32) -> np.ndarray:
    """Zeros (JAX arrays are never uninitialized), float32 by default."""
    return np.zeros(shape_, dtype=dtype)


def empty_like(x: ArrayLike, dtype: Any = None) -> Any:
    """Zeros of the shape and dtype of `x` (as `zeros_like`)."""
    from loom.numpy import zeros_like
    return zeros_like(x, dtype)


def logspace(start: float, stop: float, num: int = 50, endpoint: bool = True, base: float = 10.0,
             dtype: Any = None) -> np.ndarray:
    """`numpy.logspace`, float32 by default (as JAX)."""
    return np.logspace(start, stop, num, endpoint=endpoint, base=base).astype(dtype or np.float32)


def meshgrid(*xs: ArrayLike, indexing: str = "xy") -> list[Any]:
    """Coordinate matrices from 1-D coordinate vectors, as `numpy.meshgrid` (`indexing` 'xy' or 'ij')."""
    if not _traced(*xs):
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
        out.append(broadcast_to(reshape(_as_tracer(x, xs), s), tuple(sizes)))
    return out


# --- shapes ----------------------------------------------------------------------------------------


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


def _lift_all(arrays: Sequence[Any]) -> list[Any]:
    trace = _trace_of(*arrays)
    return [a if trace is None or isinstance(a, Tracer) else _lift(trace, a) for a in arrays]


def hstack(arrays: Sequence[ArrayLike]) -> Any:
    """The arrays joined along axis 1 (axis 0 for 1-D arrays)."""
    if not _traced(*arrays):
        return np.hstack(arrays)
    arrs = [atleast_1d(a) for a in _lift_all(arrays)]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1)


def vstack(arrays: Sequence[ArrayLike]) -> Any:
    """The arrays (made at least 2-D) joined along axis 0."""
    if not _traced(*arrays):
        return np.vstack(arrays)
    return concatenate([atleast_2d(a) for a in _lift_all(arrays)], axis=0)


def dstack(arrays: Sequence[ArrayLike]) -> Any:
    """The arrays (made at least 3-D) joined along axis 2."""
    if not _traced(*arrays):
        return np.dstack(arrays)
    return concatenate([atleast_3d(a) for a in _lift_all(arrays)], axis=2)


def column_stack(arrays: Sequence[ArrayLike]) -> Any:
    """1-D arrays as columns (2-D arrays as they are), joined along axis 1."""
    if not _traced(*arrays):
        return np.column_stack(arrays)
    arrs = [reshape(a, (-1, 1)) if a.ndim < 2 else a for a in _lift_all(arrays)]
    return concatenate(arrs, axis=1)


def array_split(x: ArrayLike, indices_or_sections: int | Sequence[int], axis: int = 0) -> list[Any]:
    """`x` cut along `axis` into `n` nearly equal sections (the first ones one longer), or at indices."""
    if not isinstance(x, Tracer):
        return np.array_split(x, indices_or_sections, axis)
    if not isinstance(indices_or_sections, (int, np.integer)):
        return split(x, indices_or_sections, axis)
    n = x.shape[_axes(axis, x.ndim)[0]]
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
    if not _traced(*xs):
        return [np.array(a) for a in np.broadcast_arrays(*xs)]
    target = tuple(np.broadcast_shapes(*(shape(x) for x in xs)))
    return [broadcast_to(a, target) for a in _lift_all(xs)]


# --- matrices --------------------------------------------------------------------------------------


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
    from loom.numpy._more import pad
    n = v.shape[0] + builtins.abs(k)
    padded = pad(v, (0, builtins.abs(k)))
    full = reshape(padded, (-1, 1) if k >= 0 else (1, -1))
    return where(np.eye(n, n, k, dtype=bool), full, 0)


def trace(x: ArrayLike, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Any:
    """The sum of diagonal `offset` (bools and small ints sum as int32, as JAX)."""
    if not isinstance(x, Tracer):
        return np.trace(x, offset, axis1, axis2)
    return sum(diagonal(x, offset, axis1, axis2), axis=-1)


def cross(a: ArrayLike, b: ArrayLike, axis: int = -1) -> Any:
    """The cross product of 3-vectors along `axis` (broadcast)."""
    if not _traced(a, b):
        return np.cross(a, b, axis=axis)
    a, b = _lift_all([a, b])
    a, b = moveaxis(a, axis, -1), moveaxis(b, axis, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ValueError(f"cross: only 3-vectors are supported inside loom.jit, got shapes {a.shape} and {b.shape} "
                         f"(at {user_line()})")
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    from loom.numpy import stack
    return stack([subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
                  subtract(multiply(a0, b1), multiply(a1, b0))], axis=-1)


def kron(a: ArrayLike, b: ArrayLike) -> Any:
    """The Kronecker product."""
    if not _traced(a, b):
        return np.kron(a, b)
    a, b = _lift_all([a, b])
    n = builtins.max(a.ndim, b.ndim)
    a, b = reshape(a, (1,) * (n - a.ndim) + a.shape), reshape(b, (1,) * (n - b.ndim) + b.shape)
    prod = multiply(reshape(a, [d for s in a.shape for d in (s, 1)]), reshape(b, [d for s in b.shape for d in (1, s)]))
    return reshape(prod, [x * y for x, y in zip(a.shape, b.shape)])


def inner(a: ArrayLike, b: ArrayLike) -> Any:
    """The sum of products over the last axes."""
    if not _traced(a, b):
        return np.inner(a, b)
    if len(shape(a)) == 0 or len(shape(b)) == 0:
        return multiply(a, b)
    return tensordot(a, b, axes=([-1 % len(shape(a))], [-1 % len(shape(b))]))


def vdot(a: ArrayLike, b: ArrayLike) -> Any:
    """The dot product of the flattened inputs (the first conjugated)."""
    if not _traced(a, b):
        return np.vdot(a, b)
    a, b = _lift_all([a, b])
    return matmul(ravel(conjugate(a)), ravel(b))


# --- statistics ------------------------------------------------------------------------------------


def ptp(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """The range (maximum - minimum) over `axis`."""
    if not isinstance(x, Tracer):
        return np.ptp(x, axis=axis, keepdims=keepdims)
    return subtract(max(x, axis, keepdims), min(x, axis, keepdims))


def count_nonzero(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """The number of nonzero elements over `axis` (int32, as JAX)."""
    if not isinstance(x, Tracer):
        return np.count_nonzero(x, axis=axis, keepdims=keepdims)
    return sum(not_equal(x, 0), axis=axis, keepdims=keepdims)


def average(a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The (weighted) mean over `axis`; `weights` broadcast to `a` or 1-D along a single `axis`."""
    if not _traced(a, weights):
        return np.average(a, axis=axis, weights=weights, returned=returned, keepdims=keepdims)
    from loom.numpy import mean
    a = _as_tracer(a, [a, weights])
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        count = float(a.size / np.size(avg)) if np.size(avg) else 0.0
        return (avg, full_like_(avg, count)) if returned else avg
    w = _as_tracer(weights, [a, weights])
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise ValueError(f"average: weights of shape {w.shape} differ from a's {a.shape}; give one axis and 1-D "
                             f"weights (at {user_line()})")
        ax = _axes(axis, a.ndim)[0]
        w = reshape(w, [-1 if i == ax else 1 for i in range(a.ndim)])
    w = broadcast_to(w, a.shape)
    total = sum(w, axis=axis, keepdims=keepdims)
    avg = divide(sum(multiply(a, w), axis=axis, keepdims=keepdims), total)
    return (avg, broadcast_to(total, shape(avg))) if returned else avg


def full_like_(x: Any, value: float) -> Any:
    from loom.numpy import full_like
    return full_like(x, value)


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None) -> Any:
    """The covariance matrix of the variables (rows when `rowvar`); float results."""
    if not _traced(m, y):
        return np.cov(m, y, rowvar=rowvar, bias=bias, ddof=ddof)
    x = atleast_2d(_as_tracer(m, [m, y]))
    if not rowvar and x.shape[0] != 1:
        x = transpose(x)
    if y is not None:
        yy = atleast_2d(_as_tracer(y, [m, y]))
        if not rowvar and yy.shape[0] != 1:
            yy = transpose(yy)
        x = concatenate([x, yy], axis=0)
    x = x if is_floating(x.dtype) else astype(x, _floating(x.dtype))
    n = x.shape[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    from loom.numpy import mean
    centered = subtract(x, mean(x, axis=1, keepdims=True))
    c = divide(matmul(centered, transpose(conjugate(centered))), float(n - ddof))
    from loom.numpy import squeeze
    return squeeze(c)


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients (clipped to `[-1, 1]`)."""
    if not _traced(x, y):
        return np.corrcoef(x, y, rowvar=rowvar)
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return divide(c, c)
    d = sqrt(diagonal(c))
    c = divide(divide(c, reshape(d, (-1, 1))), reshape(d, (1, -1)))
    return clip(c, -1.0, 1.0)


def _nan_fill(x: Tracer, value: Any) -> Tracer:
    return where(isnan(x), value, x) if is_floating(x.dtype) else x


def nansum(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Sum over `axis`, NaNs counted as zero."""
    if not isinstance(x, Tracer):
        return np.nansum(x, axis=axis, keepdims=keepdims)
    return sum(_nan_fill(x, 0), axis=axis, keepdims=keepdims)


def nanmean(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Mean over `axis` ignoring NaNs (NaN where all are NaN)."""
    if not isinstance(x, Tracer):
        return np.nanmean(x, axis=axis, keepdims=keepdims)
    xf = astype(x, _floating(x.dtype))
    count = sum(logical_not_nan(xf), axis=axis, keepdims=keepdims)
    return divide(nansum(xf, axis, keepdims), astype(count, xf.dtype))


def logical_not_nan(x: Tracer) -> Tracer:
    return equal(x, x)


def nanmax(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Maximum over `axis` ignoring NaNs (NaN where all are NaN)."""
    if not isinstance(x, Tracer):
        return np.nanmax(x, axis=axis, keepdims=keepdims)
    if not is_floating(x.dtype):
        return max(x, axis, keepdims)
    out = max(_nan_fill(x, -np.inf), axis, keepdims)
    from loom.numpy._more import all as all_
    return where(all_(isnan(x), axis=axis, keepdims=keepdims), np.nan, out)


def nanmin(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Minimum over `axis` ignoring NaNs (NaN where all are NaN)."""
    if not isinstance(x, Tracer):
        return np.nanmin(x, axis=axis, keepdims=keepdims)
    if not is_floating(x.dtype):
        return min(x, axis, keepdims)
    out = min(_nan_fill(x, np.inf), axis, keepdims)
    from loom.numpy._more import all as all_
    return where(all_(isnan(x), axis=axis, keepdims=keepdims), np.nan, out)


def nan_to_num(x: ArrayLike, copy: bool = True, nan: float = 0.0, posinf: float | None = None,
               neginf: float | None = None) -> Any:
    """NaN replaced by `nan`, infinities by `posinf`/`neginf` (the dtype's extremes by default)."""
    if not isinstance(x, Tracer):
        return np.nan_to_num(x, copy=copy, nan=nan, posinf=posinf, neginf=neginf)
    if not is_floating(x.dtype):
        return x
    info = finfo(x.dtype)
    x = where(isnan(x), nan, x)
    x = where(logical_and(isinf(x), less(0, x)), info.max if posinf is None else posinf, x)
    return where(logical_and(isinf(x), less(x, 0)), info.min if neginf is None else neginf, x)


def static_quantiles(name: str, q: Any, method: str) -> np.ndarray:
    """`q` of a traced quantile as float64 numpy, checked: static, in [0, 1], method 'linear'."""
    if isinstance(q, Tracer):
        raise TracerError(f"{name}: `q` must be a static value inside loom.jit, not a traced one (at {user_line()})")
    if method != "linear":
        raise NotImplementedError(f"{name}: method {method!r} is not supported inside loom.jit; only 'linear' "
                                  f"(at {user_line()})")
    qs = np.asarray(q, dtype=np.float64)
    if ((qs < 0) | (qs > 1)).any():
        raise ValueError(f"{name}: `q` must be in [0, 1], got {q} (at {user_line()})")
    return qs


def quantile(x: ArrayLike, q: ArrayLike, axis: int | None = None, method: str = "linear",
             keepdims: bool = False) -> Any:
    """The `q`-th quantiles (`q` in `[0, 1]`, static inside `loom.jit`) over `axis`, by sorting;
    `method` 'linear' only inside `loom.jit`. NaN where the data has a NaN (as JAX)."""
    if not isinstance(x, Tracer):
        return np.quantile(x, q, axis=axis, method=method, keepdims=keepdims)
    qs = static_quantiles("quantile", q, method)
    orig_ndim = x.ndim
    if axis is None:
        x, ax = reshape(x, (-1,)), 0
    else:
        ax = _axes(axis, x.ndim)[0]
    x = x if is_floating(x.dtype) else astype(x, _floating(x.dtype))
    s = moveaxis(sort(x, axis=ax), ax, -1)
    n = s.shape[-1]
    pos = qs.reshape(-1) * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    frac = (pos - lo).astype(s.dtype)
    vlo, vhi = take(s, lo, axis=-1), take(s, hi, axis=-1)
    out = add(vlo, multiply(subtract(vhi, vlo), frac))  # (..., len(q))
    out = where(any(isnan(s), axis=-1, keepdims=True), np.nan, out)
    if keepdims:
        out = expand_dims(out, ax if axis is not None else tuple(range(orig_ndim))) if axis is not None else \
            reshape(out, (1,) * orig_ndim + (out.shape[-1],))
        out = moveaxis(out, -1, 0) if out.ndim else out
        return reshape(out, out.shape[1:]) if qs.ndim == 0 else out
    out = moveaxis(out, -1, 0)
    return reshape(out, out.shape[1:]) if qs.ndim == 0 else reshape(out, qs.shape + out.shape[1:])


def percentile(x: ArrayLike, q: ArrayLike, axis: int | None = None, method: str = "linear",
               keepdims: bool = False) -> Any:
    """The `q`-th percentiles (`q` in `[0, 100]`), as `quantile(x, q / 100)`."""
    if not isinstance(x, Tracer):
        return np.percentile(x, q, axis=axis, method=method, keepdims=keepdims)
    return quantile(x, np.asarray(q, dtype=np.float64) / 100.0, axis, method, keepdims)


def median(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """The median over `axis` (NaN where the data has a NaN)."""
    if not isinstance(x, Tracer):
        return np.median(x, axis=axis, keepdims=keepdims)
    return quantile(x, 0.5, axis, keepdims=keepdims)


# --- searching and interpolation -------------------------------------------------------------------


def searchsorted(a: ArrayLike, v: ArrayLike, side: str = "left") -> Any:
    """Indices where `v`'s elements would be inserted into the sorted 1-D `a` (int32); by comparing
    each value with all of `a` inside `loom.jit`."""
    if not _traced(a, v):
        return np.searchsorted(a, v, side=side)
    if side not in ("left", "right"):
        raise ValueError(f"searchsorted: side must be 'left' or 'right', got {side!r} (at {user_line()})")
    a, v = _lift_all([a, v])
    if a.ndim != 1:
        raise ValueError(f"searchsorted: `a` must be 1-D, got shape {a.shape} (at {user_line()})")
    cmp = less if side == "left" else less_equal
    return sum(cmp(a, expand_dims(v, -1)), axis=-1)


def interp(x: ArrayLike, xp: ArrayLike, fp: ArrayLike, left: Any = None, right: Any = None) -> Any:
    """Piecewise-linear interpolation of the points `(xp, fp)` (`xp` increasing) at `x`; float results."""
    if not _traced(x, xp, fp):
        return np.interp(x, xp, fp, left, right)
    x, xp, fp = _lift_all([x, xp, fp])
    d = _floating(result_type(x.dtype, xp.dtype, fp.dtype))
    x, xp, fp = astype(x, d), astype(xp, d), astype(fp, d)
    n = xp.shape[0]
    i = clip(subtract(searchsorted(xp, x, "right"), 1), 0, builtins.max(n - 2, 0))
    x0, x1 = take(xp, i), take(xp, minimum(add(i, 1), n - 1))
    y0, y1 = take(fp, i), take(fp, minimum(add(i, 1), n - 1))
    dx = subtract(x1, x0)
    t = divide(subtract(x, x0), where(equal(dx, 0), 1.0, dx))
    out = add(y0, multiply(t, subtract(y1, y0)))
    out = where(less(x, xp[0]), fp[0] if left is None else left, out)
    return where(less(xp[n - 1], x), fp[n - 1] if right is None else right, out)


def polyval(p: ArrayLike, x: ArrayLike) -> Any:
    """The polynomial with coefficients `p` (highest degree first) at `x`, by Horner's rule."""
    if not _traced(p, x):
        return np.polyval(p, x)
    p, x = _lift_all([p, x])
    out = multiply(x, 0) if p.shape[0] == 0 else p[0]
    for i in range(1, p.shape[0]):
        out = add(multiply(out, x), p[i])
    return out


# --- comparisons -----------------------------------------------------------------------------------


def isclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Any:
    """Elementwise `|a - b| <= atol + rtol * |b|` (infinities equal only to themselves)."""
    if not _traced(a, b):
        return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    a, b = _lift_all([a, b])
    close = less_equal(abs(subtract(a, b)), add(atol, multiply(rtol, abs(b))))
    if not is_floating(result_type(a.dtype, b.dtype)):
        return close
    inf = logical_or(isinf(a), isinf(b))
    close = where(inf, equal(a, b), close)
    if equal_nan:
        close = logical_or(close, logical_and(isnan(a), isnan(b)))
    return close


def allclose(a: ArrayLike, b: ArrayLike, rtol: float = 1e-5, atol: float = 1e-8, equal_nan: bool = False) -> Any:
    """Whether `isclose` holds everywhere."""
    if not _traced(a, b):
        return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan))
    from loom.numpy._more import all as all_
    return all_(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a: ArrayLike, b: ArrayLike, equal_nan: bool = False) -> Any:
    """Whether the shapes and all elements are equal (False for different shapes)."""
    if not _traced(a, b):
        return bool(np.array_equal(a, b, equal_nan=equal_nan))
    if tuple(shape(a)) != tuple(shape(b)):
        return False
    a, b = _lift_all([a, b])
    eq = equal(a, b)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a), isnan(b)))
    from loom.numpy._more import all as all_
    return all_(eq)


# --- differences and convolution -------------------------------------------------------------------


def diff(x: ArrayLike, n: int = 1, axis: int = -1) -> Any:
    """The `n`-th discrete difference along `axis` (for bools, `not_equal`)."""
    if not isinstance(x, Tracer):
        return np.diff(x, n, axis)
    ax = _axes(axis, x.ndim)[0]
    for _ in range(n):
        m = x.shape[ax]
        hi, lo = _take_slice(x, ax, 1, m), _take_slice(x, ax, 0, builtins.max(m - 1, 0))
        x = not_equal(hi, lo) if x.dtype == np.bool_ else subtract(hi, lo)
    return x


def ediff1d(x: ArrayLike, to_end: ArrayLike | None = None, to_begin: ArrayLike | None = None) -> Any:
    """Differences of consecutive elements of the flattened `x`, with optional ends."""
    if not _traced(x, to_end, to_begin):
        return np.ediff1d(x, to_end, to_begin)
    x = _as_tracer(x, [x, to_end, to_begin])
    parts = [diff(ravel(x))]
    if to_begin is not None:
        parts.insert(0, ravel(astype(_as_tracer(to_begin, x), x.dtype)))
    if to_end is not None:
        parts.append(ravel(astype(_as_tracer(to_end, x), x.dtype)))
    return concatenate(parts) if len(parts) > 1 else parts[0]


def _correlate_full(a: Tracer, v: Tracer) -> Tracer:
    """`out[k] = sum_j a[k + j - (m - 1)] v[j]` for `k` in `[0, n + m - 1)`, as one gather and a matmul."""
    from loom.numpy._more import pad
    n, m = a.shape[0], v.shape[0]
    padded = pad(a, (m - 1, m - 1))
    idx = np.arange(n + m - 1)[:, None] + np.arange(m)[None, :]
    return matmul(take(padded, idx), v)


def _mode_slice(full: Tracer, n: int, m: int, mode: str) -> Tracer:
    if mode == "full":
        return full
    if mode == "same":
        start = (m - 1) // 2  # callers make n >= m
        size = builtins.max(n, m)
        return _take_slice(full, 0, start, start + size)
    if mode == "valid":
        lo, hi = builtins.min(n, m) - 1, builtins.max(n, m)
        return _take_slice(full, 0, lo, hi)
    raise ValueError(f"mode must be 'full', 'same' or 'valid', got {mode!r} (at {user_line()})")


def correlate(a: ArrayLike, v: ArrayLike, mode: str = "valid") -> Any:
    """The cross-correlation of two 1-D arrays, `c[k] = sum_n a[n + k] conj(v[n])` (modes as numpy)."""
    if not _traced(a, v):
        return np.correlate(a, v, mode)
    a, v = _lift_all([a, v])
    n, m = a.shape[0], v.shape[0]
    if n < m:  # as numpy: swap and reverse
        return flip(correlate(v, a, mode))
    return _mode_slice(_correlate_full(a, conjugate(v)), n, m, mode)


def convolve(a: ArrayLike, v: ArrayLike, mode: str = "full") -> Any:
    """The discrete linear convolution of two 1-D arrays (modes as numpy)."""
    if not _traced(a, v):
        return np.convolve(a, v, mode)
    a, v = _lift_all([a, v])
    if a.shape[0] < v.shape[0]:
        a, v = v, a
    return _mode_slice(_correlate_full(a, flip(v)), a.shape[0], v.shape[0], mode)


# --- selection ---------------------------------------------------------------------------------------


def select(condlist: Sequence[ArrayLike], choicelist: Sequence[ArrayLike], default: Any = 0) -> Any:
    """The choice of the first true condition, elementwise (`default` where none holds)."""
    if not _traced(*condlist, *choicelist, default):
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
    if not _traced(x, *condlist):
        return np.piecewise(x, condlist, funclist, *args, **kw)
    x = _as_tracer(x, [x, *condlist])
    if len(funclist) not in (len(condlist), len(condlist) + 1):
        raise ValueError(f"piecewise: {len(funclist)} functions for {len(condlist)} conditions (at {user_line()})")

    def value(f: Any) -> Any:
        out = f(x, *args, **kw) if callable(f) else f
        return broadcast_to(astype(_as_tracer(out, x), x.dtype), x.shape)

    out = value(funclist[-1]) if len(funclist) > len(condlist) else multiply(x, 0)
    for c, f in zip(condlist, funclist):
        out = where(c, value(f), out)
    return out


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
    if not _traced(*keys):
        return np.lexsort(keys, axis)
    from loom.numpy._indexing import take_along_axis
    keys = _lift_all(list(keys))
    order = None
    for k in keys:
        if order is None:
            order = argsort(k, axis)
        else:
            order = take_along_axis(order, argsort(take_along_axis(k, order, axis), axis), axis)
    return order


def put_along_axis(arr: ArrayLike, indices: ArrayLike, values: ArrayLike, axis: int | None,
                   inplace: bool = False, mode: str | None = None) -> Any:
    """`arr` with `values` put at `indices` along `axis` (the other axes matched), returned as a new
    array as JAX does (`inplace=True` is an error, as in JAX; NumPy modifies `arr` instead)."""
    if inplace:
        raise ValueError(f"put_along_axis: inplace=True is not supported; arrays are immutable, pass "
                         f"inplace=False and use the result (at {user_line()})")
    if not _traced(arr, indices, values):
        out = np.array(arr)
        np.put_along_axis(out, np.asarray(indices), values, axis)
        return out
    arr, indices = _lift_all([arr, indices])
    if axis is None:
        return reshape(put_along_axis(ravel(arr), ravel(indices), ravel(_as_tracer(values, arr))
                                      if np.ndim(values) else values, 0, mode=mode), arr.shape)
    ax = _axes(axis, arr.ndim)[0]
    if indices.ndim != arr.ndim:
        raise ValueError(f"put_along_axis: `indices` must have the rank of `arr` ({arr.ndim}), got shape "
                         f"{indices.shape} (at {user_line()})")
    index = []
    for i in range(arr.ndim):
        if i == ax:
            index.append(indices)
        else:
            index.append(np.arange(arr.shape[i]).reshape([-1 if j == i else 1 for j in range(arr.ndim)]))
    return arr.at[tuple(index)].set(values, mode=mode)


def histogram(a: ArrayLike, bins: int | ArrayLike = 10, range: tuple[float, float] | None = None,  # noqa: A002
              weights: ArrayLike | None = None, density: bool = False) -> tuple[Any, Any]:
    """Counts of the flattened `a` in `bins` (a count of equal bins over `range`, by default the data's
    minimum and maximum, or increasing edges) and the edges; the last bin includes its right edge.
    Inside `loom.jit` the counts are float (as JAX), computed by comparing each value with all edges."""
    if not _traced(a, bins, weights):
        return np.histogram(a, bins, range=range, weights=weights, density=density)
    from loom.numpy import arange
    a = ravel(_as_tracer(a, [a, bins, weights]))
    d = _floating(a.dtype)
    af = astype(a, d)
    if isinstance(bins, (int, np.integer)):
        n = int(bins)
        if range is None:
            lo, hi = min(af), max(af)
        else:
            lo, hi = _lift(a.trace, np.asarray(range[0], d)), _lift(a.trace, np.asarray(range[1], d))
        same = equal(lo, hi)
        lo, hi = where(same, subtract(lo, 0.5), lo), where(same, add(hi, 0.5), hi)
        steps = divide(arange(n + 1), float(n))
        edges = add(lo, multiply(subtract(hi, lo), astype(steps, d)))
        edges = concatenate([_take_slice(edges, 0, 0, n), reshape(hi, (1,))])  # the last edge exactly
    else:
        edges = astype(_as_tracer(bins, a), d) if _traced(bins) or isinstance(bins, np.ndarray) else \
            _lift(a.trace, np.asarray(bins, d))
        n = edges.shape[0] - 1
    index = subtract(searchsorted(edges, af, "right"), 1)
    index = where(equal(af, edges[n]), n - 1, index)
    inside = logical_and(less_equal(edges[0], af), less_equal(af, edges[n]))
    one_hot = logical_and(equal(expand_dims(index, -1), arange(n)), expand_dims(inside, -1))
    w = astype(one_hot, d)
    if weights is not None:
        w = multiply(w, expand_dims(ravel(astype(_as_tracer(weights, a), d)), -1))
    counts = sum(w, axis=0)
    if density:
        counts = divide(divide(counts, sum(counts)), subtract(_take_slice(edges, 0, 1, n + 1),
                                                             _take_slice(edges, 0, 0, n)))
    return counts, edges


def _sized_message(name: str) -> str:
    return (f"{name}: the output shape depends on the values of its argument, which are not known inside loom.jit; "
            f"pass a static size= (as in JAX) or call it on a concrete array (at {user_line()})")


def _first_true(mask: Tracer, size: int) -> tuple[Tracer, Tracer]:
    """Flat positions of the first `size` true entries of the 1-D `mask` (in order) and which of the
    `size` slots hold one, by a stable sort of the positions keyed on the mask."""
    from loom.numpy import arange
    n = mask.shape[0]
    order = argsort(astype(mask, np.int32) * -1 + 1)  # trues (key 0) first, stable
    if size > n:
        from loom.numpy._more import pad
        order = pad(order, (0, size - n))
    order = _take_slice(order, 0, 0, size)
    valid = less(arange(size), sum(mask))
    return order, valid


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
        raise TracerError(_sized_message("nonzero"))
    mask = ravel(not_equal(x, 0))
    pos, valid = _first_true(mask, int(size))
    out = []
    stride = 1
    for d in reversed(x.shape):
        out.append(pos if d == x.size else _int_mod(_int_div(pos, stride), d))
        stride *= d
    fill = 0 if fill_value is None else fill_value
    return tuple(where(valid, o, astype(_as_tracer(np.asarray(fill), o), o.dtype)) for o in reversed(out))


def _int_div(x: Tracer, k: int) -> Tracer:
    from loom.numpy._more import floor_divide
    return x if k == 1 else floor_divide(x, k)


def _int_mod(x: Tracer, k: int) -> Tracer:
    from loom.numpy._more import remainder
    return remainder(x, k)


def flatnonzero(x: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """Indices of the nonzero elements of the flattened `x` (`size` required inside `loom.jit`)."""
    if not isinstance(x, Tracer) and size is None:
        return np.flatnonzero(x)
    if isinstance(x, Tracer) and size is None:
        raise TracerError(_sized_message("flatnonzero"))
    return nonzero(ravel(x), size=size, fill_value=fill_value)[0]


def argwhere(x: ArrayLike, *, size: int | None = None, fill_value: Any = None) -> Any:
    """The indices of the nonzero elements, one row each (`size` required inside `loom.jit`)."""
    if not isinstance(x, Tracer) and size is None:
        return np.argwhere(x)
    if isinstance(x, Tracer) and size is None:
        raise TracerError(_sized_message("argwhere"))
    if np.ndim(x) == 0:
        x = reshape(x, (1,)) if isinstance(x, Tracer) else np.reshape(x, (1,))
        return argwhere(x, size=size, fill_value=fill_value)[:, :0]
    cols = nonzero(x, size=size, fill_value=fill_value)
    if isinstance(x, Tracer):
        from loom.numpy import stack
        return stack(cols, axis=1)
    return np.stack(cols, axis=1)


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
        raise TracerError(_sized_message("unique"))
    s = sort(ravel(x))
    n = s.shape[0]
    if n == 0:
        raise ValueError(f"unique: an empty array has no values to fill with (at {user_line()})")
    first = concatenate([_lift(s.trace, np.asarray([True])), not_equal(_take_slice(s, 0, 1, n),
                                                                          _take_slice(s, 0, 0, n - 1))])
    pos, valid = _first_true(first, int(size))
    values = take(s, minimum(pos, n - 1))
    fill = s[0] if fill_value is None else fill_value
    return where(valid, values, fill)


__all__ = [
    "allclose", "argpartition", "argwhere", "array_equal", "array_split", "atleast_1d", "atleast_2d", "atleast_3d",
    "average", "broadcast_arrays", "column_stack", "convolve", "corrcoef", "correlate", "count_nonzero", "cov",
    "cross", "diag", "diagonal", "diff", "dstack", "ediff1d", "empty", "empty_like", "flatnonzero", "fliplr",
    "flipud", "histogram", "hsplit", "hstack", "identity", "indices", "inner", "interp", "isclose", "kron", "lexsort",
    "logspace", "median", "meshgrid", "nan_to_num", "nanmax", "nanmean", "nanmin", "nansum", "nonzero", "partition",
    "percentile", "piecewise", "polyval", "ptp", "put_along_axis", "quantile", "ravel", "rot90", "searchsorted",
    "select", "trace", "tri", "tril", "triu", "unique", "vdot", "vsplit", "vstack",
]
