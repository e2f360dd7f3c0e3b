"""`loom.scipy.linalg`: triangular and Cholesky solves as `jax.scipy.linalg`, unrolled over the
columns like `loom.numpy.linalg` (differentiable in both modes, batched over leading axes), and
that module's decompositions under their SciPy names."""

from __future__ import annotations

from typing import Any

import numpy as np

import loom.numpy as lnp
from loom.frontend.tracing import user_line
from loom.numpy import _util
from loom.numpy.linalg import det, inv


def solve_triangular(a: Any, b: Any, trans: int | str = 0, lower: bool = False, unit_diagonal: bool = False) -> Any:
    """x with op(a) x = b for the triangular (stacked) matrices `a` (only the named triangle is
    read); op is the identity (`trans` 0 / "N") or the transpose (1 / "T" / 2 / "C").
    `b` is (..., n) or (..., n, m)."""
    n = _util.square_size(a, "solve_triangular")
    if trans in (1, 2, "T", "C"):
        a, lower = lnp.matrix_transpose(a), not lower
    elif trans not in (0, "N"):
        raise ValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', but got {trans!r} "
                         f"(at {user_line()})")
    a, b = _util.as_floating(a), _util.as_floating(b)
    vector = lnp.ndim(b) == lnp.ndim(a) - 1
    if vector:
        b = lnp.expand_dims(b, -1)
    if lnp.shape(b)[-2] != n:
        raise ValueError(f"solve_triangular: b has {lnp.shape(b)[-2]} rows for a {n} x {n} matrix "
                         f"(at {user_line()})")
    rows = np.arange(n)
    x = b
    order = range(n) if lower else reversed(range(n))
    for k in order:
        xk = x[..., k, :] if unit_diagonal else x[..., k, :] / lnp.expand_dims(a[..., k, k], -1)
        later = rows > k if lower else rows < k
        x = lnp.where((rows == k)[:, None], lnp.expand_dims(xk, -2),
                      x - lnp.where(later[:, None], lnp.expand_dims(a[..., :, k], -1) * lnp.expand_dims(xk, -2), 0))
    return x[..., 0] if vector else x


def cholesky(a: Any, lower: bool = False) -> Any:
    """SciPy's convention: the upper factor U (a = U^T U) unless `lower`."""
    return lnp.linalg.cholesky(a, upper=not lower)


def cho_factor(a: Any, lower: bool = False) -> tuple[Any, bool]:
    """(the Cholesky factor, lower) for `cho_solve`."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower: tuple[Any, bool], b: Any) -> Any:
    """x with a x = b, from `cho_factor(a)`."""
    c, lower = c_and_lower
    if lower:
        y = solve_triangular(c, b, lower=True)
        return solve_triangular(c, y, trans=1, lower=True)
    y = solve_triangular(c, b, trans=1, lower=False)
    return solve_triangular(c, y, lower=False)


def qr(a: Any, mode: str = "full") -> Any:
    """SciPy's modes: "full" (Q m x m), "economic" (Q m x k) or "r"; (Q, R) or (R,) for "r"."""
    modes = {"full": "complete", "economic": "reduced", "r": "r"}
    if mode not in modes:
        raise ValueError(f"qr: mode must be 'full', 'economic' or 'r', but got {mode!r} (at {user_line()})")
    out = lnp.linalg.qr(a, mode=modes[mode])
    return (out,) if mode == "r" else tuple(out)


def solve(a: Any, b: Any, lower: bool = False, assume_a: str = "gen") -> Any:
    """x with a x = b. Every `assume_a` ("gen", "sym", "her", "pos") solves by LU with partial
    pivoting: the same x for the matrices it describes, and the derivatives JAX gives (its
    "pos" solve differentiates as a general linear solve too)."""
    if assume_a not in ("gen", "sym", "her", "pos"):
        raise ValueError(f"solve: assume_a must be 'gen', 'sym', 'her' or 'pos', but got {assume_a!r} "
                         f"(at {user_line()})")
    return lnp.linalg.solve(a, b)


__all__ = ["cho_factor", "cho_solve", "cholesky", "det", "inv", "qr", "solve", "solve_triangular"]
