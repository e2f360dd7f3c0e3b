"""Measuring a machine for the cost model: matmul FLOP/s, memory bandwidth, and a link's latency
and bandwidth. The functions time in the calling process, so a program can calibrate the very
processes it runs in (benchmarks/calibrate.py writes a Machine from them).

- `measure_compute(n=1024, dtype=np.float32, repeats=5)`: FLOP/s of an n x n x n numpy matmul
  (2·n³ FLOPs), the median of `repeats`.
- `measure_memory(nbytes=256 MiB, repeats=5)`: B/s of a large numpy copy, counting the bytes read
  and written (2·nbytes), as the roofline counts an op's operands and results.
- `measure_link(link, *, peer=None, small_bytes=8, large_bytes=16 MiB, repeats=10)`: (latency s,
  bandwidth B/s) of a link. `link` is either a callable `link(nbytes) -> seconds`, the time of one
  one-way transfer of `nbytes` (how the caller moves the bytes is its own affair), or a
  torch.distributed process group, in which case every rank of the group must call it: ranks 0
  and 1 of the group (or this rank and `peer`) ping-pong a uint8 tensor with send / recv and a
  one-way transfer is half a round trip; any other rank returns (nan, nan) at once. Latency is the
  median one-way time of `small_bytes`; bandwidth is large_bytes over (the median one-way time of
  `large_bytes` - latency).
- `measure_op_overhead(calls=2000, repeats=5)`: seconds of one small numpy call, the per-op
  dispatch cost of an executor that makes one array call per op (Machine.op_overhead).
- `ping_pong(group, peer, timeout)`: that callable for a process group, to use directly.
- `measure_collective(kind, nbytes, group=None, repeats=5, timeout=60)`: the median seconds of a
  torch.distributed all_gather, reduce_scatter or all_reduce of `nbytes` per device (as the cost
  model counts them) over a process group; every rank of the group must call it.
- `effective_bandwidth(kind, nbytes, group_size, seconds, machine)`: the bandwidth at which the
  cost model's algorithm for collective `kind` takes the measured `seconds` on `machine` (its
  latency steps kept): Machine.collective_bandwidth's entry for a runtime's implementation of it.
- `measure_beside_compute(fn, repeats=5, n=256)`: how many times longer `fn` (a transfer) takes
  while a thread of this process computes (numpy matmuls; `computing(n)`, that thread around a
  block) than alone: a transfer's CPU meeting the compute on shared cores.
- `transfer_cpu_from_slowdown(slowdown, devices, machine)`: the transfers' CPU (Machine.transfer_cpu)
  at which the cost model's core sharing (loom.sim.cost.transfer_slowdown) slows a transfer beside
  compute, or compute beside a transfer, by the measured `slowdown` on `devices` devices.
"""

from __future__ import annotations

import contextlib
import statistics
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

MIB = 1 << 20


def _median_seconds(fn: Callable[[], Any], repeats: int) -> float:
    fn()  # warm-up: first-touch page faults, thread pools, connection setup
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure_compute(n: int = 1024, dtype: Any = np.float32, repeats: int = 5) -> float:
    """FLOP/s of an n x n by n x n matmul in numpy (2·n³ FLOPs per product)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)).astype(dtype), rng.standard_normal((n, n)).astype(dtype)
    out = np.empty((n, n), dtype)
    return 2.0 * n ** 3 / _median_seconds(lambda: np.matmul(a, b, out=out), repeats)


def measure_memory(nbytes: int = 256 * MIB, repeats: int = 5) -> float:
    """B/s of copying `nbytes` with numpy, counting what is read and what is written."""
    src = np.ones(nbytes // 8, np.float64)
    dst = np.empty_like(src)
    return 2.0 * src.nbytes / _median_seconds(lambda: np.copyto(dst, src), repeats)


def measure_op_overhead(calls: int = 2000, repeats: int = 5) -> float:
    """Seconds of one small numpy call (an add of one-element arrays): the dispatch cost an
    executor that runs one array call per op pays per op (Machine.op_overhead)."""
    a, b, out = np.ones(1), np.ones(1), np.empty(1)

    def many() -> None:
        for _ in range(calls):
            np.add(a, b, out=out)

    return _median_seconds(many, repeats) / calls


def ping_pong(group: Any, peer: int, timeout: float = 60.0) -> Callable[[int], float]:
    """`link(nbytes) -> seconds` over torch.distributed: this rank and `peer` (global ranks) bounce
    a tensor once; the lower rank sends first. Half the round trip is a one-way transfer. Every
    wait is bounded by `timeout` and a late peer is named in the error."""
    import torch
    import torch.distributed as dist

    me = dist.get_rank()
    first = me < peer

    def wait(work: Any, what: str) -> None:
        try:
            done = work.wait(timeout=_timedelta(timeout))
        except RuntimeError as err:  # gloo raises on a timeout or a lost peer
            raise TimeoutError(f"rank {me}: {what} rank {peer} failed or took over {timeout} s: {err}") from err
        if done is False:
            raise TimeoutError(f"rank {me}: {what} rank {peer} did not complete within {timeout} s")

    def link(nbytes: int) -> float:
        buf = torch.zeros(max(1, nbytes), dtype=torch.uint8)
        start = time.perf_counter()
        if first:
            wait(dist.isend(buf, peer, group=group), "send to")
            wait(dist.irecv(buf, peer, group=group), "receive from")
        else:
            wait(dist.irecv(buf, peer, group=group), "receive from")
            wait(dist.isend(buf, peer, group=group), "send to")
        return (time.perf_counter() - start) / 2

    return link


def _timedelta(seconds: float) -> Any:
    import datetime

    return datetime.timedelta(seconds=seconds)


def measure_link(link: Any, *, peer: int | None = None, small_bytes: int = 8, large_bytes: int = 16 * MIB,
                 repeats: int = 10, timeout: float = 60.0) -> tuple[float, float]:
    """(latency in s, bandwidth in B/s per direction) of `link`: a callable `link(nbytes) -> s` for a
    one-way transfer, or a torch.distributed process group (see the module's doc)."""
    if not callable(link):
        import torch.distributed as dist

        me = dist.get_rank()
        if peer is None:
            ranks = dist.get_process_group_ranks(link) if link is not None else list(range(dist.get_world_size()))
            if len(ranks) < 2:
                raise ValueError(f"measure_link: rank {me}: the process group has {len(ranks)} rank, needs two")
            if me not in ranks[:2]:
                return float("nan"), float("nan")
            peer = ranks[1] if me == ranks[0] else ranks[0]
        link = ping_pong(link, peer, timeout)
    def median(nbytes: int, times: int) -> float:
        link(nbytes)  # warm-up at this size
        return statistics.median(link(nbytes) for _ in range(times))

    latency, large = median(small_bytes, repeats), median(large_bytes, max(3, repeats // 2))
    if large <= latency:
        raise ValueError(f"measure_link: {large_bytes} bytes took {large:.3g} s, no longer than {small_bytes} bytes "
                         f"({latency:.3g} s): use a larger large_bytes")
    return latency, large_bytes / (large - latency)


def measure_collective(kind: str, nbytes: int, group: Any = None, repeats: int = 5, timeout: float = 60.0) -> float:
    """Median seconds of one torch.distributed collective `kind` ("all_gather", "reduce_scatter"
    or "all_reduce") of `nbytes` per device as loom.sim.cost counts them (the gathered result, the
    unreduced operand) over `group` (the world by default); every rank of it must call, and every
    wait is bounded by `timeout`."""
    if kind not in ("all_gather", "reduce_scatter", "all_reduce"):
        raise ValueError(f"measure_collective: kind must be one of all_gather, reduce_scatter, all_reduce, "
                         f"got {kind!r}")
    import torch
    import torch.distributed as dist

    n = dist.get_world_size(group)
    elements = max(n, nbytes // 4 // n * n)
    full, part = torch.ones(elements, dtype=torch.float32), torch.ones(elements // n, dtype=torch.float32)
    # torch 2.13's names, else the older ones
    gather = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor
    scatter = getattr(dist, "reduce_scatter_single", None) or dist.reduce_scatter_tensor
    calls = {"all_gather": lambda: gather(full, part, group=group, async_op=True),
             "reduce_scatter": lambda: scatter(part, full, group=group, async_op=True),
             "all_reduce": lambda: dist.all_reduce(full, group=group, async_op=True)}

    def once() -> None:
        try:
            done = calls[kind]().wait(timeout=_timedelta(timeout))
        except RuntimeError as err:  # gloo raises on a timeout or a lost peer
            raise TimeoutError(f"rank {dist.get_rank()}: {kind} failed or took over {timeout} s: {err}") from err
        if done is False:
            raise TimeoutError(f"rank {dist.get_rank()}: {kind} did not complete within {timeout} s")

    return _median_seconds(once, repeats)


def effective_bandwidth(kind: str, nbytes: float, group_size: int, seconds: float, machine: Any) -> float:
    """B/s at which loom.sim.cost.collective_time(kind, nbytes, group_size, ·) equals `seconds`
    on `machine` (its link_latency kept): the inverse of the cost model, for a collective timed on
    the machine. `nbytes` per device as the cost model counts it."""
    from loom.sim.cost import collective_time

    per_byte = collective_time(kind, nbytes, group_size, machine.with_(link_latency=0.0, link_bandwidth=1.0,
                                                                         collective_bandwidth=()))
    latency = collective_time(kind, 0.0, group_size, machine)
    if not seconds > latency or per_byte <= 0:
        raise ValueError(f"effective_bandwidth: {kind} of {nbytes} bytes over {group_size} devices took "
                         f"{seconds:.3g} s, not more than the model's latency ({latency:.3g} s) with bytes to move: "
                         "no bandwidth fits")
    return per_byte / (seconds - latency)


@contextlib.contextmanager
def computing(n: int = 256, timeout: float = 60.0) -> Iterator[None]:
    """A thread of this process computing n x n numpy matmuls (which release the GIL) while the
    block runs; stopped after it, joined within `timeout`."""
    a, stop = np.ones((n, n), np.float32), threading.Event()

    def compute() -> None:
        while not stop.is_set():
            np.matmul(a, a)

    worker = threading.Thread(target=compute, daemon=True)
    worker.start()
    try:
        yield
    finally:
        stop.set()
        worker.join(timeout)
    if worker.is_alive():
        raise TimeoutError(f"computing: the compute thread did not stop within {timeout} s")


def measure_beside_compute(fn: Callable[[], Any], repeats: int = 5, n: int = 256, timeout: float = 60.0) -> float:
    """How many times longer `fn` takes while a thread of this process computes (`computing`)
    than alone: the median over `repeats` pairs, each timed alone then beside (a loaded machine's
    drift weighs on both of a pair alike). For a transfer, every rank of its group calls this at
    once: each computes beside its transfers, as devices running in step do."""
    fn()  # warm-up
    alone, beside = [], []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        alone.append(time.perf_counter() - start)
        with computing(n, timeout):
            start = time.perf_counter()
            fn()
            beside.append(time.perf_counter() - start)
    return statistics.median(b / a for a, b in zip(alone, beside))


def transfer_cpu_from_slowdown(slowdown: float, devices: int, machine: Any) -> float:
    """The share of a core u at which loom.sim.cost.transfer_slowdown(machine.with_(transfer_cpu=u),
    devices) equals the measured `slowdown` (a transfer timed beside compute against alone): its
    inverse, u = a0·(slowdown - 1)/(a0/a1 - 1). A slowdown below 1 (noise) gives 0; one beyond the
    model's most, a0/a1 (a transfer copying all of its time), gives the most u the model and the
    Machine allow, min(a0, 0.9)."""
    from loom.sim.cost import thread_shares

    alone, beside = thread_shares(machine, devices)
    if alone == beside:
        raise ValueError(f"transfer_cpu_from_slowdown: {devices} devices on {machine.cores or devices} cores have a "
                         "core for every compute and transfer thread: the model slows neither, no share of a core "
                         "fits a slowdown")
    return min(alone, 0.9, max(0.0, alone * (slowdown - 1.0) / (alone / beside - 1.0)))


__all__ = ["computing", "effective_bandwidth", "measure_beside_compute", "measure_collective", "measure_compute",
           "measure_link", "measure_memory", "measure_op_overhead", "ping_pong", "transfer_cpu_from_slowdown"]
