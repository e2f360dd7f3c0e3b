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
from loom.backend.kernels import LOW_FLOATS

METRICS = ("ip", "l2", "cos")
_FLOATS = (np.float16, ml_dtypes.bfloat16, np.float32, np.float64)


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
    if arr.dtype.kind not in "fiu" and arr.dtype not in LOW_FLOATS:
        raise TypeError(f"{name} must hold numbers, but got dtype {arr.dtype}")
    if dtype is not None:
        arr = arr.astype(dtype, copy=False)
    elif arr.dtype.type not in _FLOATS:
        arr = arr.astype(np.float32)
    if dim is not None and arr.shape[1] != dim:
        raise ValueError(f"{name} have dimension {arr.shape[1]}, but the index/database has dimension {dim}")
    return check_finite_rows(arr, name) if finite else arr


def check_finite_rows(x: np.ndarray, name: str, row_offset: int = 0) -> np.ndarray:
    """`x` (2-D), or a ValueError naming the first row holding NaN or inf (numbered from
    `row_offset`)."""
    # A matrix-vector product propagates NaN and inf at memory speed on BLAS's threads (2.3x
    # faster than isfinite(...).all() on 1M x 128); the exact per-row check runs only when it finds
    # something (or when a finite row's sum overflows).
    with np.errstate(over="ignore", invalid="ignore"):
        screen = x @ np.ones(x.shape[1], x.dtype) if x.dtype not in LOW_FLOATS and x.size else None
    if screen is None or not np.isfinite(screen).all():
        knn_kernels.check_rows_finite(x, name, row_offset)
    return x


def half_squared_norms(x: np.ndarray) -> np.ndarray:
    """0.5 * |x_i|^2 per row in the search's compute dtype (float32 for float16 / bfloat16 `x`,
    whose own 11 or 8 bits would move the l2 scores by more than their rounding in the sweep),
    accumulated with einsum's vector lanes (within 3e-7 of the float64 value, 4x faster than a
    float64 copy of the database)."""
    if x.dtype not in LOW_FLOATS:
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


def check_database_batch(rows: Any) -> int | None:
    if rows is not None and (isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows <= 0):
        raise ValueError(f"database_batch must be a positive int, but got {rows!r}")
    return None if rows is None else int(rows)


def check_recall_target(recall_target: Any) -> float:
    r = float(recall_target)
    if not 0.0 < r <= 1.0:
        raise ValueError(f"recall_target must be in (0, 1], but got {recall_target}")
    return r


def normalize(x: np.ndarray, name: str, row_offset: int = 0) -> np.ndarray:
    """Rows scaled to unit length (for the cosine metric); a zero row is an error (its row number
    counted from `row_offset`)."""
    norms = np.linalg.norm(x.astype(np.float64), axis=1)
    if np.any(norms == 0):
        raise ValueError(f"{name} contain a zero vector (row {row_offset + int(np.argmin(norms))}), which has no "
                         f"direction for metric 'cos'")
    return (x / norms[:, None].astype(x.dtype)).astype(x.dtype, copy=False)


# A memory-mapped database goes through in batches of about this many bytes, each read once.
STREAM_BYTES = 1 << 30


def default_database_batch(database: Any) -> int | None:
    """Rows per database batch by default: about STREAM_BYTES for a `numpy.memmap` (read from
    disk once for all the queries), else None (all at once)."""
    if isinstance(database, np.memmap) and database.ndim == 2:
        return max(1, STREAM_BYTES // max(1, database.shape[1] * database.dtype.itemsize))
    return None


def search_prepared(queries: np.ndarray, database: np.ndarray, norms: np.ndarray | None, k: int, metric: str,
                    recall_target: float, batch_size: int | None = None, progress: bool = False,
                    check_finite: str | None = None, database_rows: int | None = None,
                    normalized: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Search with checked queries.

    - `database`: normalised for "cos" unless `normalized` is False (then each database batch is
      checked for NaN and inf and normalised as it is read); `norms`, its half squared norms for
      "l2", are computed per database batch when None.
    - The database goes through in batches of `database_rows` rows (all at once by default), each
      read once for all the queries (a memory-mapped database larger than memory streams from
      disk once), and the batches' answers are merged. Each batch has its own bins, so there are
      at least as many bins in all as in one sweep of the whole: recall can only rise.
    - Queries go through in batches of `batch_size` (all at once by default), with a progress line
      on stderr per step when `progress`.
    - With `check_finite` (the database's name), the first sweep of each database batch also checks
      it for NaN and inf."""
    nq, n = queries.shape[0], database.shape[0]
    q_step = max(1, int(batch_size or nq))
    d_step = max(1, int(database_rows or n))
    if metric == "cos":
        queries = normalize(queries, "queries")
    largest = metric != "l2"  # l2 ranks by the smallest h - q.x
    batches = [(lo, min(lo + d_step, n)) for lo in range(0, n, d_step)]
    steps, done = len(batches) * -(-nq // q_step), 0
    values: np.ndarray | None = None
    positions: np.ndarray | None = None
    for lo, hi in batches:
        db = database[lo:hi]
        if metric == "cos" and not normalized:
            db = normalize(check_finite_rows(db, "database", lo), "database", lo)
        h = None
        if metric == "l2":
            h = norms[lo:hi] if norms is not None else half_squared_norms(db)
        width = min(k, hi - lo)
        v = np.empty((nq, width), dtype=queries.dtype)
        i = np.empty((nq, width), dtype=np.int64)
        check = check_finite
        for start in range(0, nq, q_step):
            stop = min(start + q_step, nq)
            with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported below, by name
                v[start:stop], i[start:stop] = knn_kernels.fused_score_top_k(
                    queries[start:stop], db, h, metric if metric == "l2" else "ip", width, recall_target, largest,
                    -1, True, check_finite=check, row_offset=lo)
            check = None
            done += 1
            if progress:
                bar = "#" * int(30 * done / steps)
                print(f"\rloom.knn: [{bar:<30}] {stop}/{nq} queries, database rows {lo}-{hi} of {n}",
                      end="" if done < steps else "\n", file=sys.stderr, flush=True)
        if check is not None:  # no queries: the batch is still checked
            knn_kernels.check_rows_finite(db, check, lo)
        i += lo
        if values is None:
            values, positions = v, i
        else:  # merge: the best k of both, ties to the smaller position
            values, positions = knn_kernels.select_top_k(np.concatenate([values, v], 1),
                                                         np.concatenate([positions, i], 1),
                                                         min(k, values.shape[1] + width), largest)
    if metric == "l2":
        qn = (queries.astype(np.float64) ** 2).sum(1)[:, None]
        with np.errstate(over="ignore", invalid="ignore"):
            values = np.maximum(qn + 2.0 * values.astype(np.float64), 0.0).astype(queries.dtype)
    if values is not None and not np.isfinite(values).all():
        _overflow(queries, database, metric)
    return values, positions


def _overflow(queries: np.ndarray, database: np.ndarray, metric: str) -> None:
    """The error for scores beyond the vectors' float type (the inputs are finite: they were checked)."""
    def largest(x: np.ndarray) -> float:
        return max((float(np.abs(x[a:a + 65536]).max()) for a in range(0, x.shape[0], 65536)), default=0.0)

    dtype = np.dtype(queries.dtype)
    raise ValueError(f"knn search scores overflow {dtype.name} (metric {metric!r}, largest finite "
                     f"{float(np.finfo(dtype).max):.3g}): the largest elements are {largest(queries):.3g} in queries "
                     f"and {largest(database):.3g} in database; scale the vectors down or search float64 ones")


def search(queries: Any, database: Any, k: int, metric: str = "ip", recall_target: float = 0.95,
           batch_size: int | None = None, progress: bool = False,
           database_batch: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The `k` nearest database vectors of each query: (scores, int64 indices), each
    (queries x k), best first. `recall_target` is the expected fraction of the true `k` nearest
    found (1.0: exact). See the module docstring for the metrics and scores.

    `batch_size` queries go through at a time (all by default); the database goes through in
    batches of `database_batch` rows, each read once for all the queries: by default all at once,
    or about 1 GiB at a time when `database` is a `numpy.memmap` (e.g. `np.load(path,
    mmap_mode="r")`), so that a database larger than memory streams from disk once. `progress`
    prints a progress line on stderr.

    torch tensors give torch tensors back. On a GPU (CUDA queries) the search is the Triton kernel
    (`loom.backend.triton_knn`); a database left in host memory, larger than the GPU's, streams
    through it in batches (`database_batch` rows; by default as many as fit in a quarter of the
    free GPU memory). CPU tensors are searched by the CPU kernel on their own memory.

    A `database` that is a `loom.Array` sharded by rows over a mesh (`loom.device_put(x,
    NamedSharding(mesh, P("x", None)))`) is searched by one SPMD program over its shards, with the
    queries replicated or split by rows (see loom.knn.sharded, which also states the recall bound
    over the whole database); the indices are global database rows. `batch_size`, `progress` and
    `database_batch` do not apply to it (each device sweeps its own shard once)."""
    metric = check_metric(metric)
    recall_target = check_recall_target(recall_target)
    from loom.frontend.tracing import Tracer
    if isinstance(queries, Tracer) or isinstance(database, Tracer):
        return _search_traced(queries, database, k, metric, recall_target)
    from loom.runtime.devices import ShardedArray
    if isinstance(database, ShardedArray):
        from loom.knn.sharded import search_sharded
        return search_sharded(queries, database, k, metric, recall_target)
    database_batch = check_database_batch(database_batch)
    if is_tensor(queries) or is_tensor(database):
        return _search_torch(queries, database, k, metric, recall_target, batch_size, progress, database_batch)
    if database_batch is None:
        database_batch = default_database_batch(database)
    # The database's NaN/inf check rides on the search's own sweep for "ip" and "l2" (it reads the
    # database once more otherwise: 2% of a 1M x 128 search); "cos" checks each batch before it
    # normalises it.
    db = check_vectors(database, "database", finite=False)
    q = check_vectors(queries, "queries", dim=db.shape[1], dtype=db.dtype)
    k = check_k(k, db.shape[0])
    return search_prepared(q, db, None, k, metric, recall_target, batch_size, progress,
                           check_finite=None if metric == "cos" else "database", database_rows=database_batch,
                           normalized=False)


def is_tensor(x: Any) -> bool:
    torch = sys.modules.get("torch")  # never imported here: a tensor means it is loaded
    return torch is not None and isinstance(x, torch.Tensor)


def as_tensor(x: Any, name: str) -> Any:
    """`x` (a tensor, or an array taken as a CPU tensor without a copy) as a 2-D floating tensor
    (one vector for 1-D), or an error naming it."""
    import torch
    if isinstance(x, torch.Tensor):
        t = x.detach()
    else:
        a = np.asarray(x)
        if a.dtype.kind not in "fiu" and a.dtype not in LOW_FLOATS:
            raise TypeError(f"{name} must hold real numbers, but got dtype {a.dtype}")
        t = from_array(np.ascontiguousarray(a))
    t = t[None, :] if t.ndim == 1 else t
    if t.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (vectors x dimension), but got shape {tuple(t.shape)}")
    if t.is_complex() or t.dtype == torch.bool:
        raise TypeError(f"{name} must hold real numbers, but got dtype {t.dtype}")
    return t if t.is_floating_point() else t.float()


def as_array(t: Any) -> np.ndarray:
    """A CPU tensor's own memory as an array (bfloat16 as `ml_dtypes.bfloat16`), or a CUDA
    tensor's values copied to the host."""
    import torch
    t = t.detach().cpu()
    return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16) if t.dtype == torch.bfloat16 else t.numpy()


def from_array(a: np.ndarray) -> Any:
    """An array as a CPU tensor on the same memory (bfloat16 included; a read-only one, such as
    a mapped index, is only read)."""
    import warnings

    import torch
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="The given NumPy array is not writable")
        return torch.from_numpy(a.view(np.int16)).view(torch.bfloat16) if a.dtype == ml_dtypes.bfloat16 else \
            torch.from_numpy(a)


def on_gpu(queries: Any) -> bool:
    """Whether a search of these (tensor) queries runs the Triton kernel: CUDA tensors, or any
    tensors under Triton's CPU interpreter (TRITON_INTERPRET=1, how the tests check that path
    without a GPU)."""
    import os
    return queries.is_cuda or os.environ.get("TRITON_INTERPRET", "0") not in ("", "0")


def search_gpu(q: Any, db: Any, k: int, metric: str, recall_target: float, batch_size: int | None, progress: bool,
               database_batch: int | None, check_database: bool = True) -> tuple[Any, Any]:
    """The Triton kernel's search of tensors `q` (on the GPU) and `db` (there or in host memory,
    then streamed through in batches), in query batches of `batch_size`."""
    import torch

    from loom.backend import triton_knn
    triton_knn.check_rows(q, "queries", metric)
    step = max(1, int(batch_size or q.shape[0]))
    parts = [triton_knn.search(q[a:a + step], db, k, metric, recall_target, batch_rows=database_batch,
                               progress=progress, check=check_database) for a in range(0, q.shape[0], step)]
    if len(parts) == 1:
        return parts[0]
    return torch.cat([v for v, _ in parts]), torch.cat([i for _, i in parts])


def _search_torch(queries: Any, database: Any, k: int, metric: str, recall_target: float, batch_size: int | None,
                  progress: bool, database_batch: int | None) -> tuple[Any, Any]:
    """`search` on torch tensors (see `search`); an array among them is taken as a CPU tensor."""
    db = as_tensor(database, "database")
    q = as_tensor(queries, "queries")
    if q.shape[1] != db.shape[1]:
        raise ValueError(f"queries have dimension {q.shape[1]}, but the index/database has dimension {db.shape[1]}")
    k = check_k(k, db.shape[0])
    if db.is_cuda and not q.is_cuda:
        q = q.to(db.device)
    q = q.to(db.dtype)
    if on_gpu(q):
        return search_gpu(q, db, k, metric, recall_target, batch_size, progress, database_batch)
    values, indices = search(as_array(q), as_array(db), k, metric, recall_target, batch_size, progress,
                             database_batch)
    return from_array(values), from_array(indices)


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
