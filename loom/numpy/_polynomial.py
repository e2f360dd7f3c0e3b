"""Polynomials, coefficients highest power first as in NumPy: polyval, polyadd, polysub,
polymul, polyder, polyint.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

import numpy as np

from loom.numpy import _indexing as indexing
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import ArrayLike, array_dtype, is_traced, lift_all


def _pad_front(p: Any, n: int) -> Any:
    return lax_numpy.pad(p, (n - lax_numpy.shape(p)[0], 0))


def polyadd(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The sum of two polynomials."""
    n = builtins.max(lax_numpy.shape(a1)[0], lax_numpy.shape(a2)[0])
    return _pad_front(a1, n) + _pad_front(a2, n)


def polysub(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The difference of two polynomials."""
    n = builtins.max(lax_numpy.shape(a1)[0], lax_numpy.shape(a2)[0])
    return _pad_front(a1, n) - _pad_front(a2, n)


def polymul(a1: ArrayLike, a2: ArrayLike) -> Any:
    """The product of two polynomials (the convolution of their coefficients)."""
    return lax_numpy.convolve(a1, a2, mode="full")


def polyder(p: ArrayLike, m: int = 1) -> Any:
    """The m-th derivative of a polynomial (floating point, as JAX's)."""
    if array_dtype(p).kind in "biu":
        p = lax_numpy.astype(p, np.float32)
    for _ in range(operator.index(m)):
        n = lax_numpy.shape(p)[0]
        if n <= 1:
            return lax_numpy.zeros_like(p)
        p = indexing.take(p, np.arange(n - 1), axis=0) * np.arange(n - 1, 0, -1).astype(array_dtype(p))
    return p


def polyint(p: ArrayLike, m: int = 1, k: ArrayLike | None = None) -> Any:
    """The m-th antiderivative of a polynomial, integration constants `k` (zeros by default)."""
    m = operator.index(m)
    ks = np.zeros(m) if k is None else np.broadcast_to(np.asarray(k), (m,))
    p = lax_numpy.astype(p, np.float32) if array_dtype(p).kind in "biu" else p
    for i in range(m):
        n = lax_numpy.shape(p)[0]
        p = lax_numpy.concatenate([p / np.arange(n, 0, -1).astype(array_dtype(p)),
                         np.asarray([ks[i]], dtype=array_dtype(p))], axis=0)
    return p


def polyval(p: ArrayLike, x: ArrayLike) -> Any:
    """The polynomial with coefficients `p` (highest degree first) at `x`, by Horner's rule."""
    if not is_traced(p, x):
        return np.polyval(p, x)
    p, x = lift_all([p, x])
    out = ufuncs.multiply(x, 0) if p.shape[0] == 0 else p[0]
    for i in range(1, p.shape[0]):
        out = ufuncs.add(ufuncs.multiply(out, x), p[i])
    return out


__all__ = ["polyadd", "polyder", "polyint", "polymul", "polysub", "polyval"]
