"""`loom bench calibrate`: measure this machine for loom.sim's cost model and write it as a
Machine JSON (loom.sim.machine.Machine.save; a preset's peer) and a record.

    python benchmarks/calibrate.py                       # writes machine-calibrated.json here
    python benchmarks/calibrate.py --out my.json --quick

What is measured (loom.sim.calibrate's functions, in this process and in two spawned ones):
- peak_flops: a float32 numpy matmul (n x n x n, 2·n³ FLOPs), median of the repeats;
- memory_bandwidth: a numpy copy of a large array, read + written bytes over the time;
- op_overhead: one small numpy call (what an executor making one array call per op pays per op);
- link_latency and link_bandwidth: two processes joined by torch.distributed (gloo, 127.0.0.1)
  ping-pong a tensor: half the median round trip of a small message is the latency, a large one
  gives the bandwidth. The processes are bench_common.spawn_ranks': every wait is bounded, and a
  process that fails or does not report in time ends the run saying so.
- collective_bandwidth: the same two processes time gloo's all_gather, reduce_scatter and
  all_reduce of the large size; each kind's bandwidth is the one at which the cost model's
  algorithm takes the measured time (loom.sim.calibrate.effective_bandwidth);
- transfer_cpu: the CPU time the processes spend (every thread) while those collectives run, as a
  share of a core; compute and transfers on shared cores slow each other by it
  (loom.sim.cost.transfer_slowdown), which the large ping-pong timed while a thread of each process
  computes, against alone (loom.sim.calibrate.measure_beside_compute), checks.
The machine is described as a `switch` (each process one link to the kernel's loopback) whose
processes share this machine's cores (`cores`: the CPUs this process may run on; the compute
figures are one process's alone). Its peer, side by side in the output, is the h200 preset the
pass prices by default.
"""

from __future__ import annotations

import argparse
import datetime
import os
import socket
import sys
import time
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_common import Record, spawn_ranks  # noqa: E402

from loom.sim.calibrate import (  # noqa: E402
    MIB,
    effective_bandwidth,
    measure_beside_compute,
    measure_collective,
    measure_compute,
    measure_link,
    measure_memory,
    measure_op_overhead,
    ping_pong,
)
from loom.sim.cost import transfer_slowdown  # noqa: E402
from loom.sim.machine import Machine  # noqa: E402

COLLECTIVES = ("all_gather", "reduce_scatter", "all_reduce")  # timed between the two processes


def _link_worker(rank: int, port: int, large_bytes: int, repeats: int, timeout: float, results: Any) -> None:
    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                            timeout=datetime.timedelta(seconds=timeout))
    try:
        latency, bandwidth = measure_link(dist.group.WORLD, large_bytes=large_bytes, repeats=repeats, timeout=timeout)
        # each collective the cost model prices, and the CPU time the processes spend moving bytes
        wall, cpu = time.perf_counter(), time.process_time()
        collectives = {kind: measure_collective(kind, large_bytes, repeats=max(3, repeats // 2), timeout=timeout)
                       for kind in COLLECTIVES}
        transfer_cpu = (time.process_time() - cpu) / (time.perf_counter() - wall)
        link = ping_pong(dist.group.WORLD, 1 - rank, timeout)
        slowdown = measure_beside_compute(lambda: link(large_bytes), repeats=max(3, repeats // 2), timeout=timeout)
    finally:
        dist.destroy_process_group()
    if rank == 0:
        results.put((latency, bandwidth, collectives, transfer_cpu, slowdown))


def link_between_two_processes(large_bytes: int, repeats: int,
                               timeout: float) -> tuple[float, float, dict, float, float]:
    """(latency, bandwidth, each collective's seconds, the share of a core moving bytes took, the
    large transfer's slowdown beside compute) as rank 0 measured them; every wait bounded by
    `timeout`, the whole by twice that and two minutes (start-up: importing torch)."""
    return spawn_ranks(_link_worker, 2, (large_bytes, repeats, timeout), deadline_s=2 * timeout + 120)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="machine-calibrated.json", help="where to save the Machine JSON")
    ap.add_argument("--name", default=f"calibrated-{socket.gethostname()}")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds any one wait may take")
    opts = ap.parse_args()
    n, mem, large, repeats = (512, 64 * MIB, 16 * MIB, 5) if opts.quick else (2048, 512 * MIB, 32 * MIB, 10)
    flops = measure_compute(n, repeats=repeats)
    memory = measure_memory(mem, repeats=repeats)
    overhead = measure_op_overhead(repeats=repeats)
    latency, bandwidth, collectives, cpu_time, slowdown = link_between_two_processes(large, repeats, opts.timeout)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    machine = Machine(opts.name, flops, memory, bandwidth, latency, "switch", (2,), op_overhead=overhead, cores=cores)
    machine = machine.with_(transfer_cpu=min(cpu_time, 0.9), collective_bandwidth={
        kind: effective_bandwidth(kind, large, 2, seconds, machine) for kind, seconds in collectives.items()})
    path = machine.save(opts.out)
    peer = Machine.preset("h200")
    print(f"{'':>18} {'this machine':>14} {'h200 preset':>14}")
    for field, unit in (("peak_flops", "FLOP/s"), ("memory_bandwidth", "B/s"), ("link_bandwidth", "B/s"),
                        ("link_latency", "s"), ("op_overhead", "s")):
        print(f"{field:>18} {getattr(machine, field):>14.4g} {getattr(peer, field):>14.4g} {unit}")
    print(f"machine: {path}")
    record = Record("calibrate", {"matmul_n": n, "copy_bytes": mem, "link_large_bytes": large, "repeats": repeats,
                                  "quick": opts.quick})
    # one row per probe: the median time it measured (derived back from the rate) and the rate
    record.add(f"matmul {n}x{n}x{n} float32", "numpy", [2.0 * n ** 3 / flops], flops_per_second=flops)
    record.add(f"copy {mem} bytes", "numpy", [2.0 * mem / memory], bytes_per_second=memory)
    record.add("numpy add of one-element arrays", "numpy", [overhead])
    record.add("gloo ping-pong, one way, small", "torch.distributed", [latency])
    record.add(f"gloo ping-pong, one way, {large} bytes", "torch.distributed", [latency + large / bandwidth],
               bytes_per_second=bandwidth)
    for kind, seconds in collectives.items():
        record.add(f"gloo {kind}, {large} bytes per process", "torch.distributed", [seconds],
                   bytes_per_second=machine.bandwidth_of(kind))
    print("collectives: " + ", ".join(f"{kind} {machine.bandwidth_of(kind):.4g} B/s" for kind in collectives)
          + f"; moving bytes keeps {100 * machine.transfer_cpu:.0f}% of a core busy (a transfer beside compute "
          f"measured {slowdown:.2f}x slower, the model {transfer_slowdown(machine, 2):.2f}x)")
    record.write(machine_description=machine.to_json(), peer=peer.to_json(),
                 transfer_beside_compute={"measured": slowdown, "model": transfer_slowdown(machine, 2)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
