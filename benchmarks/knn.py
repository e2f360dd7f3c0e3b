"""Brute-force nearest-neighbour search: loom against its peers on equal terms, in one run.

    python benchmarks/knn.py                                  # CPU: N=1M, D=128, Q=1000, k=10
    python benchmarks/knn.py --quick                          # CPU: N=20k, Q=100 (a smoke run)
    python benchmarks/knn.py --n 200000 --rounds 5            # smaller, while iterating
    python benchmarks/knn.py --isolated --rounds 4            # CPU, each contender in its own process
    python benchmarks/knn.py --device gpu --q 10000 --k 10    # GPU (Triton kernel; needs CUDA)

Every contender gets the same float32 queries (loom casts them to the database's type itself),
and loom is timed through its public `loom.knn.search`. Recall is measured for every row against
an exact float64 top-k of the same vectors. CPU cases (inner product; `--metric l2` for Euclidean):

- exact: loom `recall_target=1.0` against faiss `IndexFlatIP` / `IndexFlatL2` (both exact), with
  numpy (`q @ db.T` per block of 250 queries + `argpartition`) and the bare float32 GEMM of the
  same sizes (no selection: the ceiling of any brute-force search on this machine);
- approximate: loom at `--recall-target` (0.95) against faiss `IndexHNSWFlat` (M=32) and
  `IndexIVFFlat` (sqrt(N) lists), each tuned to loom's MEASURED recall: the smallest efSearch /
  nprobe whose recall reaches loom's (the row says when none does); their build times are in the
  rows (loom has nothing to build; benchmarks/knn_index.py times absorbing updates);
- half precision (`--storage`, float16 by default): loom `recall_target=1.0` on the database kept
  in that type, against faiss `IndexFlat` on the same vectors widened to float32, and faiss's
  `IndexScalarQuantizer` of that type as an extra row.

GPU (`--device gpu`; a bf16 database, float32 queries): `loom.knn.search` on CUDA tensors, the
raw Triton kernel (`triton_knn.search`) as a second row, torch bf16 matmul + topk, jax
approx_max_k when jax has a GPU, and the bare bf16 GEMM; recall against an fp32 exact top-k.

Contenders run round-robin (one call each per round) so that a change in the machine's load
affects all alike; each row gives the median and the spread over the rounds, and the process CPU
seconds. The run writes benchmarks/results/knn-DATE.json (knn_gpu-DATE.json on a GPU,
knn_isolated-DATE.json with `--isolated`); `loom bench report` prints it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
from bench_common import Record, cpu_name, load_average  # noqa: E402


def machine() -> str:
    cpu = cpu_name()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    load = load_average()
    return f"{cpu}, {cores} cores, numpy {np.__version__}, load average {load:.2f} at start"


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    k = truth.shape[1]
    hits = sum(len(np.intersect1d(a, b)) for a, b in zip(found[:, :k], truth))
    return hits / truth.size


CPU_TIMES: dict[str, list[float]] = {}


def run_rounds(contenders: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Wall times per contender; the process CPU times go to CPU_TIMES (on a shared machine the
    CPU time a contender needs is steadier than its wall time)."""
    times: dict[str, list[float]] = {name: [] for name in contenders}
    for name in contenders:
        CPU_TIMES[name] = []
    for _ in range(rounds):
        for name, fn in contenders.items():
            c0 = time.process_time()
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
            CPU_TIMES[name].append(time.process_time() - c0)
    return times


def report(times: dict[str, list[float]], recalls: dict[str, float], q: int, n: int, d: int, peer: str,
           gemm: str, unit: str = "GFLOP/s", scale: float = 1e9) -> dict[str, dict[str, float]]:
    flops = 2.0 * q * n * d
    rows = {}
    print(f"{'system':34s} {'median s':>9s} {'best s':>8s} {'queries/s':>10s} {unit:>9s} {'recall':>7s} "
          f"{'x ' + peer:>10s} {'of GEMM':>8s} {'cpu s':>7s} {'cpu of GEMM':>11s}")
    for name, ts in times.items():
        med, best = statistics.median(ts), min(ts)
        rows[name] = {"median": med, "best": best, "qps": q / med, "flops": flops / med / scale}
    for name, row in rows.items():
        ratio = rows[peer]["median"] / row["median"] if peer in rows else float("nan")
        of_gemm = rows[gemm]["median"] / row["median"] if gemm in rows else float("nan")
        rec = recalls.get(name)
        cpu = statistics.median(CPU_TIMES[name]) if CPU_TIMES.get(name) else float("nan")
        cpu_gemm = statistics.median(CPU_TIMES[gemm]) if CPU_TIMES.get(gemm) else float("nan")
        row["cpu"] = cpu
        print(f"{name:34s} {row['median']:9.3f} {row['best']:8.3f} {row['qps']:10.1f} {row['flops']:9.1f} "
              f"{'-' if rec is None else f'{rec:.4f}':>7s} {ratio:10.2f} {of_gemm:8.2f} {cpu:7.2f} "
              f"{cpu_gemm / cpu:11.2f}")
    return rows


# CPU ------------------------------------------------------------------------------------------------

Contenders = dict[str, Callable[[], object]]


def problem(n: int, d: int, nq: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Random float32 queries and database."""
    rng = np.random.default_rng(seed)
    db = rng.standard_normal((n, d), dtype=np.float32)
    return rng.standard_normal((nq, d), dtype=np.float32), db


def exact_top_k(q: np.ndarray, db: np.ndarray, k: int, metric: str) -> np.ndarray:
    """The true k nearest, from float64 scores (the oracle for every row's recall)."""
    db64 = db.astype(np.float64)
    half = 0.5 * (db64 * db64).sum(1)
    out = np.empty((q.shape[0], k), np.int64)
    for a in range(0, q.shape[0], 100):
        s = q[a:a + 100].astype(np.float64) @ db64.T
        s = half[None, :] - s if metric == "l2" else -s
        out[a:a + 100] = np.argpartition(s, k - 1, axis=1)[:, :k]
    return out


def faiss_flat(d: int, metric: str):
    import faiss
    return faiss.IndexFlatIP(d) if metric == "ip" else faiss.IndexFlatL2(d)


def cpu_contenders(n: int, d: int, nq: int, k: int, metric: str, recall_target: float, seed: int,
                   results: dict[str, np.ndarray], storage: str = "float32",
                   ) -> tuple[Contenders, str, np.ndarray, np.ndarray]:
    """The exact-search contenders on one random problem: (name -> call, faiss's row name, q, db);
    each call stores its answer in `results[name]`. `storage` float16 / bfloat16: loom searches
    the database in that type, faiss's IndexFlat the same vectors widened to float32, and faiss's
    IndexScalarQuantizer of that type is an extra row."""
    import faiss
    import ml_dtypes

    import loom.knn
    q, db = problem(n, d, nq, seed)
    if storage != "float32":
        kept = np.dtype(ml_dtypes.bfloat16 if storage == "bfloat16" else storage)
        loom_db = db.astype(kept)
        db = loom_db.astype(np.float32)  # the same vectors for every contender
    else:
        loom_db = db
    contenders: Contenders = {}
    loom_name = f"loom knn.search r={recall_target}" + ("" if storage == "float32" else f", {storage} db")

    def loom_search():
        results[loom_name] = loom.knn.search(q, loom_db, k, metric=metric, recall_target=recall_target)[1]

    contenders[loom_name] = loom_search
    index = faiss_flat(d, metric)
    index.add(db)
    faiss_name = f"faiss IndexFlat{metric.upper()}" + ("" if storage == "float32" else " (float32 copy)")

    def faiss_search():
        results[faiss_name] = index.search(q, k)[1]

    contenders[faiss_name] = faiss_search
    if storage != "float32":
        kind = faiss.ScalarQuantizer.QT_fp16 if storage == "float16" else faiss.ScalarQuantizer.QT_bf16
        sq = faiss.IndexScalarQuantizer(d, kind, faiss.METRIC_INNER_PRODUCT if metric == "ip" else faiss.METRIC_L2)
        sq.add(db)
        sq_name = f"faiss IndexScalarQuantizer {storage}"

        def sq_search():
            results[sq_name] = sq.search(q, k)[1]

        contenders[sq_name] = sq_search
        return contenders, faiss_name, q, db
    half = 0.5 * (db * db).sum(1)

    def numpy_search():
        out = np.empty((nq, k), np.int64)
        for a in range(0, nq, 250):
            s = q[a:a + 250] @ db.T
            s = half[None, :] - s if metric == "l2" else -s
            out[a:a + 250] = np.argpartition(s, k - 1, axis=1)[:, :k]
        results["numpy matmul + argpartition"] = out

    contenders["numpy matmul + argpartition"] = numpy_search
    chunk = 16384
    buffer = np.empty((nq, chunk), np.float32)

    def gemm():
        for a in range(0, n, chunk):
            b = min(a + chunk, n)
            np.matmul(q, db[a:b].T, out=buffer[:, :b - a])

    contenders[GEMM] = gemm
    return contenders, faiss_name, q, db


GEMM = "bare float32 GEMM (no selection)"


def build_hnsw(db: np.ndarray, metric: str, ids: np.ndarray | None = None):
    """faiss IndexHNSWFlat (M=32) holding `db` (with `ids`: under an IndexIDMap2)."""
    import faiss
    index = faiss.IndexHNSWFlat(db.shape[1], 32, faiss.METRIC_INNER_PRODUCT if metric == "ip" else faiss.METRIC_L2)
    if ids is None:
        index.add(db)
        return index
    mapped = faiss.IndexIDMap2(index)
    mapped.add_with_ids(db, ids)
    return mapped


def build_ivf(db: np.ndarray, metric: str, ids: np.ndarray | None = None):
    """faiss IndexIVFFlat with sqrt(N) lists trained on `db` and holding it (under `ids`)."""
    import faiss
    n, d = db.shape
    index = faiss.IndexIVFFlat(faiss_flat(d, metric), d, max(1, int(np.sqrt(n))),
                               faiss.METRIC_INNER_PRODUCT if metric == "ip" else faiss.METRIC_L2)
    index.train(db)
    if ids is None:
        index.add(db)
    else:
        index.add_with_ids(db, ids)
    return index


def search_setting(index) -> tuple[str, list[int], Callable[[int], None]]:
    """The setting that trades an index's speed for recall: (name, values to try, setter)."""
    import faiss
    inner = faiss.downcast_index(index.index) if isinstance(index, faiss.IndexIDMap2) else index
    if isinstance(inner, faiss.IndexHNSW):
        return "efSearch", list(range(16, 4097)), lambda v: setattr(inner.hnsw, "efSearch", v)
    return "nprobe", list(range(1, inner.nlist + 1)), lambda v: setattr(inner, "nprobe", v)


def tune(index, q: np.ndarray, k: int, truth: np.ndarray, target: float) -> tuple[str, int, bool]:
    """Set `index`'s search setting to the smallest value whose measured recall on `q` reaches
    `target` (doubling, then bisecting); (setting, value, reached) where `reached` is False when
    even the largest value falls short (the largest is kept)."""
    name, values, set_value = search_setting(index)

    def reaches(i: int) -> bool:
        set_value(values[i])
        return recall(index.search(q, k)[1], truth) >= target

    lo, hi = -1, 0  # values[lo] falls short (or none tried), values[hi] to be tried
    while not reaches(hi):
        if hi == len(values) - 1:
            return name, values[hi], False
        lo, hi = hi, min(2 * hi + 1, len(values) - 1)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if reaches(mid) else (mid, hi)
    set_value(values[hi])
    return name, values[hi], True


def tuned_peers(q: np.ndarray, db: np.ndarray, k: int, metric: str, truth: np.ndarray, target: float,
                results: dict[str, np.ndarray]) -> tuple[Contenders, dict[str, dict]]:
    """faiss IndexHNSWFlat and IndexIVFFlat built on `db`, each tuned (`tune`) to the recall
    `target`: (name -> call, name -> {build_seconds, the setting, reaches_target_recall})."""
    contenders: Contenders = {}
    info: dict[str, dict] = {}
    for label, build in (("faiss IndexHNSWFlat M=32", build_hnsw), ("faiss IndexIVFFlat", build_ivf)):
        t0 = time.perf_counter()
        index = build(db, metric)
        build_seconds = time.perf_counter() - t0
        param, value, reached = tune(index, q, k, truth, target)
        row = f"{label} {param}={value}"

        def search(index=index, row=row):
            results[row] = index.search(q, k)[1]

        contenders[row] = search
        info[row] = {"build_seconds": build_seconds, param: value, "reaches_target_recall": reached}
    return contenders, info


def timed_case(record: Record, case: str, contenders: Contenders, results: dict[str, np.ndarray],
               truth: np.ndarray, rounds: int, flops: float, extra: dict[str, dict] | None = None,
               ) -> dict[str, float]:
    """Warm up, measure each contender's recall, time the rounds, print and record the rows;
    returns each contender's recall."""
    for fn in contenders.values():
        fn()
    recalls = {name: recall(results[name], truth) for name in contenders if name in results}
    times = run_rounds(contenders, rounds)
    print(f"\n{case}")
    print(f"{'contender':44s} {'median s':>9s} {'min s':>8s} {'max s':>8s} {'GFLOP/s':>8s} {'recall':>7s} "
          f"{'cpu s':>6s}  other")
    rows = {}
    for name, ts in times.items():
        rows[name] = {"cpu_seconds": statistics.median(CPU_TIMES[name]), **(extra or {}).get(name, {})}
        if name in recalls:
            rows[name]["recall"] = recalls[name]
        med = statistics.median(ts)
        other = ", ".join(f"{key} {value:.3g}" if isinstance(value, float) else f"{key} {value}"
                          for key, value in rows[name].items() if key not in ("cpu_seconds", "recall"))
        rec = f"{recalls[name]:.4f}" if name in recalls else "-"
        print(f"{name:44s} {med:9.4f} {min(ts):8.4f} {max(ts):8.4f} {flops / med / 1e9:8.1f} {rec:>7s} "
              f"{rows[name]['cpu_seconds']:6.2f}  {other}")
    record.add_all(case, times, **rows)
    return recalls


def bench_cpu(n: int, d: int, nq: int, k: int, metric: str, recall_target: float, rounds: int,
              seed: int, numpy_row: bool = True, storage: str = "float16", exact_only: bool = False) -> None:
    import loom.knn
    settings = {"n": n, "d": d, "q": nq, "k": k, "metric": metric, "recall_target": recall_target,
                "rounds": rounds, "seed": seed, "half_storage": storage, "exact_only": exact_only}
    print(f"CPU: N={n} D={d} Q={nq} k={k} float32 queries, metric={metric}; {machine()}")
    record = Record("knn", settings)
    flops = 2.0 * nq * n * d
    results: dict[str, np.ndarray] = {}

    case = f"exact, N={n}"
    contenders, faiss_name, q, db = cpu_contenders(n, d, nq, k, metric, 1.0, seed, results)
    loom_exact = "loom knn.search r=1.0"
    if not numpy_row:
        del contenders["numpy matmul + argpartition"]
    truth = exact_top_k(q, db, k, metric)
    timed_case(record, case, contenders, results, truth, rounds, flops)
    print(f"faiss / loom (medians): {record.ratio(case, loom_exact, faiss_name):.2f}x; "
          f"GEMM / loom: {record.ratio(case, loom_exact, GEMM):.2f}x")
    if exact_only:
        record.write()
        return

    case = f"approximate, N={n}"
    loom_name = f"loom knn.search r={recall_target}"

    def loom_approx():
        results[loom_name] = loom.knn.search(q, db, k, metric=metric, recall_target=recall_target)[1]

    loom_approx()
    target = recall(results[loom_name], truth)
    peers, info = tuned_peers(q, db, k, metric, truth, target, results)
    timed_case(record, case, {loom_name: loom_approx, **peers}, results, truth, rounds, flops, info)
    print(f"(faiss's settings are the smallest reaching loom's measured recall {target:.4f})")
    for peer in peers:
        print(f"{peer} / loom (medians): {record.ratio(case, loom_name, peer):.2f}x")

    if storage != "float32":
        case = f"{storage} database, exact, N={n}"
        contenders, faiss_name, q, db = cpu_contenders(n, d, nq, k, metric, 1.0, seed, results, storage)
        truth = exact_top_k(q, db, k, metric)
        timed_case(record, case, contenders, results, truth, rounds, flops)
        mine = next(iter(contenders))
        for peer in list(contenders)[1:]:
            print(f"{peer} / loom (medians): {record.ratio(case, mine, peer):.2f}x")
    record.write()


def bench_cpu_isolated(n: int, d: int, nq: int, k: int, metric: str, recall_target: float, rounds: int,
                       seed: int) -> None:
    """Each exact contender in a fresh process per round (one warm-up call, then one timed call),
    alternating: no contender runs right after another's threads (BLAS threads spin for a while
    after each call, and faiss's time depends on what ran before it in the same process)."""
    import json
    import subprocess
    print(f"CPU, isolated processes: N={n} D={d} Q={nq} k={k} float32 metric={metric}; {machine()}")
    names = list(cpu_contenders(min(n, 1000), d, 8, 1, metric, recall_target, seed, {})[0])
    names.remove("numpy matmul + argpartition")  # minutes per process; the round-robin run has it
    times: dict[str, list[float]] = {name: [] for name in names}
    for _ in range(rounds):
        for name in names:
            args = [sys.executable, __file__, "--n", str(n), "--d", str(d), "--q", str(nq), "--k", str(k),
                    "--metric", metric, "--recall-target", str(recall_target), "--seed", str(seed), "--only", name]
            out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
            times[name].append(json.loads(out.strip().splitlines()[-1])["seconds"])
    print(f"{'system':34s} {'median s':>9s} {'min s':>8s} {'max s':>8s} {'queries/s':>10s}   per round")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"{name:34s} {med:9.3f} {min(ts):8.3f} {max(ts):8.3f} {nq / med:10.1f}   "
              + " ".join(f"{t:.3f}" for t in ts))
    record = Record("knn_isolated", {"n": n, "d": d, "q": nq, "k": k, "metric": metric,
                                     "recall_target": recall_target, "rounds": rounds, "seed": seed})
    case = f"isolated processes, N={n}"
    record.add_all(case, times)
    loom_name = next(name for name in names if name.startswith("loom"))
    for name in names:
        if name.startswith("faiss"):
            print(f"faiss / loom (medians): {record.ratio(case, loom_name, name):.2f}x")
    record.write()


def run_one(n: int, d: int, nq: int, k: int, metric: str, recall_target: float, seed: int, name: str) -> None:
    """`--only NAME`: one warm-up call and one timed call of one contender; prints JSON."""
    import json
    fn = cpu_contenders(n, d, nq, k, metric, recall_target, seed, {})[0][name]
    fn()
    t0 = time.perf_counter()
    fn()
    print(json.dumps({"name": name, "seconds": time.perf_counter() - t0}))


# Sharded (--sharded) ----------------------------------------------------------------------------------

def rows_of(seed: int, lo: int, hi: int, d: int) -> np.ndarray:
    """Rows [lo, hi) of the sharded cases' database (float32 Gaussian, made 65536 rows at a time from
    their own seeds, so a process makes only its shard)."""
    out = np.empty((hi - lo, d), np.float32)
    block = 65536
    for a in range(lo - lo % block, hi, block):
        piece = np.random.default_rng((seed, a)).standard_normal((block, d), np.float32)
        s, e = max(a, lo), min(a + block, hi)
        out[s - lo:e - lo] = piece[s - a:e - a]
    return out


def sharded_worker(mode: str, n: int, d: int, nq: int, k: int, recall_target: float, rounds: int, seed: int) -> None:
    """`--sharded-worker MODE`: one warm-up and `rounds` timed searches; prints JSON (rank 0).
    "single": the whole database in this process (BLAS with every core); "processes": this
    process's shard under torchrun (one BLAS thread), the sharded search program over gloo."""
    import json

    import loom.knn
    q = np.random.default_rng((seed, 1 << 40)).standard_normal((nq, d), np.float32)
    if mode == "single":
        db = rows_of(seed, 0, n, d)

        def search() -> None:
            loom.knn.search(q, db, k, recall_target=recall_target)
        rank = 0
    else:
        import loom.distributed
        from loom.knn.sharded import ShardedDatabase
        from loom.runtime.distributed import communicator, shard_index
        from loom.sharding import NamedSharding, P
        loom.distributed.initialize(timeout_s=600)
        world, rank = loom.distributed.process_count(), loom.distributed.process_index()
        mesh = loom.make_mesh((world,), ("x",), devices=list(range(world)))
        mine = range(n)[shard_index(NamedSharding(mesh, P("x", None)), (n, d), rank)[0]]
        shard = ShardedDatabase(mesh, ("x",), {rank: rows_of(seed, mine.start, mine.stop, d)}, "ip", count=world,
                                rows=-(-n // world))

        def search() -> None:
            shard.search(q, k, recall_target)
            communicator().barrier()  # every process done: the time of the slowest
    search()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        search()
        times.append(time.perf_counter() - t0)
    if rank == 0:
        print(json.dumps({"mode": mode, "seconds": times}))
    if mode != "single":
        import loom.distributed
        loom.distributed.shutdown()


def merge_share(n: int, d: int, nq: int, k: int, recall_target: float, shards: int, rounds: int, seed: int,
                record: Record) -> None:
    """The merge's share of a sharded search in one process (a mesh of `shards` CPU devices, one
    thread each): the whole search program against a program of its merge alone (all_gather of
    every shard's k candidates per query, exact top-k), on the same shapes and runtime."""
    import loom.numpy as lnp
    from loom import lax
    from loom.frontend.jit import jit
    from loom.frontend.shapes import ShapeDtypeStruct
    from loom.frontend.shard_map import shard_map
    from loom.knn.sharded import ShardedDatabase
    from loom.runtime.devices import Device, device_put
    from loom.sharding import NamedSharding, P, make_mesh
    mesh = make_mesh((shards,), ("x",), devices=[Device("cpu", i, "numpy") for i in range(shards)])
    q = np.random.default_rng((seed, 1 << 40)).standard_normal((nq, d), np.float32)
    rows = -(-n // shards)
    db = ShardedDatabase(mesh, ("x",), [rows_of(seed, s * rows, min(n, (s + 1) * rows), d) for s in range(shards)],
                         "ip")

    def body(v, i):
        v = lax.all_gather(v, "x", axis=1, tiled=True)
        i = lax.all_gather(i, "x", axis=1, tiled=True)
        best, j = lax.top_k(-v, k)
        return best, lnp.take_along_axis(i, j, axis=1)

    mapped = shard_map(body, mesh=mesh, in_specs=(P(None, "x"), P(None, "x")), out_specs=(P(), P()),
                       check_vma=False)  # the merged results are equal on every device
    merge = jit(mapped).lower(ShapeDtypeStruct((nq, shards * k), np.float32),
                              ShapeDtypeStruct((nq, shards * k), np.int32)).compile().executable
    rng = np.random.default_rng(seed)
    v = device_put(rng.standard_normal((nq, shards * k)).astype(np.float32), NamedSharding(mesh, P(None, "x")))
    i = device_put(rng.integers(0, n, (nq, shards * k)).astype(np.int32), NamedSharding(mesh, P(None, "x")))
    contenders = {f"sharded search ({shards} shards, in-process)": lambda: db.search(q, k, recall_target),
                  "its merge alone (all_gather + top_k)": lambda: merge(v, i)}
    for fn in contenders.values():
        fn()
    times = run_rounds(contenders, rounds)
    case = f"merge share, N={n}, Q={nq}, k={k}, {shards} shards"
    record.add_all(case, times)
    whole, part = contenders
    share = 1.0 / record.ratio(case, part, whole)
    print(f"\n{case}")
    for name, ts in times.items():
        print(f"{name:44s} median {statistics.median(ts):.4f} s (min {min(ts):.4f}, max {max(ts):.4f})")
    print(f"merge / search (medians): {share:.2%} (target <= 5%)")


def bench_sharded(n: int, d: int, nq: int, k: int, recall_target: float, rounds: int, seed: int) -> None:
    """`--sharded`: 2 processes x 1 BLAS thread on a sharded database against one process with every
    core on the whole one (each in its own processes, alternating, twice), then the merge's share
    at 4 shards in one process."""
    import json
    import subprocess
    print(f"CPU, sharded: N={n} D={d} Q={nq} k={k} recall_target={recall_target}; {machine()}")
    record = Record("knn_sharded", {"n": n, "d": d, "q": nq, "k": k, "recall_target": recall_target,
                                    "rounds": rounds, "seed": seed})
    flags = ["--n", str(n), "--d", str(d), "--q", str(nq), "--k", str(k), "--recall-target", str(recall_target),
             "--rounds", str(rounds), "--seed", str(seed)]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    # the sizes travel in the environment: torchrun would take --n for one of its own flags
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", ""),
           "KNN_SHARDED_FLAGS": " ".join(flags)}
    launchers = {
        "one process, every core": ([sys.executable, __file__, "--sharded-worker", "single"], env),
        "2 processes x 1 thread (gloo)": (
            [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2", __file__,
             "--sharded-worker", "processes"], {**env, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}),
    }
    times: dict[str, list[float]] = {name: [] for name in launchers}
    for _ in range(2):
        for name, (cmd, cmd_env) in launchers.items():
            out = subprocess.run(cmd, env=cmd_env, capture_output=True, text=True, timeout=3600)
            if out.returncode:
                raise SystemExit(f"{name} failed:\n{out.stdout[-2000:]}{out.stderr[-3000:]}")
            line = next(x for x in reversed(out.stdout.splitlines()) if x.startswith("{"))
            times[name] += json.loads(line)["seconds"]
    case = f"processes, N={n}"
    record.add_all(case, times)
    single, sharded = launchers
    print(f"\n{case}")
    for name, ts in times.items():
        print(f"{name:44s} median {statistics.median(ts):.3f} s (min {min(ts):.3f}, max {max(ts):.3f}), "
              f"{nq / statistics.median(ts):,.0f} queries/s")
    print(f"sharded throughput / single's (single time / sharded time, medians): "
          f"{record.ratio(case, sharded, single):.2f} (target >= 0.90)")
    merge_share(n, d, 1000 if nq >= 1000 else nq, k, recall_target, 4, rounds, seed, record)
    record.write()


# GPU ------------------------------------------------------------------------------------------------

# The GPU functions below run on DEVICE; a dry run of their logic on the CPU sets it to "cpu"
# under TRITON_INTERPRET=1 (at tiny sizes: the interpreter is slow).
DEVICE = "cuda"


def sync_device() -> None:
    import torch
    if DEVICE == "cuda":
        torch.cuda.synchronize()


def bench_ms(fn: Callable[[], object]) -> float:
    """Median milliseconds per call: Triton's do_bench (CUDA events) on the GPU, a host clock otherwise."""
    if DEVICE == "cuda":
        import triton
        return triton.testing.do_bench(fn, warmup=25, rep=200, return_mode="median")
    ts = []
    for _ in range(3):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return 1e3 * statistics.median(ts)


def bench_gpu(n: int, d: int, nq: int, k: int, recall_target: float, rounds: int, seed: int,
              sizes: Sequence[tuple[int, int, int]] = (), tune: bool = False) -> None:
    import torch
    if DEVICE == "cuda" and not torch.cuda.is_available():
        raise SystemExit("--device gpu needs a CUDA GPU (torch.cuda.is_available() is False)")
    print(f"GPU: {torch.cuda.get_device_name() if DEVICE == 'cuda' else DEVICE}, torch {torch.__version__}")
    if tune:
        gpu_tune(n, d, nq, k, recall_target, seed)
    record = Record("knn_gpu", {"d": d, "sizes": [list(size) for size in sizes or [(n, nq, k)]],
                                "recall_target": recall_target, "rounds": rounds, "seed": seed,
                                "gpu": torch.cuda.get_device_name() if DEVICE == "cuda" else DEVICE})
    for n_, nq_, k_ in sizes or [(n, nq, k)]:
        try:
            gpu_case(n_, d, nq_, k_, recall_target, rounds, seed, record)
        except Exception as e:  # report and go on to the next size
            import traceback
            traceback.print_exc()
            print(f"N={n_} Q={nq_} k={k_} failed: {type(e).__name__}: {e}", flush=True)
    record.write()


def gpu_tune(n: int, d: int, nq: int, k: int, recall_target: float, seed: int) -> None:
    """Every kernel variant of `triton_knn.CANDIDATES` and `TRIAL_CANDIDATES` at several bin counts: checked against a
    torch fp32 bin maximum (on the first 256 queries) and timed (median of Triton's do_bench)."""
    import torch
    import triton

    from loom.backend import triton_knn
    from loom.dialects.knn import num_bins
    gen = torch.Generator(device=DEVICE).manual_seed(seed + 1)
    db = torch.randn((n, d), device=DEVICE, generator=gen).to(torch.bfloat16)
    q = torch.randn((nq, d), device=DEVICE, generator=gen).to(torch.bfloat16)
    check_q = min(256, nq)
    ref_scores = q[:check_q].float() @ db.float().T
    xla = num_bins(n, 2, k, recall_target)
    flops = 2.0 * nq * n * d
    print(f"\nkernel variants, N={n} D={d} Q={nq} bf16 (XLA's bins {xla}); bin maximum alone, then + top-k of the "
          "bins (+ exact rescoring of the k winners where packed)")
    print(f"{'BLOCK_Q x BLOCK_L, warps, stages':34s} {'per SM':>6s} {'bins':>6s} {'ms':>7s} {'TFLOP/s':>8s} "
          f"{'+topk ms':>9s} {'TFLOP/s':>8s} {'check':>6s}")
    rows = []
    for cfg in triton_knn.CANDIDATES + triton_knn.TRIAL_CANDIDATES:
        name = (f"{cfg['BLOCK_Q']} x {cfg['BLOCK_L']}, {cfg['num_warps']}, {cfg['num_stages']}"
                + (", packed" if cfg.get("packed") else "") + (f", regs {cfg['maxnreg']}" if "maxnreg" in cfg else ""))
        try:
            per_sm = triton_knn.programs_per_sm(q, db, None, cfg)
            chosen = triton_knn.choose_bins(q, db, None, k, recall_target, cfg, "tf32")
            least = triton.cdiv(xla, cfg["BLOCK_L"]) * cfg["BLOCK_L"]
            for bins in sorted({least, chosen, 2 * chosen}):
                values, indices = triton_knn.partial_reduce(q, db, None, bins, cfg)
                sync_device()
                v, i = values[:check_q].double(), indices[:check_q].long()
                in_range = bool(((i >= 0) & (i < n) & (i % bins == torch.arange(bins, device=DEVICE))).all())
                at_index = torch.gather(ref_scores, 1, i.clamp(0, n - 1)).double()
                pad = torch.full((check_q, triton.cdiv(n, bins) * bins), float("-inf"), device=DEVICE)
                pad[:, :n] = ref_scores
                want = pad.view(check_q, -1, bins).amax(1).double()
                err = float(((v - want).abs().max() + (at_index - want).abs().max()) / want.abs().max())
                ok = in_range and not bool(torch.isnan(v).any()) and err < 1e-3
                ms = bench_ms(lambda: triton_knn.partial_reduce(q, db, None, bins, cfg))  # noqa: B023
                packed = triton_knn.use_packed(cfg, n, bins)
                full = bench_ms(lambda: triton_knn.select_top_k(  # noqa: B023
                    q, db, None, *triton_knn.partial_reduce(q, db, None, bins, cfg), k, packed))  # noqa: B023
                rows.append((full, name, bins))
                mark = " <- rule" if bins == chosen else ""
                print(f"{name:34s} {per_sm:6d} {bins:6d} {ms:7.3f} {flops / ms / 1e9:8.1f} {full:9.3f} "
                      f"{flops / full / 1e9:8.1f} {'ok' if ok else f'BAD {err:.1e}':>6s}{mark}", flush=True)
        except Exception as e:  # report and go on: one variant the GPU cannot run must not end the table
            print(f"{name:34s} failed: {type(e).__name__}: {str(e)[:200]}", flush=True)
    if rows:
        best = min(rows)
        print(f"fastest: {best[1]}, bins {best[2]}: {best[0]:.3f} ms with topk, {flops / best[0] / 1e9:.1f} TFLOP/s, "
              f"{nq / best[0] * 1e3 / 1e6:.2f}M queries/s")
    del ref_scores
    if DEVICE == "cuda":
        torch.cuda.empty_cache()


def gpu_case(n: int, d: int, nq: int, k: int, recall_target: float, rounds: int, seed: int,
             record: Record | None = None) -> None:
    """One GPU size: a bf16 database, float32 queries for every contender (each casts them as it
    needs), loom timed through `loom.knn.search` with its raw kernel as a second row."""
    import torch

    import loom.knn
    from loom.backend import triton_knn
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    db = torch.randn((n, d), device=DEVICE, generator=gen).to(torch.bfloat16)
    q = torch.randn((nq, d), device=DEVICE, generator=gen)
    print(f"\nN={n} D={d} Q={nq} k={k} bf16 database, float32 queries, recall_target={recall_target}", flush=True)

    def sync(fn: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            out = fn()
            sync_device()
            return out
        return run

    results: dict[str, object] = {}
    contenders: dict[str, Callable[[], object]] = {}

    def loom_fn() -> None:
        results["loom knn.search"] = loom.knn.search(q, db, k, recall_target=recall_target)[1]

    def loom_kernel_fn() -> None:
        results["loom triton kernel (raw)"] = triton_knn.search(q.to(torch.bfloat16), db, k,
                                                                recall_target=recall_target)[1]

    step = max(1, int(8e9 // (2 * n)))

    def torch_fn() -> None:
        # in query blocks so that the bf16 score matrix fits in memory
        parts = [torch.topk(q[a:a + step].to(torch.bfloat16) @ db.T, k, dim=1).indices for a in range(0, nq, step)]
        results["torch bf16 matmul + topk"] = torch.cat(parts)

    def gemm_fn() -> None:
        for a in range(0, nq, step):
            q[a:a + step].to(torch.bfloat16) @ db.T

    contenders["loom knn.search"] = sync(loom_fn)
    contenders["loom triton kernel (raw)"] = sync(loom_kernel_fn)
    if n >= 5_000_000 and DEVICE == "cuda":
        # a database kept in host memory (as one larger than the GPU's would be), streamed through
        # the GPU in batches by loom.knn.search itself
        db_host = db.cpu()

        def loom_streamed_fn() -> None:
            results["loom knn.search, db streamed from host"] = loom.knn.search(
                q, db_host, k, recall_target=recall_target, database_batch=max(k, n // 4))[1]

        contenders["loom knn.search, db streamed from host"] = sync(loom_streamed_fn)
    contenders["torch bf16 matmul + topk"] = sync(torch_fn)
    contenders["torch bf16 GEMM (no selection)"] = sync(gemm_fn)
    try:
        import jax
        if any(dev.platform == "gpu" for dev in jax.devices()) and n <= 2_000_000:
            import jax.numpy as jnp
            jq = jnp.asarray(q.cpu().numpy())
            jdb = jnp.asarray(db.float().cpu().numpy(), dtype=jnp.bfloat16)
            jstep = max(1, int(8e9 // (4 * n)))  # fp32 scores (jax's bf16-score path is ~8x slower)
            f = jax.jit(lambda a, b: jax.lax.approx_max_k(
                jnp.matmul(a.astype(jnp.bfloat16), b.T, preferred_element_type=jnp.float32), k,
                recall_target=recall_target)[1])

            def jax_fn() -> None:
                parts = [f(jq[a:a + jstep], jdb) for a in range(0, nq, jstep)]
                results["jax approx_max_k"] = np.concatenate([np.asarray(jax.block_until_ready(p)) for p in parts])

            contenders["jax approx_max_k"] = jax_fn
    except Exception as e:  # jax without a GPU backend: no jax row
        print(f"(no jax row: {type(e).__name__}: {e})")
    for fn in contenders.values():
        fn()
    # recall against an fp32 exact top-k (of the bf16 database) on the first queries
    check = min(nq, 2000)
    tstep = max(1, int(4e9 // (4 * n)))
    truth = torch.cat([torch.topk(q[a:min(a + tstep, check)] @ db.float().T, k, dim=1).indices
                       for a in range(0, check, tstep)]).cpu().numpy()
    recalls = {}
    for name, found in results.items():
        found = found.cpu().numpy() if hasattr(found, "cpu") else np.asarray(found)
        recalls[name] = recall(found[:check], truth)
    times = run_rounds(contenders, rounds)
    report(times, recalls, nq, n, d, "torch bf16 matmul + topk", "torch bf16 GEMM (no selection)",
           unit="TFLOP/s", scale=1e12)
    if record is not None:
        case = f"N={n} Q={nq} k={k}"
        record.add_all(case, times, **{name: {"recall": r} for name, r in recalls.items()})
        record.ratio(case, "loom knn.search", "torch bf16 matmul + topk")


def main(argv: Sequence[str] | None = None) -> int:
    """`loom bench knn`: parse the flags and run the CPU or GPU benchmark."""
    p = argparse.ArgumentParser(prog="loom bench knn", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="CPU: N=20k, Q=100, 5 rounds (a smoke run)")
    p.add_argument("--n", type=int, default=1_000_000, help="database vectors")
    p.add_argument("--d", type=int, default=128, help="dimension")
    p.add_argument("--q", type=int, default=None, help="queries (default 1000 on CPU, 10000 on GPU)")
    p.add_argument("--k", type=int, default=10, help="neighbours per query")
    p.add_argument("--metric", choices=("ip", "l2"), default="ip")
    p.add_argument("--recall-target", type=float, default=0.95)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", choices=("cpu", "gpu"), default="cpu")
    p.add_argument("--isolated", action="store_true",
                   help="CPU: each contender in a fresh process per round, alternating (no in-process interference)")
    p.add_argument("--no-numpy", action="store_true",
                   help="CPU: leave out the numpy row (20 s per round at N=1M), so more rounds fit")
    p.add_argument("--storage", choices=("float32", "float16", "bfloat16"), default="float16",
                   help="CPU: the database type of the half-precision case (float32: no such case)")
    p.add_argument("--sharded", action="store_true",
                   help="CPU: 2 processes x 1 thread on a sharded database against one process (default N=2M), "
                        "and the merge's share of a search over 4 shards")
    p.add_argument("--sharded-worker", help=argparse.SUPPRESS)  # one side of --sharded, in its own process(es)
    p.add_argument("--exact-only", action="store_true", help="CPU: the exact case alone (loom, faiss, GEMM)")
    p.add_argument("--only", help=argparse.SUPPRESS)  # one contender in this process (used by --isolated)
    p.add_argument("--gpu-suite", action="store_true",
                   help="GPU: N=1M Q=10k k=10 and k=100, and N=10M Q=10k k=10 (the headline sizes)")
    p.add_argument("--gpu-tune", action="store_true",
                   help="GPU: first check and time every kernel variant at several bin counts (N=1M Q=10k k=10)")
    if argv is None and os.environ.get("KNN_SHARDED_FLAGS") and "--sharded-worker" in sys.argv:
        argv = sys.argv[1:] + os.environ["KNN_SHARDED_FLAGS"].split()
    args = p.parse_args(argv)
    if args.quick:
        args.n, args.q, args.rounds = 20_000, args.q or 100, 5
    if args.sharded_worker:
        sharded_worker(args.sharded_worker, args.n, args.d, args.q or 1000, args.k, args.recall_target, args.rounds,
                       args.seed)
    elif args.sharded:
        bench_sharded(2_000_000 if args.n == 1_000_000 and not args.quick else args.n, args.d, args.q or 1000,
                      args.k, args.recall_target, args.rounds, args.seed)
    elif args.only:
        run_one(args.n, args.d, args.q or 1000, args.k, args.metric, args.recall_target, args.seed, args.only)
    elif args.device == "cpu" and args.isolated:
        bench_cpu_isolated(args.n, args.d, args.q or 1000, args.k, args.metric, args.recall_target, args.rounds,
                           args.seed)
    elif args.device == "cpu":
        bench_cpu(args.n, args.d, args.q or 1000, args.k, args.metric, args.recall_target, args.rounds, args.seed,
                  numpy_row=not args.no_numpy, storage=args.storage, exact_only=args.exact_only)
    else:
        sizes = [(1_000_000, 10_000, 10), (1_000_000, 10_000, 100), (10_000_000, 10_000, 10)] if args.gpu_suite else ()
        bench_gpu(args.n, args.d, args.q or 10_000, args.k, args.recall_target, args.rounds, args.seed, sizes,
                  args.gpu_tune)
    return 0


if __name__ == "__main__":
    sys.exit(main())
