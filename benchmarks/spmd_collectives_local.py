"""Collectives between partitions as threads in one process (loom.runtime.local), against a numpy
copy of the same bytes.

    python benchmarks/spmd_collectives_local.py                  # 1 MiB and 16 MiB, 4 and 8 threads
    python benchmarks/spmd_collectives_local.py --sizes-mib 16 --partitions 8 --repeat 20
    python benchmarks/spmd_collectives_local.py --quick                  # 1 MiB, 8 threads, 5 rounds

Each partition's operand is a float32 array of the given size. Contenders, per size and count:
- `all_reduce` / `all_gather` / `reduce_scatter`: the ThreadCommunicator's collective, every
  partition in one group, run by persistent threads (one per partition) on one communicator; a
  round is timed from the moment all threads are released to the moment the last one has its
  result (the partition's own array; the last round's result is dropped before the next round,
  so the communicator may hand its array out again).
- `numpy copy`: the same bytes copied by numpy in one thread into new arrays: what the
  collective delivers (N copies of an operand for all_reduce, N concatenations of the N operands
  for all_gather, N copies of 1/N of an operand for reduce_scatter). The bar: the collective takes
  no longer than this copy (its ratio <= 1).
- `numpy copy, reused`: the same copy into arrays allocated once (no page faults): the copy
  alone, a stricter bar than the target's.
- `run_spmd all_reduce`: the all_reduce as a per-device program run by run_spmd (compiled
  executor; the round includes starting the threads and the call into the program).
The medians (and spreads) are printed and written to benchmarks/results/.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_common import cpu_name, fmt, load_average, spread, write_record  # noqa: E402

from loom.runtime.local import ThreadCommunicator, run_spmd  # noqa: E402

MIB = 1 << 20


def time_collective(n: int, elements: int, repeat: int, call: str) -> list[float]:
    """Seconds per round of `call` (one of COLLECTIVES) among n persistent threads."""
    comm = ThreadCommunicator(n, timeout=60)
    operands = [np.full(elements, p + 1, np.float32) for p in range(n)]
    start, done = threading.Barrier(n + 1), threading.Barrier(n + 1)
    results: list = [None] * n

    def worker(p: int) -> None:
        for _ in range(repeat + 1):  # one warm-up round
            results[p] = None  # the last round's result freed before the next (as the copy's are)
            start.wait()
            if call == "all_reduce":
                results[p] = comm.all_reduce(p, operands[p], range(n), "sum")
            elif call == "reduce_scatter":
                results[p] = comm.reduce_scatter(p, operands[p], range(n), 0, "sum")
            else:
                results[p] = comm.all_gather(p, operands[p], range(n), 0)
            done.wait()

    threads = [threading.Thread(target=worker, args=(p,), daemon=True) for p in range(n)]
    for t in threads:
        t.start()
    times = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        start.wait()
        done.wait()
        times.append(time.perf_counter() - t0)
    for t in threads:
        t.join()
    expected = n * (n + 1) / 2 if call != "all_gather" else None
    if expected is not None and not all(float(r[0]) == expected and float(r[-1]) == expected for r in results):
        raise AssertionError(f"{call} gave a wrong sum")
    return times[1:]


def time_run_spmd(n: int, elements: int, repeat: int) -> list[float]:
    t = f"tensor<{elements}xf32>"
    groups = f"dense<[{list(range(n))}]> : tensor<1x{n}xi64>"
    text = f'''"builtin.module"() ({{
  "func.func"() <{{function_type = ({t}) -> {t}, sym_name = "main"}}> ({{
  ^bb0(%x: {t}):
    %0 = "stablehlo.all_reduce"(%x) <{{channel_handle = #stablehlo.channel_handle<handle = 1, type = 1>, replica_groups = {groups}, use_global_device_ids}}> ({{
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }}) : ({t}) -> {t}
    "func.return"(%0) : ({t}) -> ()
  }}) : () -> ()
}}) {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} : () -> ()
'''  # noqa: E501
    from loom.ir import parse
    module = parse(text)
    args = [[np.full(elements, p + 1, np.float32)] for p in range(n)]
    times = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        run_spmd(module, args)
        times.append(time.perf_counter() - t0)
    return times[1:]


def time_copy(n: int, elements: int, repeat: int, call: str, reused: bool = False) -> list[float]:
    """Seconds to copy, in one thread, the bytes `call` delivers to n partitions into new arrays
    (or, `reused`, into arrays allocated once)."""
    operands = [np.full(elements, p + 1, np.float32) for p in range(n)]
    size = {"all_reduce": elements, "all_gather": n * elements, "reduce_scatter": elements // n}[call]
    targets = [np.empty(size, np.float32) for _ in range(n)] if reused else None
    times = []
    for _ in range(repeat + 1):
        t0 = time.perf_counter()
        outs = targets if targets is not None else [np.empty(size, np.float32) for _ in range(n)]
        for p, out in enumerate(outs):
            if call == "all_gather":
                np.concatenate(operands, out=out)
            else:
                np.copyto(out, operands[p][:size])
        times.append(time.perf_counter() - t0)
        del outs
    return times[1:]


COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sizes-mib", default="1,16", help="comma-separated operand sizes in MiB (default 1,16)")
    ap.add_argument("--partitions", default="4,8", help="comma-separated thread counts (default 4,8)")
    ap.add_argument("--repeat", type=int, default=15, help="timed rounds per contender (default 15)")
    ap.add_argument("--quick", action="store_true", help="1 MiB, 8 partitions, 5 rounds")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes_mib, args.partitions, args.repeat = "1", "8", 5
    print("SPMD collectives in one process (threads) vs a numpy copy of the same bytes")
    print(f"machine: {cpu_name()}, {os.cpu_count()} CPUs, load average {load_average():.2f}")
    print(f"median of {args.repeat} rounds (min-max)")
    cases = []
    for mib in (float(s) for s in args.sizes_mib.split(",")):
        elements = int(mib * MIB) // 4
        for n in (int(s) for s in args.partitions.split(",")):
            timings, over_copy = {}, {}
            for call in COLLECTIVES:
                timings[call] = time_collective(n, elements, args.repeat, call)
                timings[f"numpy copy ({call} bytes)"] = time_copy(n, elements, args.repeat, call)
                timings[f"numpy copy, reused ({call})"] = time_copy(n, elements, args.repeat, call, reused=True)
            timings["run_spmd all_reduce"] = time_run_spmd(n, elements, args.repeat)
            stats = {k: spread(v) for k, v in timings.items()}
            for call in COLLECTIVES:
                over_copy[call] = stats[call]["median"] / stats[f"numpy copy ({call} bytes)"]["median"]
                over_copy[f"{call} over the reused copy"] = (stats[call]["median"]
                                                             / stats[f"numpy copy, reused ({call})"]["median"])
            over_copy["run_spmd all_reduce"] = (stats["run_spmd all_reduce"]["median"]
                                                / stats["numpy copy (all_reduce bytes)"]["median"])
            print(f"\n{mib:g} MiB per partition, {n} partitions:")
            for k, s in stats.items():
                ratio = f"  {over_copy[k]:5.2f}x its numpy copy" if k in over_copy else ""
                if f"{k} over the reused copy" in over_copy:
                    ratio += f", {over_copy[f'{k} over the reused copy']:5.2f}x the reused copy"
                print(f"  {k:<34} {fmt(s['median']):>10}  ({fmt(s['min'])} - {fmt(s['max'])}){ratio}")
            cases.append({"mib": mib, "partitions": n, "seconds": timings, "median_spread": stats,
                          "over_copy": over_copy})
            sys.stdout.flush()
    path = write_record("spmd_collectives_local", {"repeat": args.repeat, "quick": args.quick, "cases": cases})
    print(f"\nrecord: {path.relative_to(path.parent.parent.parent)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
