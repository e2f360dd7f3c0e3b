"""`loom.numpy.linalg`: the norms, products and solvers of `jax.numpy.linalg`, built from
`loom.numpy` (so they trace, differentiate and batch like everything else, and run NumPy on plain
arrays).

`solve`, `inv`, `det` and `slogdet` factor the (stacked) matrices by LU with partial pivoting,
`cholesky` by the column algorithm and `qr` by Householder reflections (LAPACK's conventions,
so the factors equal JAX's), each unrolled over the columns (n steps of whole-matrix ops, each
O(n^2)): no LAPACK call, so the program stays StableHLO that every loom backend runs and that
reverse and forward mode differentiate; meant for the small and medium matrices of ML programs
(the program grows with n). `eigh` runs Jacobi sweeps (parallel ordering) in a `fori_loop` and differentiates
by the analytic rule (as JAX). `svd` runs one-sided (Hestenes) Jacobi sweeps in a `fori_loop`
(the singular values to high relative accuracy, unlike an eigendecomposition of a^T a), completes
the left factor by `qr`, and differentiates by JAX's rule; `svdvals`, `lstsq`, `pinv`,
`matrix_rank`, `cond` and the spectral and nuclear norms are built on it.

Vector norms: any `ord` (None and 2 the Euclidean norm, inf/-inf, 0 the count of nonzeros, and
any other p). Matrix norms (`axis` a pair): "fro", 1, -1, inf, -inf, and by the singular values
2, -2 and "nuc".
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

import loom.numpy as lnp
from loom import lax
from loom.frontend import custom_derivatives
from loom.frontend.tracing import Tracer, is_floating, user_line  # noqa: F401 - is_floating: part of the namespace
from loom.numpy import _util


def vector_norm(x: Any, axis: int | Sequence[int] | None = None, keepdims: bool = False, ord: Any = 2) -> Any:  # noqa: A002
    """The vector `ord`-norm over `axis` (all axes flattened by default)."""
    x = _util.as_floating(x)
    axes = _util.canonical_axes(axis, lnp.ndim(x))
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
    x = _util.as_floating(x)
    nd = lnp.ndim(x)
    (rows,), (cols,) = _util.canonical_axes(axis[0], nd), _util.canonical_axes(axis[1], nd)
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
    elif ord in (2, -2, "nuc"):  # the largest, smallest and summed singular values (as JAX)
        s = svdvals(lnp.moveaxis(x, (rows, cols), (-2, -1)))
        y = lnp.max(s, axis=-1) if ord == 2 else lnp.min(s, axis=-1) if ord == -2 else lnp.sum(s, axis=-1)
        return lnp.expand_dims(y, (rows, cols)) if keepdims else y
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
    size = _util.square_size(a, "matrix_power")
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
    n = _util.square_size(a, "solve")
    a, b = _util.as_floating(a), _util.as_floating(b)
    vector = lnp.ndim(b) == 1
    if lnp.shape(b)[0 if vector else -2] != n:
        raise ValueError(f"solve: b has {lnp.shape(b)[0 if vector else -2]} rows for a {n} x {n} matrix "
                         f"(shapes {lnp.shape(a)} and {lnp.shape(b)}; at {user_line()})")
    dtype = lnp.result_type(a, b)
    if not _util.is_traced(a, b):
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
    _util.square_size(a, "inv")
    a = _util.as_floating(a)
    if not _util.is_traced(a):
        return np.linalg.inv(np.asarray(a))
    return _lu_inverse(a)


def _lu_inverse(a: Any) -> Any:
    """`inv` by `_lu`, also on plain arrays (where a singular matrix gets infinities and NaNs, as
    under jit and in JAX, rather than NumPy's error)."""
    lu, perm, _ = _lu(a)
    eye = np.eye(lnp.shape(a)[-1], dtype=lnp.result_type(a))
    return _lu_solve(lu, perm, lnp.broadcast_to(eye, tuple(lnp.shape(a))))


def slogdet(a: Any) -> tuple[Any, Any]:
    """(sign, log |det|) of the (stacked) square matrices `a`."""
    _util.square_size(a, "slogdet")
    a = _util.as_floating(a)
    if not _util.is_traced(a):
        sign, logdet = np.linalg.slogdet(np.asarray(a))
        return SlogdetResult(sign, logdet)
    lu, _, sign = _lu(a)
    diag = lnp.diagonal(lu, 0, -2, -1)
    sign = sign * lnp.prod(lnp.sign(diag), axis=-1)
    return SlogdetResult(sign, lnp.sum(lnp.log(lnp.abs(diag)), axis=-1))


def det(a: Any) -> Any:
    """The determinants of the (stacked) square matrices `a`."""
    _util.square_size(a, "det")
    a = _util.as_floating(a)
    if not _util.is_traced(a):
        return np.asarray(np.linalg.det(np.asarray(a)), lnp.result_type(a))
    lu, _, sign = _lu(a)
    return sign * lnp.prod(lnp.diagonal(lu, 0, -2, -1), axis=-1)


def cholesky(a: Any, *, upper: bool = False) -> Any:
    """The Cholesky factor L (a = L L^T, lower triangular; U = L^T with `upper`) of the
    (stacked) symmetric positive definite matrices `a`, unrolled over the columns. As JAX, `a` is
    symmetrised first ((a + a^T) / 2, so derivatives reach both triangles), and a matrix that is
    not positive definite gets NaN on and below the diagonal."""
    n = _util.square_size(a, "cholesky")
    a = _util.as_floating(a)
    rows = np.arange(n)
    lower = rows[:, None] >= rows[None, :]
    if not _util.is_traced(a):
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
    a = _util.as_floating(a)
    m, n = s[-2:]
    k = min(m, n)
    if not _util.is_traced(a):
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


# Jacobi (cyclic or parallel ordering) converges quadratically once the off-diagonal part is small: 5-10 sweeps for the
# matrices of ML programs. The loops stop when a sweep leaves the off-diagonal part below the
# dtype's rounding (relative to the whole), and after JACOBI_MAX_SWEEPS sweeps in any case.
JACOBI_MAX_SWEEPS = 30


def _converged_sweeps(sweep: Any, state: Any, off_ratio: Any) -> Any:
    """Run the `sweep` (state -> state) until `off_ratio(state)` (the largest off-diagonal
    magnitude relative to the whole, over the stack) is at the dtype's rounding, at most
    JACOBI_MAX_SWEEPS times."""
    dtype = lnp.result_type(state[0])
    tolerance = float(np.finfo(dtype).eps) * lnp.shape(state[0])[-1]

    def not_done(carry: Any) -> Any:
        count, state = carry
        return (count < JACOBI_MAX_SWEEPS) & (off_ratio(state) > tolerance)

    return lax.while_loop(not_done, lambda carry: (carry[0] + 1, sweep(carry[1])), (0, state))[1]


def _round_robin(n: int) -> np.ndarray:
    """The rounds of a round-robin tournament of n' = n rounded up to even players (the circle
    method): every pair of indices meets once in n' - 1 rounds, and the pairs of a round are
    disjoint, so their rotations commute and are applied at once (Brent & Luk's parallel
    ordering). An int32 array (n' - 1, 4, n): for a round and index i, [0] the first index p of
    i's pair, [1] its second q, [2] i's partner, [3] -1 when i is p, 1 when it is q, 0 when i
    rests (for odd n, the index paired with the extra player n; its p, q and partner are i)."""
    players = n + n % 2
    table = np.zeros((players - 1, 4, n), np.int32)
    table[:, :3] = np.arange(n, dtype=np.int32)
    rest = list(range(1, players))
    for step in range(players - 1):
        ring = [0] + rest
        for p, q in zip(ring[:players // 2], ring[::-1]):
            if max(p, q) < n:
                table[step, :, [p, q]] = [[p, q, q, -1], [p, q, p, 1]]
        rest = rest[-1:] + rest[:-1]
    return table


def _rotation(app: Any, aqq: Any, apq: Any, dtype: Any) -> tuple[Any, Any]:
    """(c, s) of the Jacobi rotation that zeroes apq in the symmetric 2 x 2 block [[app, apq],
    [apq, aqq]] (Golub & Van Loan 8.5.2; c = 1, s = 0 when apq is already zero)."""
    zero = lnp.abs(apq) <= np.finfo(dtype).tiny
    theta = (aqq - app) / (2 * lnp.where(zero, 1, apq))
    t = lnp.where(theta == 0, 1, lnp.sign(theta) / (lnp.abs(theta) + lnp.sqrt(theta * theta + 1)))
    t = lnp.where(zero, 0, t)
    c = 1 / lnp.sqrt(t * t + 1)
    return c, c * t


def _rotations(sign: Any, c: Any, s: Any) -> tuple[Any, Any]:
    """Per index, the coefficients of the round's rotations J (each turns columns p and q into
    c x_p - s x_q and s x_p + c x_q): x J = x * c' + x[..., partner] * s' by column (and J^T x
    the same by row), O(n^2) work a round where a dense J costs n x n products."""
    return lnp.where(sign == 0, 1, c), lnp.asarray(sign, dtype=lnp.result_type(s)) * s


def _rotate_columns(x: Any, partner: Any, c: Any, s: Any) -> Any:
    return x * lnp.expand_dims(c, -2) + lnp.take(x, partner, axis=-1) * lnp.expand_dims(s, -2)


def _jacobi(a: Any) -> tuple[Any, Any]:
    """Eigenvalues (ascending) and eigenvectors (columns) of the (stacked) symmetric matrices
    `a` by Jacobi rotations in the parallel ordering (`_round_robin`): sweeps of n - 1 rounds,
    each rotating n / 2 disjoint pairs at once (a <- J^T a J), until the off-diagonal part is
    at the dtype's rounding (`_converged_sweeps`)."""
    n = lnp.shape(a)[-1]
    if n < 2:
        return lnp.diagonal(a, 0, -2, -1), lnp.ones_like(a)
    table = _round_robin(n)
    dtype = lnp.result_type(a)
    eye = np.eye(n, dtype=dtype)

    def rotate(k: Any, state: Any) -> Any:
        a, v = state
        rows = lnp.take(table, k, axis=0)
        p, q, partner, sign = (rows[i] for i in range(4))
        d = lnp.diagonal(a, 0, -2, -1)
        apq = lnp.take(lnp.reshape(a, tuple(lnp.shape(a)[:-2]) + (n * n,)), p * n + q, axis=-1)
        c, s = _rotations(sign, *_rotation(lnp.take(d, p, axis=-1), lnp.take(d, q, axis=-1), apq, dtype))
        a = _rotate_columns(a, partner, c, s)
        a = lnp.expand_dims(c, -1) * a + lnp.expand_dims(s, -1) * lnp.take(a, partner, axis=-2)  # J^T (a J)
        return a, _rotate_columns(v, partner, c, s)

    def off_ratio(state: Any) -> Any:
        a = state[0]
        total = lnp.sum(a * a, axis=(-2, -1))
        # summed directly: total minus the diagonal's squares cancels to 0 long before convergence
        off = lnp.sum(lnp.where(np.eye(n, dtype=bool), 0, a * a), axis=(-2, -1))
        return lnp.max(lnp.sqrt(off / lnp.where(total > 0, total, 1)))

    sweep = lambda state: lax.fori_loop(0, len(table), rotate, state)  # noqa: E731
    a, v = _converged_sweeps(sweep, (a, lnp.broadcast_to(eye, lnp.shape(a)) * 1), off_ratio)
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
        fn = custom_derivatives.custom_jvp(_jacobi)
        fn.defjvp(_eigh_jvp)
        _EIGH.append(fn)
    return _EIGH[0](a)


def eigh(a: Any, UPLO: str | None = None, symmetrize_input: bool = True) -> Any:  # noqa: N803 - JAX's name
    """Eigenvalues (ascending) and eigenvectors (the columns) of the (stacked) symmetric matrices
    `a`, by Jacobi rotations (for the small matrices of ML programs: O(n^2) per round, n - 1 rounds a sweep; use
    loom outside jit, which runs LAPACK, for large ones). Derivatives by the analytic rule (as
    JAX's: defined for distinct eigenvalues). `symmetrize_input` uses (a + a^T) / 2; otherwise
    the `UPLO` ("L", the default, or "U") triangle is read."""
    n = _util.square_size(a, "eigh")
    a = _util.as_floating(a)
    if UPLO not in (None, "L", "U"):
        raise ValueError(f"eigh: UPLO must be 'L' or 'U', but got {UPLO!r} (at {user_line()})")
    if not _util.is_traced(a):
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


# --- singular values: svd, svdvals, lstsq, pinv, matrix_rank, cond --------------------------------


def _matrix(a: Any, name: str) -> tuple[int, int]:
    s = tuple(lnp.shape(a))
    if len(s) < 2:
        raise ValueError(f"{name}: a must be a matrix or a stack of them, but got shape {s} (at {user_line()})")
    return s[-2], s[-1]


def _hestenes(g: Any) -> tuple[Any, Any]:
    """One-sided (Hestenes) Jacobi on the (stacked) r x k matrices `g`, r >= k: (w, v) with
    w = g v, v orthogonal and w's columns orthogonal (their norms are the singular values).
    Sweeps of k - 1 rounds of k / 2 disjoint column pairs (`_round_robin`) until every pair of
    columns is orthogonal to the dtype's rounding (`_converged_sweeps`); each rotation is
    the Jacobi rotation of the 2 x 2 block of g^T g, computed from the columns so that g^T g is
    never formed in the rotations (which would square the condition number)."""
    k = lnp.shape(g)[-1]
    dtype = lnp.result_type(g)
    eye = np.eye(k, dtype=dtype)
    v0 = lnp.broadcast_to(eye, tuple(lnp.shape(g)[:-2]) + (k, k)) * 1
    if k < 2:
        return g, v0
    table = _round_robin(k)

    def rotate(i: Any, state: Any) -> Any:
        w, v = state
        rows = lnp.take(table, i, axis=0)
        p, q, partner, sign = (rows[j] for j in range(4))
        wp, wq = lnp.take(w, p, axis=-1), lnp.take(w, q, axis=-1)  # each index's pair's columns
        c, s = _rotations(sign, *_rotation(lnp.sum(wp * wp, axis=-2), lnp.sum(wq * wq, axis=-2),
                                           lnp.sum(wp * wq, axis=-2), dtype))
        return _rotate_columns(w, partner, c, s), _rotate_columns(v, partner, c, s)

    def off_ratio(state: Any) -> Any:  # the largest |cos| of the angle between two columns
        w = state[0]
        gram = lnp.matmul(lnp.matrix_transpose(w), w)
        norms = lnp.sqrt(lnp.diagonal(gram, 0, -2, -1))
        scale = lnp.expand_dims(norms, -1) * lnp.expand_dims(norms, -2)
        cosines = lnp.where(np.eye(k, dtype=bool) | (scale == 0), 0, lnp.abs(gram) / lnp.where(scale == 0, 1, scale))
        return lnp.max(cosines)

    sweep = lambda state: lax.fori_loop(0, len(table), rotate, state)  # noqa: E731
    return _converged_sweeps(sweep, (g, v0), off_ratio)


def _svd_factors(a: Any, full_matrices: bool, compute_uv: bool) -> Any:
    """(u, s, vh) (or s alone) of the (stacked) m x n matrices `a` by `_hestenes` on the
    narrower of a and a^T, the singular values descending. The other factor is Q of the QR
    decomposition of the rotated columns (signs matched to them): orthonormal even where a
    singular value is zero, and complete (m x m) for `full_matrices` at no extra cost."""
    m, n = lnp.shape(a)[-2:]
    wide = m < n
    g = lnp.matrix_transpose(a) if wide else a
    # scaled to a largest magnitude of 1: the squared column norms neither overflow nor underflow
    scale = lnp.max(lnp.abs(g), axis=(-2, -1), keepdims=True)
    scale = lnp.where(scale > 0, scale, 1)
    w, v = _hestenes(g / scale)
    s = lnp.sqrt(lnp.sum(w * w, axis=-2))
    order = lnp.argsort(-s, axis=-1)
    s = lnp.take_along_axis(s, order, axis=-1) * scale[..., 0]
    if not compute_uv:
        return s
    by_column = lnp.broadcast_to(lnp.expand_dims(order, -2), tuple(lnp.shape(v)))
    v = lnp.take_along_axis(v, by_column, axis=-1)
    w = lnp.take_along_axis(w, lnp.broadcast_to(lnp.expand_dims(order, -2), tuple(lnp.shape(w))), axis=-1)
    q, r = qr(w, mode="complete" if full_matrices else "reduced")
    k = min(m, n)
    sign = lnp.sign(lnp.diagonal(r[..., :k, :], 0, -2, -1))
    sign = lnp.where(sign == 0, 1, sign)
    if full_matrices:
        sign = lnp.concatenate([sign, lnp.ones(tuple(lnp.shape(sign)[:-1]) + (max(m, n) - k,), sign.dtype)], -1)
    q = q * lnp.expand_dims(sign, -2)
    return (v, s, lnp.matrix_transpose(q)) if wide else (q, s, lnp.matrix_transpose(v))


def _svd_jvp(full_matrices: bool, compute_uv: bool, primals: Any, tangents: Any) -> Any:
    """JAX's SVD derivative (defined for distinct nonzero singular values; real matrices, where
    its term in the antisymmetric part of u^T da v vanishes). With `full_matrices` the complement
    of the thin factor turns by the least rotation that keeps the factor orthogonal (JAX has no
    rule there)."""
    (a,), (da,) = primals, tangents
    m, n = lnp.shape(a)[-2:]
    k = min(m, n)
    full = _svd_factors(a, full_matrices and compute_uv, True)
    u, s, vh = full[0][..., :, :k], full[1], full[2][..., :k, :]
    ut, v = lnp.matrix_transpose(u), lnp.matrix_transpose(vh)
    ds_matrix = lnp.matmul(ut, lnp.matmul(da, v))
    ds = lnp.diagonal(ds_matrix, 0, -2, -1)
    if not compute_uv:
        return s, ds
    s_row = lnp.expand_dims(s, -2)
    s_column = lnp.matrix_transpose(s_row)
    eye = np.eye(k, dtype=lnp.result_type(a))
    f = 1 / ((s_row + s_column) * (s_row - s_column) + eye) - eye
    dss, sds = s_row * ds_matrix, s_column * ds_matrix
    du = lnp.matmul(u, f * (dss + lnp.matrix_transpose(dss)))
    dv = lnp.matmul(v, f * (sds + lnp.matrix_transpose(sds)))
    if m > n:
        dav = lnp.matmul(da, v)
        du = du + (dav - lnp.matmul(u, lnp.matmul(ut, dav))) / s_row
    if n > m:
        dau = lnp.matmul(lnp.matrix_transpose(da), u)
        dv = dv + (dau - lnp.matmul(v, lnp.matmul(vh, dau))) / s_row
    if full_matrices and m > n:
        rest = full[0][..., :, k:]
        du = lnp.concatenate([du, -lnp.matmul(u, lnp.matmul(lnp.matrix_transpose(du), rest))], -1)
    if full_matrices and n > m:
        rest = lnp.matrix_transpose(full[2][..., k:, :])
        dv = lnp.concatenate([dv, -lnp.matmul(v, lnp.matmul(lnp.matrix_transpose(dv), rest))], -1)
    return full, (du, ds, lnp.matrix_transpose(dv))


_SVD: list = []


def _svd_differentiable(a: Any, full_matrices: bool, compute_uv: bool) -> Any:
    """`_svd_factors` with `_svd_jvp` as its derivative (built on first use, as `_EIGH`)."""
    if not _SVD:
        fn = custom_derivatives.custom_jvp(_svd_factors, nondiff_argnums=(1, 2))
        fn.defjvp(_svd_jvp)
        _SVD.append(fn)
    return _SVD[0](a, full_matrices, compute_uv)


def svd(a: Any, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None) -> Any:
    """The singular value decomposition a = u diag(s) vh of the (stacked) m x n matrices `a`:
    `SVDResult(U, S, Vh)` (u m x m and vh n x n with `full_matrices`, else m x k and k x n, k =
    min(m, n)), or the singular values alone (descending) without `compute_uv`. By one-sided
    Jacobi sweeps (O(k^3 max(m, n)) work, for the small and medium matrices of ML programs; loom
    outside jit runs LAPACK). `hermitian` takes them from `eigh` of (a + a^T) / 2, as JAX.
    Derivatives by JAX's rule (defined for distinct singular values). `subset_by_index` is, as on
    JAX's CPU backend, not implemented."""
    m, n = _matrix(a, "svd")
    if subset_by_index is not None:
        raise NotImplementedError(f"svd: subset_by_index is not implemented (nor on JAX's CPU backend; "
                                  f"at {user_line()})")
    if hermitian and m != n:
        raise ValueError(f"svd: a hermitian matrix must be square, but got shape {tuple(lnp.shape(a))} "
                         f"(at {user_line()})")
    a = _util.as_floating(a)
    if hermitian:  # the eigenvalues' magnitudes, descending as JAX sorts them (ascending, then reversed)
        w, v = eigh(a)
        s = lnp.abs(w)
        order = lnp.flip(lnp.argsort(s, axis=-1), -1)
        s = lnp.take_along_axis(s, order, axis=-1)
        if not compute_uv:
            return s
        u = lnp.take_along_axis(v, lnp.broadcast_to(lnp.expand_dims(order, -2), tuple(lnp.shape(v))), axis=-1)
        sign = lnp.take_along_axis(lnp.sign(w), order, axis=-1)
        return SVDResult(u, s, lnp.matrix_transpose(u * lnp.expand_dims(sign, -2)))
    if not _util.is_traced(a):
        out = np.linalg.svd(np.asarray(a), full_matrices=full_matrices, compute_uv=compute_uv)
    else:
        out = _svd_differentiable(a, full_matrices, compute_uv)
    return SVDResult(*out) if compute_uv else out


def svdvals(x: Any, /) -> Any:
    """The singular values (descending) of the (stacked) matrices `x`."""
    _matrix(x, "svdvals")
    return svd(x, compute_uv=False)


def lstsq(a: Any, b: Any, rcond: float | None = None, *, numpy_resid: bool = False) -> tuple[Any, Any, Any, Any]:
    """The least-squares solution x of a @ x = b for one m x n matrix `a` and `b` (m,) or (m, p),
    by the SVD as JAX: (x, the squared residual norms per column of b, the rank (the singular
    values above `rcond` (default eps max(m, n)) times the largest), the singular values). The
    residuals are always there, as JAX's; `numpy_resid` empties them where NumPy does (rank < n
    or m <= n), which needs concrete values."""
    a, b = _util.as_floating(a), _util.as_floating(b)
    if lnp.ndim(a) != 2:
        raise TypeError(f"lstsq: a must be a matrix (2-D), but got shape {tuple(lnp.shape(a))} (at {user_line()})")
    if lnp.ndim(b) not in (1, 2):
        raise TypeError(f"lstsq: b must be 1-D or 2-D, but got shape {tuple(lnp.shape(b))} (at {user_line()})")
    m, n = lnp.shape(a)
    if lnp.shape(b)[0] != m:
        raise ValueError(f"lstsq: b has {lnp.shape(b)[0]} rows for a {m} x {n} matrix (at {user_line()})")
    dtype = lnp.result_type(a, b)
    a, b = lnp.astype(a, dtype), lnp.astype(b, dtype)
    vector = lnp.ndim(b) == 1
    if vector:
        b = lnp.expand_dims(b, -1)
    eps = float(np.finfo(dtype).eps)
    if rcond is None:
        rcond = eps * max(m, n)
    else:
        rcond = lnp.where(lnp.less(rcond, 0), eps, rcond)
    u, s, vt = svd(a, full_matrices=False)
    keep = lnp.greater(s, 0) & lnp.greater_equal(s, lnp.astype(rcond, dtype) * s[0])
    rank = lnp.sum(keep)
    s_inv = lnp.expand_dims(lnp.where(keep, 1 / lnp.where(keep, s, 1), 0), -1)
    x = lnp.matmul(lnp.matrix_transpose(vt), s_inv * lnp.matmul(lnp.matrix_transpose(u), b))
    residuals = vector_norm(b - lnp.matmul(a, x), axis=0) ** 2
    if numpy_resid:  # the residuals' shape depends on the rank: concrete values only, as JAX's
        if _util.is_traced(rank):
            raise ValueError(f"lstsq: numpy_resid=True needs concrete arrays, not traced ones (at {user_line()})")
        if int(rank) < n or m <= n:
            residuals = np.zeros((0,), dtype)
    return x[:, 0] if vector else x, residuals, rank, s


def _pinv_factors(a: Any, rtol: Any, hermitian: bool) -> Any:
    """The pseudo-inverse from the thin SVD, singular values at or below `rtol` times the
    largest dropped (as NumPy and JAX). `_pinv_jvp` differentiates it, so the traced SVD is the
    plain one (`svd`'s own rule would be traced for nothing)."""
    if _util.is_traced(a) and not hermitian:
        u, s, vh = _svd_factors(a, False, True)
    else:
        u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = lnp.expand_dims(rtol, -1) * s[..., 0:1]
    s = lnp.where(s > cutoff, s, lnp.inf)
    return lnp.matmul(lnp.matrix_transpose(vh), lnp.matrix_transpose(u) / lnp.expand_dims(s, -1))


def _pinv_jvp(hermitian: bool, primals: Any, tangents: Any) -> Any:
    """JAX's rule (Golub and Pereyra): defined where the rank is locally constant, repeated
    singular values included. `rtol` gets no derivative."""
    (a, rtol), (da, _) = primals, tangents
    p = _pinv_factors(a, rtol, hermitian)
    if hermitian:  # svd(hermitian=True) symmetrises its input, and so must the derivative
        a, da = (a + lnp.matrix_transpose(a)) / 2, (da + lnp.matrix_transpose(da)) / 2
    m, n = lnp.shape(a)[-2:]
    t_ = lnp.matrix_transpose
    mm = lnp.matmul
    if m >= n:
        s = mm(mm(p, t_(p)), t_(da))
        t = mm(mm(t_(da), t_(p)), p)
        dp = -mm(mm(p, da), p) + s - mm(mm(s, a), p) + t - mm(mm(p, a), t)
    else:
        s = mm(p, mm(t_(p), t_(da)))
        t = mm(t_(da), mm(t_(p), p))
        dp = -mm(p, mm(da, p)) + s - mm(s, mm(a, p)) + t - mm(p, mm(a, t))
    return p, dp


_PINV: list = []


def pinv(a: Any, rtol: Any = None, hermitian: bool = False, *, rcond: Any = None) -> Any:
    """The Moore-Penrose pseudo-inverses (n x m) of the (stacked) m x n matrices `a`, by the SVD;
    singular values at or below `rtol` (default 10 max(m, n) eps; `rcond` is its old name) times
    the largest count as zero. Derivatives by JAX's rule."""
    _matrix(a, "pinv")
    if rcond is not None:
        if rtol is not None:
            raise ValueError(f"pinv: only one of rtol and rcond may be given (at {user_line()})")
        rtol = rcond
    a = _util.as_floating(a)
    dtype = lnp.result_type(a)
    if rtol is None:
        rtol = 10.0 * max(lnp.shape(a)[-2:]) * float(np.finfo(dtype).eps)
    rtol = lnp.astype(rtol if isinstance(rtol, Tracer) else np.asarray(rtol), dtype)
    if not _util.is_traced(a, rtol):
        return _pinv_factors(np.asarray(a), np.asarray(rtol), hermitian)
    if not _PINV:
        fn = custom_derivatives.custom_jvp(_pinv_factors, nondiff_argnums=(2,))
        fn.defjvp(_pinv_jvp)
        _PINV.append(fn)
    return _PINV[0](a, rtol, hermitian)


def matrix_rank(M: Any, rtol: Any = None, *, hermitian: bool = False, tol: Any = None) -> Any:  # noqa: N803 - JAX's
    """The ranks of the (stacked) matrices `M`: the singular values above the threshold, by
    default max(m, n) eps times the largest. As JAX, a given `rtol` (or its old name `tol`) is
    the threshold itself, not relative; a vector or scalar has rank 1 unless it is all zeros."""
    if tol is not None:
        if rtol is not None:
            raise ValueError(f"matrix_rank: only one of tol or rtol may be given (at {user_line()})")
        rtol = tol
    M = _util.as_floating(M)  # noqa: N806
    if lnp.ndim(M) < 2:
        return lnp.astype(lnp.any(lnp.not_equal(M, 0)), lnp.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = lnp.max(s, axis=-1) * (max(lnp.shape(M)[-2:]) * np.finfo(lnp.result_type(s)).eps)
    return lnp.sum(s > lnp.expand_dims(rtol, lnp.ndim(rtol)), axis=-1)


def cond(x: Any, p: Any = None) -> Any:
    """The condition numbers of the (stacked) matrices `x` in the `p`-norm: the ratio of the
    extreme singular values for None, 2 and -2 (any shape), norm(x) norm(inv(x)) for the other
    orders (square only; inf, not NaN, for a singular matrix without NaNs, as JAX)."""
    m, n = _matrix(x, "cond")
    if m == 0 or n == 0:
        raise ValueError(f"cond: x must not be empty, but got shape {tuple(lnp.shape(x))} (at {user_line()})")
    if p is None or p == 2:
        s = svdvals(x)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if m != n:
            raise ValueError(f"cond: for p={p!r} x must be square, but got shape {tuple(lnp.shape(x))} "
                             f"(at {user_line()})")
        x = _util.as_floating(x)
        with np.errstate(divide="ignore", invalid="ignore"):  # a singular x: inf, as JAX
            r = matrix_norm(x, ord=p) * matrix_norm(_lu_inverse(x), ord=p)
    return lnp.where(lnp.isnan(r) & lnp.logical_not(lnp.any(lnp.isnan(x), axis=(-2, -1))), lnp.inf, r)


class SVDResult(NamedTuple):
    """`svd`'s result, as JAX's: `U`, `S` and `Vh`."""

    U: Any
    S: Any
    Vh: Any


class EighResult(NamedTuple):
    """`eigh`'s result, as JAX's: `eigenvalues` and `eigenvectors`."""

    eigenvalues: Any
    eigenvectors: Any


class SlogdetResult(NamedTuple):
    """`slogdet`'s result, as JAX's: `sign` and `logabsdet`."""

    sign: Any
    logabsdet: Any


__all__ = ["EighResult", "QRResult", "SVDResult", "SlogdetResult", "cholesky", "cond", "cross", "det", "diagonal",
           "eigh", "eigvalsh", "inv", "lstsq", "matmul", "matrix_norm", "matrix_power", "matrix_rank",
           "matrix_transpose", "multi_dot", "norm", "outer", "pinv", "qr", "slogdet", "solve", "svd", "svdvals",
           "tensordot", "trace", "vecdot", "vector_norm"]
