"""Nearest-neighbour search of a float16 database on disk, sharded over processes, one per device:

    torchrun --nproc-per-node 4 examples/knn_sharded.py --rows 1000000     # rank 0 prints recall and queries/s
    python examples/knn_sharded.py --single --rows 1000000                 # the same search in one process

The database is a `.npy` file of float16 vectors (`--database`; made from a fixed seed when
missing, by rank 0 while the others wait). Each process memory-maps only its quarter of it (rows
split as `P("x", None)` splits them over the mesh of processes: pieces of ceil(rows / processes))
and answers the same stream of query batches: one SPMD program (loom.knn.sharded: the fused
search of its shard, an all_gather of every shard's candidates, an exact top-k), its partition
run by `loom.distributed.run_partitioned`; every process gets the answer. Rank 0 draws a
progress bar, then prints queries/s and the recall of the first batch against the exact sharded
search (`recall_target=1.0`, which gives the single-process exact search's ids).

`--memory-limit-mb` caps each process's private memory (RLIMIT_DATA: the heap and anonymous
mappings, not the file's pages, which the kernel's page cache holds and can drop): a database
larger than that limit is searched by processes that each hold a quarter of it. With `--metric
cos` (alias `--distance`) each process holds a normalised copy of its quarter in private memory. `--ids-out`
writes the ids found (JSON) for comparison with `--single`.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from typing import Any


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--database", default="knn_database.npy", help="float16 .npy file (made when missing)")
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows of a database made here")
    ap.add_argument("--dim", type=int, default=128, help="dimension of a database made here")
    ap.add_argument("--queries", type=int, default=2000)
    ap.add_argument("--batch", type=int, default=250, help="queries per search call")
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--recall", type=float, default=0.95, help="recall_target (1.0: exact)")
    ap.add_argument("--metric", "--distance", default="ip", choices=["ip", "l2", "cos"],
                    help="inner product, Euclidean or cosine")
    ap.add_argument("--threads", type=int, default=1, help="BLAS threads per process")
    ap.add_argument("--memory-limit-mb", type=int, default=0, help="private memory per process (0: no limit)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds any collective may take")
    ap.add_argument("--single", action="store_true", help="search the whole database in one process")
    ap.add_argument("--ids-out", help="write the ids found (JSON) to this file")
    return ap.parse_args()


def make_database(path: str, rows: int, dim: int, seed: int) -> None:
    """A float16 database of Gaussian vectors, written 64k rows at a time (never whole in memory)."""
    import numpy as np
    tmp = f"{path}.{os.getpid()}.tmp"
    out = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float16, shape=(rows, dim))
    for a in range(0, rows, 65536):
        b = min(a + 65536, rows)
        out[a:b] = np.random.default_rng((seed, a)).standard_normal((b - a, dim), np.float32)
    out.flush()
    del out
    os.replace(tmp, path)


def map_rows(path: str, lo: int, hi: int) -> Any:
    """Rows [lo, hi) of the .npy file, memory-mapped (only those rows' pages are mapped) and the
    file's shape."""
    import numpy as np
    whole = np.load(path, mmap_mode="r")  # read for its header: where the rows start
    shape, dtype, offset, ordered = whole.shape, whole.dtype, whole.offset, whole.flags.c_contiguous
    del whole
    if not ordered or dtype != np.float16 or len(shape) != 2:
        raise SystemExit(f"{path}: expected a C-ordered 2-D float16 array, got {dtype} {shape}")
    rows = max(0, hi - lo)
    piece = np.memmap(path, np.float16, "r", offset + lo * shape[1] * 2, (rows, shape[1])) if rows else \
        np.zeros((0, shape[1]), np.float16)
    return piece, shape


def unit_rows(piece: Any, first_row: int) -> Any:
    """The shard's rows checked for NaN and inf and scaled to unit length, 64k rows at a time (the
    sharded search takes normalised vectors for "cos"): a private copy of the shard, in its type."""
    import numpy as np

    from loom.knn.search import check_finite_rows, normalize
    out = np.empty(piece.shape, piece.dtype)
    for a in range(0, piece.shape[0], 65536):
        block = np.asarray(piece[a:a + 65536])
        out[a:a + block.shape[0]] = normalize(check_finite_rows(block, "database", first_row + a), "database",
                                              first_row + a)
    return out


def query_batches(args: argparse.Namespace, dim: int) -> Any:
    """The query stream: the same batches in every process."""
    import numpy as np
    for a in range(0, args.queries, args.batch):
        n = min(args.batch, args.queries - a)
        yield np.random.default_rng((args.seed + 1, a)).standard_normal((n, dim), np.float32).astype(np.float16)


def progress(done: int, total: int, start: float) -> None:
    bar = "#" * int(30 * done / total)
    rate = done / max(time.perf_counter() - start, 1e-9)
    print(f"\r[{bar:<30}] {done}/{total} queries, {rate:,.0f} queries/s", end="" if done < total else "\n",
          file=sys.stderr, flush=True)


def limit_memory(mb: int) -> None:
    if mb > 0:
        import resource
        resource.setrlimit(resource.RLIMIT_DATA, (mb << 20, mb << 20))


def search_single(args: argparse.Namespace) -> tuple[list, float, float]:
    import numpy as np

    import loom.knn
    db = np.load(args.database, mmap_mode="r")
    limit_memory(args.memory_limit_mb)
    found, start, recall = [], time.perf_counter(), float("nan")
    for i, q in enumerate(query_batches(args, db.shape[1])):
        _, ids = loom.knn.search(q, db, args.k, metric=args.metric, recall_target=args.recall)
        if i == 0:
            _, exact = loom.knn.search(q, db, args.k, metric=args.metric, recall_target=1.0)
            recall = float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(ids.tolist(), exact.tolist())]))
        found += ids.tolist()
        progress(len(found), args.queries, start)
    return found, args.queries / (time.perf_counter() - start), recall


def search_distributed(args: argparse.Namespace) -> tuple[list, float, float]:
    import numpy as np

    import loom
    import loom.distributed
    from loom.knn.sharded import ShardedDatabase
    from loom.runtime.distributed import communicator, shard_index
    from loom.sharding import NamedSharding, P

    loom.distributed.initialize(timeout_s=args.timeout)
    world, rank = loom.distributed.process_count(), loom.distributed.process_index()
    if rank == 0 and not os.path.exists(args.database):
        make_database(args.database, args.rows, args.dim, args.seed)
    communicator().barrier()  # the file exists for every process
    _, (rows, dim) = map_rows(args.database, 0, 0)
    mesh = loom.make_mesh((world,), ("x",), devices=list(range(world)))  # partition p runs in rank p
    mine = range(rows)[shard_index(NamedSharding(mesh, P("x", None)), (rows, dim), rank)[0]]
    lo, hi = mine.start, mine.stop
    piece, _ = map_rows(args.database, lo, hi)
    limit_memory(args.memory_limit_mb)
    if rank == 0 and args.memory_limit_mb:
        print(f"database {rows * dim * 2 / 2**20:,.0f} MiB, {world} processes each holding {piece.nbytes / 2**20:,.0f} "
              f"MiB of it under a {args.memory_limit_mb} MiB limit on private memory", file=sys.stderr)
    if args.metric == "cos":
        piece = unit_rows(piece, lo)
    db = ShardedDatabase(mesh, ("x",), {rank: piece}, args.metric, count=world, rows=-(-rows // world))
    found, start, recall = [], time.perf_counter(), float("nan")
    for i, q in enumerate(query_batches(args, dim)):
        scores, shard, row = db.search(q, args.k, args.recall)
        ids = shard * db.rows + row  # P("x") splits by pieces of ceil(rows / world): the global row
        if i == 0:
            _, shard, row = db.search(q, args.k, 1.0)
            exact = shard * db.rows + row
            recall = float(np.mean([len(set(a) & set(b)) / args.k for a, b in zip(ids.tolist(), exact.tolist())]))
        found += ids.tolist()
        if rank == 0:
            progress(len(found), args.queries, start)
    rate = args.queries / (time.perf_counter() - start)
    communicator().barrier()  # no process leaves while a peer's last collective may still read from it
    loom.distributed.shutdown()
    return (found, rate, recall) if rank == 0 else ([], rate, recall)


def main() -> None:
    args = parse()
    # one BLAS thread per process by default (set before numpy loads OpenBLAS)
    os.environ.setdefault("OPENBLAS_NUM_THREADS", str(args.threads))
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    if args.single and not os.path.exists(args.database):
        make_database(args.database, args.rows, args.dim, args.seed)
    found, rate, recall = search_single(args) if args.single else search_distributed(args)
    if not found:  # not rank 0
        return
    print(f"{args.queries} queries, k={args.k}, recall_target={args.recall}: recall {recall:.4f} (first batch, "
          f"against the exact search), {rate:,.0f} queries/s "
          f"({'one process' if args.single else 'one process per shard'})")
    if args.ids_out:
        import json
        with open(args.ids_out, "w", encoding="utf-8") as f:
            json.dump(found, f)


if __name__ == "__main__":
    main()
