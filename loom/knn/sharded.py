"""Nearest neighbours over a database sharded by rows over a mesh axis.

    mesh = loom.make_mesh((4,), ("x",))
    db = loom.device_put(vectors, NamedSharding(mesh, P("x", None)))
    scores, ids = loom.knn.search(queries, db, k=10)            # ids: global database rows

The search is one SPMD program (`shard_map` under `loom.jit`, partitioned by
`loom.sharding.partition` and run by `loom.runtime.local.MeshExecutable`), traced once per shape:

    scores = bias - q . x_shard^T            # knn-fusion: one knn.fused_score_top_k per shard
    v, i = approx_min_k(scores, k)           # the shard's candidates, positions local
    i = i + axis_index * shard_rows          # positions in the padded global layout
    v, i = all_gather(v, i)                  # every shard's candidates (k per query per shard)
    v, i = top_k(-v, k)                      # the exact top-k of the candidates

Every metric is written as the "l2" form `bias - q . x` (smallest first): `bias` is the half
squared norm for "l2" and 0 for "ip" and "cos" (for which `-(0 - q . x)` is `q . x` exactly).
Shards shorter than the longest are padded up to it with zero rows whose bias is +inf: their
scores are +inf, never better than a database row, and at least k database rows are always among
the candidates (each shard gives min(k, its rows) of its own rows before any padding), so padding
is never returned. Queries may be replicated or split by rows over other mesh axes (data
parallel); queries split over the database's axis too are gathered over it first, and the
candidates of each shard are exchanged with `all_to_all` instead (each device then merges the
candidates of its own queries).

Recall: shard s keeps L_s = `num_bins(n, k, recall_target)` strided bins of its n padded rows,
and a true neighbour is missed only when a better true neighbour shares its bin (the merge is
exact: a bin's winner among the global top k is among its shard's top k). All shards together
have B = sum_s min(L_s, rows_s) bins, so E[recall] >= (1 - 1/B)^(k-1), XLA's bound with M = B; B
is at least the bin count of one device searching all N rows (S * L(ceil(N/S)) >= L(N)), so
sharding only raises the recall. `recall_target=1.0` is exact: the same ids and scores as a
single-device search.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

import loom.numpy as lnp
from loom import lax
from loom.backend.kernels import LOW_FLOATS
from loom.frontend.jit import jit
from loom.frontend.shapes import ShapeDtypeStruct
from loom.frontend.shard_map import shard_map
from loom.knn.search import check_finite_rows, check_k, check_vectors, half_squared_norms, normalize
from loom.runtime.devices import ShardedArray
from loom.sharding import Mesh, NamedSharding, P


def check_shard_finite(x: np.ndarray, shard: int, first_row: int) -> None:
    """A ValueError naming the shard and row of the first row of `x` (shard `shard`, whose first
    row is database row `first_row`) holding NaN or inf."""
    try:
        check_finite_rows(x, f"database shard {shard}")
    except ValueError:
        r = int(np.argmin(np.isfinite(x).all(axis=1)))
        raise ValueError(f"database shard {shard} contains NaN or inf in its row {r} (database row "
                         f"{first_row + r})") from None


def mesh_axes(sharding: Any, dim: int, what: str) -> tuple[str, ...]:
    if not isinstance(sharding, NamedSharding):
        raise TypeError(f"{what} must be sharded by a NamedSharding, but has {sharding!r}")
    return sharding.spec.axes_of(dim)


def shard_pieces(database: ShardedArray) -> tuple[Mesh, tuple[str, ...], list[np.ndarray], list[int]]:
    """(mesh, the mesh axes splitting the rows, each row shard's data in shard order, each one's
    first row) of a row-sharded database (its columns not split)."""
    sharding = database.sharding
    axes = mesh_axes(sharding, 0, "the database")
    if database.ndim != 2:
        raise ValueError(f"database must be a 2-D array (vectors x dimension), but got shape {database.shape}")
    if mesh_axes(sharding, 1, "the database"):
        raise ValueError(f"the database's columns are split ({sharding.spec!r}): shard it by rows only, "
                         f"P(axis, None)")
    by_range: dict[tuple[int, int], np.ndarray] = {}
    for shard in database.addressable_shards:
        rows = range(database.shape[0])[shard.index[0]]
        by_range.setdefault((rows.start, rows.stop), shard.data)
    count = math.prod(sharding.mesh.shape[a] for a in axes)
    ranges = sorted(r for r in by_range if r[1] > r[0])
    if len(ranges) > count or [b for _, b in ranges[:-1]] != [a for a, _ in ranges[1:]]:
        raise ValueError(f"the database's shards hold rows {ranges}, not {count} consecutive row ranges")
    pieces = [np.asarray(by_range[r]) for r in ranges]
    starts = [a for a, _ in ranges]
    # shards with no rows (more shards than rows): empty pieces after the last
    empty = np.zeros((0, database.shape[1]), database.dtype)
    pieces += [empty] * (count - len(pieces))
    starts += [database.shape[0]] * (count - len(starts))
    return sharding.mesh, axes, pieces, starts


class ShardedDatabase:
    """A database as row shards over `axes` of `mesh`, prepared for the search program: each
    shard padded to `rows` rows (the longest by default), with its bias (+inf on padding).

    `pieces[s]` holds shard s's vectors (normalised for "cos") in its first `sizes[s]` rows (all
    of them by default); rows after those are spare capacity, finite values (an Index's arrays),
    used as padding where there are enough of them (no copy). `norms[s]`: the half squared norms
    of the vectors for "l2" (computed when None).

    Over processes (loom.distributed, one partition per process, the mesh's devices the ranks),
    `pieces` (and `norms`, `sizes`) are mappings holding only this process's shards, `count` the
    number of shards and `rows` their padded length: `search` runs this process's partition of
    the program (`loom.distributed.run_partitioned`) and every process gets the answer."""

    def __init__(self, mesh: Mesh, axes: tuple[str, ...], pieces: Sequence[np.ndarray] | dict[int, np.ndarray],
                 metric: str, norms: Sequence[np.ndarray] | dict[int, np.ndarray] | None = None,
                 sizes: Sequence[int] | dict[int, int] | None = None, count: int | None = None,
                 rows: int | None = None) -> None:
        self.mesh, self.axes, self.metric = mesh, tuple(axes), metric
        self.distributed = isinstance(pieces, dict)
        held = dict(pieces) if isinstance(pieces, dict) else dict(enumerate(pieces))
        self.count = len(held) if count is None else int(count)
        sizes = {s: int(p.shape[0]) for s, p in held.items()} if sizes is None else dict(
            sizes if isinstance(sizes, dict) else enumerate(sizes))
        first = next(iter(held.values()))
        self.dim, self.dtype = int(first.shape[1]), first.dtype
        # scores (and the merge) in float32 for a float16 / bfloat16 database, as the single-device
        # search computes them: the fused op reads the database as it is, widening it block by block
        self.compute_dtype = np.dtype(np.float32) if first.dtype in LOW_FLOATS else first.dtype
        self.rows = max(1, max(sizes.values())) if rows is None else int(rows)
        if self.count * self.rows >= 2 ** 31:
            raise ValueError(f"a sharded database of {self.count} x {self.rows} rows exceeds the int32 positions of "
                             "the search program")
        self.sizes = sizes
        self.pieces, self.biases = {}, {}
        for s, p in held.items():
            n = sizes[s]
            self.pieces[s] = self._padded(p[:n] if p.shape[0] < self.rows else p[:self.rows], 0)
            if metric == "l2":
                h = half_squared_norms(p[:n]) if norms is None else np.asarray(norms[s])[:n]
            else:
                h = np.zeros(n, self.compute_dtype)
            self.biases[s] = self._padded(h.astype(self.compute_dtype), np.inf)
        sharding = NamedSharding(mesh, P(self.axes or None))
        # the row shard each device holds (its position along the database's axes)
        self.position = [int(i[0].start or 0) for i in sharding.devices_indices_map((self.count,)).values()]
        self.db_sharding = NamedSharding(mesh, P(self.axes or None, None))
        self.bias_sharding = sharding

    def _padded(self, x: np.ndarray, fill: float) -> np.ndarray:
        missing = self.rows - x.shape[0]
        if not missing:
            return x
        return np.concatenate([x, np.full((missing,) + x.shape[1:], fill, x.dtype)])

    def global_arrays(self) -> tuple[ShardedArray, ShardedArray]:
        """(database, bias) as global arrays of count x rows rows, each device holding its shard."""
        def assemble(pieces: dict[int, np.ndarray], sharding: NamedSharding) -> ShardedArray:
            shape = (self.count * self.rows,) + pieces[0].shape[1:]
            indices = list(sharding.devices_indices_map(shape).values())
            return ShardedArray.from_shard_data(shape, sharding, indices, [pieces[p] for p in self.position],
                                                pieces[0].dtype)
        return assemble(self.pieces, self.db_sharding), assemble(self.biases, self.bias_sharding)

    def search(self, queries: np.ndarray, k: int, recall_target: float,
               query_axes: tuple[str, ...] = ()) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(scores, shard, row) of the k best of each query (checked, of the database's dtype and
        dimension; normalised here for "cos"), best first; queries split over `query_axes`."""
        nq = queries.shape[0]
        if self.metric == "cos":
            queries = normalize(queries, "queries")
        dtype = queries.dtype
        queries = queries.astype(self.compute_dtype, copy=False)
        split = math.prod(self.mesh.shape[a] for a in query_axes)
        padded_q = max(split, -(-nq // split) * split)
        if padded_q != nq:
            queries = np.concatenate([queries, np.zeros((padded_q - nq, self.dim), queries.dtype)])
        run = search_program(self.mesh, self.axes, tuple(query_axes), padded_q, self.dim, self.count * self.rows,
                             np.dtype(self.compute_dtype).name, np.dtype(self.dtype).name, min(k, self.rows), k,
                             float(recall_target))
        with np.errstate(over="ignore", invalid="ignore"):
            if self.distributed:
                best, positions = self._run_here(run.module, queries, query_axes, k)
            else:
                best, positions = run(queries, *self.global_arrays())
        best, positions = np.asarray(best)[:nq], np.asarray(positions)[:nq].astype(np.int64)
        # in the queries' type, then (l2: best = q.x - h) the squared distance, as the
        # single-device search computes them
        best = best.astype(dtype) if self.metric != "l2" else (-best).astype(dtype)
        if self.metric == "l2":
            qn = (queries[:nq].astype(np.float64) ** 2).sum(1)[:, None]
            with np.errstate(over="ignore", invalid="ignore"):
                best = np.maximum(qn + 2.0 * best.astype(np.float64), 0.0).astype(dtype)
        if not np.isfinite(best).all():
            largest = max(float(np.abs(p[:self.sizes[s]]).max()) if self.sizes[s] else 0.0
                          for s, p in self.pieces.items())
            raise ValueError(f"knn search scores overflow {np.dtype(dtype).name} (metric {self.metric!r}): "
                             f"the largest elements are {float(np.abs(queries).max()):.3g} in queries and "
                             f"{largest:.3g} in database (this process's shards); scale the vectors down or search "
                             "float64 ones")
        return best, positions // self.rows, positions % self.rows

    def _run_here(self, module: Any, queries: np.ndarray, query_axes: tuple[str, ...],
                  k: int) -> tuple[np.ndarray, np.ndarray]:
        """This process's partition of the program (its rank); the global results."""
        from loom.runtime.distributed import assemble, local_shard, process_index, run_partitioned
        rank = process_index()
        shard = self.position[rank]
        if shard not in self.pieces:
            raise ValueError(f"rank {rank} runs partition {rank}, which searches shard {shard}, but this process "
                             f"holds shards {sorted(self.pieces)}")
        q_sharding = NamedSharding(self.mesh, P(query_axes or None, None))
        best, positions = run_partitioned(module, [local_shard(queries, q_sharding, rank), self.pieces[shard],
                                                   self.biases[shard]])
        if not query_axes:
            return best, positions
        shape = (queries.shape[0], k)
        return assemble(best, q_sharding, shape), assemble(positions, q_sharding, shape)


@functools.lru_cache(maxsize=32)
def search_program(mesh: Mesh, axes: tuple[str, ...], query_axes: tuple[str, ...], nq: int, dim: int, n: int,
                   dtype: str, database_dtype: str, k_local: int, k: int, recall_target: float) -> Any:
    """The compiled search program (see the module docstring) for these shapes: a callable of
    (queries, database, bias) global arrays returning (q . x - bias, position) of the k best."""
    shared = tuple(a for a in query_axes if a in axes)
    if shared and shared != axes:
        raise ValueError(f"queries split over {query_axes} share some but not all of the database's axes {axes}")
    rows = n // max(1, math.prod(mesh.shape[a] for a in axes))

    def body(q: Any, db: Any, bias: Any) -> tuple[Any, Any]:
        if shared:  # each shard searches every query of its group; each device keeps its own queries
            q = lax.all_gather(q, axes, axis=0, tiled=True)
        v, i = lax.approx_min_k(bias[None, :] - q @ db.T, k_local, recall_target=recall_target)
        if axes:
            i = i + lax.axis_index(axes) * np.int32(rows)
            if shared:
                v = lax.all_to_all(v, axes, 0, 1, tiled=True)
                i = lax.all_to_all(i, axes, 0, 1, tiled=True)
            else:
                v = lax.all_gather(v, axes, axis=1, tiled=True)
                i = lax.all_gather(i, axes, axis=1, tiled=True)
        best, j = lax.top_k(-v, k)
        return best, lnp.take_along_axis(i, j, axis=1)

    q_spec = P(query_axes or None, None)
    mapped = shard_map(body, mesh=mesh, in_specs=(q_spec, P(axes or None, None), P(axes or None)),
                       out_specs=(q_spec, q_spec), check_vma=False)  # all_gather'ed results: equal on every device
    lowered = jit(mapped).lower(ShapeDtypeStruct((nq, dim), np.dtype(dtype)),
                                     ShapeDtypeStruct((n, dim), np.dtype(database_dtype)),
                                     ShapeDtypeStruct((n,), np.dtype(dtype)))
    return lowered.compile().executable


def search_sharded(queries: Any, database: ShardedArray, k: int, metric: str,
                   recall_target: float) -> tuple[np.ndarray, np.ndarray]:
    """`loom.knn.search` of a row-sharded database (see the module docstring): (scores, int64
    database rows)."""
    mesh, axes, pieces, starts = shard_pieces(database)
    query_axes: tuple[str, ...] = ()
    if isinstance(queries, ShardedArray):
        query_axes = mesh_axes(queries.sharding, 0, "the queries")
        if queries.sharding.mesh != mesh:
            raise ValueError(f"queries are on the mesh {queries.sharding.mesh!r}, but the database is on {mesh!r}")
    pieces = [check_vectors(p, f"database shard {s}", finite=False) for s, p in enumerate(pieces)]
    dtype = pieces[0].dtype
    pieces = [p.astype(dtype, copy=False) for p in pieces]
    q = check_vectors(np.asarray(queries), "queries", dim=database.shape[1], dtype=dtype)
    k = check_k(k, database.shape[0])
    for s, (p, start) in enumerate(zip(pieces, starts)):
        check_shard_finite(p, s, start)
    if metric == "cos":
        pieces = [normalize(p, f"database shard {s}", start) if p.size else p
                  for s, (p, start) in enumerate(zip(pieces, starts))]
    db = ShardedDatabase(mesh, axes, pieces, metric)
    scores, shard, row = db.search(q, k, recall_target, query_axes)
    return scores, np.asarray(starts, np.int64)[shard] + row


__all__ = ["ShardedDatabase", "check_shard_finite", "search_program", "search_sharded", "shard_pieces"]
