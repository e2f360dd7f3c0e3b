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
  gives the bandwidth. Every wait is bounded; a process that does not report in time is named.
The machine is described as a `switch` (each process one link to the kernel's loopback). Its
peer, side by side in the output, is the h200 preset the pass prices by default.
"""

from __future__ import annotations

import argparse
import datetime
import multiprocessing as mp
import os
import queue
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench_common import Record  # noqa: E402

from loom.sim.calibrate import MIB, measure_compute, measure_link, measure_memory, measure_op_overhead  # noqa: E402
from loom.sim.machine import Machine  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _link_worker(rank: int, port: int, large_bytes: int, repeats: int, timeout: float, results: mp.Queue) -> None:
    try:
        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=2,
                                timeout=datetime.timedelta(seconds=timeout))
        try:
            latency, bandwidth = measure_link(dist.group.WORLD, large_bytes=large_bytes, repeats=repeats,
                                              timeout=timeout)
        finally:
            dist.destroy_process_group()
        results.put((rank, "ok", latency, bandwidth))
    except Exception as err:  # reported to the parent, which names the rank
        results.put((rank, "error", repr(err), None))


def link_between_two_processes(large_bytes: int, repeats: int, timeout: float) -> tuple[float, float]:
    """(latency, bandwidth) as rank 0 measured it; every wait bounded by `timeout`."""
    ctx = mp.get_context("spawn")
    results: mp.Queue = ctx.Queue()
    port = _free_port()
    procs = [ctx.Process(target=_link_worker, args=(r, port, large_bytes, repeats, timeout, results), daemon=True)
             for r in range(2)]
    for p in procs:
        p.start()
    outcomes: dict[int, tuple] = {}
    budget = 2 * timeout + 60  # start-up (importing torch) and the measurement
    deadline = time.monotonic() + budget
    try:
        while len(outcomes) < 2 and time.monotonic() < deadline:
            try:
                rank, status, a, b = results.get(timeout=1.0)
                outcomes[rank] = (status, a, b)
            except queue.Empty:
                dead = [r for r, p in enumerate(procs) if not p.is_alive() and r not in outcomes and p.exitcode]
                if dead:
                    code = procs[dead[0]].exitcode
                    raise RuntimeError(f"calibrate: link rank {dead[0]} exited with code {code}") from None
    finally:
        for p in procs:
            p.join(timeout=5)
            if p.is_alive():
                p.terminate()
                p.join(timeout=5)
    missing = [r for r in range(2) if r not in outcomes]
    if missing:
        raise TimeoutError(f"calibrate: link rank {missing[0]} did not report within {budget:.0f} s")
    for r, (status, a, _) in sorted(outcomes.items()):
        if status != "ok":
            raise RuntimeError(f"calibrate: link rank {r}: {a}")
    return outcomes[0][1], outcomes[0][2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="machine-calibrated.json", help="where to save the Machine JSON")
    ap.add_argument("--name", default=f"calibrated-{socket.gethostname()}")
    ap.add_argument("--quick", action="store_true", help="smaller sizes, fewer repeats")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds any one wait may take")
    opts = ap.parse_args()
    n, mem, large, repeats = (512, 64 * MIB, 4 * MIB, 5) if opts.quick else (2048, 512 * MIB, 32 * MIB, 10)
    flops = measure_compute(n, repeats=repeats)
    memory = measure_memory(mem, repeats=repeats)
    overhead = measure_op_overhead(repeats=repeats)
    latency, bandwidth = link_between_two_processes(large, repeats, opts.timeout)
    machine = Machine(opts.name, flops, memory, bandwidth, latency, "switch", (2,), op_overhead=overhead)
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
    record.write(machine_description=machine.to_json(), peer=peer.to_json())
    return 0


if __name__ == "__main__":
    sys.exit(main())
