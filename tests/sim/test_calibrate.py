"""loom.sim.calibrate: measure_link recovers the latency and bandwidth of a link whose transfers
take latency + bytes / bandwidth (a model link, so the figures are known); over two real gloo
processes it returns a finite latency and bandwidth on ranks 0 and 1 and (nan, nan) on a third,
and measure_collective times each collective on every rank (a bandwidth effective_bandwidth can
price);
a link too fast to resolve is refused. The compute and memory probes return FLOP/s and B/s computed
from their own sizes (checked for being finite and positive: tests do not judge timings)."""

from __future__ import annotations

import datetime
import math
import multiprocessing as mp
import queue
import socket
import threading
import time

import pytest

from loom.sim.calibrate import (
    computing,
    effective_bandwidth,
    measure_beside_compute,
    measure_collective,
    measure_compute,
    measure_link,
    measure_memory,
    measure_op_overhead,
)
from loom.sim.machine import Machine


@pytest.mark.parametrize("latency,bandwidth", [(1e-3, 1e8), (5e-6, 4.5e10)])
def test_measure_link_recovers_a_model_links_figures(latency, bandwidth):
    sizes = []

    def link(nbytes: int) -> float:
        sizes.append(nbytes)
        return latency + nbytes / bandwidth

    got_latency, got_bandwidth = measure_link(link, small_bytes=8, large_bytes=1 << 20, repeats=4)
    # the small message's time is latency + 8 bytes' worth: the estimate carries that much
    assert got_latency == pytest.approx(latency + 8 / bandwidth)
    assert got_bandwidth == pytest.approx((1 << 20) / ((1 << 20) / bandwidth - 8 / bandwidth))
    assert set(sizes) == {8, 1 << 20}


def test_a_link_too_fast_to_resolve_is_refused():
    with pytest.raises(ValueError, match="no longer than 8 bytes"):
        measure_link(lambda nbytes: 1e-3, small_bytes=8, large_bytes=1024)


def test_compute_and_memory_probes_return_rates():
    for rate in (measure_compute(64, repeats=1), measure_memory(1 << 20, repeats=1),
                 1 / measure_op_overhead(calls=10, repeats=1)):
        assert math.isfinite(rate) and rate > 0


def test_beside_compute_times_the_call_alone_and_beside_a_computing_thread():
    """The calls alternate alone / beside a thread computing (one more thread alive, stopped after
    each), a sleep (no CPU) comes out about as long beside it."""
    base = threading.active_count()
    counts: list[int] = []

    def sleep() -> None:
        counts.append(threading.active_count())
        time.sleep(0.02)

    slowdown = measure_beside_compute(sleep, repeats=3, n=64)
    assert counts == [base] + [base, base + 1] * 3 and threading.active_count() == base
    assert 0.5 < slowdown < 2.0
    with pytest.raises(ZeroDivisionError), computing(64):
        raise ZeroDivisionError  # the block's error comes through, the thread is stopped
    assert threading.active_count() == base


def _worker(rank: int, world: int, port: int, results: mp.Queue) -> None:
    try:
        import torch
        import torch.distributed as dist

        torch.set_num_threads(1)
        dist.init_process_group("gloo", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world,
                                timeout=datetime.timedelta(seconds=30))
        try:
            link = measure_link(dist.group.WORLD, large_bytes=16 << 20, repeats=5, timeout=30)
            kinds = ("all_gather", "reduce_scatter", "all_reduce")
            results.put((rank, link, {k: measure_collective(k, 1 << 20, repeats=2, timeout=30) for k in kinds}))
        finally:
            dist.destroy_process_group()
    except Exception as err:
        results.put((rank, repr(err)))


@pytest.mark.slow  # three spawned processes importing torch
def test_measure_link_over_gloo_processes():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    results: mp.Queue = ctx.Queue()
    world = 3
    procs = [ctx.Process(target=_worker, args=(r, world, port, results), daemon=True) for r in range(world)]
    for p in procs:
        p.start()
    got = {}
    try:
        for _ in range(world):
            rank, *value = results.get(timeout=120)
            got[rank] = value
    except queue.Empty:
        pytest.fail(f"ranks {sorted(set(range(world)) - set(got))} did not report within 120 s")
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
    assert all(len(v) == 2 for v in got.values()), got  # else a rank's error
    for rank in (0, 1):
        latency, bandwidth = got[rank][0]
        assert 0 < latency < 1 and 0 < bandwidth < math.inf, (rank, got[rank])
    assert all(math.isnan(v) for v in got[2][0])  # not one of the two ranks that measure
    machine = Machine("loopback", 1e9, 1e9, 1e9, 0.0, "switch", (3,))
    for kind, seconds in got[0][1].items():  # every rank times every collective
        assert 0 < seconds < 30 and 0 < effective_bandwidth(kind, 1 << 20, 3, seconds, machine) < math.inf


def test_measure_collective_refuses_a_kind_it_cannot_time():
    with pytest.raises(ValueError, match="kind must be one of"):
        measure_collective("all_to_all", 1024)
