"""Parallel iterations of a loop partitioned over two devices (MPMD placement), in one run:

    python benchmarks/mpmd.py                      # 2 threads (no link latency, a 2 ms link); 2 gloo processes
    python benchmarks/mpmd.py --latency-ms 0 --no-processes
    python benchmarks/mpmd.py --quick              # fewer steps and rounds (a smoke run)

The loop is the two-stage pipeline of examples/mpmd_loop.py: a recurrent cell on device 0, which
also decides whether to go on, feeding an accumulator on device 1 (width 256, a batch of 128
sequences: each stage is a 128 x 256 x 256 matmul per iteration).
Contenders, all on the same inputs:

- single device (the peer): the function whole, `loom.jit`, in one thread;
- 2 devices, `parallel_iterations=1`: the partitioned loop with the devices in step (no device
  starts iteration i + 1 before both opened iteration i);
- 2 devices, `parallel_iterations=P` (default 4): device 0 may run up to P iterations ahead.

In process the devices are threads, measured without link latency and with every message taking
`--latency-ms` on its link (a model of a slow interconnect: that comparison does not hang on how
many idle cores a shared machine has); with processes, each device is a gloo process exchanging
point-to-point messages (isend / irecv).

Control overhead, in the same gloo processes: a loop with an empty body across the two devices
(device 0 counts and decides, device 1 counts along; only the predicate crosses, every iteration)
against its peer, a bare torch.distributed isend / irecv pair of the same one-byte predicate per
iteration, in a loop of the same trip count (`--control-trips`). Both are reported per iteration;
the target is a partitioned loop costing at most 1.5x the bare pair.

Contenders run round-robin, the median of the rounds is reported with its spread; ratios are peer
time / contender time (above 1: the contender is faster). The run writes
benchmarks/results/mpmd-DATE.json.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

if __name__ == "__main__":  # one BLAS thread per device
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
from bench_common import Record, cpu_name, spawn_ranks, time_rounds  # noqa: E402

import loom  # noqa: E402
import loom.numpy as lnp  # noqa: E402
from loom import lax  # noqa: E402
from loom.frontend.placement import mpmd_program  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from mpmd_loop import inputs, two_stages  # noqa: E402

WIDTH, BATCH = 256, 128


def empty_loop(trips):
    """A loop whose body does next to nothing on each of two devices: its cost is its control."""
    def cond(c):
        with loom.placement(0):
            return c[0] < trips

    def body(c):
        t, k = c
        with loom.placement(0):
            t = t + 1
        with loom.placement(1):
            k = k + 1
        return t, k

    with loom.placement(1):
        k0 = lnp.int32(0)
    return lax.while_loop(cond, body, (lnp.int32(0), k0))


def bare_pair(rank: int, messages: int) -> None:
    """The peer of `empty_loop`: `messages` one-byte isend / irecv pairs from rank 0 to rank 1."""
    import torch
    import torch.distributed as dist
    predicate = torch.ones(1, dtype=torch.uint8)
    for _ in range(messages):
        if rank == 0:
            dist.isend(predicate, 1, tag=1).wait()
        else:
            dist.irecv(predicate, 0, tag=1).wait()


def _process(rank: int, port: int, steps: int, parallel: int, rounds: int, trips: int,
             results) -> None:
    import torch

    import loom.distributed
    from loom.runtime.distributed import communicator
    torch.set_num_threads(1)
    w1, w2, xs = inputs(WIDTH, steps, 0, BATCH)
    length, n = np.int32(steps), np.int32(trips)
    loom.distributed.initialize(f"127.0.0.1:{port}", 2, rank, timeout_s=120)
    try:
        programs = {p: mpmd_program(two_stages, w1, w2, xs, length, parallel_iterations=p) for p in (1, parallel)}
        controls = {p: mpmd_program(empty_loop, n, parallel_iterations=p) for p in (1, parallel)}
        fns = {p: (lambda prog=prog: prog.run_process(w1, w2, xs, length, timeout=120)) for p, prog in programs.items()}
        fns |= {("control", p): (lambda prog=prog: prog.run_process(n, timeout=120)) for p, prog in controls.items()}
        fns["bare"] = lambda: bare_pair(rank, trips + 1)  # the loop sends trips + 1 predicates, the last one false
        times = time_rounds(fns, rounds, communicator().barrier)
        if rank == 0:
            results.put(times)
    finally:
        loom.distributed.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--parallel", type=int, default=4, help="parallel_iterations of the overlapped contender")
    ap.add_argument("--latency-ms", type=float, default=2.0, help="the in-process link's latency per message")
    ap.add_argument("--no-processes", action="store_true", help="skip the gloo processes")
    ap.add_argument("--control-trips", type=int, default=1000, help="iterations of the empty-body loop")
    ap.add_argument("--quick", action="store_true", help="16 steps, 200 control trips, 3 rounds")
    args = ap.parse_args()
    if args.quick:
        args.steps, args.control_trips, args.rounds = 16, 200, 3
    w1, w2, xs = inputs(WIDTH, args.steps, 0, BATCH)
    length = np.int32(args.steps)
    single = loom.jit(two_stages)
    programs = {p: mpmd_program(two_stages, w1, w2, xs, length, parallel_iterations=p) for p in (1, args.parallel)}
    want = single(w1, w2, xs, length)
    trips = int(want[0])
    for prog in programs.values():  # the partitioned runs give the single-device values
        got = prog(w1, w2, xs, length, link_latency=args.latency_ms * 1e-3)
        assert all(np.asarray(a).tobytes() == np.asarray(b).tobytes() for a, b in zip(got, want))

    print(f"two-stage pipeline loop, width {WIDTH}, batch {BATCH}, {trips} iterations; machine: {cpu_name()}, "
          f"{os.cpu_count()} cores")
    record = Record("mpmd", {"width": WIDTH, "batch": BATCH, "steps": args.steps, "iterations": trips,
                             "rounds": args.rounds, "parallel_iterations": args.parallel,
                             "latency_ms": args.latency_ms, "control_trips": args.control_trips})
    peer = "single device"
    one, many = "2 devices, parallel_iterations=1", f"2 devices, parallel_iterations={args.parallel}"
    for latency_ms in sorted({0.0, args.latency_ms}):
        latency = latency_ms * 1e-3
        case = f"2 threads, {latency_ms:g} ms link"
        times = time_rounds({
            peer: lambda: single(w1, w2, xs, length),
            one: lambda latency=latency: programs[1](w1, w2, xs, length, link_latency=latency),
            many: lambda latency=latency: programs[args.parallel](w1, w2, xs, length, link_latency=latency),
        }, args.rounds)
        record.add_all(case, times)
        print(f"{case}:")
        for name, ts in times.items():
            print(f"  {name:<36} {np.median(ts) * 1e3:9.2f} ms  (min {min(ts) * 1e3:.2f}, max {max(ts) * 1e3:.2f})")
        print(f"  parallel_iterations={args.parallel} vs 1: {record.ratio(case, many, one):.2f}x; "
              f"vs single device: {record.ratio(case, many, peer):.2f}x")
    if not args.no_processes:
        case = "2 gloo processes (point-to-point transfers)"
        by_p = spawn_ranks(_process, 2, (args.steps, args.parallel, args.rounds, args.control_trips), 600)
        record.add(case, one, by_p[1])
        record.add(case, many, by_p[args.parallel])
        record.add(case, peer, times[peer])  # the peer is the same single-device run
        print(f"{case}:")
        for name, ts in ((one, by_p[1]), (many, by_p[args.parallel])):
            print(f"  {name:<36} {np.median(ts) * 1e3:9.2f} ms  (min {min(ts) * 1e3:.2f}, max {max(ts) * 1e3:.2f})")
        print(f"  parallel_iterations={args.parallel} vs 1: {record.ratio(case, many, one):.2f}x; "
              f"vs single device: {record.ratio(case, many, peer):.2f}x")
        case, bare = "control overhead per iteration, 2 gloo processes", "bare isend/irecv pair"
        per_iteration = {bare: [t / (args.control_trips + 1) for t in by_p["bare"]]}
        for p in (1, args.parallel):
            per_iteration[f"empty-body loop, parallel_iterations={p}"] = [t / args.control_trips
                                                                          for t in by_p[("control", p)]]
        record.add_all(case, per_iteration)
        print(f"{case} ({args.control_trips} iterations):")
        for name, ts in per_iteration.items():
            print(f"  {name:<44} {np.median(ts) * 1e6:8.1f} us  (min {min(ts) * 1e6:.1f}, max {max(ts) * 1e6:.1f})")
        for name in list(per_iteration)[1:]:  # cost ratio: the target is at most 1.5x
            print(f"  {name} / bare pair: {1 / record.ratio(case, name, bare):.2f}x the cost (target <= 1.5x)")
    record.write()


if __name__ == "__main__":
    main()
