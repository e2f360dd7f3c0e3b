"""Brute-force nearest-neighbour search: loom's fused approximate top-k against its peers, in one run.

    python benchmarks/knn.py                                  # CPU: N=1M, D=128, Q=1000, k=10, float32
    python benchmarks/knn.py --n 200000 --rounds 5            # smaller, while iterating
    python benchmarks/knn.py --isolated --rounds 4            # CPU, each contender in its own process
    python benchmarks/knn.py --no-numpy --rounds 7            # CPU, loom / faiss / GEMM only
    python benchmarks/knn.py --device gpu --q 10000 --k 10    # GPU (Triton kernel; needs CUDA)

CPU contenders (inner product; `--metric l2` for Euclidean):
- loom: `loom.knn.search(q, db, k, metric, recall_target)` (the `knn.fused_score_top_k` kernel:
  one BLAS call per database chunk, the per-bin maximum of each chunk's scores split across one
  worker per core, then an exact top-k of the bins; see loom/backend/knn_kernels.py);
- faiss: `IndexFlatIP` / `IndexFlatL2` (exact; its BLAS GEMM plus a heap per query);
- numpy: `q @ db.T` per block of 250 queries, then `argpartition` (exact);
- GEMM: the bare float32 matrix product of the same sizes (into a reused buffer, no selection):
  the ceiling of any brute-force search on this machine.

GPU contenders (bf16 inputs): loom's Triton kernel (loom.backend.triton_knn), torch bf16
matmul + topk, jax approx_max_k when jax has a GPU, and the bare bf16 GEMM.

Contenders run round-robin (one call each per round) so that a change in the machine's load
affects all alike; each row gives the median and the best time over the rounds. Recall is measured
against faiss's exact answer (CPU) or an fp32 exact top-k (GPU). "GFLOP/s" is the useful work
2*Q*N*D divided by the time. On CPU the process CPU seconds are printed too ("cpu s", and the bare
GEMM's CPU time over the contender's): on a machine shared with other work, wall times swing with
the load while the CPU time a contender needs stays steadier.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np
from bench_common import cpu_name, load_average  # noqa: E402


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


def cpu_contenders(n: int, d: int, nq: int, k: int, metric: str, recall_target: float, seed: int,
                   results: dict[str, np.ndarray], storage: str = "float32",
                   ) -> tuple[Contenders, str, np.ndarray, np.ndarray]:
    """The CPU contenders on one random problem: (name -> call, faiss's row name or "", q, db).
    With `storage` float16 or bfloat16 the database is kept in that type: loom searches it as it
    is, faiss stores it in its scalar quantizer of that type (exact search over it)."""
    import ml_dtypes

    import loom.knn
    rng = np.random.default_rng(seed)
    db = rng.standard_normal((n, d), dtype=np.float32)
    q = rng.standard_normal((nq, d), dtype=np.float32)
    kept = np.dtype(ml_dtypes.bfloat16 if storage == "bfloat16" else storage)
    loom_db, loom_q = db.astype(kept, copy=False), q.astype(kept, copy=False)
    contenders: dict[str, Callable[[], object]] = {}

    def loom_search():
        results["loom"] = loom.knn.search(loom_q, loom_db, k, metric=metric, recall_target=recall_target)[1]

    contenders[f"loom knn.search (r={recall_target})"] = loom_search
    try:
        import faiss
        faiss_metric = faiss.METRIC_INNER_PRODUCT if metric == "ip" else faiss.METRIC_L2
        if storage == "float32":
            index = faiss.IndexFlatIP(d) if metric == "ip" else faiss.IndexFlatL2(d)
        else:
            kind = faiss.ScalarQuantizer.QT_fp16 if storage == "float16" else faiss.ScalarQuantizer.QT_bf16
            index = faiss.IndexScalarQuantizer(d, kind, faiss_metric)
        index.add(db)

        def faiss_search():
            results["faiss"] = index.search(q, k)[1]

        faiss_name = (f"faiss IndexFlat{'IP' if metric == 'ip' else 'L2'}" if storage == "float32" else
                      f"faiss IndexScalarQuantizer {'fp16' if storage == 'float16' else 'bf16'}")
        contenders[faiss_name] = faiss_search
    except ImportError:
        faiss_name = ""
        print("faiss is not installed: no faiss row")
    half = 0.5 * (db * db).sum(1)

    def numpy_search():
        out = np.empty((nq, k), np.int64)
        for a in range(0, nq, 250):
            s = q[a:a + 250] @ db.T
            if metric == "l2":
                s = half[None, :] - s
                out[a:a + 250] = np.argpartition(s, k - 1, axis=1)[:, :k]
            else:
                out[a:a + 250] = np.argpartition(-s, k - 1, axis=1)[:, :k]
        results["numpy"] = out

    contenders["numpy matmul + argpartition"] = numpy_search
    chunk = 16384
    buffer = np.empty((nq, chunk), np.float32)

    def gemm():
        for a in range(0, n, chunk):
            b = min(a + chunk, n)
            np.matmul(q, db[a:b].T, out=buffer[:, :b - a])

    contenders["bare float32 GEMM (no selection)"] = gemm
    return contenders, faiss_name, q, db


def bench_cpu(n: int, d: int, nq: int, k: int, metric: str, recall_target: float, rounds: int,
              seed: int, numpy_row: bool = True, storage: str = "float32") -> dict[str, dict[str, float]]:
    import loom.knn
    print(f"CPU: N={n} D={d} Q={nq} k={k} database {storage} metric={metric} recall_target={recall_target}; "
          f"{machine()}")
    results: dict[str, np.ndarray] = {}
    contenders, faiss_name, q, db = cpu_contenders(n, d, nq, k, metric, recall_target, seed, results, storage)
    if (not numpy_row or storage != "float32") and faiss_name:
        del contenders["numpy matmul + argpartition"]
    for fn in contenders.values():  # warm-up, and the answers for recall
        fn()
    if "faiss" in results:
        truth = results["faiss"]
    else:
        truth = loom.knn.search(q, db, k, metric=metric, recall_target=1.0)[1]
    recalls = {f"loom knn.search (r={recall_target})": recall(results["loom"], truth)}
    if "numpy" in results:
        recalls["numpy matmul + argpartition"] = recall(results["numpy"], truth)
    if faiss_name:
        recalls[faiss_name] = 1.0
    times = run_rounds(contenders, rounds)
    rows = report(times, recalls, nq, n, d, faiss_name or "numpy matmul + argpartition",
                  "bare float32 GEMM (no selection)")
    loom_row = rows[f"loom knn.search (r={recall_target})"]
    if faiss_name:
        print(f"loom / faiss queries/s: {rows[faiss_name]['median'] / loom_row['median']:.2f}x "
              f"(target >= 1.25 at recall >= 0.95; loom's recall {recalls[next(iter(recalls))]:.4f})")
    print(f"loom / bare GEMM throughput: {rows['bare float32 GEMM (no selection)']['median'] / loom_row['median']:.2f} "
          "(target >= 0.90)")
    return rows


def bench_cpu_isolated(n: int, d: int, nq: int, k: int, metric: str, recall_target: float, rounds: int,
                       seed: int) -> None:
    """Each contender in a fresh process per round (one warm-up call, then one timed call),
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
    loom_name = next(name for name in names if name.startswith("loom"))
    for name in names:
        if name.startswith("faiss"):
            ratio = statistics.median(times[name]) / statistics.median(times[loom_name])
            print(f"loom / faiss queries/s (medians): {ratio:.2f}x")


def run_one(n: int, d: int, nq: int, k: int, metric: str, recall_target: float, seed: int, name: str) -> None:
    """`--only NAME`: one warm-up call and one timed call of one contender; prints JSON."""
    import json
    fn = cpu_contenders(n, d, nq, k, metric, recall_target, seed, {})[0][name]
    fn()
    t0 = time.perf_counter()
    fn()
    print(json.dumps({"name": name, "seconds": time.perf_counter() - t0}))


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
    for n_, nq_, k_ in sizes or [(n, nq, k)]:
        try:
            gpu_case(n_, d, nq_, k_, recall_target, rounds, seed)
        except Exception as e:  # report and go on to the next size
            import traceback
            traceback.print_exc()
            print(f"N={n_} Q={nq_} k={k_} failed: {type(e).__name__}: {e}", flush=True)


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


def gpu_case(n: int, d: int, nq: int, k: int, recall_target: float, rounds: int, seed: int) -> None:
    import torch

    from loom.backend import triton_knn
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    db = torch.randn((n, d), device=DEVICE, generator=gen).to(torch.bfloat16)
    q = torch.randn((nq, d), device=DEVICE, generator=gen).to(torch.bfloat16)
    print(f"\nN={n} D={d} Q={nq} k={k} bf16, recall_target={recall_target}", flush=True)

    def sync(fn: Callable[[], object]) -> Callable[[], object]:
        def run() -> object:
            out = fn()
            sync_device()
            return out
        return run

    results: dict[str, object] = {}
    contenders: dict[str, Callable[[], object]] = {}

    def loom_fn() -> None:
        results["loom triton fused"] = triton_knn.search(q, db, k, recall_target=recall_target)[1]

    if not triton_knn.INTERPRETING:
        t0 = time.perf_counter()
        cfg, bins = triton_knn.tune(q, db, None, k, recall_target, "tf32")
        print(f"(autotuned in {time.perf_counter() - t0:.1f} s: {cfg}, {bins} bins; untuned: "
              f"{triton_knn.tile_config(nq, bins, d, q.dtype)})")

    def loom_tuned_fn() -> None:
        results["loom triton fused, autotuned"] = triton_knn.search(q, db, k, recall_target=recall_target,
                                                                   autotune=True)[1]

    step = max(1, int(8e9 // (2 * n)))

    def torch_fn() -> None:
        # in query blocks so that the bf16 score matrix fits in memory
        parts = [torch.topk(q[a:a + step] @ db.T, k, dim=1).indices for a in range(0, nq, step)]
        results["torch bf16 matmul + topk"] = torch.cat(parts)

    def gemm_fn() -> None:
        for a in range(0, nq, step):
            q[a:a + step] @ db.T

    contenders["loom triton fused"] = sync(loom_fn)
    contenders["loom triton fused, autotuned"] = sync(loom_tuned_fn)
    if n >= 5_000_000 and DEVICE == "cuda":
        # a database kept in host memory (as one larger than the GPU's would be), streamed through
        # the GPU in batches by loom.knn.search itself
        import loom.knn
        db_host = db.cpu()

        def loom_streamed_fn() -> None:
            results["loom, db streamed from host"] = loom.knn.search(
                q, db_host, k, recall_target=recall_target, database_batch=max(k, n // 4))[1]

        contenders["loom, db streamed from host"] = sync(loom_streamed_fn)
    contenders["torch bf16 matmul + topk"] = sync(torch_fn)
    contenders["torch bf16 GEMM (no selection)"] = sync(gemm_fn)
    try:
        import jax
        if any(dev.platform == "gpu" for dev in jax.devices()) and n <= 2_000_000:
            import jax.numpy as jnp
            jq = jnp.asarray(q.float().cpu().numpy(), dtype=jnp.bfloat16)
            jdb = jnp.asarray(db.float().cpu().numpy(), dtype=jnp.bfloat16)
            jstep = max(1, int(8e9 // (4 * n)))  # fp32 scores (jax's bf16-score path is ~8x slower)
            f = jax.jit(lambda a, b: jax.lax.approx_max_k(jnp.matmul(a, b.T, preferred_element_type=jnp.float32), k,
                                                          recall_target=recall_target)[1])

            def jax_fn() -> None:
                parts = [f(jq[a:a + jstep], jdb) for a in range(0, nq, jstep)]
                results["jax approx_max_k"] = np.concatenate([np.asarray(jax.block_until_ready(p)) for p in parts])

            contenders["jax approx_max_k"] = jax_fn
    except Exception as e:  # jax without a GPU backend: no jax row
        print(f"(no jax row: {type(e).__name__}: {e})")
    for fn in contenders.values():
        fn()
    # recall against an fp32 exact top-k on the first queries
    check = min(nq, 2000)
    tstep = max(1, int(4e9 // (4 * n)))
    truth = torch.cat([torch.topk(q[a:min(a + tstep, check)].float() @ db.float().T, k, dim=1).indices
                       for a in range(0, check, tstep)]).cpu().numpy()
    recalls = {}
    for name, found in results.items():
        found = found.cpu().numpy() if hasattr(found, "cpu") else np.asarray(found)
        recalls[name] = recall(found[:check], truth)
    times = run_rounds(contenders, rounds)
    report(times, recalls, nq, n, d, "torch bf16 matmul + topk", "torch bf16 GEMM (no selection)",
           unit="TFLOP/s", scale=1e12)


def main(argv: Sequence[str] | None = None) -> int:
    """`loom bench knn`: parse the flags and run the CPU or GPU benchmark."""
    p = argparse.ArgumentParser(prog="loom bench knn", description=__doc__.split("\n\n")[0])
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
    p.add_argument("--storage", choices=("float32", "float16", "bfloat16"), default="float32",
                   help="CPU: the database's type (faiss: IndexScalarQuantizer fp16/bf16 for the low ones)")
    p.add_argument("--only", help=argparse.SUPPRESS)  # one contender in this process (used by --isolated)
    p.add_argument("--gpu-suite", action="store_true",
                   help="GPU: N=1M Q=10k k=10 and k=100, and N=10M Q=10k k=10 (the headline sizes)")
    p.add_argument("--gpu-tune", action="store_true",
                   help="GPU: first check and time every kernel variant at several bin counts (N=1M Q=10k k=10)")
    args = p.parse_args(argv)
    if args.only:
        run_one(args.n, args.d, args.q or 1000, args.k, args.metric, args.recall_target, args.seed, args.only)
    elif args.device == "cpu" and args.isolated:
        bench_cpu_isolated(args.n, args.d, args.q or 1000, args.k, args.metric, args.recall_target, args.rounds,
                           args.seed)
    elif args.device == "cpu":
        bench_cpu(args.n, args.d, args.q or 1000, args.k, args.metric, args.recall_target, args.rounds, args.seed,
                  numpy_row=not args.no_numpy, storage=args.storage)
    else:
        sizes = [(1_000_000, 10_000, 10), (1_000_000, 10_000, 100), (10_000_000, 10_000, 10)] if args.gpu_suite else ()
        bench_gpu(args.n, args.d, args.q or 10_000, args.k, args.recall_target, args.rounds, args.seed, sizes,
                  args.gpu_tune)
    return 0


if __name__ == "__main__":
    sys.exit(main())
