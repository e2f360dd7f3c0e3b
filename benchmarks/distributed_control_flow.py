"""A pipelined 2-stage LSTM trained through its partitioned loop, on 2 gloo processes, in one run:

    python benchmarks/distributed_control_flow.py             # 2 layers, 256 inputs and hidden, batch 64, 32 steps
    python benchmarks/distributed_control_flow.py --quick     # hidden 64, batch 16, 12 steps, 3 rounds

The model is examples/pipeline_rnn.py's (imported from it): one LSTM layer per device, a loop over
the batch's longest sequence, one training step = loss, its gradient through the loop, SGD.
Contenders, on the same batch and weights, timed per training step in the same two processes
(one BLAS thread each), round-robin, between barriers:

- one process (the peer): the whole step, `loom.jit`, on rank 0 while rank 1 waits;
- 2 processes, `parallel_iterations=1`: the partitioned step, the devices in step (no device
  starts iteration i + 1 before both opened iteration i);
- 2 processes, `parallel_iterations=P` (default 8): device 0 runs up to P iterations ahead in the
  forward loop, device 1 up to P ahead in the backward loop (a pipeline).

Targets: P iterations at least 1.7x the steps/s of one process and 1.5x those of
`parallel_iterations=1`. Ratios are peer time / contender time (above 1: the contender is faster);
the median of the rounds is reported with its spread. Each process also counts its CPU time per
step (all its threads: the program's and gloo's), which a loaded machine inflates far less than
the wall clock: the one-process step's CPU time over the busier process's CPU time in a
partitioned step bounds what the partitioned step can gain on two cores (before its pipeline's
fill and drain); the CPU time of the program's thread alone (the rest is gloo's threads) gives the
bound were the transport's threads free. The partitioned contenders also report each rank's time
blocked on the transport per step (waiting for a message or for its peer to take one): where it
goes when the two ranks' shares of a phase differ. Writes benchmarks/results/distributed_control_flow-DATE.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

if __name__ == "__main__":  # one BLAS thread per device
    os.environ["OPENBLAS_NUM_THREADS"] = os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"

import numpy as np  # noqa: E402
from bench_common import Record, cpu_name, spawn_ranks, time_rounds  # noqa: E402

import loom  # noqa: E402
from loom.frontend.placement import mpmd_program  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))
from pipeline_rnn import batch, flat, init, make_step  # noqa: E402

LR = 0.1
ONE, SINGLE = "2 processes, parallel_iterations=1", "one process"


def workload(args: argparse.Namespace) -> tuple[list, tuple]:
    """The flat weights and one batch (its longest sequence max_len long: the same trip count every round)."""
    params = flat(init(2, args.inputs, args.hidden, args.outputs, 0))
    xs, ys, lengths = batch(0, args.batch, args.max_len, args.inputs, args.outputs, 0)
    lengths[0] = args.max_len
    return params, (xs, ys, lengths)


def _process(rank: int, port: int, args: argparse.Namespace, results) -> None:
    import torch

    import loom.distributed
    from loom.runtime.distributed import communicator
    torch.set_num_threads(1)
    loom.distributed.initialize(f"127.0.0.1:{port}", 2, rank, timeout_s=300)
    try:
        params, data = workload(args)
        tree = init(2, args.inputs, args.hidden, args.outputs, 0)
        step = make_step(LR, 2)
        single = loom.jit(step)
        programs = {p: mpmd_program(step, tree, *data, parallel_iterations=p, num_devices=2)
                    for p in (1, args.parallel)}
        fns: dict[str, Callable[[], None]] = {}
        waited: dict[str, list[float]] = {}  # each run's time blocked on the transport
        for p, prog in programs.items():
            name = f"2 processes, parallel_iterations={p}"
            waited[name] = []

            def partitioned(prog=prog, name=name) -> None:
                prog.run_process(*params, *data, timeout=300)
                waited[name].append(prog.waited_s)
            fns[name] = partitioned
        fns[SINGLE] = (lambda: single(tree, *data)) if rank == 0 else (lambda: None)
        cpu: dict[str, list[float]] = {name: [] for name in fns}
        own: dict[str, list[float]] = {name: [] for name in fns}  # the program's thread alone

        def counted(name: str, fn) -> Callable[[], None]:
            def run() -> None:
                start, start_own = time.process_time(), time.thread_time()
                fn()
                own[name].append(time.thread_time() - start_own)
                cpu[name].append(time.process_time() - start)
            return run
        times = time_rounds({name: counted(name, fn) for name, fn in fns.items()}, args.rounds,
                            communicator().barrier)
        cpu_by_rank = communicator().all_gather_object({name: ts[1:] for name, ts in cpu.items()})  # not the warm-up
        own_by_rank = communicator().all_gather_object({name: ts[1:] for name, ts in own.items()})
        waited_by_rank = communicator().all_gather_object({name: ts[1:] for name, ts in waited.items()})
        if rank == 0:
            results.put((times, cpu_by_rank, own_by_rank, waited_by_rank))
    finally:
        loom.distributed.shutdown()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=int, default=256, help="input features (= hidden: the two stages weigh the same)")
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--outputs", type=int, default=8)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--max-len", type=int, default=32, help="the batch's longest sequence: the loop's trip count")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--parallel", type=int, default=8, help="parallel_iterations of the pipelined contender")
    ap.add_argument("--deadline", type=float, default=1200.0, help="seconds the processes may take in all")
    ap.add_argument("--quick", action="store_true", help="hidden 64, batch 16, 12 steps, 3 rounds")
    args = ap.parse_args()
    if args.quick:
        args.inputs, args.hidden, args.batch, args.max_len, args.rounds = 64, 64, 16, 12, 3
    params, data = workload(args)
    tree = init(2, args.inputs, args.hidden, args.outputs, 0)
    want = loom.jit(make_step(LR, 2))(tree, *data)
    want = [np.asarray(v) for v in (*flat(want[0]), want[1])]
    for p in (1, args.parallel):  # the partitioned step (threads here) gives the single-device values
        got = mpmd_program(make_step(LR, 2), tree, *data, parallel_iterations=p, num_devices=2)(*params, *data)
        assert all(np.asarray(g).tobytes() == w.tobytes() for g, w in zip(got, want)), f"parallel_iterations={p}"

    tokens = int(data[2].sum())
    print(f"2-layer LSTM training step, hidden {args.hidden}, batch {args.batch}, {args.max_len} iterations, "
          f"{tokens} tokens; machine: {cpu_name()}, {os.cpu_count()} cores")
    record = Record("distributed_control_flow", {
        "layers": 2, "inputs": args.inputs, "hidden": args.hidden, "outputs": args.outputs, "batch": args.batch,
        "iterations": args.max_len, "tokens": tokens, "rounds": args.rounds, "parallel_iterations": args.parallel})
    case, many = "2 gloo processes vs one process", f"2 processes, parallel_iterations={args.parallel}"
    times, cpu_by_rank, own_by_rank, waited_by_rank = spawn_ranks(_process, 2, (args,), args.deadline)
    record.add_all(case, {name: times[name] for name in (SINGLE, ONE, many)})
    cpu = {f"{name}, rank {rank}": cpu_by_rank[rank][name] for name in (SINGLE, ONE, many) for rank in (0, 1)}
    del cpu[f"{SINGLE}, rank 1"]  # it waits at the barrier
    record.add_all("CPU time per step (the process's threads)", cpu)
    own = {f"{name}, rank {rank}": own_by_rank[rank][name] for name in (SINGLE, ONE, many) for rank in (0, 1)}
    del own[f"{SINGLE}, rank 1"]
    record.add_all("CPU time per step of the program's thread (the rest: gloo's threads)", own)
    for name in (SINGLE, ONE, many):
        ts = times[name]
        print(f"  {name:<36} {1 / np.median(ts):8.2f} steps/s {tokens / np.median(ts):9.0f} tokens/s  "
              f"(step {np.median(ts) * 1e3:.1f} ms, min {min(ts) * 1e3:.1f}, max {max(ts) * 1e3:.1f})")
    over_single, over_one = record.ratio(case, many, SINGLE), record.ratio(case, many, ONE)
    print(f"  parallel_iterations={args.parallel} vs one process: {over_single:.2f}x (target 1.7x); "
          f"vs parallel_iterations=1: {over_one:.2f}x (target 1.5x)")
    print("  CPU time per step, median: the process (its program's thread)")
    for name, ts in cpu.items():
        print(f"    {name:<46} {np.median(ts) * 1e3:8.1f} ms ({np.median(own[name]) * 1e3:.1f} ms)")
    waited = {f"{name}, rank {rank}": waited_by_rank[rank][name] for name in (ONE, many) for rank in (0, 1)}
    record.add_all("time blocked on the transport per step (waiting for the peer or its messages)", waited)
    print("  time blocked on the transport per step, median:")
    for name, ts in waited.items():
        print(f"    {name:<46} {np.median(ts) * 1e3:8.1f} ms")
    alone = np.median(cpu[f"{SINGLE}, rank 0"])
    busier = max(np.median(cpu[f"{many}, rank {rank}"]) for rank in (0, 1))
    busier_own = max(np.median(own[f"{many}, rank {rank}"]) for rank in (0, 1))
    print(f"  bound from CPU time: one process / the busier process of parallel_iterations={args.parallel}: "
          f"{alone / busier:.2f}x; / the busier program's thread (as if gloo's threads cost nothing): "
          f"{alone / busier_own:.2f}x")
    record.write(cpu_bound=alone / busier, cpu_bound_program_threads=alone / busier_own)


if __name__ == "__main__":
    main()
