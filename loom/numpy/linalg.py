"""`loom.numpy.linalg`: the norms, products and solvers of `jax.numpy.linalg`, built from
`loom.numpy` (so they trace, differentiate and batch like everything else, and run NumPy on plain
arrays).

`solve`, `inv`, `det` and `slogdet` factor the (stacked) matrices by LU with partial pivoting,
`cholesky` by the column algorithm and `qr` by Householder reflections (LAPACK's conventions,
so the factors equal JAX's), each unrolled over the columns (n steps of whole-matrix ops, each
O(n^2)): no LAPACK call, so the program stays StableHLO that every loom backend runs and that
reverse and forward mode differentiate; meant for the small and medium matrices of ML programs
(the program grows with n). `eigh` runs cyclic Jacobi sweeps in a `fori_loop` and differentiates
by the analytic rule (as JAX). Singular value decompositions are not there yet.

Vector norms: any `ord` (None and 2 the Euclidean norm, inf/-inf, 0 the count of nonzeros, and
any other p). Matrix norms (`axis` a pair): "fro", 1, -1, inf, -inf. The spectral and nuclear
norms (2, -2, "nuc") need a singular value decomposition, which loom does not have: they are a
clear error rather than a wrong answer.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import loom.numpy as lnp
from loom.frontend.tracing import Tracer, is_floating, user_line
from loom.numpy._common import _traced


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


# --- products ------------------------------------------------------------------------------------


def matmul(a: Any, b: Any) -> Any:
    """`a @ b` (the array API's linalg.matmul)."""
    return lnp.matmul(a, b)


def matrix_transpose(x: Any) -> Any:
    """Swap the last two axes."""
    return lnp.matrix_transpose(x)


def outer(a: Any, b: Any) -> Any:
    """The outer product of two vectors."""
    if lnp.ndim(a) != 1 or lnp.ndim(b) != 1:
        raise ValueError(f"outer: a and b must be 1-D, but got shapes {lnp.shape(a)} and {lnp.shape(b)} "
                         f"(at {user_line()})")
    return lnp.outer(a, b)


def tensordot(a: Any, b: Any, axes: Any = 2) -> Any:
    """`loom.numpy.tensordot`."""
    return lnp.tensordot(a, b, axes)


def vecdot(a: Any, b: Any, axis: int = -1) -> Any:
    """The dot products of the vectors along `axis`."""
    return lnp.vecdot(a, b, axis=axis)


def cross(a: Any, b: Any, axis: int = -1) -> Any:
    """The cross product of 3-vectors along `axis`."""
    if lnp.shape(a)[axis] != 3 or lnp.shape(b)[axis] != 3:
        raise ValueError(f"cross: vectors must have 3 components along axis {axis}, but got shapes "
                         f"{lnp.shape(a)} and {lnp.shape(b)} (at {user_line()})")
    return lnp.cross(a, b, axis=axis)


def diagonal(x: Any, offset: int = 0) -> Any:
    """The diagonals of the matrices in the last two axes."""
    return lnp.diagonal(x, offset, -2, -1)


def trace(x: Any, offset: int = 0) -> Any:
    """The traces of the matrices in the last two axes."""
    return lnp.sum(diagonal(x, offset), axis=-1)


def multi_dot(arrays: Sequence[Any]) -> Any:
    """The chained product of matrices (a 1-D first or last array is a row or column vector),
    multiplied in the cheaper of the two orders for three; left to right otherwise."""
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError(f"multi_dot needs at least two arrays, but got {len(arrays)} (at {user_line()})")
    if len(arrays) == 3:
        a, b, c = arrays
        (p, q), (r,) = lnp.shape(lnp.atleast_2d(a)), lnp.shape(lnp.atleast_2d(c))[-1:]
        left = p * q * lnp.shape(lnp.atleast_2d(b))[-1] + p * lnp.shape(lnp.atleast_2d(b))[-1] * r
        right = q * lnp.shape(lnp.atleast_2d(b))[-1] * r + p * q * r
        return lnp.matmul(lnp.matmul(a, b), c) if left <= right else lnp.matmul(a, lnp.matmul(b, c))
    out = arrays[0]
    for x in arrays[1:]:
        out = lnp.matmul(out, x)
    return out


def matrix_power(a: Any, n: int) -> Any:
    """The integer power `n` of the (stacked) square matrices `a` by repeated squaring; a
    negative power inverts first."""
    size = _square(a, "matrix_power")
    n = operator.index(n)
    if n < 0:
        a, n = inv(a), -n
    result = None
    while n:
        if n & 1:
            result = a if result is None else lnp.matmul(result, a)
        n >>= 1
        if n:
            a = lnp.matmul(a, a)
    if result is None:
        eye = lnp.broadcast_to(lnp.eye(size, dtype=lnp.result_type(a)), tuple(lnp.shape(a)))
        return eye if isinstance(a, Tracer) else np.array(eye)
    return result


# --- LU: solve, inv, det, slogdet ------------------------------------------------------------------


def _square(a: Any, name: str) -> int:
    s = tuple(lnp.shape(a))
    if len(s) < 2 or s[-1] != s[-2]:
        raise ValueError(f"{name}: a must be a square matrix or a stack of them, but got shape {s} "
                         f"(at {user_line()})")
    return s[-1]


def _lu(a: Any) -> tuple[Any, Any, Any]:
    """LU with partial pivoting of the stacked square matrices `a` (..., n, n), unrolled over the
    columns: (L below the diagonal, unit diagonal implied, and U on and above it, in one array;
    the row permutation (..., n), P a = L U with P[i, perm[i]] = 1; its sign (...))."""
    n = lnp.shape(a)[-1]
    rows = np.arange(n)
    batch = tuple(lnp.shape(a)[:-2])
    perm = lnp.broadcast_to(np.arange(n, dtype=np.int32), batch + (n,))
    sign = lnp.ones(batch, lnp.result_type(a))
    for k in range(n):
        # the pivot: the largest magnitude in column k on or below the diagonal; swap it up
        p = lnp.argmax(lnp.where(rows < k, -1, lnp.abs(a[..., :, k])), axis=-1)
        at_p = lnp.equal(rows, lnp.expand_dims(p, -1))                                   # (..., n)
        row_k, row_p = a[..., k, :], lnp.sum(lnp.where(lnp.expand_dims(at_p, -1), a, 0), axis=-2)
        a = lnp.where((rows == k)[:, None], lnp.expand_dims(row_p, -2),
                      lnp.where(lnp.expand_dims(at_p, -1), lnp.expand_dims(row_k, -2), a))
        perm_p = lnp.sum(lnp.where(at_p, perm, 0), axis=-1)
        perm = lnp.where(rows == k, lnp.expand_dims(perm_p, -1),
                         lnp.where(at_p, lnp.expand_dims(perm[..., k], -1), perm))
        sign = lnp.where(lnp.equal(p, k), sign, -sign)
        # eliminate below the pivot; the multipliers are L's column k
        below = rows > k
        multipliers = lnp.where(below, a[..., :, k] / lnp.expand_dims(a[..., k, k], -1), 0)
        update = lnp.expand_dims(multipliers, -1) * lnp.expand_dims(a[..., k, :], -2)
        a = a - lnp.where((rows > k)[None, :], update, 0)
        a = lnp.where(below[:, None] & (rows == k)[None, :], lnp.expand_dims(multipliers, -1), a)
    return a, perm, sign


def _lu_solve(lu: Any, perm: Any, b: Any) -> Any:
    """x with L U x = P b, for b (..., n, m)."""
    n = lnp.shape(lu)[-1]
    rows = np.arange(n)
    permutation = lnp.astype(lnp.equal(lnp.expand_dims(perm, -1), rows), lnp.result_type(lu))
    x = lnp.matmul(permutation, b)
    for k in range(n - 1):  # L y = P b (unit lower triangular), column by column
        x = x - lnp.where((rows > k)[:, None],
                          lnp.expand_dims(lu[..., :, k], -1) * lnp.expand_dims(x[..., k, :], -2), 0)
    for k in reversed(range(n)):  # U x = y
        xk = x[..., k, :] / lnp.expand_dims(lu[..., k, k], -1)
        x = lnp.where((rows == k)[:, None], lnp.expand_dims(xk, -2),
                      x - lnp.where((rows < k)[:, None], lnp.expand_dims(lu[..., :, k], -1) * lnp.expand_dims(xk, -2),
                                    0))
    return x


def solve(a: Any, b: Any) -> Any:
    """x with a @ x = b for the (stacked) square matrices `a`: `b` is a vector (n,) when 1-D, a
    (stack of) n x m matrices otherwise (batch dimensions broadcast)."""
    n = _square(a, "solve")
    a, b = _float(a), _float(b)
    vector = lnp.ndim(b) == 1
    if lnp.shape(b)[0 if vector else -2] != n:
        raise ValueError(f"solve: b has {lnp.shape(b)[0 if vector else -2]} rows for a {n} x {n} matrix "
                         f"(shapes {lnp.shape(a)} and {lnp.shape(b)}; at {user_line()})")
    dtype = lnp.result_type(a, b)
    if not _traced(a, b):
        return np.linalg.solve(np.asarray(a, dtype), np.asarray(b, dtype))
    a, b = lnp.astype(a, dtype), lnp.astype(b, dtype)
    lu, perm, _ = _lu(a)
    if vector:
        return _lu_solve(lu, perm, lnp.expand_dims(b, -1))[..., 0]
    batch = np.broadcast_shapes(tuple(lnp.shape(a)[:-2]), tuple(lnp.shape(b)[:-2]))
    lu = lnp.broadcast_to(lu, batch + (n, n))
    perm = lnp.broadcast_to(perm, batch + (n,))
    return _lu_solve(lu, perm, lnp.broadcast_to(b, batch + tuple(lnp.shape(b)[-2:])))


def inv(a: Any) -> Any:
    """The inverses of the (stacked) square matrices `a`."""
    n = _square(a, "inv")
    a = _float(a)
    if not _traced(a):
        return np.linalg.inv(np.asarray(a))
    lu, perm, _ = _lu(a)
    eye = np.eye(n, dtype=lnp.result_type(a))
    return _lu_solve(lu, perm, lnp.broadcast_to(eye, tuple(lnp.shape(a))))


def slogdet(a: Any) -> tuple[Any, Any]:
    """(sign, log |det|) of the (stacked) square matrices `a`."""
    _square(a, "slogdet")
    a = _float(a)
    if not _traced(a):
        sign, logdet = np.linalg.slogdet(np.asarray(a))
        return SlogdetResult(sign, logdet)
    lu, _, sign = _lu(a)
    diag = lnp.diagonal(lu, 0, -2, -1)
    sign = sign * lnp.prod(lnp.sign(diag), axis=-1)
    return SlogdetResult(sign, lnp.sum(lnp.log(lnp.abs(diag)), axis=-1))


def det(a: Any) -> Any:
    """The determinants of the (stacked) square matrices `a`."""
    _square(a, "det")
    a = _float(a)
    if not _traced(a):
        return np.asarray(np.linalg.det(np.asarray(a)), lnp.result_type(a))
    lu, _, sign = _lu(a)
    return sign * lnp.prod(lnp.diagonal(lu, 0, -2, -1), axis=-1)


def cholesky(a: Any, *, upper: bool = False) -> Any:
    """The Cholesky factor L (a = L L^T, lower triangular; U = L^T with `upper`) of the
    (stacked) symmetric positive definite matrices `a`, unrolled over the columns. As JAX, `a` is
    symmetrised first ((a + a^T) / 2, so derivatives reach both triangles), and a matrix that is
    not positive definite gets NaN on and below the diagonal."""
    n = _square(a, "cholesky")
    a = _float(a)
    rows = np.arange(n)
    lower = rows[:, None] >= rows[None, :]
    if not _traced(a):
        a = np.asarray(a)
        sym = (a + np.swapaxes(a, -1, -2)) / 2
        definite = np.all(np.linalg.eigvalsh(sym) > 0, axis=-1)[..., None, None]
        factor = np.linalg.cholesky(np.where(definite, sym, np.eye(n, dtype=sym.dtype)))
        factor = np.where(definite, factor, np.where(lower, np.nan, 0)).astype(sym.dtype)
        return np.swapaxes(factor, -1, -2) if upper else factor
    a = (a + lnp.matrix_transpose(a)) / 2
    factor = lnp.zeros_like(a)
    for k in range(n):
        row = factor[..., k, :]                                            # L[k, j], j < k
        d = lnp.sqrt(a[..., k, k] - lnp.sum(row * row, axis=-1))
        column = (a[..., :, k] - lnp.matmul(factor, lnp.expand_dims(row, -1))[..., 0]) / lnp.expand_dims(d, -1)
        factor = lnp.where((rows == k)[None, :] & (rows == k)[:, None], lnp.expand_dims(lnp.expand_dims(d, -1), -1),
                           lnp.where((rows > k)[:, None] & (rows == k)[None, :], lnp.expand_dims(column, -1), factor))
    definite = lnp.all(lnp.isfinite(lnp.diagonal(factor, 0, -2, -1)), axis=-1)
    failed = np.where(lower, np.nan, 0.0).astype(lnp.result_type(a))
    factor = lnp.where(lnp.expand_dims(lnp.expand_dims(definite, -1), -1), factor, failed)
    return lnp.matrix_transpose(factor) if upper else factor


def qr(a: Any, mode: str = "reduced") -> Any:
    """The QR decomposition of the (stacked) m x n matrices `a` by Householder reflections
    (LAPACK's sign convention: R's diagonal is -sign(a_jj') |column|), unrolled over the min(m, n)
    columns. `mode`: "reduced" (Q m x k, R k x n), "complete" (Q m x m, R m x n) or "r" (R only)."""
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"qr: mode must be 'reduced', 'complete' or 'r', but got {mode!r} (at {user_line()})")
    s = tuple(lnp.shape(a))
    if len(s) < 2:
        raise ValueError(f"qr: a must be a matrix or a stack of them, but got shape {s} (at {user_line()})")
    a = _float(a)
    m, n = s[-2:]
    k = min(m, n)
    if not _traced(a):
        out = np.linalg.qr(np.asarray(a), mode=mode)
        return out if mode == "r" else QRResult(*out)
    rows = np.arange(m)
    dtype = lnp.result_type(a)
    r = a
    q = lnp.broadcast_to(np.eye(m, dtype=dtype), s[:-2] + (m, m))
    for j in range(k):
        x = lnp.where(rows >= j, r[..., :, j], 0)
        norm = lnp.sqrt(lnp.sum(x * x, axis=-1))
        sign = lnp.astype(lnp.where(r[..., j, j] >= 0, 1, -1), dtype)
        v = x + lnp.where(rows == j, lnp.expand_dims(sign * norm, -1), 0)
        length = lnp.sum(v * v, axis=-1)
        # no reflection where nothing is below the diagonal (LAPACK's dlarfg: H = I)
        reflect = lnp.sum(lnp.where(rows > j, x * x, 0), axis=-1) > 0
        tau = lnp.expand_dims(lnp.expand_dims(lnp.where(reflect, 2 / lnp.where(reflect, length, 1), 0), -1), -1)
        column, row = lnp.expand_dims(v, -1), lnp.expand_dims(v, -2)
        r = r - tau * column * lnp.matmul(row, r)
        q = q - tau * lnp.matmul(q, column) * row
    r = lnp.where(rows[:, None] > np.arange(n)[None, :], 0, r)  # exact zeros below the diagonal
    if mode == "r":
        return r[..., :k, :]
    if mode == "reduced":
        return QRResult(q[..., :, :k], r[..., :k, :])
    return QRResult(q, r)


class QRResult(NamedTuple):
    """`qr`'s result, as JAX's: `Q` and `R`."""

    Q: Any
    R: Any


JACOBI_SWEEPS = 10  # cyclic Jacobi converges quadratically: float32 needs 5-8 sweeps for n <= 100


def _jacobi(a: Any) -> tuple[Any, Any]:
    """Eigenvalues (ascending) and eigenvectors (columns) of the (stacked) symmetric matrices
    `a` by cyclic Jacobi rotations: `JACOBI_SWEEPS` sweeps over the n (n - 1) / 2 pairs in one
    `fori_loop`, each rotation applied as a dense n x n product."""
    from loom import lax
    n = lnp.shape(a)[-1]
    pairs = [(p, q) for p in range(n) for q in range(p + 1, n)]
    if not pairs:
        return lnp.diagonal(a, 0, -2, -1), lnp.ones_like(a)
    first = np.array([p for p, _ in pairs], np.int32)
    second = np.array([q for _, q in pairs], np.int32)
    rows = np.arange(n, dtype=np.int32)
    dtype = lnp.result_type(a)
    eye = np.eye(n, dtype=dtype)

    def entry(a: Any, at_i: Any, at_j: Any) -> Any:  # a[..., i, j] for one-hot row masks
        return lnp.sum(lnp.where(at_j, lnp.sum(lnp.where(at_i[:, None], a, 0), axis=-2), 0), axis=-1)

    def rotate(step: Any, state: Any) -> Any:
        a, v = state
        k = step % len(pairs)
        at_p, at_q = lnp.equal(rows, lnp.take(first, k)), lnp.equal(rows, lnp.take(second, k))
        app, aqq, apq = entry(a, at_p, at_p), entry(a, at_q, at_q), entry(a, at_p, at_q)
        zero = lnp.abs(apq) <= np.finfo(dtype).tiny
        theta = (aqq - app) / (2 * lnp.where(zero, 1, apq))
        t = lnp.where(theta == 0, 1, lnp.sign(theta) / (lnp.abs(theta) + lnp.sqrt(theta * theta + 1)))
        t = lnp.where(zero, 0, t)
        c = lnp.expand_dims(lnp.expand_dims(1 / lnp.sqrt(t * t + 1), -1), -1)
        s = c * lnp.expand_dims(lnp.expand_dims(t, -1), -1)
        pp, qq = at_p[:, None] & at_p[None, :], at_q[:, None] & at_q[None, :]
        pq, qp = at_p[:, None] & at_q[None, :], at_q[:, None] & at_p[None, :]
        j = lnp.where(pp | qq, c, lnp.where(pq, s, lnp.where(qp, -s, eye)))
        return lnp.matmul(lnp.matmul(lnp.matrix_transpose(j), a), j), lnp.matmul(v, j)

    a, v = lax.fori_loop(0, JACOBI_SWEEPS * len(pairs), rotate, (a, lnp.broadcast_to(eye, lnp.shape(a)) * 1))
    w = lnp.diagonal(a, 0, -2, -1)
    order = lnp.argsort(w, axis=-1)
    columns = lnp.broadcast_to(lnp.expand_dims(order, -2), lnp.shape(v))
    return lnp.take_along_axis(w, order, axis=-1), lnp.take_along_axis(v, columns, axis=-1)


def _eigh_jvp(primals: Any, tangents: Any) -> Any:
    (a,), (da,) = primals, tangents
    w, v = _eigh_symmetric(a)
    vt_da_v = lnp.matmul(lnp.matrix_transpose(v), lnp.matmul(da, v))
    n = lnp.shape(a)[-1]
    eye = np.eye(n, dtype=bool)
    gaps = lnp.expand_dims(w, -2) - lnp.expand_dims(w, -1)  # w_j - w_i
    inverse_gaps = lnp.where(eye, 0, 1 / lnp.where(eye, 1, gaps))
    return (w, v), (lnp.diagonal(vt_da_v, 0, -2, -1), lnp.matmul(v, inverse_gaps * vt_da_v))


_EIGH: list = []


def _eigh_symmetric(a: Any) -> Any:
    """`_jacobi` with `_eigh_jvp` as its derivative (built on first use: loom.numpy is imported
    before loom's custom derivatives)."""
    if not _EIGH:
        from loom.frontend.custom_derivatives import custom_jvp
        fn = custom_jvp(_jacobi)
        fn.defjvp(_eigh_jvp)
        _EIGH.append(fn)
    return _EIGH[0](a)


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> Any:  # noqa: N803 - JAX's name
    """Eigenvalues (ascending) and eigenvectors (the columns) of the (stacked) symmetric matrices
    `a`, by cyclic Jacobi rotations (for the small matrices of ML programs: O(n^5) work; use
    loom outside jit, which runs LAPACK, for large ones). Derivatives by the analytic rule (as
    JAX's: defined for distinct eigenvalues). `symmetrize_input` uses (a + a^T) / 2; otherwise
    the `UPLO` ("L", the default, or "U") triangle is read."""
    n = _square(a, "eigh")
    a = _float(a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', but got {UPLO!r} (at {user_line()})")
    if not _traced(a):
        a = np.asarray(a)
        if symmetrize_input:
            a = (a + np.swapaxes(a, -1, -2)) / 2
        return EighResult(*np.linalg.eigh(a, UPLO=UPLO or "L"))
    if symmetrize_input:
        a = (a + lnp.matrix_transpose(a)) / 2
    else:
        lower = np.arange(n)[:, None] >= np.arange(n)[None, :]
        tri = lnp.where(lower if UPLO != "U" else lower.T, a, 0)
        a = tri + lnp.matrix_transpose(lnp.where(lower if UPLO != "U" else lower.T, tri, 0)) - \
            lnp.where(np.eye(n, dtype=bool), a, 0)
    return EighResult(*_eigh_symmetric(a))


def eigvalsh(a: Any, UPLO: str | None = "L") -> Any:  # noqa: N803 - JAX's name
    """The eigenvalues (ascending) of the (stacked) symmetric matrices `a`."""
    return eigh(a, UPLO=UPLO).eigenvalues


class EighResult(NamedTuple):
    """`eigh`'s result, as JAX's: `eigenvalues` and `eigenvectors`."""

    eigenvalues: Any
    eigenvectors: Any


class SlogdetResult(NamedTuple):
    """`slogdet`'s result, as JAX's: `sign` and `logabsdet`."""

    sign: Any
    logabsdet: Any


__all__ = ["EighResult", "QRResult", "SlogdetResult", "cholesky", "cross", "det", "diagonal", "eigh", "eigvalsh",
           "inv", "matmul", "matrix_norm", "matrix_power", "matrix_transpose", "multi_dot", "norm", "outer", "qr",
           "slogdet", "solve", "tensordot", "trace", "vecdot", "vector_norm"]
