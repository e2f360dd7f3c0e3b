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
from typing import Any

import ml_dtypes
import numpy as np

from loom.frontend.tracing import Tracer, TracerError, user_line
from loom.numpy import (
    ArrayLike,
    _floating,
    _trace_of,
    astype,
    isnan,
    logical_not,
    reshape,
    sort,
    stack,
    sum,
    take_along_axis,
    where,
)

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


def _traced(*xs: Any) -> builtins.bool:
    return _trace_of(*xs) is not None


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
    moved = transpose_(x, kept + list(axes))
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


def transpose_(x: Any, perm: list[int]) -> Any:
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
    if isinstance(q, Tracer):
        raise TracerError(f"nanquantile: `q` must be a static value inside loom.jit, not a traced one "
                          f"(at {user_line()})")
    if method != "linear":
        raise NotImplementedError(f"nanquantile: method {method!r} is not supported inside loom.jit; only 'linear' "
                                  f"(at {user_line()})")
    qs = np.asarray(q, dtype=np.float64)
    if ((qs < 0) | (qs > 1)).any():
        raise ValueError(f"nanquantile: `q` must be in [0, 1], got {q} (at {user_line()})")
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


# `bool` is left out of the star-export: loom/numpy/__init__.py tests `type(x) in (bool, ...)` at call
# time, and exporting NumPy's bool there would rebind that global
__all__ = [
    "can_cast", "complexfloating", "double", "dtype", "float_", "floating", "generic", "inexact", "int_",
    "integer", "isdtype", "nanmedian", "nanpercentile", "nanquantile", "number", "signedinteger", "single", "uint",
    "uint16", "uint64", "unsignedinteger",
]
