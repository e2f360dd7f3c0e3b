"""Kernels of the knn dialect for both executors.

`knn.approx_top_k` has one numpy kernel (strided-bin partial reduction, then an exact top-k of the
bins). `knn.fused_score_top_k` has two: the interpreter's reference (`fused_score_top_k_reference`:
the whole score matrix, then the same partial reduction; it defines the semantics) and the
compiled executor's fast kernel (`fused_score_top_k`), which never materialises the Q x N scores:

- the database is swept in chunks whose width is a multiple of the bin count L, so that within
  a chunk the bin of column j is still j mod L;
- "shared" strategy (the default while L <= SHARED_CHUNK / GROUP_ROWS): one BLAS call per chunk
  of SHARED_CHUNK rows for a whole block of queries, on BLAS's own threads (which share the
  packed chunk, as in a plain GEMM); the chunk's scores are then reduced by the workers, one per
  core, each taking a share of the query rows: a contiguous `max` over each unit of GROUP_ROWS
  rows of L columns, merged into the running per-bin maximum with one compare-and-copy per unit;
- "tiles" strategy (for more bins): query tiles on the workers, each worker's BLAS limited to its
  own thread (OpenBLAS's thread-local setting), one single-threaded GEMM per (tile, chunk) reduced
  while the tile is in cache; when L is too large for several rows of bins per tile, each chunk
  is one row of bins, swept in cache-sized pieces and merged elementwise;
- either way only the unit that gave each bin its maximum is remembered, not the position, so the
  hot loop does one pass over the scores and no arg-max; after the sweep the exact top-k of the L
  bins is taken, and only for the k chosen bins is the winning position found again, by
  recomputing that bin's few scores in its unit (about GROUP_ROWS dot products per chosen bin);
- for L2 with many queries the half squared norms are folded into the GEMM (`[q, 1] . [x, h]`)
  instead of being added to every score tile.

benchmarks/NOTES.md (knn section) records the measurements behind these choices.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import ml_dtypes
import numpy as np

from loom.backend import common
from loom.backend.interpreter import rule
from loom.backend.kernels_numpy import Kernel, Operand, Rest, kernel
from loom.dialects.knn import num_bins
from loom.ir.core import Operation

_LOW_FLOATS = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))

# Tile sizes: a (query tile x chunk) float32 score tile of CHUNK_BYTES, query tiles of at most
# QUERY_TILE. Measured on a 2-core EPYC (1 MiB L2 per core, 32 MiB L3): 500 queries x 2048
# database rows (4 MiB, in L3) ran the sweep faster than L2-sized tiles (128 x 2048), the larger
# GEMM per call paying for the cache misses of the reduction (benchmarks/NOTES.md (knn section)).
QUERY_TILE = 512
CHUNK_BYTES = 4 << 20
GROUP_ROWS = 16
# The shared strategy: database chunks of SHARED_CHUNK columns (a multiple of GROUP_ROWS rows of
# bins) per BLAS call for blocks of queries whose score tile is at most SCRATCH_BYTES.
SHARED_CHUNK = 16384
SCRATCH_BYTES = 64 << 20
FOLD_NORMS_MIN_QUERIES = 512


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """f16/bf16 are computed in float32 (as XLA does on CPU), the rest in their own type."""
    return np.dtype(np.float32) if np.dtype(dtype) in _LOW_FLOATS else np.dtype(dtype)


def _attrs(op: Operation) -> tuple[int, float, bool, int, bool]:
    return (common.integer(op.get_attr("k")), common.floating(op.get_attr("recall_target")),
            common.boolean(op.get_attr("is_max_k")), common.integer(op.get_attr("reduction_input_size_override")),
            common.boolean(op.get_attr("aggregate_to_topk")))


# Partial reduction and aggregation (2-D, reduction over the last axis) ----------------------------

def partial_reduce(scores: np.ndarray, bins: int, is_max_k: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin best value and its position over the last axis of a 2-D array, element j in bin
    j mod `bins` (ties: the smaller position). Returns (values, int64 positions), both B x bins."""
    b, n = scores.shape
    if bins >= n:
        return scores.copy(), np.broadcast_to(np.arange(n, dtype=np.int64), (b, n)).copy()
    rows = -(-n // bins)
    pad = rows * bins - n
    if pad:
        fill = -np.inf if is_max_k else np.inf
        scores = np.concatenate([scores, np.full((b, pad), fill, scores.dtype)], axis=1)
    s3 = scores.reshape(b, rows, bins)
    which = np.argmax(s3, axis=1) if is_max_k else np.argmin(s3, axis=1)
    values = np.take_along_axis(s3, which[:, None, :], axis=1)[:, 0, :]
    positions = which.astype(np.int64) * bins + np.arange(bins, dtype=np.int64)
    return values, positions


def select_top_k(values: np.ndarray, positions: np.ndarray, k: int, is_max_k: bool) -> tuple[np.ndarray, np.ndarray]:
    """The best k of each row of (values, positions), sorted best first, ties to the smaller
    position (as `jax.lax.top_k`)."""
    width = values.shape[-1]
    key = values.astype(np.float64)
    if is_max_k:
        key = -key
    if width > 4 * k + 64:
        # Narrow to the k best (plus every tie of the k-th) before the full ordering.
        part = np.argpartition(key, k - 1, axis=-1)
        kth = np.take_along_axis(key, part[:, k - 1:k], axis=-1)
        keep = key <= kth
        counts = keep.sum(axis=-1)
        m = int(counts.max())
        if m < width // 2:
            order = np.argsort(~keep, axis=-1, kind="stable")[:, :m]
            cand_key = np.take_along_axis(key, order, axis=-1)
            cand_key[np.arange(m)[None, :] >= counts[:, None]] = np.inf
            values = np.take_along_axis(values, order, axis=-1)
            positions = np.take_along_axis(positions, order, axis=-1)
            key = cand_key
    order = np.lexsort((positions, key), axis=-1)[:, :k]
    return np.take_along_axis(values, order, axis=-1), np.take_along_axis(positions, order, axis=-1)


def approx_top_k_2d(scores: np.ndarray, k: int, is_max_k: bool, bins: int,
                    aggregate_to_topk: bool) -> tuple[np.ndarray, np.ndarray]:
    """Approximate top-k over the last axis of a 2-D array with `bins` strided bins."""
    values, positions = partial_reduce(scores, bins, is_max_k)
    if aggregate_to_topk:
        values, positions = select_top_k(values, positions, k, is_max_k)
    return values, positions


def approx_top_k(x: np.ndarray, k: int, dimension: int, recall_target: float, is_max_k: bool,
                 input_size_override: int, aggregate_to_topk: bool,
                 index_dtype: Any = np.int32) -> tuple[np.ndarray, np.ndarray]:
    """The numpy kernel of `knn.approx_top_k` (and of `loom.lax.approx_max_k` on arrays)."""
    x = np.asarray(x)
    dtype = x.dtype
    dimension %= x.ndim
    n = x.shape[dimension]
    bins = num_bins(n, x.ndim, k, recall_target, input_size_override)
    moved = np.moveaxis(x, dimension, -1)
    lead = moved.shape[:-1]
    flat = moved.reshape(-1, n).astype(_compute_dtype(dtype), copy=False)
    values, positions = approx_top_k_2d(flat, k, is_max_k, bins, aggregate_to_topk)
    width = values.shape[-1]
    if not aggregate_to_topk:
        # The op's result width is XLA's output size, which may exceed the bin count (it is a
        # multiple of the 128-lane tile): the extra entries are padding, -inf/+inf and index -1.
        out_width = _output_width(n, x.ndim, k, recall_target, input_size_override)
        if out_width > width:
            fill = -np.inf if is_max_k else np.inf
            values = np.concatenate([values, np.full((values.shape[0], out_width - width), fill, values.dtype)], 1)
            positions = np.concatenate([positions, np.full((values.shape[0], out_width - width), -1, np.int64)], 1)
            width = out_width
    values = values.reshape(*lead, width).astype(dtype, copy=False)
    positions = positions.reshape(*lead, width).astype(index_dtype)
    return np.moveaxis(values, -1, dimension), np.moveaxis(positions, -1, dimension)


def _output_width(n: int, rank: int, k: int, recall_target: float, override: int) -> int:
    from loom.dialects.knn import reduction_output_size
    return reduction_output_size(n, rank, k, recall_target, False, override)[0]


@kernel("knn.approx_top_k")
def _approx_top_k(op: Operation) -> Kernel:
    k, recall, is_max, override, aggregate = _attrs(op)
    dim = common.integer(op.get_attr("reduction_dimension"))
    return Kernel(approx_top_k, Operand(0), k, dim, recall, is_max, override, aggregate,
                  common.dtype_of(op.results[1].type))


# The fused op ----------------------------------------------------------------------------------

def fused_score_top_k_reference(queries, database, half_squared_norms, metric: str, k: int, recall_target: float,
                                is_max_k: bool, input_size_override: int, aggregate_to_topk: bool,
                                index_dtype=np.int32) -> tuple[np.ndarray, np.ndarray]:
    """The semantics of `knn.fused_score_top_k`: the full score matrix, then `approx_top_k`."""
    q, db = np.asarray(queries), np.asarray(database)
    dtype = q.dtype
    ct = _compute_dtype(dtype)
    scores = q.astype(ct) @ db.astype(ct).T
    if metric == "l2":
        scores = np.asarray(half_squared_norms).astype(ct)[None, :] - scores
    return approx_top_k(scores.astype(dtype), k, 1, recall_target, is_max_k, input_size_override,
                        aggregate_to_topk, index_dtype)


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _openblas_thread_local() -> Any:
    """OpenBLAS's `openblas_set_num_threads_local` from the library numpy loaded, or None (another
    BLAS, or an OpenBLAS without it)."""
    import ctypes
    import glob
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*"))):
        try:
            fn = getattr(ctypes.CDLL(path), "openblas_set_num_threads_local", None)
        except OSError:
            continue
        if fn is not None:
            fn.argtypes = [ctypes.c_int]
            return fn
    return None


_SET_LOCAL_THREADS = _openblas_thread_local()


def _one_blas_thread() -> None:
    """Pool initializer: this worker's BLAS calls run on its own thread only, so that one worker
    per core does not oversubscribe the cores with BLAS's threads as well."""
    if _SET_LOCAL_THREADS is not None:
        _SET_LOCAL_THREADS(1)


def _workers() -> int:
    """Worker threads for the query tiles: one per core when each worker's BLAS can be made
    single-threaded; otherwise 1 (the tiles run in turn and BLAS uses the cores itself)."""
    if _SET_LOCAL_THREADS is None:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, 16))


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=_workers(), thread_name_prefix="loom-knn",
                                       initializer=_one_blas_thread)
        return _POOL


def _sweep(q: np.ndarray, db: np.ndarray, h: np.ndarray | None, bins: int, chunk: int, group: int,
           out_values: np.ndarray, out_chunks: np.ndarray) -> None:
    """Running per-bin maximum of `q . x (+ h)` over the database for one query tile, writing the
    best value per bin and the group (of `group` chunks of `chunk` database rows) it came from.

    With `chunk` a multiple of `bins`, each chunk's score tile is reduced by a contiguous `max`
    over its rows of `bins` columns into the group's maximum; the running (value, group) state is
    updated once per group, which keeps that update's three passes rare. With `chunk == bins`
    (bins too many for one cached tile), each chunk is one row of bins, swept in cache-sized pieces
    and merged elementwise (`group` is 1 then)."""
    n = db.shape[0]
    qt = q.shape[0]
    best = np.full((qt, bins), -np.inf, dtype=q.dtype)
    best_chunk = np.zeros((qt, bins), dtype=np.int32)
    if chunk > bins:
        scratch = np.empty((qt, chunk), dtype=q.dtype)
        group_max = np.empty((qt, bins), dtype=q.dtype)
        part = np.empty((qt, bins), dtype=q.dtype)
        starts = range(0, n, chunk)
        for c, start in enumerate(starts):
            stop = min(start + chunk, n)
            width = stop - start
            s = scratch[:, :width]
            np.matmul(q, db[start:stop].T, out=s)
            if h is not None:
                s += h[start:stop]
            full_rows = width // bins
            first = c % group == 0
            target = group_max if first else part
            if full_rows:
                s[:, :full_rows * bins].reshape(qt, full_rows, bins).max(axis=1, out=target)
            else:
                target.fill(-np.inf)
            rest = width - full_rows * bins
            if rest:
                np.maximum(target[:, :rest], s[:, full_rows * bins:], out=target[:, :rest])
            if not first:
                np.maximum(group_max, part, out=group_max)
            if c % group == group - 1 or c == len(starts) - 1:
                better = group_max > best
                np.copyto(best, group_max, where=better)
                np.copyto(best_chunk, c // group, where=better)
    else:
        piece = max(1, min(bins, CHUNK_BYTES // (qt * q.dtype.itemsize)))
        scratch = np.empty((qt, piece), dtype=q.dtype)
        for c, row in enumerate(range(0, n, bins)):
            for b0 in range(0, min(bins, n - row), piece):
                start, stop = row + b0, min(row + b0 + piece, row + bins, n)
                width = stop - start
                s = scratch[:, :width]
                np.matmul(q, db[start:stop].T, out=s)
                if h is not None:
                    s += h[start:stop]
                view = best[:, b0:b0 + width]
                better = s > view
                np.copyto(view, s, where=better)
                np.copyto(best_chunk[:, b0:b0 + width], c, where=better)
    out_values[...] = best
    out_chunks[...] = best_chunk


def _merge_units(s: np.ndarray, h: np.ndarray | None, bins: int, unit: int, first_unit: int, best: np.ndarray,
                 best_unit: np.ndarray) -> None:
    """Merge one chunk's scores `s` (queries x width, the chunk starting at unit `first_unit`)
    into the running per-bin (maximum, unit) state: a contiguous `max` over each unit's rows of
    `bins` columns, then one compare-and-copy per unit."""
    qt, width = s.shape
    if h is not None:
        s += h
    full = width // unit
    if full:
        m = s[:, :full * unit].reshape(qt, full, unit // bins, bins).max(axis=2)
        for j in range(full):
            better = m[:, j] > best
            np.copyto(best, m[:, j], where=better)
            np.copyto(best_unit, first_unit + j, where=better)
    rest = width - full * unit
    if rest:
        tail = s[:, full * unit:]
        rows = rest // bins
        mt = tail[:, :rows * bins].reshape(qt, rows, bins).max(axis=1) if rows else \
            np.full((qt, bins), -np.inf, dtype=s.dtype)
        cols = rest - rows * bins
        if cols:
            np.maximum(mt[:, :cols], tail[:, rows * bins:], out=mt[:, :cols])
        better = mt > best
        np.copyto(best, mt, where=better)
        np.copyto(best_unit, first_unit + full, where=better)


def _sweep_shared(q: np.ndarray, db: np.ndarray, h: np.ndarray | None, bins: int, unit: int, chunk: int,
                  best: np.ndarray, best_unit: np.ndarray) -> None:
    """The sweep with one BLAS call per database chunk for a whole block of queries (BLAS's own
    threads share the packed chunk), the reduction of each chunk split across the workers by query
    rows. `chunk` is a multiple of `unit` (GROUP_ROWS rows of bins)."""
    nq = q.shape[0]
    n = db.shape[0]
    best.fill(-np.inf)
    best_unit.fill(0)
    workers = _workers()
    block = max(1, min(nq, SCRATCH_BYTES // (chunk * q.dtype.itemsize)))
    scratch = np.empty((block, chunk), dtype=q.dtype)
    for a in range(0, nq, block):
        b = min(a + block, nq)
        rows = b - a
        parts = [(rows * w // workers, rows * (w + 1) // workers) for w in range(workers)]
        parts = [(x, y) for x, y in parts if y > x]
        for start in range(0, n, chunk):
            stop = min(start + chunk, n)
            s = scratch[:rows, :stop - start]
            np.matmul(q[a:b], db[start:stop].T, out=s)
            hp = None if h is None else h[start:stop]
            if len(parts) > 1:
                futures = [_pool().submit(_merge_units, s[x:y], hp, bins, unit, start // unit, best[a + x:a + y],
                                          best_unit[a + x:a + y]) for x, y in parts]
                for f in futures:
                    f.result()
            else:
                _merge_units(s, hp, bins, unit, start // unit, best[a:b], best_unit[a:b])


def _sweep_tiles(qc: np.ndarray, dbc: np.ndarray, h: np.ndarray | None, L: int, best: np.ndarray,  # noqa: N803
                 best_chunk: np.ndarray, query_tile: int | None, chunk_bytes: int | None,
                 group_rows: int | None) -> int:
    """The sweep with query tiles on the workers (each with a single-threaded BLAS); returns the
    number of database rows per position-tracking unit."""
    nq = qc.shape[0]
    ct = qc.dtype
    if query_tile:
        qtile = query_tile
    else:
        # A multiple of the worker count of tiles, each at most QUERY_TILE queries: balanced work
        # per core, and each database chunk is packed by BLAS as few times as possible.
        workers = _workers()
        tiles = workers * -(-nq // (workers * QUERY_TILE))
        qtile = max(1, -(-nq // tiles))
    budget = chunk_bytes or CHUNK_BYTES
    per_row = budget // (qtile * ct.itemsize)
    group = 1
    if L * 2 > per_row:
        # Too many bins for a cached tile of several rows of bins: one row of bins per chunk;
        # fewer queries per tile keep the running (query x bin) state small.
        chunk = L
        qtile = max(8, min(qtile, (64 << 20) // (L * ct.itemsize * 2)))
    else:
        chunk = (per_row // L) * L
        # Groups of about GROUP_ROWS rows of bins: the running state is updated once per group
        # and the winner's position is found again among that many candidates.
        group = max(1, (group_rows or GROUP_ROWS) // (chunk // L))
    tiles = [(a, min(a + qtile, nq)) for a in range(0, nq, qtile)]
    if len(tiles) > 1 and _workers() > 1:
        futures = [_pool().submit(_sweep, qc[a:b], dbc, h, L, chunk, group, best[a:b], best_chunk[a:b])
                   for a, b in tiles]
        for f in futures:
            f.result()
    else:
        for a, b in tiles:
            _sweep(qc[a:b], dbc, h, L, chunk, group, best[a:b], best_chunk[a:b])
    return chunk * group


def fused_score_top_k(queries, database, half_squared_norms, metric: str, k: int, recall_target: float,
                      is_max_k: bool, input_size_override: int, aggregate_to_topk: bool, index_dtype=np.int32,
                      bins: int | None = None, query_tile: int | None = None,
                      chunk_bytes: int | None = None, group_rows: int | None = None,
                      fold_norms: bool | None = None, strategy: str | None = None,
                      shared_chunk: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The compiled executor's kernel of `knn.fused_score_top_k` (see the module docstring).
    `bins` may raise the bin count above XLA's (more bins only raise recall); `query_tile`,
    `chunk_bytes` and `group_rows` override the tiling (QUERY_TILE, CHUNK_BYTES, GROUP_ROWS);
    `fold_norms` (default: from FOLD_NORMS_MIN_QUERIES queries on) folds the L2 norms into the GEMM.
    `strategy` "shared" (the default while GROUP_ROWS rows of bins fit in SHARED_CHUNK columns):
    one multithreaded GEMM per database chunk for all queries, reductions split across workers;
    "tiles": query tiles on the workers, one single-threaded GEMM per (tile, chunk)."""
    q, db = np.asarray(queries), np.asarray(database)
    dtype = q.dtype
    ct = _compute_dtype(dtype)
    nq = q.shape[0]
    n = db.shape[0]
    if metric == "l2" and half_squared_norms is None:
        raise ValueError("knn.fused_score_top_k: metric 'l2' needs half_squared_norms")
    # One maximisation for the four cases: maximise dot_sign * q.x + norm_sign * h, where the
    # op's score is q.x (ip) or h - q.x (l2), negated for a min-k.
    dot_sign = 1.0 if is_max_k == (metric == "ip") else -1.0
    norm_sign = 0.0 if metric == "ip" else (1.0 if is_max_k else -1.0)
    L = min(n, max(num_bins(n, 2, k, recall_target, input_size_override), bins or 0))  # noqa: N806
    qc = np.ascontiguousarray(q, dtype=ct)
    if dot_sign < 0:
        qc = -qc
    dbc = np.ascontiguousarray(db, dtype=ct)
    h = None
    if norm_sign != 0.0:
        h = np.asarray(half_squared_norms, dtype=ct) * ct.type(norm_sign)
        if fold_norms if fold_norms is not None else nq >= FOLD_NORMS_MIN_QUERIES:
            # Fold the norms into the GEMM, [q, 1] . [x, h] = q.x + h: one more column (~5% more
            # GEMM) instead of a pass over every score tile (~13%), for a copy of the database,
            # which many queries amortise.
            qc = np.concatenate([qc, np.ones((nq, 1), ct)], axis=1)
            dbc = np.concatenate([dbc, h[:, None]], axis=1)
            h = None
    best = np.empty((nq, L), dtype=ct)
    best_chunk = np.empty((nq, L), dtype=np.int32)
    unit = (group_rows or GROUP_ROWS) * L
    cols = shared_chunk or SHARED_CHUNK
    if strategy not in (None, "shared", "tiles"):
        raise ValueError(f"strategy must be 'shared' or 'tiles', but got {strategy!r}")
    if strategy == "shared" or (strategy is None and unit <= cols):
        chunk = max(unit, (cols // unit) * unit)
        _sweep_shared(qc, dbc, h, L, unit, chunk, best, best_chunk)
        positions_unit = unit
    else:
        positions_unit = _sweep_tiles(qc, dbc, h, L, best, best_chunk, query_tile, chunk_bytes, group_rows)
    # Select bins, then find the winning position inside each chosen bin's chunk.
    bin_ids = np.broadcast_to(np.arange(L, dtype=np.int64), (nq, L))
    if aggregate_to_topk:
        values, chosen = select_top_k(best, bin_ids, k, True)
    else:
        values, chosen = best, np.array(bin_ids)
    chunk_of = np.take_along_axis(best_chunk, chosen, axis=1).astype(np.int64)
    workers = _workers()
    if workers > 1 and nq >= 64:
        # Locating the winners is a gather of database rows per chosen bin: split it as well.
        positions = np.empty(chosen.shape, dtype=np.int64)
        parts = [(nq * w // workers, nq * (w + 1) // workers) for w in range(workers)]
        futures = [(a, b, _pool().submit(_locate, qc[a:b], dbc, h, L, positions_unit, chosen[a:b], chunk_of[a:b]))
                   for a, b in parts]
        for a, b, f in futures:
            positions[a:b] = f.result()
    else:
        positions = _locate(qc, dbc, h, L, positions_unit, chosen, chunk_of)
    if not is_max_k:
        values = -values  # back from the maximisation to the op's scores
    if not aggregate_to_topk:
        out_width = _output_width(n, 2, k, recall_target, input_size_override)
        if out_width > L:
            fill = -np.inf if is_max_k else np.inf
            values = np.concatenate([values, np.full((nq, out_width - L), fill, values.dtype)], 1)
            positions = np.concatenate([positions, np.full((nq, out_width - L), -1, np.int64)], 1)
    return values.astype(dtype), positions.astype(index_dtype)


def _locate(q: np.ndarray, db: np.ndarray, h: np.ndarray | None, bins: int, chunk: int, chosen: np.ndarray,
            chunk_of: np.ndarray) -> np.ndarray:
    """The database position of the best element of bin `chosen[i, j]` within chunk
    `chunk_of[i, j]`, recomputing that bin's few scores (chunk / bins of them) for query i."""
    n = db.shape[0]
    rows = chunk // bins
    start = chunk_of * chunk + chosen
    if rows == 1:
        return start
    out = np.empty_like(start)
    nq, width = start.shape
    step = max(1, (32 << 20) // max(1, width * rows * db.shape[1] * db.itemsize))
    offsets = bins * np.arange(rows, dtype=np.int64)
    for a in range(0, nq, step):
        b = min(a + step, nq)
        cand = start[a:b, :, None] + offsets  # (queries, width, rows)
        valid = cand < n
        safe = np.where(valid, cand, 0)
        vectors = db[safe].reshape(b - a, width * rows, db.shape[1])
        scores = np.matmul(vectors, q[a:b, :, None])[..., 0].reshape(b - a, width, rows)
        if h is not None:
            scores += h[safe]
        scores[~valid] = -np.inf
        which = np.argmax(scores, axis=-1)
        out[a:b] = np.take_along_axis(cand, which[..., None], axis=-1)[..., 0]
    return out


@kernel("knn.fused_score_top_k")
def _fused_score_top_k(op: Operation) -> Kernel:
    k, recall, is_max, override, aggregate = _attrs(op)
    metric = common.string(op.get_attr("metric"))
    index_dtype = common.dtype_of(op.results[1].type)
    if len(op.operands) == 2:
        return Kernel(fused_score_top_k, Operand(0), Operand(1), None, metric, k, recall, is_max, override, aggregate,
                      index_dtype)
    return Kernel(fused_score_top_k, Operand(0), Operand(1), Rest(2), metric, k, recall, is_max, override,
                  aggregate, index_dtype)


@rule("knn.fused_score_top_k")
def _fused_reference(interp, op: Operation, args: list) -> tuple:
    k, recall, is_max, override, aggregate = _attrs(op)
    norms = args[2] if len(args) == 3 else None
    return fused_score_top_k_reference(args[0], args[1], norms, common.string(op.get_attr("metric")), k, recall,
                                       is_max, override, aggregate, common.dtype_of(op.results[1].type))


__all__ = ["approx_top_k", "approx_top_k_2d", "fused_score_top_k", "fused_score_top_k_reference", "partial_reduce",
           "select_top_k"]
