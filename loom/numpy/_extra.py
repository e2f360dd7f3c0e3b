"""The rest of `jax.numpy`'s everyday API in `loom.numpy`: the array-API names (`permute_dims`,
`concat`, `matrix_transpose`, `unstack`, `vecdot`, `matvec`, `vecmat`, `cumulative_sum`, ...),
NaN-ignoring reductions (`nanprod`, `nanvar`, `nanargmax`, ...), index helpers (`tril_indices`,
`unravel_index`, `ravel_multi_index`, `ix_`, ...), membership and binning (`isin`, `digitize`,
`bincount` with a static length), `vectorize` and `apply_along_axis` (by `loom.vmap`),
polynomials, windows, `issubdtype` (bfloat16 is floating, as in JAX) and a few more. Each is composed
from other `loom.numpy` functions, so inside `loom.jit` it lowers to StableHLO and is
differentiable wherever its parts are, with JAX's dtypes; on plain arrays it runs NumPy directly
(NumPy's dtypes), as the rest of loom.numpy. Index helpers and windows take static sizes and
return NumPy arrays with JAX's dtypes.
"""

from __future__ import annotations

import builtins
import operator
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.frontend.tracing import Tracer
from loom.numpy import (
    ArrayLike,
    Axis,
    argmax,
    argmin,
    astype,
    broadcast_to,
    clip,
    concatenate,
    convolve,
    cumprod,
    cumsum,
    diag,
    equal,
    expand_dims,
    flip,
    floor_divide,
    isinf,
    isnan,
    logical_and,
    logical_not,
    matmul,
    moveaxis,
    multiply,
    ones_like,
    pad,
    power,
    prod,
    ravel,
    remainder,
    reshape,
    searchsorted,
    sqrt,
    stack,
    sum,
    swapaxes,
    take,
    transpose,
    where,
    zeros_like,
)
from loom.numpy import all as all_
from loom.numpy import any as any_
from loom.numpy import ndim as ndim_
from loom.numpy import shape as shape_

newaxis = None


def _positive_axis(axis: int, rank: int, name: str) -> int:
    if not -rank <= axis < rank:
        raise ValueError(f"{name}: axis {axis} is out of bounds for an array of rank {rank}")
    return axis % rank


# --- array-API names ---------------------------------------------------------------------------


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
    if ndim_(x) < 2:
        raise ValueError(f"matrix_transpose: x must have at least 2 dimensions, but got shape {shape_(x)}")
    return swapaxes(x, -1, -2)


def unstack(x: ArrayLike, axis: int = 0) -> tuple[Any, ...]:
    """The slices of `x` along `axis`, as a tuple."""
    axis = _positive_axis(axis, ndim_(x), "unstack")
    moved = moveaxis(x, axis, 0)
    return tuple(moved[i] for i in range(shape_(x)[axis]))


def vecdot(a: ArrayLike, b: ArrayLike, axis: int = -1) -> Any:
    """The dot products of the vectors along `axis` (broadcasting the other axes)."""
    if shape_(a)[axis] != shape_(b)[axis]:
        raise ValueError(f"vecdot: axis {axis} has size {shape_(a)[axis]} in a and {shape_(b)[axis]} in b")
    return sum(multiply(a, b), axis=axis)


def matvec(a: ArrayLike, v: ArrayLike) -> Any:
    """Matrix-vector products over stacks: `a[..., m, n] @ v[..., n]`."""
    return matmul(a, expand_dims(v, -1))[..., 0]


def vecmat(v: ArrayLike, a: ArrayLike) -> Any:
    """Vector-matrix products over stacks: `v[..., m] @ a[..., m, n]`."""
    return matmul(expand_dims(v, -2), a)[..., 0, :]


def _cumulative(fn: Any, initial: int, x: ArrayLike, axis: int | None, dtype: Any, include_initial: bool,
                name: str) -> Any:
    if axis is None:
        if ndim_(x) > 1:
            raise ValueError(f"{name}: axis must be given for arrays of more than one dimension "
                             f"(got shape {shape_(x)})")
        axis = 0
    if ndim_(x) == 0:
        raise ValueError(f"{name}: x must have at least one dimension")
    axis = _positive_axis(axis, ndim_(x), name)
    out = fn(x, axis=axis, dtype=dtype)
    if include_initial:
        first = take(zeros_like(out) if initial == 0 else ones_like(out), np.arange(1), axis=axis)
        out = concatenate([first, out], axis=axis)
    return out


def cumulative_sum(x: ArrayLike, *, axis: int | None = None, dtype: Any = None, include_initial: bool = False) -> Any:
    """Running sums along `axis` (the array API's `cumsum`); `include_initial` puts a 0 first."""
    return _cumulative(cumsum, 0, x, axis, dtype, include_initial, "cumulative_sum")


def cumulative_prod(x: ArrayLike, *, axis: int | None = None, dtype: Any = None,
                    include_initial: bool = False) -> Any:
    """Running products along `axis`; `include_initial` puts a 1 first."""
    return _cumulative(cumprod, 1, x, axis, dtype, include_initial, "cumulative_prod")


# --- predicates --------------------------------------------------------------------------------


def isneginf(x: ArrayLike) -> Any:
    """Whether each element is -inf."""
    return logical_and(isinf(x), x < 0)


def isposinf(x: ArrayLike) -> Any:
    """Whether each element is +inf."""
    return logical_and(isinf(x), x > 0)


def _dtype_of(x: Any) -> np.dtype:
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


def iscomplexobj(x: ArrayLike) -> bool:
    """Whether `x` has a complex dtype."""
    return _dtype_of(x).kind == "c"


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
    s = shape_(x)
    return int(np.prod(s, dtype=np.int64)) if axis is None else int(s[axis])


def broadcast_shapes(*shapes: Sequence[int]) -> tuple[int, ...]:
    """The shape arrays of `shapes` broadcast to."""
    return tuple(np.broadcast_shapes(*(tuple(s) for s in shapes)))


# --- NaN-ignoring reductions -------------------------------------------------------------------


def nanprod(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """`prod` treating NaN as 1."""
    return prod(where(isnan(x), 1, x), axis=axis, keepdims=keepdims)


def _nan_count(x: ArrayLike, axis: Axis, keepdims: bool) -> Any:
    return sum(where(isnan(x), 0, 1), axis=axis, keepdims=keepdims)


def nanvar(x: ArrayLike, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """`var` over the non-NaN elements (NaN where no more than `ddof` remain)."""
    if _dtype_of(x).kind in "biu":
        x = astype(x, np.float32)
    nan = isnan(x)
    mu = sum(where(nan, 0, x), axis=axis, keepdims=True) / _nan_count(x, axis, True)
    centered = where(nan, 0, x - mu)
    n = _nan_count(x, axis, keepdims)
    return where(n > ddof, sum(centered * centered, axis=axis, keepdims=keepdims) / (n - ddof), np.nan)


def nanstd(x: ArrayLike, axis: Axis = None, ddof: int = 0, keepdims: bool = False) -> Any:
    """`std` over the non-NaN elements."""
    return sqrt(nanvar(x, axis=axis, ddof=ddof, keepdims=keepdims))


def _nan_arg(x: ArrayLike, axis: int | None, keepdims: bool, fn: Any, fill: float) -> Any:
    nan = isnan(x)
    found = fn(where(nan, fill, x), axis=axis, keepdims=keepdims)
    all_nan = all_(nan, axis=axis, keepdims=keepdims)
    return where(all_nan, -1, found)


def nanargmax(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """`argmax` ignoring NaN; -1 where every element is NaN (JAX's convention)."""
    return _nan_arg(x, axis, keepdims, argmax, -np.inf)


def nanargmin(x: ArrayLike, axis: int | None = None, keepdims: bool = False) -> Any:
    """`argmin` ignoring NaN; -1 where every element is NaN (JAX's convention)."""
    return _nan_arg(x, axis, keepdims, argmin, np.inf)


def nancumsum(x: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """`cumsum` treating NaN as 0."""
    return cumsum(where(isnan(x), 0, x), axis=axis, dtype=dtype)


def nancumprod(x: ArrayLike, axis: int | None = None, dtype: Any = None) -> Any:
    """`cumprod` treating NaN as 1."""
    return cumprod(where(isnan(x), 1, x), axis=axis, dtype=dtype)


# --- creation and index helpers (static sizes: NumPy arrays, JAX's dtypes) ---------------------


def geomspace(start: float, stop: float, num: int = 50, endpoint: bool = True, dtype: Any = None,
              axis: int = 0) -> np.ndarray:
    """Numbers spaced evenly on a log scale (float32 unless `dtype`)."""
    return np.geomspace(start, stop, num, endpoint=endpoint, axis=axis).astype(dtype or np.float32)


def _indices(rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return rows.astype(np.int32), cols.astype(np.int32)


def tril_indices(n: int, k: int = 0, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the lower triangle of an n x m matrix."""
    return _indices(*np.tril_indices(n, k, m))


def triu_indices(n: int, k: int = 0, m: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Row and column indices of the upper triangle of an n x m matrix."""
    return _indices(*np.triu_indices(n, k, m))


def _matrix_shape(arr: ArrayLike, name: str) -> tuple[int, int]:
    s = shape_(arr)
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
    s = shape_(arr)
    if len(s) < 2 or len(set(s)) != 1:
        raise ValueError(f"diag_indices_from: arr must have at least 2 equal dimensions, but got shape {s}")
    return diag_indices(s[0], len(s))


def _index_dtype(*xs: Any) -> Any:
    return np.int32 if all(_dtype_of(x).itemsize <= 4 for x in xs) else np.int64


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
            raise TypeError("ravel_multi_index: mode='raise' needs concrete indices; under jit use mode='clip' "
                            "or mode='wrap'")
        for i, (c, d) in enumerate(zip(coords, dims)):
            c = np.asarray(c)
            if c.size and (c.min() < 0 or c.max() >= d):
                raise ValueError(f"ravel_multi_index: index {i} has values outside [0, {d})")
    elif mode == "clip":
        coords = [clip(c, 0, d - 1) for c, d in zip(coords, dims)]
    else:
        coords = [remainder(c, d) for c, d in zip(coords, dims)]
    order_dims = range(len(dims)) if order == "C" else reversed(range(len(dims)))
    flat = None
    for i in order_dims:
        flat = coords[i] if flat is None else flat * dims[i] + coords[i]
    return astype(flat, _index_dtype(*multi_index))


def unravel_index(indices: ArrayLike, shape: Sequence[int]) -> tuple[Any, ...]:
    """The coordinates of the flat `indices` in an array of `shape` (C order). Out-of-range
    indices are clipped to the array, as JAX does."""
    shape = tuple(operator.index(d) for d in shape)
    total = int(np.prod(shape, dtype=np.int64))
    flat = clip(indices, -total, total - 1)
    flat = where(flat < 0, flat + total, flat)
    out = []
    for d in reversed(shape):
        out.append(remainder(flat, d))
        flat = floor_divide(flat, d)
    return tuple(reversed(out))


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
    n = shape_(arr)[axis]
    gone = np.zeros(n, bool)
    gone[np.arange(n)[obj] if isinstance(obj, slice) else np.asarray(obj, dtype=np.int64)] = True
    return take(arr, np.flatnonzero(~gone).astype(np.int32), axis=axis)


def diagflat(v: ArrayLike, k: int = 0) -> Any:
    """A matrix with the flattened `v` on its k-th diagonal."""
    return diag(ravel(v), k)


def rollaxis(a: ArrayLike, axis: int, start: int = 0) -> Any:
    """NumPy's `rollaxis`: move `axis` to before position `start`."""
    rank = ndim_(a)
    axis = _positive_axis(axis, rank, "rollaxis")
    if not -rank <= start <= rank:
        raise ValueError(f"rollaxis: start {start} is out of bounds for an array of rank {rank}")
    start = start % (rank + 1) if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def vander(x: ArrayLike, N: int | None = None, increasing: bool = False) -> Any:  # noqa: N803 - NumPy's name
    """The Vandermonde matrix of the vector `x`: columns x**(N-1), ..., x, 1 (reversed with
    `increasing`)."""
    if ndim_(x) != 1:
        raise ValueError(f"vander: x must be 1-D, but got shape {shape_(x)}")
    n = shape_(x)[0] if N is None else operator.index(N)
    powers = np.arange(n)
    if not increasing:
        powers = powers[::-1]
    return stack([power(x, int(p)) for p in powers], axis=1)


def trapezoid(y: ArrayLike, x: ArrayLike | None = None, dx: float = 1.0, axis: int = -1) -> Any:
    """The integral of `y` along `axis` by the trapezoidal rule (sample points `x`, or spacing `dx`)."""
    axis = _positive_axis(axis, ndim_(y), "trapezoid")
    n = shape_(y)[axis]
    head = take(y, np.arange(1, n), axis=axis)
    tail = take(y, np.arange(0, n - 1), axis=axis)
    if x is None:
        return sum(head + tail, axis=axis) * (dx / 2)
    if ndim_(x) == 1:
        d = take(x, np.arange(1, n), axis=0) - take(x, np.arange(0, n - 1), axis=0)
        d = _along(d, axis, ndim_(y))
    else:
        d = take(x, np.arange(1, n), axis=axis) - take(x, np.arange(0, n - 1), axis=axis)
    return sum(d * (head + tail), axis=axis) / 2


def _along(v: Any, axis: int, rank: int) -> Any:
    """A vector shaped to broadcast along `axis` of a rank-`rank` array."""
    for _ in range(axis):
        v = expand_dims(v, 0)
    for _ in range(rank - axis - 1):
        v = expand_dims(v, -1)
    return v


def divmod(a: ArrayLike, b: ArrayLike) -> tuple[Any, Any]:  # noqa: A001 - NumPy's name
    """(floor_divide(a, b), remainder(a, b))."""
    return floor_divide(a, b), remainder(a, b)


def copy(x: ArrayLike) -> Any:
    """A copy of `x` (traced values are immutable: the value itself)."""
    return x if isinstance(x, Tracer) else np.array(x, copy=True)


# --- membership, binning, resizing ---------------------------------------------------------------


def isin(element: ArrayLike, test_elements: ArrayLike, assume_unique: bool = False, invert: bool = False) -> Any:
    """Whether each element of `element` is in `test_elements` (the shape of `element`)."""
    found = any_(equal(expand_dims(element, -1), ravel(test_elements)), axis=-1)
    return logical_not(found) if invert else found


def digitize(x: ArrayLike, bins: ArrayLike, right: bool = False) -> Any:
    """The index of the bin of each x in the monotonic `bins` (NumPy's convention at the edges)."""
    if ndim_(bins) != 1:
        raise ValueError(f"digitize: bins must be 1-D, but got shape {shape_(bins)}")
    side = "left" if right else "right"
    if isinstance(bins, Tracer) or isinstance(x, Tracer):
        increasing = bins[-1] >= bins[0]
        forward = searchsorted(bins, x, side=side)
        backward = shape_(bins)[0] - searchsorted(flip(bins, 0), x, side="right" if right else "left")
        return astype(where(increasing, forward, backward), np.int32)
    return np.digitize(np.asarray(x), np.asarray(bins), right=right)


def bincount(x: ArrayLike, weights: ArrayLike | None = None, minlength: int = 0, *, length: int | None = None) -> Any:
    """Counts (or summed `weights`) of each non-negative integer in `x`; under jit the number of
    bins must be static (`length`), as in JAX; negative values count nowhere and values past the
    last bin are dropped."""
    if length is None:
        if isinstance(x, Tracer):
            raise TypeError("bincount: the number of bins of a traced x must be given as length=... (the "
                            "output shape cannot depend on values)")
        length = builtins.max(int(minlength), int(np.max(np.asarray(x), initial=-1)) + 1)
    hits = equal(expand_dims(x, -1), np.arange(length, dtype=np.int32))
    if weights is None:
        return sum(astype(hits, np.int32), axis=tuple(range(ndim_(x))))
    return sum(where(hits, expand_dims(weights, -1), 0), axis=tuple(range(ndim_(x))))


def resize(a: ArrayLike, new_shape: int | Sequence[int]) -> Any:
    """`a` flattened, repeated as often as needed and cut to `new_shape`."""
    new_shape = (operator.index(new_shape),) if not isinstance(new_shape, Sequence) else tuple(new_shape)
    total = int(np.prod(new_shape, dtype=np.int64))
    flat = ravel(a)
    n = shape_(flat)[0]
    if n == 0:
        raise ValueError("resize: a is empty")
    return reshape(take(flat, (np.arange(total) % n).astype(np.int32), axis=0), new_shape)


def ix_(*args: ArrayLike) -> tuple[Any, ...]:
    """Open-mesh index arrays from 1-D sequences (for `x[ix_(rows, cols)]`)."""
    out = []
    for i, a in enumerate(args):
        if ndim_(a) != 1:
            raise ValueError(f"ix_: argument {i} must be 1-D, but got shape {shape_(a)}")
        shape = [1] * len(args)
        shape[i] = shape_(a)[0]
        out.append(reshape(a, tuple(shape)))
    return tuple(out)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """NumPy's `issubdtype`, with ml_dtypes' bfloat16 and float8 types counted as floating (as
    JAX does)."""
    import ml_dtypes
    abstract = isinstance(arg1, type) and issubclass(arg1, np.generic) and arg1.__module__ == "numpy" \
        and arg1 in (np.generic, np.number, np.inexact, np.floating, np.integer, np.signedinteger,
                     np.unsignedinteger, np.complexfloating, np.bool_)
    if not abstract and np.dtype(arg1) in {np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                                                   ml_dtypes.float8_e5m2)}:
        if arg2 in (np.floating, np.inexact, np.number, np.generic):
            return True
        try:
            return np.dtype(arg1) == np.dtype(arg2)
        except TypeError:  # another abstract type: not a supertype of a float
            return False
    return bool(np.issubdtype(arg1, arg2))


s_ = np.s_
index_exp = np.index_exp


# --- vectorize and apply_along_axis (through loom.vmap) -----------------------------------------


def _parse_signature(signature: str) -> tuple[list[tuple[str, ...]], list[tuple[str, ...]]]:
    def dims(part: str) -> list[tuple[str, ...]]:
        groups = re.findall(r"\(([^()]*)\)", part)
        return [tuple(d.strip() for d in g.split(",") if d.strip()) for g in groups]
    if "->" not in signature:
        raise ValueError(f"vectorize: signature {signature!r} has no '->'")
    ins, outs = signature.split("->")
    return dims(ins), dims(outs)


def vectorize(pyfunc: Any, *, excluded: Any = frozenset(), signature: str | None = None) -> Any:
    """JAX's `vectorize`: `pyfunc` applied over the broadcast leading dimensions of its array
    arguments (those beyond the core dimensions of `signature`, e.g. "(n),(n)->()"), by one
    `loom.vmap` over the flattened loop dimensions. Arguments named in `excluded` (positions or
    keywords) pass through unchanged."""
    from loom.frontend.vmap import vmap
    in_core, out_core = _parse_signature(signature) if signature else (None, None)

    def wrapped(*args: Any, **kwargs: Any) -> Any:
        positions = [i for i in range(len(args)) if i not in excluded]
        arrays = [args[i] for i in positions]
        core = in_core if in_core is not None else [()] * len(arrays)
        if len(core) != len(arrays):
            raise TypeError(f"vectorize: signature {signature!r} has {len(core)} inputs, but the call has "
                            f"{len(arrays)} array arguments")
        loop_shapes = []
        for x, c in zip(arrays, core):
            s = tuple(shape_(x))
            if len(s) < len(c):
                raise ValueError(f"vectorize: an argument of shape {s} has fewer dimensions than its core {c}")
            loop_shapes.append(s[:len(s) - len(c)])
        loop = np.broadcast_shapes(*loop_shapes)
        size = int(np.prod(loop, dtype=np.int64))
        flat = []
        for x, c in zip(arrays, core):
            s = tuple(shape_(x))
            core_shape = s[len(s) - len(c):]
            flat.append(reshape(broadcast_to(x, loop + core_shape), (size,) + core_shape))

        def one(*xs: Any) -> Any:
            full = list(args)
            for i, x in zip(positions, xs):
                full[i] = x
            return pyfunc(*full, **kwargs)

        out = vmap(one)(*flat)
        results = list(out) if isinstance(out, tuple) else [out]
        shaped = [reshape(r, loop + tuple(shape_(r))[1:]) for r in results]
        return tuple(shaped) if isinstance(out, tuple) else shaped[0]

    excluded = frozenset(excluded)
    return wrapped


def apply_along_axis(func1d: Any, axis: int, arr: ArrayLike, *args: Any, **kwargs: Any) -> Any:
    """`func1d` applied to every 1-D slice of `arr` along `axis` (by `loom.vmap`); the dimensions
    of its result take the place of `axis`."""
    from loom.frontend.vmap import vmap
    rank = ndim_(arr)
    axis = _positive_axis(axis, rank, "apply_along_axis")
    moved = moveaxis(arr, axis, -1)
    others = tuple(shape_(moved))[:-1]
    rows = reshape(moved, (int(np.prod(others, dtype=np.int64)), shape_(arr)[axis]))
    out = vmap(lambda row: func1d(row, *args, **kwargs))(rows)
    extra = tuple(shape_(out))[1:]
    out = reshape(out, others + extra)
    # the result's own dimensions go where `axis` was
    order = list(range(axis)) + list(range(len(others), len(others) + len(extra))) + list(range(axis, len(others)))
    return transpose(out, tuple(order))


# --- polynomials (coefficients highest power first, as NumPy) -----------------------------------


def _pad_front(p: Any, n: int) -> Any:
    return pad(p, (n - shape_(p)[0], 0))


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The sum of two polynomials."""
    n = builtins.max(shape_(a1)[0], shape_(a2)[0])
    return _pad_front(a1, n) + _pad_front(a2, n)


def polysub(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The difference of two polynomials."""
    n = builtins.max(shape_(a1)[0], shape_(a2)[0])
    return _pad_front(a1, n) - _pad_front(a2, n)


def polymul(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The product of two polynomials (the convolution of their coefficients)."""
    return convolve(a1, a2, mode="full")


def polyder(p: ArrayLike, m: int = 1) -> Any:
    """The m-th derivative of a polynomial (floating point, as JAX's)."""
    if _dtype_of(p).kind in "biu":
        p = astype(p, np.float32)
    for _ in range(operator.index(m)):
        n = shape_(p)[0]
        if n <= 1:
            return zeros_like(p)
        p = take(p, np.arange(n - 1), axis=0) * np.arange(n - 1, 0, -1).astype(_dtype_of(p))
    return p


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Any:
    """The m-th antiderivative of a polynomial, integration constants `k` (zeros by default)."""
    m = operator.index(m)
    ks = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k), (m,))
    p = astype(p, np.float32) if _dtype_of(p).kind in "biu" else p
    for i in range(m):
        n = shape_(p)[0]
        p = concatenate([p / np.arange(n, 0, -1).astype(_dtype_of(p)),
                         np.asarray([ks[i]], dtype=_dtype_of(p))], axis=0)
    return p


# --- windows (float32, as JAX's) ---------------------------------------------------------------


def bartlett(M: int) -> np.ndarray:  # noqa: N803 - NumPy's name
    """The Bartlett (triangular) window of M points."""
    return np.bartlett(M).astype(np.float32)


def blackman(M: int) -> np.ndarray:  # noqa: N803
    """The Blackman window of M points."""
    return np.blackman(M).astype(np.float32)


def hamming(M: int) -> np.ndarray:  # noqa: N803
    """The Hamming window of M points."""
    return np.hamming(M).astype(np.float32)


def hanning(M: int) -> np.ndarray:  # noqa: N803
    """The Hann window of M points."""
    return np.hanning(M).astype(np.float32)


__all__ = [
    "append", "apply_along_axis", "bartlett", "bincount", "blackman", "broadcast_shapes", "concat", "copy",
    "cumulative_prod", "cumulative_sum", "delete", "diag_indices", "diag_indices_from", "diagflat", "digitize",
    "divmod", "geomspace", "hamming", "hanning", "index_exp", "iscomplex", "iscomplexobj", "isin", "isneginf",
    "isposinf", "isreal", "isrealobj", "isscalar", "issubdtype", "ix_", "matrix_transpose", "matvec", "nanargmax",
    "nanargmin", "nancumprod", "nancumsum", "nanprod", "nanstd", "nanvar", "newaxis", "permute_dims", "polyadd",
    "polyder", "polyint", "polymul", "polysub", "ravel_multi_index", "resize", "rollaxis", "s_", "size", "trapezoid",
    "tril_indices", "tril_indices_from", "triu_indices", "triu_indices_from", "unravel_index", "unstack", "vander",
    "vecdot", "vecmat", "vectorize",
]
