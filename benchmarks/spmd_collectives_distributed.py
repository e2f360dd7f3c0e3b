"""Collectives over many processes: loom's path against the same torch.distributed call made directly.

    python benchmarks/spmd_collectives_distributed.py                       # 2 and 4 processes, 1 and 16 MiB
    python benchmarks/spmd_collectives_distributed.py --processes 2 --sizes-mib 1 --repeat 5
    python benchmarks/spmd_collectives_distributed.py --quick               # 2 processes, 1 MiB, 5 rounds

loom's path is a per-device program with one collective (`stablehlo.all_reduce` with an add
reducer, `stablehlo.all_gather`, `stablehlo.reduce_scatter`, over all partitions, as JAX's
shard_map lowering writes them) run by `loom.runtime.distributed.run_partitioned`: the compiled
program, the collective kernel, the TorchCommunicator, torch.distributed (gloo on 127.0.0.1). The
direct path is the torch.distributed call on preallocated tensors (all_reduce in place; loom's
all_reduce first copies its operand, which it must not overwrite). The size is the operand's, per
process (float32). Each timed call starts after a barrier; the calls of the two contenders
alternate (and which goes first, too), so a change in the machine's load hits both; a call's time
is the slowest process's. A warm-up call of each is not timed.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import fmt, load_average, spread, write_record  # noqa: E402

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")
WIDTH = 256  # operands are (rows, 256) float32
REDUCER = ('({\n  ^bb0(%lhs: tensor<f32>, %rhs: tensor<f32>):\n'
           '    %r = "stablehlo.add"(%lhs, %rhs) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n'
           '    "stablehlo.return"(%r) : (tensor<f32>) -> ()\n  })')


def program(collective: str, rows: int, n: int) -> str:
    """The per-device program: one collective over all `n` partitions on a (rows, 256) operand."""
    t = f"tensor<{rows}x{WIDTH}xf32>"
    out = {"all_reduce": t, "all_gather": f"tensor<{rows * n}x{WIDTH}xf32>",
           "reduce_scatter": f"tensor<{rows // n}x{WIDTH}xf32>"}[collective]
    groups = (f"channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = "
              f"dense<[[{', '.join(map(str, range(n)))}]]> : tensor<1x{n}xi64>, use_global_device_ids")
    attrs = {"all_reduce": groups, "all_gather": f"all_gather_dim = 0 : i64, {groups}",
             "reduce_scatter": f"scatter_dimension = 0 : i64, {groups}"}[collective]
    region = "" if collective == "all_gather" else REDUCER
    return (f'"builtin.module"() ({{\n"func.func"() <{{function_type = ({t}) -> {out}, sym_name = "main"}}> ({{\n'
            f"^bb0(%arg0: {t}):\n  %0 = \"stablehlo.{collective}\"(%arg0) <{{{attrs}}}> {region} : ({t}) -> {out}\n"
            f'  "func.return"(%0) : ({out}) -> ()\n}}) : () -> ()\n}}) {{mhlo.num_partitions = {n} : i32, '
            "mhlo.num_replicas = 1 : i32} : () -> ()\n")


def _direct(collective: str, x: Any, n: int) -> Any:
    """The torch.distributed call on preallocated tensors."""
    import torch
    import torch.distributed as dist
    if collective == "all_reduce":
        return lambda: dist.all_reduce(x)
    if collective == "all_gather":
        out = torch.empty((x.shape[0] * n,) + tuple(x.shape[1:]), dtype=x.dtype)
        return lambda: dist.all_gather_single(out, x)
    out = torch.empty((x.shape[0] // n,) + tuple(x.shape[1:]), dtype=x.dtype)
    return lambda: dist.reduce_scatter_single(out, x)


def _check(collective: str, got: np.ndarray, x: np.ndarray, n: int) -> None:
    """loom's result is torch.distributed's (made here out of place, from a copy)."""
    import torch
    import torch.distributed as dist
    t = torch.from_numpy(x.copy())
    if collective == "all_reduce":
        dist.all_reduce(t)
        want = t
    elif collective == "all_gather":
        want = torch.empty((x.shape[0] * n, x.shape[1]))
        dist.all_gather_single(want, t)
    else:
        want = torch.empty((x.shape[0] // n, x.shape[1]))
        dist.reduce_scatter_single(want, t)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6, err_msg=collective)


def _worker(rank: int, n: int, port: int, sizes_mib: list[float], repeat: int, warmup: int, results: Any) -> None:
    import torch
    import torch.distributed as dist

    from loom.runtime.distributed import communicator, initialize, run_partitioned, shutdown
    torch.set_num_threads(1)
    initialize(f"127.0.0.1:{port}", n, rank, timeout_s=300)
    comm = communicator()
    out: dict[str, dict[str, list[float]]] = {}
    for mib in sizes_mib:
        rows = int(mib * 2**20) // (4 * WIDTH)
        x = np.random.default_rng(rank).standard_normal((rows, WIDTH)).astype(np.float32)
        for collective in COLLECTIVES:
            text = program(collective, rows, n)
            direct = _direct(collective, torch.from_numpy(x.copy()), n)
            _check(collective, run_partitioned(text, [x])[0], x, n)
            contenders = {"loom": lambda text=text, x=x: run_partitioned(text, [x]), "torch.distributed": direct}
            times: dict[str, list[float]] = {name: [] for name in contenders}
            for i in range(warmup + repeat):
                order = list(contenders.items())
                for name, call in order if i % 2 else order[::-1]:  # who goes first alternates
                    comm.barrier()
                    start = time.perf_counter()
                    call()
                    if i >= warmup:
                        times[name].append(time.perf_counter() - start)
            slowest = torch.tensor([times[name] for name in contenders], dtype=torch.float64)
            dist.all_reduce(slowest, op=dist.ReduceOp.MAX)
            key = f"{collective}/{mib:g}MiB"
            out[key] = {name: slowest[i].tolist() for i, name in enumerate(contenders)}
    if rank == 0:
        results.put(out)
    comm.barrier()
    shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(n: int, sizes_mib: list[float], repeat: int, warmup: int, timeout_s: float) -> dict[str, Any]:
    import torch.multiprocessing as mp
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = mp.start_processes(_worker, args=(n, _free_port(), sizes_mib, repeat, warmup, results), nprocs=n,
                               join=False, start_method="spawn").processes
    try:
        return results.get(timeout=timeout_s)
    finally:
        for p in procs:
            p.join(timeout=30)
            if p.is_alive():
                p.kill()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--processes", type=int, nargs="+", default=[2, 4])
    ap.add_argument("--sizes-mib", type=float, nargs="+", default=[1, 16])
    ap.add_argument("--repeat", type=int, default=15)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--no-record", action="store_true", help="print only; write no JSON record")
    ap.add_argument("--quick", action="store_true", help="2 processes, 1 MiB, 5 rounds after 1 warm-up")
    args = ap.parse_args()
    if args.quick:
        args.processes, args.sizes_mib, args.repeat, args.warmup = [2], [1.0], 5, 1
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    rows = []
    payload: dict[str, Any] = {"setup": {"repeat": args.repeat, "warmup": args.warmup, "backend": "gloo",
                                         "dtype": "float32", "operand_mib_per_process": args.sizes_mib,
                                         "quick": args.quick},
                               "results": {}}
    print(f"{'processes':>9} {'collective':>14} {'size':>7} {'loom median':>12} {'torch median':>13} "
          f"{'ratio':>6}  spread loom / torch")
    for n in args.processes:
        res = run(n, args.sizes_mib, args.repeat, args.warmup, args.timeout)
        for key, by in res.items():
            collective, size = key.split("/")
            loom_s, torch_s = spread(by["loom"]), spread(by["torch.distributed"])
            ratio = loom_s["median"] / torch_s["median"]
            payload["results"][f"{n}/{key}"] = {"processes": n, "collective": collective, "size": size,
                                                "loom": by["loom"], "torch.distributed": by["torch.distributed"],
                                                "loom_spread": loom_s, "torch_spread": torch_s,
                                                "ratio_of_medians": ratio,
                                                "ratio_of_minima": loom_s["min"] / torch_s["min"]}
            rows.append(ratio)
            print(f"{n:>9} {collective:>14} {size:>7} {fmt(loom_s['median']):>12} {fmt(torch_s['median']):>13} "
                  f"{ratio:>6.3f}  {fmt(loom_s['min'])}-{fmt(loom_s['max'])} / "
                  f"{fmt(torch_s['min'])}-{fmt(torch_s['max'])}", flush=True)
    payload["worst_ratio"] = max(rows)
    payload["median_ratio"] = statistics.median(rows)
    print(f"ratio of medians (loom / torch.distributed): median {payload['median_ratio']:.3f}, "
          f"worst {payload['worst_ratio']:.3f} (bar: 1.10; load average {load_average():.1f})")
    if not args.no_record:
        print(f"record: {write_record('spmd_collectives_distributed', payload)}")


if __name__ == "__main__":
    main()
