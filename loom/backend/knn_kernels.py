"""Kernels of the knn dialect for both executors.

`knn.approx_top_k` has one numpy kernel (strided-bin partial reduction, then an exact top-k of the
bins). `knn.fused_score_top_k` has two: the interpreter's reference (`fused_score_top_k_reference`:
the whole score matrix, then the same partial reduction; it defines the semantics) and the
compiled executor's fast kernel (`fused_score_top_k`), which never materialises the Q x N scores:

- the database is swept in chunks whose width is a multiple of the bin count L, so that within
  a chunk the bin of column j is still j mod L;
- one worker per core, each with a single-threaded BLAS (the thread count is process-wide, so it
  is lowered for the search and restored after): a slice of the database per worker (query
  tiles alone when the database is small); one GEMM per (tile, chunk), reduced while the tile is
  in cache by in-place elementwise maxima of its rows of bins into the group's running maximum,
  carried in the first row of the score buffer; when L is too large for several rows of bins
  per tile, each chunk is one row of bins, and a group's rows are swept one range of bins at a
  time, each range's running maximum staying in cache while the rows fold into it;
- only the unit that gave each bin its maximum is remembered, not the position, so the
  hot loop does one pass over the scores and no arg-max; after the sweep the exact top-k of the L
  bins is taken, and only for the k chosen bins is the winning position found again, by
  recomputing that bin's few scores in its unit (about GROUP_ROWS dot products per chosen bin);
- for L2 the half squared norms are added to each score tile while it is in cache;
- a float16 / bfloat16 database is widened to float32 in blocks of a few chunks, never copied
  whole; the query tiles of a worker sweep each block while it is in cache, so it is widened once.
- an exact search (one bin per element) over a large database is a threshold sweep instead
  (`exact_top_k`): each cached score tile is folded to maxima of a few rows and only the folds
  reaching a running lower bound of each query's k-th best score are opened, so beyond the GEMM
  it costs about one pass over the scores.

benchmarks/NOTES.md (knn section) records the measurements behind these choices.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

from loom.backend import common
from loom.backend.interpreter import rule
from loom.backend.kernels import LOW_FLOATS, Kernel, Operand, Rest, kernel
from loom.dialects.knn import num_bins
from loom.ir.core import Operation

# Tile sizes: a (chunk x query tile) float32 score tile of CHUNK_BYTES, query tiles of at most
# QUERY_TILE. Measured on a 2-core EPYC (1 MiB L2 per core, 32 MiB L3), one single-threaded GEMM
# per worker: 1024 database rows x 250 queries (1 MiB, in L2) swept faster than 2048 x 500 or
# 4096 x 500 (4-8 MiB, in L3), the GEMM itself losing nothing at that size (benchmarks/NOTES.md,
# knn section).
QUERY_TILE = 256
CHUNK_BYTES = 1 << 20
GROUP_ROWS = 16


def _compute_dtype(dtype: np.dtype) -> np.dtype:
    """f16/bf16 are computed in float32 (as XLA does on CPU), the rest in their own type."""
    return np.dtype(np.float32) if np.dtype(dtype) in LOW_FLOATS else np.dtype(dtype)


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
    if width > 4 * k + 64 and values.shape[0]:
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


class _BlasThreads:
    """The thread count of the OpenBLAS numpy loaded, which is process-wide.

    The sweep runs one single-threaded GEMM per worker, so BLAS must use one thread while it
    runs. OpenBLAS's `openblas_set_num_threads_local` does not help: here it sets the global
    count too (a worker calling it left every later BLAS call of the process on one thread), so
    the count is lowered for the duration of a search and restored after, with a user count so
    that concurrent searches restore it once. Another BLAS (MKL, Accelerate): `get`/`set` are
    None and the sweep runs on one worker, BLAS threading each GEMM itself."""

    def __init__(self) -> None:
        self.get, self.set = _openblas_thread_functions()
        self.lock = threading.Lock()
        self.users = 0
        self.saved = 1

    def threads(self) -> int:
        """The count BLAS has outside searches (what the user or OPENBLAS_NUM_THREADS set)."""
        with self.lock:
            return self.saved if self.users else self.get()

    @contextlib.contextmanager
    def single(self) -> Iterator[None]:
        if self.set is None:
            yield
            return
        with self.lock:
            if self.users == 0:
                self.saved = self.get()
                self.set(1)
            self.users += 1
        try:
            yield
        finally:
            with self.lock:
                self.users -= 1
                if self.users == 0:
                    self.set(self.saved)


def _openblas_thread_functions() -> tuple[Any, Any]:
    """(get, set) of the global thread count of the OpenBLAS in numpy's wheel, or (None, None)."""
    import ctypes
    import glob
    libs_dir = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in sorted(glob.glob(os.path.join(libs_dir, "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        # scipy-openblas prefixes and (for 64-bit integers) suffixes its symbols
        for prefix, suffix in (("scipy_", "64_"), ("scipy_", ""), ("", "64_"), ("", "")):
            get = getattr(lib, f"{prefix}openblas_get_num_threads{suffix}", None)
            set_ = getattr(lib, f"{prefix}openblas_set_num_threads{suffix}", None)
            if get is not None and set_ is not None:
                get.restype = ctypes.c_int
                set_.argtypes = [ctypes.c_int]
                return get, set_
    return None, None


_BLAS = _BlasThreads()


def _workers() -> int:
    """Worker threads of the sweep: as many as BLAS would use itself (one per core unless the
    user limited it, e.g. OPENBLAS_NUM_THREADS=1) when BLAS can be made single-threaded for the
    search; otherwise 1 (BLAS threads each GEMM itself)."""
    if _BLAS.set is None:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(cores, _BLAS.threads(), 16))


def _pool() -> ThreadPoolExecutor:
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
            # sized for the machine; how many run at once is the number of jobs `_workers()` makes
            _POOL = ThreadPoolExecutor(max_workers=max(1, min(cores, 16)), thread_name_prefix="loom-knn")
        return _POOL


def _improve(best: np.ndarray, best_unit: np.ndarray, values: np.ndarray, unit: Any) -> None:
    """best, best_unit = values, unit where `values` is larger, or NaN (a NaN, once in, stays: the
    per-bin `max` propagates NaN too, as the reference's arg-max picks it, and the search's
    finiteness check reads it). Ties keep the earlier unit, the smaller position."""
    better = ~(values <= best)
    better &= best == best
    np.copyto(best, values, where=better)
    np.copyto(best_unit, unit, where=better)


class _TileSweep:
    """The running per-bin maximum of `q . x (+ h)` for one query tile, fed the rows of a database
    slice (starting at a multiple of `chunk * group` rows, the `first_unit`-th such unit) in
    consecutive blocks of whole chunks. `best` and `best_unit` (both bins x queries) hold the best
    value per bin and the unit (of `group` chunks of `chunk` rows) it came from.

    Scores are computed transposed, database rows x queries, so that the rows of one bin are
    whole contiguous rows: with `chunk` a multiple of `bins`, a chunk's scores are `chunk / bins`
    contiguous (bins x queries) blocks, reduced elementwise over long contiguous runs (2.5x a
    reduction over a middle axis). The score buffer starts with one more block, the group's
    running maximum, into which each block is folded by an in-place `maximum` (3-8% faster than
    one `max` reduction over all the blocks, whose output overlapped its input): the group's
    maximum costs no pass of its own, and one buffer (1.25 MiB at the default tile) stays in
    cache where two alternating ones did not (7% faster, benchmarks/NOTES.md). The running
    (value, unit) state is updated once per group. With `chunk == bins` (bins too many for one
    cached tile), each chunk is one block, folded into a separate running maximum (an
    elementwise `_improve` of every piece instead cost 12-17% more at L=1024-2048) one range of
    bins at a time (see `feed`)."""

    __slots__ = ("q_t", "bins", "chunk", "group", "first_unit", "best", "best_unit", "buffer", "run")

    def __init__(self, q: np.ndarray, bins: int, chunk: int, group: int, first_unit: int) -> None:
        qt = q.shape[0]
        self.q_t = np.ascontiguousarray(q.T)  # BLAS measured ~10% faster with this operand contiguous
        self.bins, self.chunk, self.group, self.first_unit = bins, chunk, group, first_unit
        self.best = np.full((bins, qt), -np.inf, dtype=q.dtype)
        self.best_unit = np.zeros((bins, qt), dtype=np.int32)
        if chunk > bins:
            self.buffer = np.empty((bins + chunk, qt), dtype=q.dtype)
            self.run = self.buffer[:bins]
        else:
            self.buffer = np.empty((max(1, min(bins, CHUNK_BYTES // (2 * qt * q.dtype.itemsize))), qt), dtype=q.dtype)
            self.run = np.empty((bins, qt), dtype=q.dtype)

    # inf - inf and overflow from a non-finite or huge database row: reported by the search
    @np.errstate(invalid="ignore", over="ignore")
    def feed(self, x: np.ndarray, h: np.ndarray | None, first_chunk: int, last: bool) -> None:
        """Fold rows `x` (compute type; whole chunks unless `last`, the slice's final block),
        chunks `first_chunk`, `first_chunk + 1`, ... of the slice, with `h` their norm terms."""
        n, bins, chunk, group = x.shape[0], self.bins, self.chunk, self.group
        run, q_t, buffer = self.run, self.q_t, self.buffer
        count = -(-n // chunk)
        if chunk > bins:
            flat_run = run.reshape(-1)
            for i in range(count):
                c = first_chunk + i
                start, stop = i * chunk, min(i * chunk + chunk, n)
                width = stop - start
                s = buffer[bins:bins + width]
                np.matmul(x[start:stop], q_t, out=s)
                if h is not None:
                    s += h[start:stop, None]
                first = c % group == 0
                full = width // bins
                blocks = buffer[bins:bins + full * bins].reshape(full, flat_run.size)
                if first:  # the group's first chunk starts the running maximum
                    if full >= 2:
                        np.maximum(blocks[0], blocks[1], out=flat_run)
                    elif full == 1:
                        np.copyto(flat_run, blocks[0])
                    else:
                        run.fill(-np.inf)
                for b in range(min(full, 2) if first else 0, full):
                    np.maximum(flat_run, blocks[b], out=flat_run)
                rest = width - full * bins
                if rest:  # the database's last, partial row of bins
                    np.maximum(run[:rest], s[full * bins:], out=run[:rest])
                if c % group == group - 1 or (last and i == count - 1):
                    _improve(self.best, self.best_unit, run, self.first_unit + c // group)
        else:
            # Bin range outermost within each group's rows in `x`: a range's running maximum
            # and its score piece stay in L2 (each half of CHUNK_BYTES) while the group's rows of
            # bins are folded in, where row by row the whole (bins x queries) maximum went
            # through L3 for every row (k=100: 7% faster on two threads, benchmarks/NOTES.md).
            piece = buffer.shape[0]
            i = 0
            while i < count:
                end = min(count, i + group - (first_chunk + i) % group)  # up to the group's end
                for b0 in range(0, bins, piece):
                    width = min(piece, bins - b0)
                    part = run[b0:b0 + width]
                    for j in range(i, end):
                        start = j * bins + b0
                        w = min(width, n - start)
                        first = (first_chunk + j) % group == 0
                        if w <= 0:  # past the database's last, partial row of bins
                            if first:
                                part.fill(-np.inf)
                            break
                        if first:
                            if w < width:
                                part.fill(-np.inf)
                            s = part[:w]
                            np.matmul(x[start:start + w], q_t, out=s)
                        else:
                            s = buffer[:w]
                            np.matmul(x[start:start + w], q_t, out=s)
                        if h is not None:
                            s += h[start:start + w, None]
                        if not first:
                            np.maximum(part[:w], s, out=part[:w])
                c = first_chunk + end - 1
                if c % group == group - 1 or (last and end == count):
                    _improve(self.best, self.best_unit, run, self.first_unit + c // group)
                i = end


# Rows of a float16 / bfloat16 database widened at a time: a whole number of chunks, widened once
# for all the query tiles that sweep them (from L3) instead of once per tile.
WIDEN_BYTES = 2 << 20
TILES_PER_WIDEN = 8


def _sweep(tiles: list[np.ndarray], db: np.ndarray, h: np.ndarray | None, bins: int, chunk: int, group: int,
           first_unit: int, dtype: np.dtype) -> list[tuple[np.ndarray, np.ndarray]]:
    """The sweep of the query tiles `tiles` over `db` (a slice of the database starting at a
    multiple of `chunk * group` rows, the `first_unit`-th such unit): (best value, unit) per bin
    and query (bins x queries) for each tile. A database of another type than `dtype` (float16,
    bfloat16) is widened in blocks of whole chunks, each swept by every tile while it is hot."""
    n = db.shape[0]
    sweeps = [_TileSweep(q, bins, chunk, group, first_unit) for q in tiles]
    block = n if db.dtype == dtype else chunk * max(1, WIDEN_BYTES // (chunk * db.shape[1] * dtype.itemsize))
    rows = _widened(db, dtype, block)
    for start in range(0, n, block):
        stop = min(start + block, n)
        x = rows(start, stop)
        for sweep in sweeps:
            sweep.feed(x, None if h is None else h[start:stop], start // chunk, stop == n)
    return [(sweep.best, sweep.best_unit) for sweep in sweeps]


def _tiling(L: int, qtile: int, itemsize: int, chunk_bytes: int | None,  # noqa: N803
            group_rows: int | None) -> tuple[int, int, int]:
    """(query tile, chunk, group) of the sweep for tiles of `qtile` queries: chunks of database
    rows whose score tile fits `chunk_bytes` (CHUNK_BYTES), grouped by about GROUP_ROWS rows of
    bins."""
    per_row = (chunk_bytes or CHUNK_BYTES) // (max(1, qtile) * itemsize)
    if L * 2 > per_row:
        # Too many bins for a cached tile of several rows of bins: one row of bins per chunk,
        # swept in cached pieces, folded into the group's running maximum; fewer queries per tile
        # keep the running (query x bin) state small.
        return max(8, min(qtile, (64 << 20) // (L * itemsize * 2))), L, max(1, group_rows or GROUP_ROWS)
    # Groups of about GROUP_ROWS rows of bins: the running state is updated once per group and
    # the winner's position is found again among that many candidates. A chunk holds at most one
    # group: with few queries a cache-sized tile has many rows of bins, and finding a winner among
    # all of them cost as much as the sweep (10 queries over 20k vectors).
    rows = max(1, group_rows or GROUP_ROWS)
    chunk = min(per_row // L, rows) * L
    return max(1, qtile), chunk, max(1, rows // (chunk // L))


def _widened(db: np.ndarray, dtype: np.dtype, most: int) -> Any:
    """rows(start, stop): those rows of `db` in `dtype`; a view where `db` has that type, else
    widened into one reused buffer of `most` rows (a float16 / bfloat16 database's block)."""
    if db.dtype == dtype:
        return lambda start, stop: db[start:stop]
    buffer = np.empty((max(1, most), db.shape[1]), dtype)
    if db.dtype == np.float16 and dtype == np.float32:
        bits = np.empty(buffer.shape, np.uint32)
        return lambda start, stop: widen_float16(db[start:stop], buffer[:stop - start], bits[:stop - start])

    def rows(start: int, stop: int) -> np.ndarray:
        out = buffer[:stop - start]
        out[...] = db[start:stop]
        return out
    return rows


_F16_SCALE = np.float32(2.0 ** 112)  # float32's exponent bias minus float16's, as a factor
_F32_INF_BITS = np.uint32(0x7F800000)


def widen_float16(x: np.ndarray, out: np.ndarray, bits: np.ndarray) -> np.ndarray:
    """`x` (float16) into `out` (float32, same shape; `bits` a uint32 scratch of that shape),
    equal to `x.astype(np.float32)` for every value, NaN payloads included. numpy's own cast is
    a scalar loop here (~3 ns a value, a third of what a 250-query GEMM spends on it); these
    vectorised passes over the bits take about half of that: the magnitude bits shifted into
    float32's place and scaled by 2**112 (which also makes float16's subnormals right), inf and
    NaN (the values that come out >= 2**16) given float32's all-ones exponent, then the sign."""
    o = out.view(np.uint32)
    np.copyto(bits, x.view(np.uint16), casting="unsafe")
    np.bitwise_and(bits, 0x7FFF, out=o)
    np.left_shift(o, 13, out=o)
    np.multiply(out, _F16_SCALE, out=out)
    np.bitwise_or(o, _F32_INF_BITS, out=o, where=out >= 65536.0)
    np.bitwise_and(bits, 0x8000, out=bits)
    np.left_shift(bits, 16, out=bits)
    np.bitwise_or(o, bits, out=o)
    return out


def _sweep_all(qc: np.ndarray, dbc: np.ndarray, h: np.ndarray | None, L: int, best: np.ndarray,  # noqa: N803
               best_unit: np.ndarray, query_tile: int | None, chunk_bytes: int | None,
               group_rows: int | None) -> int:
    """The sweep of all queries over the whole database on the workers, each with a
    single-threaded BLAS: database slices (their per-bin states merged after, the earlier slice
    winning ties, as the smaller position) times query tiles, or query tiles alone when the
    database is too small to slice. Returns the number of database rows per position-tracking
    unit."""
    nq, n = qc.shape[0], dbc.shape[0]
    workers = _workers()
    # Database slices, one per worker, whenever the database holds a few units per worker: the
    # query tiles then stay as wide as QUERY_TILE allows, where splitting few queries among the
    # workers made each GEMM narrower and every worker read the whole database (10 queries over
    # 1M x 128: 0.17-0.19 s with two tiles of 6, 0.10 s with two slices; benchmarks/NOTES.md).
    # Query tiles otherwise, a multiple of the worker count of them for balance.
    nq = max(nq, 1)
    # With many bins (one row of bins per chunk, see `_tiling`) the tiles are twice as wide: half
    # the passes over the database, and wider GEMMs, for a larger running state (k=100: 3.23 ->
    # 3.03 s; k=10 at recall 0.99: 2.70 -> 2.61 s; tiles of 1000: 3.08 and 2.72 s).
    many_bins = L * 2 > (chunk_bytes or CHUNK_BYTES) // (QUERY_TILE * qc.dtype.itemsize)
    widest = QUERY_TILE * (2 if many_bins else 1)

    def tile_of(tiles: int) -> int:  # queries per tile, `tiles` tiles of at most `widest`
        return -(-nq // tiles)

    qtile, chunk, group = _tiling(L, query_tile or tile_of(-(-nq // widest)), qc.dtype.itemsize, chunk_bytes,
                                  group_rows)
    unit = chunk * group
    slices = [(0, n)]
    if workers > 1 and n >= 2 * workers * unit:
        per = -(-(n // unit) // workers) * unit
        slices = [(a, min(a + per, n)) for a in range(0, n, per)]
    elif not query_tile:
        qtile, chunk, group = _tiling(L, tile_of(workers * -(-nq // (workers * widest))), qc.dtype.itemsize,
                                      chunk_bytes, group_rows)
        unit = chunk * group
    tiles = [(a, min(a + qtile, nq)) for a in range(0, nq, qtile)]
    # A float32 database: one job per (query tile, slice), each reading its slice from memory
    # (sharing a slice among tiles from L3 measured slower, benchmarks/NOTES.md). A float16 /
    # bfloat16 one: up to TILES_PER_WIDEN tiles per job share each widened block.
    per_job = 1 if dbc.dtype == qc.dtype or len(slices) == 1 else TILES_PER_WIDEN
    jobs = [(tiles[t:t + per_job], lo, hi) for t in range(0, len(tiles), per_job) for lo, hi in slices]

    def run(job: tuple) -> list[tuple[np.ndarray, np.ndarray]]:
        group_tiles, lo, hi = job
        return _sweep([qc[a:b] for a, b in group_tiles], dbc[lo:hi], h if h is None else h[lo:hi], L, chunk,
                      group, lo // unit, qc.dtype)

    if len(jobs) > 1 and workers > 1:
        results = [f.result() for f in [_pool().submit(run, job) for job in jobs]]
    else:
        results = [run(job) for job in jobs]
    for (group_tiles, lo, _), states in zip(jobs, results):
        for (a, b), (values, units) in zip(group_tiles, states):
            if lo == 0:
                best[a:b], best_unit[a:b] = values.T, units.T
            else:
                _improve(best[a:b], best_unit[a:b], values.T, units.T)
    return unit


def fused_score_top_k(queries, database, half_squared_norms, metric: str, k: int, recall_target: float,
                      is_max_k: bool, input_size_override: int, aggregate_to_topk: bool, index_dtype=np.int32,
                      bins: int | None = None, query_tile: int | None = None,
                      chunk_bytes: int | None = None, group_rows: int | None = None,
                      check_finite: str | None = None, row_offset: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The compiled executor's kernel of `knn.fused_score_top_k` (see the module docstring).
    `bins` may raise the bin count above XLA's (more bins only raise recall); `query_tile`,
    `chunk_bytes` and `group_rows` override the tiling (QUERY_TILE, CHUNK_BYTES, GROUP_ROWS).
    With `check_finite` (the database's name in the message), a database row holding NaN or inf
    raises ValueError: the sweep, which reads the database anyway, carries two more queries, all
    ones and all minus ones, whose scores +-sum(x) (+ h) are NaN or +inf for one of them exactly
    when x is not finite (or its sum overflows: then the exact per-row check finds nothing); the
    message numbers the row from `row_offset` (the database is a batch of a larger one)."""
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
    # Exact (every element its own bin) over a database of more than a few chunks: the threshold
    # sweep of `exact_top_k` (benchmarks/NOTES.md).
    exact = aggregate_to_topk and L >= n and n >= EXACT_SWEEP_MIN and k * 8 < n
    if nq == 0:  # no queries: empty results of the op's width
        if check_finite:
            check_rows_finite(db, check_finite, row_offset)
        width = k if aggregate_to_topk else _output_width(n, 2, k, recall_target, input_size_override)
        return np.empty((0, width), dtype), np.empty((0, width), index_dtype)
    qc = np.ascontiguousarray(q, dtype=ct)
    if dot_sign < 0:
        qc = -qc
    if check_finite:
        probes = np.ones((2, db.shape[1]), ct)
        probes[1] = -1
        qc = np.concatenate([qc, probes])
    # A float16 / bfloat16 database stays as it is: the sweep widens a block at a time (a
    # float32 copy of the whole database would double the memory such a database saves).
    dbc = np.ascontiguousarray(db) if db.dtype in LOW_FLOATS else np.ascontiguousarray(db, dtype=ct)
    h = None
    if norm_sign != 0.0:
        h = np.asarray(half_squared_norms, dtype=ct) * ct.type(norm_sign)
    if exact:
        values, positions, finite = exact_top_k(qc, dbc, h, k, 2 if check_finite else 0, chunk_bytes)
        if not finite:
            check_rows_finite(db, check_finite, row_offset)
        if not is_max_k:
            values = -values
        return values.astype(dtype), positions.astype(index_dtype)
    best = np.empty((qc.shape[0], L), dtype=ct)
    best_unit = np.empty((qc.shape[0], L), dtype=np.int32)
    workers = _workers()
    # The workers' GEMMs (sweep and locate) run on one BLAS thread each (see _BlasThreads).
    with _BLAS.single():
        positions_unit = _sweep_all(qc, dbc, h, L, best, best_unit, query_tile, chunk_bytes, group_rows)
        if check_finite:
            suspect = not np.isfinite(best[nq:]).all()
            qc, best, best_unit = qc[:nq], best[:nq], best_unit[:nq]
            if suspect:
                check_rows_finite(db, check_finite, row_offset)
    with _BLAS.single():
        # Select bins, then find the winning position inside each chosen bin's unit: both per
        # query, split among the workers (the locate is a gather of database rows per bin).
        def finish(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
            bin_ids = np.broadcast_to(np.arange(L, dtype=np.int64), (b - a, L))
            if aggregate_to_topk:
                values, chosen = select_top_k(best[a:b], bin_ids, k, True)
            else:
                values, chosen = best[a:b], np.array(bin_ids)
            unit_of = np.take_along_axis(best_unit[a:b], chosen, axis=1).astype(np.int64)
            return values, _locate(qc[a:b], dbc, h, L, positions_unit, chosen, unit_of)

        parts = workers if workers > 1 and nq >= 64 else 1
        bounds = [(nq * w // parts, nq * (w + 1) // parts) for w in range(parts)]
        if parts > 1:
            done = [f.result() for f in [_pool().submit(finish, a, b) for a, b in bounds]]
        else:
            done = [finish(0, nq)]
        values = np.concatenate([v for v, _ in done])
        positions = np.concatenate([p for _, p in done])
    if not is_max_k:
        values = -values  # back from the maximisation to the op's scores
    if not aggregate_to_topk:
        out_width = _output_width(n, 2, k, recall_target, input_size_override)
        if out_width > L:
            fill = -np.inf if is_max_k else np.inf
            values = np.concatenate([values, np.full((nq, out_width - L), fill, values.dtype)], 1)
            positions = np.concatenate([positions, np.full((nq, out_width - L), -1, np.int64)], 1)
    return values.astype(dtype), positions.astype(index_dtype)


# Exact search (every element its own bin) from this many database rows on: the threshold sweep
# of `exact_top_k` instead of the partial reduction (whose one bin per row kept a running state
# the size of the score matrix: 131 queries/s against 1,839 at recall 0.95 on 200k x 128).
EXACT_SWEEP_MIN = 4096
# The threshold sweep's score tiles are folded by maxima of EXACT_FOLD rows (1/16 of the tile to
# compare), and its first step, which sets the first thresholds, has EXACT_WARM_ROWS rows.
EXACT_FOLD = 16
EXACT_WARM_ROWS = 4096
# Score tiles of 2 MiB (2048 rows x 256 queries): half the steps of CHUNK_BYTES' tiles, each step's
# numpy calls costing as much as its scores' fold (100k rows x 250 queries, CPU time over the
# tile GEMMs alone: 1.37x with 1 MiB tiles, 1.30x with 2 MiB, 1.29x with 4 MiB)
EXACT_CHUNK_BYTES = 2 << 20
# The candidates are cut to each query's best k once EXACT_CUT x k per query are held (1.2, 2 and 4
# alike within the noise of a loaded 2-core machine: a cut sorts few candidates).
EXACT_CUT = 2


class _ExactTile:
    """The exact top k (largest q . x + h, ties to the smaller position) of one query tile over a
    database slice fed in consecutive blocks of rows.

    Each step's score tile (rows x queries, in cache) is folded to the maxima of EXACT_FOLD rows
    (rows r, r + rows/EXACT_FOLD, ...); only the folds reaching a query's threshold t are opened,
    their scores >= t kept as candidates, and now and then the candidates are cut to each
    query's best k and t raised. t is a lower bound of the k-th best score: from the first step
    (EXACT_WARM_ROWS rows, in L3), the k-th largest of its folds' maxima (distinct rows' scores);
    once a query holds k candidates, just above its k-th best, since a later row tying it ranks
    after it. No score is computed twice and no database row is read again; a query's folds
    rarely reach t after the first steps, so beyond the GEMM a step costs one pass over its
    scores (the fold)."""

    __slots__ = ("q_t", "k", "chunk", "scores", "t", "held", "pending", "probes", "probe_max", "started")

    def __init__(self, q: np.ndarray, k: int, chunk: int, probes: int) -> None:
        qt = q.shape[0]
        self.q_t = np.ascontiguousarray(q.T)
        self.k, self.chunk = k, chunk
        warm = max(chunk, -(-max(EXACT_WARM_ROWS, 4 * EXACT_FOLD * k) // EXACT_FOLD) * EXACT_FOLD)
        self.scores = np.empty((warm, qt), q.dtype)
        self.t = np.full(qt, -np.inf, q.dtype)
        self.held = 0
        # (values, query, position) of the candidates: the cut ones first, then those found since
        self.pending: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        # the last `probes` queries are the finiteness probes: their folds' running maximum keeps
        # a NaN (which no threshold lets through)
        self.probes = probes
        self.probe_max = np.full(probes, -np.inf, q.dtype)
        self.started = False

    @np.errstate(invalid="ignore", over="ignore")
    def feed(self, x: np.ndarray, h: np.ndarray | None, row0: int) -> None:
        """Fold rows `x` (compute type), database positions `row0`, `row0 + 1`, ..., with `h`
        their norm terms."""
        a, n, qt = 0, x.shape[0], self.scores.shape[1]
        while a < n:
            w = min(n - a, self.chunk if self.started else self.scores.shape[0])
            bins = -(-w // EXACT_FOLD)
            s = self.scores[:bins * EXACT_FOLD]
            np.matmul(x[a:a + w], self.q_t, out=s[:w])
            if h is not None:
                s[:w] += h[a:a + w, None]
            s[w:] = -np.inf
            folded = np.max(s.reshape(EXACT_FOLD, -1), axis=0).reshape(bins, qt)
            if self.probes:
                np.maximum(self.probe_max, folded[:, qt - self.probes:].max(axis=0), out=self.probe_max)
            if not self.started and bins >= self.k:
                self.t = np.partition(folded, bins - self.k, axis=0)[bins - self.k]
            self.started = True
            hits = np.flatnonzero(folded >= self.t)  # fold * qt + query (10x faster than a 2-D nonzero)
            if hits.size:
                # the folded scores: rows fold + j * bins of the step, at hit + j * bins * qt (j-major:
                # the candidates come in position order, which `cut` relies on)
                where = hits + (bins * qt) * np.arange(EXACT_FOLD)[:, None]
                values = np.take(s.reshape(-1), where)
                keep = values >= self.t[hits % qt]
                if w % EXACT_FOLD:  # the padding rows (-inf) pass a threshold of -inf
                    keep &= where < w * qt
                where = where[keep]
                self.pending.append((values[keep], where % qt, where // qt + (row0 + a)))
                self.held += where.size
                if self.held >= EXACT_CUT * self.k * qt:
                    self.cut()
            a += w

    def cut(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Each query's best k candidates (ties to the smaller position) kept, the others dropped,
        and t raised; returns them (values, query, position, rank), by query then rank."""
        values, query, rows = (np.concatenate(p) for p in zip(*self.pending)) if self.pending else \
            (np.empty(0, self.t.dtype), np.empty(0, np.int64), np.empty(0, np.int64))
        # by query, then best first; ties stay in position order (stable sorts): the kept
        # candidates come first, each query's by position among equal scores, then those found
        # since, in position order
        order = np.lexsort((-values, query))
        values, query, rows = values[order], query[order], rows[order]
        counts = np.bincount(query, minlength=self.t.size)
        first = np.cumsum(counts) - counts
        rank = np.arange(query.size) - np.repeat(first, counts)
        full = np.flatnonzero(counts >= self.k)
        # a later row tying the k-th best ranks after it: only a larger score can enter
        self.t[full] = np.maximum(self.t[full], np.nextafter(values[first[full] + self.k - 1], np.inf))
        best = rank < self.k
        kept = values[best], query[best], rows[best]
        self.pending, self.held = [kept], kept[0].size
        return (*kept, rank[best])

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """(values, positions) of each query's best k, best first; missing ones -inf and the
        largest int64."""
        values, query, rows, rank = self.cut()
        out_v = np.full((self.t.size, self.k), -np.inf, self.t.dtype)
        out_p = np.full((self.t.size, self.k), np.iinfo(np.int64).max, np.int64)
        out_v[query, rank], out_p[query, rank] = values, rows
        return out_v, out_p


def exact_top_k(qc: np.ndarray, dbc: np.ndarray, h: np.ndarray | None, k: int, probes: int = 0,
                chunk_bytes: int | None = None) -> tuple[np.ndarray, np.ndarray, bool]:
    """The exact top k (largest q . x + h, ties to the smaller position; k <= rows) of each query:
    (values, int64 positions, finite), where `finite` says whether the last `probes` queries
    (the finiteness probes, whose own top k is not returned) met only finite scores. Query tiles
    times database slices on the workers (single-threaded BLAS each), each a threshold sweep
    (`_ExactTile`), the slices' answers merged."""
    nq, n = qc.shape[0], dbc.shape[0]
    workers = _workers()
    dtype = qc.dtype
    tiles_count = -(-nq // QUERY_TILE)
    qtile = -(-nq // tiles_count)
    chunk = max(EXACT_FOLD, (chunk_bytes or EXACT_CHUNK_BYTES) // (qtile * dtype.itemsize) // EXACT_FOLD * EXACT_FOLD)
    slices = [(0, n)]
    if workers > 1 and n >= 8 * workers * chunk:
        per = -(-n // (workers * chunk)) * chunk
        slices = [(a, min(a + per, n)) for a in range(0, n, per)]
    elif workers > 1 and tiles_count % workers:
        tiles_count = -(-tiles_count // workers) * workers  # as many tiles as workers, for balance
        qtile = -(-nq // tiles_count)
    tiles = [(a, min(a + qtile, nq)) for a in range(0, nq, qtile)]
    per_job = 1 if dbc.dtype == dtype or len(slices) == 1 else TILES_PER_WIDEN
    jobs = [(tiles[t:t + per_job], lo, hi) for t in range(0, len(tiles), per_job) for lo, hi in slices]

    def run(job: tuple) -> list[tuple[np.ndarray, np.ndarray, bool]]:
        group_tiles, lo, hi = job
        db, hs = dbc[lo:hi], None if h is None else h[lo:hi]
        states = [_ExactTile(qc[a:b], k, chunk, max(0, b - (nq - probes))) for a, b in group_tiles]
        block = hi - lo if db.dtype == dtype else chunk * max(1, WIDEN_BYTES // (chunk * db.shape[1] * dtype.itemsize))
        rows = _widened(db, dtype, block)
        for start in range(0, hi - lo, block):
            stop = min(start + block, hi - lo)
            x = rows(start, stop)
            for state in states:
                state.feed(x, None if hs is None else hs[start:stop], lo + start)
        out = []
        for state in states:
            v, p = state.result()
            finite = bool(np.isfinite(state.probe_max).all())
            out.append((v, p, finite))
        return out

    with _BLAS.single():
        if len(jobs) > 1 and workers > 1:
            results = [f.result() for f in [_pool().submit(run, job) for job in jobs]]
        else:
            results = [run(job) for job in jobs]
    values = np.empty((nq, k), dtype)
    positions = np.empty((nq, k), np.int64)
    finite = True
    for (group_tiles, lo, _), states in zip(jobs, results):
        for (a, b), (v, p, ok) in zip(group_tiles, states):
            finite &= ok
            if lo == 0:
                values[a:b], positions[a:b] = v, p
            else:
                values[a:b], positions[a:b] = select_top_k(np.concatenate([values[a:b], v], 1),
                                                           np.concatenate([positions[a:b], p], 1), k, True)
    return values[:nq - probes], positions[:nq - probes], finite


def check_rows_finite(x: np.ndarray, name: str, row_offset: int = 0) -> None:
    """A ValueError naming the first row of `x` holding NaN or inf, numbered from `row_offset`."""
    finite = np.isfinite(x).all(axis=1)
    if not finite.all():
        raise ValueError(f"{name} contain NaN or inf (row {row_offset + int(np.argmin(finite))})")


def _locate(q: np.ndarray, db: np.ndarray, h: np.ndarray | None, bins: int, chunk: int, chosen: np.ndarray,
            chunk_of: np.ndarray) -> np.ndarray:
    """The database position of the best element of bin `chosen[i, j]` within chunk
    `chunk_of[i, j]`, recomputing that bin's few scores (chunk / bins of them) for query i."""
    n = db.shape[0]
    rows = chunk // bins
    start = chunk_of * chunk + chosen
    # One row a bin, or every later row of each chosen bin past the database's end (as with a bin
    # per row, where recomputing the scores of a whole score matrix took seconds): `start` it is.
    if rows == 1 or bool((start + bins >= n).all()):
        return start
    out = np.empty_like(start)
    nq, width = start.shape
    per_query = width * rows
    # Candidates covering the database (many bins, no aggregation: width * rows rows a query, as
    # many as the unit, most past the end of a small database): every score of a block of queries
    # from GEMMs over the database, the candidates' scores gathered from them (a query's candidate
    # rows gathered and scored one by one took ~10 s for 300 queries x 2,700 rows x 1,408 bins).
    # Otherwise, the candidate rows gathered in steps of ~2 MiB into one reused buffer (in cache,
    # no fresh pages): 30% faster than one 32 MiB fancy-indexed gather per step.
    all_scores = per_query >= n
    per_step = n if all_scores else per_query * db.shape[1]
    step = max(1, (2 << 20) // max(1, per_step * q.itemsize))
    gathered = None if all_scores else np.empty((min(step, nq) * per_query, db.shape[1]), db.dtype)
    offsets = bins * np.arange(rows, dtype=np.int64)
    for a in range(0, nq, step):
        b = min(a + step, nq)
        cand = start[a:b, :, None] + offsets  # (queries, width, rows)
        valid = cand < n
        safe = np.where(valid, cand, 0).reshape(-1)
        if all_scores:
            every = np.empty((b - a, n), q.dtype)
            for r in range(0, n, chunk):  # a float16 / bfloat16 database widened a chunk at a time
                every[:, r:r + chunk] = q[a:b] @ db[r:r + chunk].astype(q.dtype, copy=False).T
            if h is not None:
                every += h
            scores = np.take_along_axis(every, safe.reshape(b - a, per_query), 1).reshape(b - a, width, rows)
        else:
            vectors = np.take(db, safe, axis=0, out=gathered[:safe.size]).reshape(b - a, per_query, db.shape[1])
            vectors = vectors.astype(q.dtype, copy=False)  # a float16 / bfloat16 database's rows
            scores = np.matmul(vectors, q[a:b, :, None])[..., 0].reshape(b - a, width, rows)
            if h is not None:
                scores += h[safe].reshape(scores.shape)
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
