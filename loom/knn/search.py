"""`loom.knn.search`: brute-force nearest neighbours with TPU-KNN's approximate top-k, no index.

The scores are computed and reduced by the kernel of `knn.fused_score_top_k` (tiles of queries x
database, BLAS per tile, per-bin maximum while the tile is in cache), so the Q x N score matrix is
never materialised. Metrics:

- `"ip"`: inner product, largest first; scores are `q . x`;
- `"l2"`: Euclidean, nearest first; scores are squared distances `||q - x||^2` (the search itself
  ranks by `||x||^2 / 2 - q . x`, which orders the database the same way with less arithmetic);
- `"cos"`: cosine similarity, largest first; scores are `q . x / (||q|| ||x||)`.

Inside `loom.jit` (traced queries or database) `search` is written as `loom.lax.approx_max_k` /
`approx_min_k` of the score matrix, which jit's compile-time `knn-fusion` pass turns into the same
fused op: the score matrix is not materialised there either. Traced values cannot be checked for
NaN or inf (their values are not known while tracing).
"""

from __future__ import annotations

import sys
from typing import Any

import ml_dtypes
import numpy as np

from loom.backend import knn_kernels

METRICS = ("ip", "l2", "cos")
_FLOATS = (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)
_LOW_FLOATS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def check_metric(metric: Any) -> str:
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {', '.join(repr(m) for m in METRICS)}, but got {metric!r}")
    return metric


def check_vectors(x: Any, name: str, dim: int | None = None, dtype: Any = None, finite: bool = True) -> np.ndarray:
    """`x` as a 2-D float array (a 1-D array is one vector), checked: of `dim` columns, and finite
    unless `finite` is False (the search kernel can check a database in its own sweep)."""
    arr = np.asarray(x)
    if arr.ndim == 1:
        arr = arr[None, :]
    if arr.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (vectors x dimension), but got shape {arr.shape}")
    if arr.dtype.kind not in "fiu" and arr.dtype not in _LOW_FLOATS:
        raise TypeError(f"{name} must hold numbers, but got dtype {arr.dtype}")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif arr.dtype.type not in _FLOATS:
        arr = arr.astype(np.float32)
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} have dimension {arr.shape[1]}, but the index/database has dimension {dim}")
    if not finite:
        return arr
    # A matrix-vector product propagates NaN and inf at memory speed on BLAS's threads (2.3x
    # faster than isfinite(...).all() on 1M x 128); the exact per-row check runs only when it finds
    # something (or when a finite row's sum overflows).
    with np.errstate(over="ignore", invalid="ignore"):
        screen = arr @ np.ones(arr.shape[1], arr.dtype) if arr.dtype not in _LOW_FLOATS and arr.size else None
    if screen is None or not np.isfinite(screen).all():
        finite = np.isfinite(arr).all(axis=1)
        if not finite.all():
            row = int(np.argmin(finite))
            raise ValueError(f"{name} contain NaN or inf (row {row})")
    return arr


def half_squared_norms(x: np.ndarray) -> np.ndarray:
    """0.5 * |x_i|^2 per row in the search's compute dtype (float32 for float16 / bfloat16 `x`,
    whose own 11 or 8 bits would move the l2 scores by more than their rounding in the sweep),
    accumulated with einsum's vector lanes (within 3e-7 of the float64 value, 4x faster than a
    float64 copy of the database)."""
    if x.dtype not in _LOW_FLOATS:
        return 0.5 * np.einsum("ij,ij->i", x, x)
    out = np.empty(x.shape[0], np.float32)
    step = max(1, (1 << 20) // max(1, 4 * x.shape[1]))  # widened 1 MiB at a time, not the whole database
    for a in range(0, x.shape[0], step):
        wide = x[a:a + step].astype(np.float32)
        out[a:a + step] = 0.5 * np.einsum("ij,ij->i", wide, wide)
    return out


def check_k(k: Any, n: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an int, but got {type(k).__name__}")
    if n == 0:
        raise ValueError("the database is empty: nothing to search")
    if k <= 0 or k > n:
        raise ValueError(f"k must be in [1, {n}] (the number of database vectors), but got k={k}")
    return int(k)


def check_recall_target(recall_target: Any) -> float:
    r = float(recall_target)
    if not 0.0 < r <= 1.0:
        raise ValueError(f"recall_target must be in (0, 1], but got {recall_target}")
    return r


def normalize(x: np.ndarray, name: str) -> np.ndarray:
    """Rows scaled to unit length (for the cosine metric); a zero row is an error."""
    norms = np.linalg.norm(x.astype(np.float64), axis=1)
    if np.any(norms == 0):
        raise ValueError(f"{name} contain a zero vector (row {int(np.argmin(norms))}), which has no direction for "
                         f"metric 'cos'")
    return (x / norms[:, None].astype(x.dtype)).astype(x.dtype, copy=False)


def search_prepared(queries: np.ndarray, database: np.ndarray, half_squared_norms: np.ndarray | None, k: int,
                    metric: str, recall_target: float, batch_size: int | None = None,
                    progress: bool = False, check_finite: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Search with checked inputs: `database` already normalised for "cos", `half_squared_norms`
    given for "l2". Queries go through in batches of `batch_size` (all at once by default), with a
    progress line on stderr per batch when `progress`. With `check_finite` (its name), the first
    batch's sweep also checks the database for NaN and inf."""
    nq = queries.shape[0]
    step = nq if not batch_size else int(batch_size)
    if metric == "cos":
        queries = normalize(queries, "queries")
    scores = np.empty((nq, k), dtype=queries.dtype)
    indices = np.empty((nq, k), dtype=np.int64)
    for start in range(0, max(nq, 1), max(step, 1)):
        stop = min(start + step, nq)
        q = queries[start:stop]
        if metric == "l2":
            v, i = knn_kernels.fused_score_top_k(q, database, half_squared_norms, "l2", k, recall_target, False, -1,
                                                 True, check_finite=check_finite)
            qn = (q.astype(np.float64) ** 2).sum(1)[:, None]
            v = np.maximum(qn + 2.0 * v.astype(np.float64), 0.0).astype(q.dtype)
        else:
            v, i = knn_kernels.fused_score_top_k(q, database, None, "ip", k, recall_target, True, -1, True,
                                                 check_finite=check_finite)
        check_finite = None
        scores[start:stop] = v
        indices[start:stop] = i
        if progress:
            done = stop
            bar = "#" * int(30 * done / max(nq, 1))
            print(f"\rloom.knn: [{bar:<30}] {done}/{nq} queries", end="" if done < nq else "\n", file=sys.stderr,
                  flush=True)
    return scores, indices


def search(queries: Any, database: Any, k: int, metric: str = "ip", recall_target: float = 0.95,
           batch_size: int | None = None, progress: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """The `k` nearest database vectors of each query: (scores, int64 indices), each
    (queries x k), best first. `recall_target` is the expected fraction of the true `k` nearest
    found (1.0: exact). See the module docstring for the metrics and scores."""
    metric = check_metric(metric)
    recall_target = check_recall_target(recall_target)
    from loom.frontend.tracing import Tracer
    if isinstance(queries, Tracer) or isinstance(database, Tracer):
        return _search_traced(queries, database, k, metric, recall_target)
    # For "ip" and "l2" the database's NaN/inf check rides on the search's own sweep (it reads the
    # database once more otherwise: 2% of a 1M x 128 search); "cos" normalises a copy first.
    db = check_vectors(database, "database", finite=metric == "cos")
    q = check_vectors(queries, "queries", dim=db.shape[1], dtype=db.dtype)
    k = check_k(k, db.shape[0])
    norms = None
    if metric == "cos":
        db = normalize(db, "database")
    elif metric == "l2":
        norms = half_squared_norms(db)
    return search_prepared(q, db, norms, k, metric, recall_target, batch_size, progress,
                           check_finite=None if metric == "cos" else "database")


def _search_traced(queries: Any, database: Any, k: int, metric: str, recall_target: float) -> tuple[Any, Any]:
    """`search` on traced arrays, as loom.lax ops (see the module docstring)."""
    import loom.numpy as lnp
    from loom import lax
    q, db = lnp.asarray(queries), lnp.asarray(database)
    if q.ndim == 1:
        q = q[None, :]
    if db.ndim != 2 or q.ndim != 2 or q.shape[1] != db.shape[1]:
        raise ValueError(f"queries (Q x D) and database (N x D) must agree, but got shapes {q.shape} and {db.shape}")
    k = check_k(k, db.shape[0])
    if metric == "cos":
        q = q / lnp.sqrt((q * q).sum(1, keepdims=True))
        db = db / lnp.sqrt((db * db).sum(1, keepdims=True))
    if metric == "l2":
        half = 0.5 * (db * db).sum(1)
        v, i = lax.approx_min_k(half[None, :] - q @ db.T, k, recall_target=recall_target)
        v = lnp.maximum((q * q).sum(1, keepdims=True) + 2.0 * v, 0.0)
    else:
        v, i = lax.approx_max_k(q @ db.T, k, recall_target=recall_target)
    return v, i.astype(lnp.int64)


__all__ = ["METRICS", "half_squared_norms", "search"]
