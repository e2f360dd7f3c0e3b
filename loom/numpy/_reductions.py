"""Reductions (sum, prod, max, min, mean, var, std, any, all, argmax, argmin), cumulative
sums and products, their NaN-ignoring variants, quantiles and statistics.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import ml_dtypes
import numpy as np

from loom.dialects import stablehlo
from loom.frontend.tracing import (
    ConcretizationError,
    Tracer,
    TracerError,
    canonical_dtype,
    default_dtype,
    is_floating,
    user_line,
)
from loom.frontend.tracing import floating_dtype as _floating
from loom.frontend.tracing import lift as _lift
from loom.lax.ops import arg_reduce
from loom.numpy import _indexing as indexing
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _sorting as sorting
from loom.numpy import _tensor_contractions as tensor_contractions
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import (
    ArrayLike,
    Axis,
    AxisError,
    array_dtype,
    as_bool,
    as_tracer,
    canonical_axes,
    is_traced,
    positive_axis,
    transpose_unless_sorted,
)

_HALF_FLOATS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _in_float32(x: Tracer, body: Callable[[Tracer], Tracer]) -> Tracer:
    """`body(x)`, computed in float32 and rounded back to `x`'s dtype when `x` is float16 or
    bfloat16: JAX's reductions (sum, prod, mean, var) accumulate half-precision values in
    float32, so long sums lose no more than the final rounding."""
    if x.dtype not in _HALF_FLOATS:
        return body(x)
    out = body(lax_numpy.astype(x, np.float32))
    return _lift(out.trace, out, x.dtype, x.weak)


def _accumulator(x: Tracer, dtype: Any) -> Tracer:
    """`x` in `dtype`, or, without one, as JAX's sums and products take it: bools and integers
    narrower than the default integer (int32; int64 with enable_x64) widened to it (unsigned ones
    to the default unsigned integer)."""
    if dtype is not None:
        return lax_numpy.astype(x, dtype)
    wide = default_dtype("i")
    if x.dtype.kind == "b" or (x.dtype.kind in "iu" and x.dtype.itemsize < wide.itemsize):
        return lax_numpy.astype(x, wide if x.dtype.kind != "u" else canonical_dtype(np.uint64))
    return x


def _reduce(x: Tracer, axis: Axis, keepdims: bool, init: Any, body: Callable) -> Tracer:
    trace = x.trace
    axes = canonical_axes(axis, x.ndim)
    init_value = trace.constant(np.asarray(init, dtype=x.dtype))
    v = stablehlo.reduce(trace.emit(), [x.value], [init_value], list(axes),
                         lambda b, args: [body(b, args[0], args[1])])
    out = Tracer(v, trace, x.weak)
    if keepdims:
        out = lax_numpy.reshape(out, tuple(1 if i in axes else d for i, d in enumerate(x.shape)))
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
    x = _accumulator(x, dtype)
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


def mean(x: ArrayLike, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Any:
    """Mean over `axis`, computed in `dtype` when given; integer inputs give float32, as JAX."""
    if not isinstance(x, Tracer):
        return np.mean(x, axis=axis, keepdims=keepdims, dtype=dtype)
    axes = canonical_axes(axis, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    xf = lax_numpy.astype(x, _floating(x.dtype) if dtype is None else canonical_dtype(dtype))
    return _in_float32(xf, lambda t: ufuncs.divide(sum(t, axis=axes, keepdims=keepdims), float(count)))


def prod(x: ArrayLike, axis: Axis = None, keepdims: bool = False, dtype: Any = None) -> Any:
    """Product over `axis`; bool and small ints multiply as int32, as JAX."""
    if not isinstance(x, Tracer):
        return np.prod(x, axis=axis, keepdims=keepdims, dtype=dtype)
    x = _accumulator(x, dtype)
    return _in_float32(x, lambda xf: _reduce(xf, axis, keepdims, 1, stablehlo.multiply))


def any(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether any element over `axis` is nonzero."""
    if not isinstance(x, Tracer):
        return np.any(x, axis=axis, keepdims=keepdims)
    return _reduce(as_bool(x), axis, keepdims, False, stablehlo.or_)


def all(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:  # noqa: A001
    """Whether all elements over `axis` are nonzero."""
    if not isinstance(x, Tracer):
        return np.all(x, axis=axis, keepdims=keepdims)
    return _reduce(as_bool(x), axis, keepdims, True, stablehlo.and_)


def var(x: ArrayLike, axis: Axis = None, keepdims: bool = False, ddof: int = 0, dtype: Any = None) -> Any:
    """Variance over `axis` (divided by `n - ddof`), computed in `dtype` when given; integer
    inputs give float32."""
    if not isinstance(x, Tracer):
        return np.var(x, axis=axis, keepdims=keepdims, ddof=ddof, dtype=dtype)
    xf = lax_numpy.astype(x, _floating(x.dtype) if dtype is None else canonical_dtype(dtype))
    axes = canonical_axes(axis, x.ndim)
    count = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))

    def body(t: Tracer) -> Tracer:
        centered = ufuncs.subtract(t, mean(t, axis=axes, keepdims=True))
        return ufuncs.divide(
            sum(ufuncs.multiply(centered, centered), axis=axes, keepdims=keepdims), float(count - ddof)
        )

    return _in_float32(xf, body)


def std(x: ArrayLike, axis: Axis = None, keepdims: bool = False, ddof: int = 0, dtype: Any = None) -> Any:
    """Standard deviation over `axis` (computed in `dtype` when given)."""
    if not isinstance(x, Tracer):
        return np.std(x, axis=axis, keepdims=keepdims, ddof=ddof, dtype=dtype)
    return ufuncs.sqrt(var(x, axis=axis, keepdims=keepdims, ddof=ddof, dtype=dtype))


def argmax(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the largest element along `axis` (of the flattened array when None); the first
    on ties and the first NaN, as numpy. int32, as JAX."""
    if not isinstance(x, Tracer):
        return np.argmax(x, axis=axis, keepdims=keepdims)
    if axis is not None:
        positive_axis(axis, x.ndim, "argmax")  # an AxisError: an IndexError, as JAX's
    return lax_numpy.astype(arg_reduce(x, axis, keepdims, True), default_dtype("i"))


def argmin(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """Index of the smallest element along `axis`; the first on ties and the first NaN."""
    if not isinstance(x, Tracer):
        return np.argmin(x, axis=axis, keepdims=keepdims)
    if axis is not None:
        positive_axis(axis, x.ndim, "argmin")  # an AxisError: an IndexError, as JAX's
    return lax_numpy.astype(arg_reduce(x, axis, keepdims, False), default_dtype("i"))


def _cumulative(x: Tracer, axis: int | None, dtype: Any, init: Any, hlo_fn: Any) -> Tracer:
    if axis is None:
        x, axis = lax_numpy.reshape(x, (-1,)), 0
    if dtype is not None:
        x = lax_numpy.astype(x, dtype)
    elif x.dtype.kind == "b":  # as JAX: bools accumulate in the default integer, other dtypes keep theirs
        x = lax_numpy.astype(x, default_dtype("i"))
    ax = canonical_axes(axis, x.ndim)[0]
    n = x.shape[ax]
    if n == 0:
        return x
    window = [1] * x.ndim
    window[ax] = n
    padding = [(0, 0)] * x.ndim
    padding[ax] = (n - 1, 0)
    init_v = x.trace.constant(np.asarray(init, dtype=x.dtype))
    v = stablehlo.reduce_window(x.trace.emit(), [x.value], [init_v], window,
                                lambda b, args: [hlo_fn(b, args[0], args[1])], padding=padding)
    return Tracer(v, x.trace, x.weak)


def cumsum(x: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """Running sum along `axis` (of the flattened array when None), via `stablehlo.reduce_window`."""
    if not isinstance(x, Tracer):
        return np.cumsum(x, axis=axis, dtype=dtype)
    return _cumulative(x, axis, dtype, 0, stablehlo.add)


def cumprod(x: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """Running product along `axis` (of the flattened array when None)."""
    if not isinstance(x, Tracer):
        return np.cumprod(x, axis=axis, dtype=dtype)
    return _cumulative(x, axis, dtype, 1, stablehlo.multiply)


def _cumulative_array_api(fn: Any, initial: int, x: ArrayLike, axis: int | None, dtype: Any, include_initial: bool,
                name: str) -> Any:
    if axis is None:
        if lax_numpy.ndim(x) > 1:
            raise ValueError(f"{name}: axis must be given for arrays of more than one dimension "
                             f"(got shape {lax_numpy.shape(x)})")
        axis = 0
    if lax_numpy.ndim(x) == 0:
        raise ValueError(f"{name}: x must have at least one dimension")
    axis = positive_axis(axis, lax_numpy.ndim(x), name)
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        first = indexing.take(
            lax_numpy.zeros_like(out) if initial == 0 else lax_numpy.ones_like(out), np.arange(1), axis=axis
        )
        out = lax_numpy.concatenate([first, out], axis=axis)
    return out


def cumulative_sum(x: ArrayLike, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
    """Running sums along `axis` (the array API's `cumsum`); `include_initial` puts a 0 first."""
    return _cumulative_array_api(cumsum, 0, x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x: ArrayLike, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Running products along `axis`; `include_initial` puts a 1 first."""
    return _cumulative_array_api(cumprod, 1, x, axis, dtype, include_initial, "cumulative_prod")


def nanprod(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """`prod` treating NaN as 1."""
    return prod(lax_numpy.where(ufuncs.isnan(x), 1, x), axis=axis, keepdims=keepdims)


def _nan_count(x: ArrayLike, axis: Axis, keepdims: bool) -> Any:
    return sum(lax_numpy.where(ufuncs.isnan(x), 0, 1), axis=axis, keepdims=keepdims)


def nanvar(x: ArrayLike, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """`var` over the non-NaN elements (NaN where no more than `ddof` remain)."""
    if array_dtype(x).kind in "biu":
        x = lax_numpy.astype(x, np.float32)
    nan = ufuncs.isnan(x)
    mu = sum(lax_numpy.where(nan, 0, x), axis=axis, keepdims=True) / _nan_count(x, axis, True)
    centered = lax_numpy.where(nan, 0, x - mu)
    n = _nan_count(x, axis, keepdims)
    return lax_numpy.where(n > ddof, sum(centered * centered, axis=axis, keepdims=keepdims) / (n - ddof), np.nan)


def nanstd(x: ArrayLike, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """`std` over the non-NaN elements."""
    return ufuncs.sqrt(nanvar(x, axis=axis, ddof=ddof, keepdims=keepdims))


def _nan_arg(x: ArrayLike, axis: int | None, keepdims: bool, fn: Any, fill: float) -> Any:
    nan = ufuncs.isnan(x)
    found = fn(lax_numpy.where(nan, fill, x), axis=axis, keepdims=keepdims)
    all_nan = all(nan, axis=axis, keepdims=keepdims)
    return lax_numpy.where(all_nan, -1, found)


def nanargmax(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """`argmax` ignoring NaN; -1 where every element is NaN (JAX's convention)."""
    return _nan_arg(x, axis, keepdims, argmax, -np.inf)


def nanargmin(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """`argmin` ignoring NaN; -1 where every element is NaN (JAX's convention)."""
    return _nan_arg(x, axis, keepdims, argmin, np.inf)


def nancumsum(x: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """`cumsum` treating NaN as 0."""
    return cumsum(lax_numpy.where(ufuncs.isnan(x), 0, x), axis=axis, dtype=dtype)


def nancumprod(x: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """`cumprod` treating NaN as 1."""
    return cumprod(lax_numpy.where(ufuncs.isnan(x), 1, x), axis=axis, dtype=dtype)


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
    if builtins.any(not -rank <= a < rank for a in ((axis,) if isinstance(axis, int) else axis or ())):
        raise AxisError(f"{name}: axis {axis} is out of bounds for an array of rank {rank} (at {user_line()})")
    if x.dtype.kind in "biu":
        x = lax_numpy.astype(x, _floating(x.dtype))
    kept = [a for a in range(rank) if a not in axes]
    moved = transpose_unless_sorted(x, kept + list(axes))
    lead = tuple(x.shape[a] for a in kept)
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    flat = lax_numpy.reshape(moved, lead + (n,))
    nan = ufuncs.isnan(flat)
    # NaN sorts as +inf: the first `count` sorted values are the non-NaN ones
    s = sorting.sort(lax_numpy.where(nan, np.inf, flat), axis=-1)
    count = sum(lax_numpy.astype(ufuncs.logical_not(nan), np.int32), axis=-1, keepdims=True)
    outs = []
    for q in qs.reshape(-1):
        pos = lax_numpy.astype(count - 1, x.dtype) * float(q)  # a Python float stays weak: x.dtype
        lo = lax_numpy.astype(pos, np.int32)  # pos >= 0 where any value is left: truncation is floor
        lo = lax_numpy.where(lo < 0, 0, lo)
        hi = lax_numpy.where(lo + 1 < count, lo + 1, lo)
        frac = pos - lax_numpy.astype(lo, x.dtype)
        vlo, vhi = indexing.take_along_axis(s, lo, axis=-1), indexing.take_along_axis(s, hi, axis=-1)
        v = vlo + (vhi - vlo) * frac
        outs.append(lax_numpy.where(count == 0, np.nan, v)[..., 0])
    out = lax_numpy.stack(outs, axis=0)  # (len(q), *lead)
    if keepdims:
        full = [1 if a in axes else x.shape[a] for a in range(rank)]
        out = lax_numpy.reshape(out, (len(outs), *full))
    return lax_numpy.reshape(out, qs.shape + tuple(out.shape[1:]))


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


def ptp(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """The range (maximum - minimum) over `axis`."""
    if not isinstance(x, Tracer):
        return np.ptp(x, axis=axis, keepdims=keepdims)
    return ufuncs.subtract(max(x, axis, keepdims), min(x, axis, keepdims))


def count_nonzero(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """The number of nonzero elements over `axis` (int32, as JAX)."""
    if not isinstance(x, Tracer):
        return np.count_nonzero(x, axis=axis, keepdims=keepdims)
    return sum(ufuncs.not_equal(x, 0), axis=axis, keepdims=keepdims)


def average(a: ArrayLike, axis: Axis = None, weights: ArrayLike | None = None, returned: bool = False,
            keepdims: bool = False) -> Any:
    """The (weighted) mean over `axis`; `weights` broadcast to `a` or 1-D along a single `axis`."""
    if not is_traced(a, weights):
        return np.average(a, axis=axis, weights=weights, returned=returned, keepdims=keepdims)
    a = as_tracer(a, [a, weights])
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        count = float(a.size / np.size(avg)) if np.size(avg) else 0.0
        return (avg, full_like_(avg, count)) if returned else avg
    w = as_tracer(weights, [a, weights])
    if w.shape != a.shape:
        if axis is None or w.ndim != 1:
            raise ValueError(f"average: weights of shape {w.shape} differ from a's {a.shape}; give one axis and 1-D "
                             f"weights (at {user_line()})")
        ax = canonical_axes(axis, a.ndim)[0]
        w = lax_numpy.reshape(w, [-1 if i == ax else 1 for i in range(a.ndim)])
    w = lax_numpy.broadcast_to(w, a.shape)
    total = sum(w, axis=axis, keepdims=keepdims)
    avg = ufuncs.divide(sum(ufuncs.multiply(a, w), axis=axis, keepdims=keepdims), total)
    return (avg, lax_numpy.broadcast_to(total, lax_numpy.shape(avg))) if returned else avg


def full_like_(x: Any, value: float) -> Any:
    return lax_numpy.full_like(x, value)


def cov(m: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True, bias: bool = False,
        ddof: int | None = None) -> Any:
    """The covariance matrix of the variables (rows when `rowvar`); float results."""
    if not is_traced(m, y):
        return np.cov(m, y, rowvar=rowvar, bias=bias, ddof=ddof)
    x = lax_numpy.atleast_2d(as_tracer(m, [m, y]))
    if not rowvar and x.shape[0] != 1:
        x = lax_numpy.transpose(x)
    if y is not None:
        yy = lax_numpy.atleast_2d(as_tracer(y, [m, y]))
        if not rowvar and yy.shape[0] != 1:
            yy = lax_numpy.transpose(yy)
        x = lax_numpy.concatenate([x, yy], axis=0)
    x = x if is_floating(x.dtype) else lax_numpy.astype(x, _floating(x.dtype))
    n = x.shape[1]
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = ufuncs.subtract(x, mean(x, axis=1, keepdims=True))
    c = ufuncs.divide(
        tensor_contractions.matmul(centered, lax_numpy.transpose(ufuncs.conjugate(centered))), float(n - ddof)
    )
    return lax_numpy.squeeze(c)


def corrcoef(x: ArrayLike, y: ArrayLike | None = None, rowvar: bool = True) -> Any:
    """Pearson correlation coefficients (clipped to `[-1, 1]`)."""
    if not is_traced(x, y):
        return np.corrcoef(x, y, rowvar=rowvar)
    c = cov(x, y, rowvar)
    if c.ndim == 0:
        return ufuncs.divide(c, c)
    d = ufuncs.sqrt(lax_numpy.diagonal(c))
    c = ufuncs.divide(ufuncs.divide(c, lax_numpy.reshape(d, (-1, 1))), lax_numpy.reshape(d, (1, -1)))
    return ufuncs.clip(c, -1.0, 1.0)


def _nan_fill(x: Tracer, value: Any) -> Tracer:
    return lax_numpy.where(ufuncs.isnan(x), value, x) if is_floating(x.dtype) else x


def nansum(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Sum over `axis`, NaNs counted as zero."""
    if not isinstance(x, Tracer):
        return np.nansum(x, axis=axis, keepdims=keepdims)
    return sum(_nan_fill(x, 0), axis=axis, keepdims=keepdims)


def nanmean(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Mean over `axis` ignoring NaNs (NaN where all are NaN)."""
    if not isinstance(x, Tracer):
        return np.nanmean(x, axis=axis, keepdims=keepdims)
    xf = lax_numpy.astype(x, _floating(x.dtype))
    count = sum(logical_not_nan(xf), axis=axis, keepdims=keepdims)
    return ufuncs.divide(nansum(xf, axis, keepdims), lax_numpy.astype(count, xf.dtype))


def logical_not_nan(x: Tracer) -> Tracer:
    return ufuncs.equal(x, x)


def nanmax(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Maximum over `axis` ignoring NaNs (NaN where all are NaN)."""
    if not isinstance(x, Tracer):
        return np.nanmax(x, axis=axis, keepdims=keepdims)
    if not is_floating(x.dtype):
        return max(x, axis, keepdims)
    out = max(_nan_fill(x, -np.inf), axis, keepdims)
    return lax_numpy.where(all(ufuncs.isnan(x), axis=axis, keepdims=keepdims), np.nan, out)


def nanmin(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """Minimum over `axis` ignoring NaNs (NaN where all are NaN)."""
    if not isinstance(x, Tracer):
        return np.nanmin(x, axis=axis, keepdims=keepdims)
    if not is_floating(x.dtype):
        return min(x, axis, keepdims)
    out = min(_nan_fill(x, np.inf), axis, keepdims)
    return lax_numpy.where(all(ufuncs.isnan(x), axis=axis, keepdims=keepdims), np.nan, out)


def static_quantiles(name: str, q: Any, method: str) -> np.ndarray:
    """`q` of a traced quantile as float64 numpy, checked: static, in [0, 1], method 'linear'."""
    if isinstance(q, Tracer):
        raise TracerError(f"{name}: `q` must be a static value inside loom.jit, not a traced one (at {user_line()})")
    if method != "linear":
        raise ConcretizationError(f"{name}: method {method!r} is not supported inside loom.jit; only 'linear' "
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
        x, ax = lax_numpy.reshape(x, (-1,)), 0
    else:
        ax = canonical_axes(axis, x.ndim)[0]
    x = x if is_floating(x.dtype) else lax_numpy.astype(x, _floating(x.dtype))
    s = lax_numpy.moveaxis(sorting.sort(x, axis=ax), ax, -1)
    n = s.shape[-1]
    pos = qs.reshape(-1) * (n - 1)
    lo = np.floor(pos).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    frac = (pos - lo).astype(s.dtype)
    vlo, vhi = indexing.take(s, lo, axis=-1), indexing.take(s, hi, axis=-1)
    out = ufuncs.add(vlo, ufuncs.multiply(ufuncs.subtract(vhi, vlo), frac))  # (..., len(q))
    out = lax_numpy.where(any(ufuncs.isnan(s), axis=-1, keepdims=True), np.nan, out)
    if keepdims:
        out = lax_numpy.expand_dims(out, ax if axis is not None else tuple(range(orig_ndim))) if axis is not None else \
            lax_numpy.reshape(out, (1,) * orig_ndim + (out.shape[-1],))
        out = lax_numpy.moveaxis(out, -1, 0) if out.ndim else out
        return lax_numpy.reshape(out, out.shape[1:]) if qs.ndim == 0 else out
    out = lax_numpy.moveaxis(out, -1, 0)
    return lax_numpy.reshape(out, out.shape[1:]) if qs.ndim == 0 else lax_numpy.reshape(out, qs.shape + out.shape[1:])


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


__all__ = ["all", "amax", "amin", "any", "argmax", "argmin", "average", "corrcoef", "count_nonzero", "cov",
    "cumprod", "cumsum", "cumulative_prod", "cumulative_sum", "max", "mean", "median", "min", "nanargmax",
    "nanargmin", "nancumprod", "nancumsum", "nanmax", "nanmean", "nanmedian", "nanmin", "nanpercentile", "nanprod",
    "nanquantile", "nanstd", "nansum", "nanvar", "percentile", "prod", "ptp", "quantile", "std", "sum", "var"]
