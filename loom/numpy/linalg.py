"""`loom.numpy.linalg`: the norms of `jax.numpy.linalg`, built from `loom.numpy` (so they trace,
differentiate and batch like everything else, and run NumPy on plain arrays).

Vector norms: any `ord` (None and 2 the Euclidean norm, inf/-inf, 0 the count of nonzeros, and
any other p). Matrix norms (`axis` a pair): "fro", 1, -1, inf, -inf. The spectral and nuclear
norms (2, -2, "nuc") need a singular value decomposition, which loom does not have: they are a
clear error rather than a wrong answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import loom.numpy as lnp
from loom.frontend.tracing import is_floating, user_line


def _float(x: Any) -> Any:
    dt = lnp.result_type(x)
    return x if is_floating(dt) else lnp.astype(x, lnp.float32)


def vector_norm(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    """The vector `ord`-norm over `axis` (all axes flattened by default)."""
    x = _float(x)
    axes = lnp._axes(axis, lnp.ndim(x))
    a = lnp.abs(x)
    if ord is None or ord == 2:
        return lnp.sqrt(lnp.sum(a * a, axis=axes, keepdims=keepdims))
    if ord == lnp.inf:
        return lnp.max(a, axis=axes, keepdims=keepdims)
    if ord == -lnp.inf:
        return lnp.min(a, axis=axes, keepdims=keepdims)
    if ord == 0:
        return lnp.sum(lnp.astype(lnp.not_equal(x, 0), x.dtype), axis=axes, keepdims=keepdims)
    if ord == 1:
        return lnp.sum(a, axis=axes, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"invalid ord {ord!r} for a vector norm (at {user_line()})")
    p = float(ord)
    return lnp.power(lnp.sum(lnp.power(a, p), axis=axes, keepdims=keepdims), 1.0 / p)


def matrix_norm(x: Any, axis: tuple[int, int] = (-2, -1), keepdims: bool = False, ord: Any = "fro") -> Any:  # noqa: A002
    """The matrix `ord`-norm over the two axes `axis`."""
    x = _float(x)
    nd = lnp.ndim(x)
    (rows,), (cols,) = lnp._axes(axis[0], nd), lnp._axes(axis[1], nd)
    if rows == cols:
        raise ValueError(f"norm: the two axes of a matrix norm must differ, got {axis} (at {user_line()})")
    a = lnp.abs(x)
    if ord is None or ord == "fro":
        out = lnp.sqrt(lnp.sum(a * a, axis=(rows, cols), keepdims=True))
    elif ord in (1, -1):  # largest (smallest) column sum
        sums = lnp.sum(a, axis=rows, keepdims=True)
        out = (lnp.max if ord == 1 else lnp.min)(sums, axis=cols, keepdims=True)
    elif ord in (lnp.inf, -lnp.inf):  # largest (smallest) row sum
        sums = lnp.sum(a, axis=cols, keepdims=True)
        out = (lnp.max if ord == lnp.inf else lnp.min)(sums, axis=rows, keepdims=True)
    elif ord in (2, -2, "nuc"):
        raise NotImplementedError(f"norm: ord={ord!r} needs singular values, which loom does not compute; "
                                  f"use ord='fro', 1, -1, inf or -inf (at {user_line()})")
    else:
        raise ValueError(f"invalid ord {ord!r} for a matrix norm (at {user_line()})")
    return out if keepdims else lnp.squeeze(out, (rows, cols))


def norm(x: Any, ord: Any = None, axis: int | Sequence[int] | None = None, keepdims: bool = False) -> Any:  # noqa: A002
    """`jax.numpy.linalg.norm`: a vector norm over one axis (or over everything when `axis` and
    `ord` are None), a matrix norm over two."""
    nd = lnp.ndim(x)
    if axis is None:
        if ord is None:
            return vector_norm(x, None, keepdims, 2)
        if nd == 1:
            return vector_norm(x, 0, keepdims, ord)
        if nd == 2:
            return matrix_norm(x, (0, 1), keepdims, ord)
        raise ValueError(f"norm: an ord needs axis for an array of rank {nd} (at {user_line()})")
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        return vector_norm(x, axes, keepdims, 2 if ord is None else ord)
    if len(axes) == 2:
        return matrix_norm(x, (axes[0], axes[1]), keepdims, "fro" if ord is None else ord)
    raise ValueError(f"norm: axis must name one or two axes, got {axis} (at {user_line()})")


__all__ = ["matrix_norm", "norm", "vector_norm"]
