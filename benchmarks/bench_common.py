"""What every benchmark script prints: the machine it ran on, and durations."""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# where records go: benchmarks/results, or LOOM_BENCH_RESULTS (a test's run writes elsewhere)
RESULTS = Path(os.environ.get("LOOM_BENCH_RESULTS") or Path(__file__).resolve().parent / "results")


def cpu_name() -> str:
    """The CPU's model name (from /proc/cpuinfo where there is one)."""
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            cpu = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), cpu)
    except OSError:
        pass
    return cpu


def load_average() -> float:
    """The one-minute load average (NaN where the system has none): timings on a loaded machine
    are not comparable with an idle one's."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def fmt(seconds: float) -> str:
    """A duration in us, ms or s."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.3f} s"


def spread(times: list[float]) -> dict[str, float]:
    """Median, minimum and maximum of raw timings: what notes quote (the median and its spread)."""
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


def write_record(name: str, payload: dict[str, Any]) -> Path:
    """Write `payload` (every contender's raw timings and the figures derived from them) as
    `benchmarks/results/NAME-YYYYMMDD-HHMM.json` (HHMMSS where that minute has one already), with
    the command line, the git commit, the machine, its load average and the library versions, so
    that a quoted figure names its file."""
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                                cwd=Path(__file__).resolve().parent, timeout=10).stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        commit = None
    versions = {}
    for module in ("loom", "numpy", "jax", "jaxlib", "xdsl", "torch", "faiss"):
        try:
            versions[module] = str(getattr(__import__(module), "__version__", "?"))
        except Exception:  # absent or broken: recorded as such
            versions[module] = None
    record = {"benchmark": name, "command": [Path(sys.argv[0]).name, *sys.argv[1:]], "commit": commit,
              "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
              "machine": {"system": f"{platform.system()} {platform.machine()}", "cpu": cpu_name(),
                          "cpus": os.cpu_count(), "python": platform.python_version(),
                          "load_average_1min": load_average()},
              "versions": versions, **payload}
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / f"{name}-{time.strftime('%Y%m%d-%H%M')}.json"
    if path.exists():  # a run of the same minute is kept beside it (its seconds too), not written over it
        path = RESULTS / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(record, indent=1) + "\n")
    return path


class Record:
    """The table a benchmark run writes: one row per (case, contender) with its raw timings and
    their spread, and the ratios of medians the notes quote. `write` adds the settings and calls
    `write_record`, so `loom bench report` can print every benchmark's table the same way."""

    def __init__(self, name: str, settings: dict[str, Any]) -> None:
        self.name, self.settings = name, settings
        self.rows: list[dict[str, Any]] = []
        self.ratios: list[dict[str, Any]] = []

    def add(self, case: str, contender: str, seconds: list[float], **extra: Any) -> None:
        """A contender's raw timings in one case (`extra`: recall, build time, ... as measured)."""
        self.rows.append({"case": case, "contender": contender, "seconds": [float(t) for t in seconds],
                          **spread(seconds), **extra})

    def add_all(self, case: str, times: dict[str, list[float]], **extra: dict[str, Any]) -> None:
        """`add` for each contender of `times` (`extra[name]`: that row's extra fields)."""
        for contender, seconds in times.items():
            self.add(case, contender, seconds, **extra.get(contender, {}))

    def median(self, case: str, contender: str) -> float:
        return next(r["median"] for r in self.rows if r["case"] == case and r["contender"] == contender)

    def ratio(self, case: str, contender: str, peer: str) -> float:
        """Record and return median(peer) / median(contender): above 1, `contender` is faster."""
        value = self.median(case, peer) / self.median(case, contender)
        self.ratios.append({"case": case, "contender": contender, "peer": peer, "peer_over_contender": value})
        return value

    def write(self, **more: Any) -> Path:
        path = write_record(self.name, {"settings": self.settings, "rows": self.rows, "ratios": self.ratios,
                                        **more})
        print(f"record: {path}")
        return path


def time_rounds(fns: dict, rounds: int, barrier: Callable[[], None] | None = None) -> dict[Any, list[float]]:
    """Every function once (a warm-up), then `rounds` rounds of each in turn, round-robin so that a
    change in the machine's load affects all alike; in several processes, `barrier` (the
    communicator's) runs before and after each timed call, so every process times the same call."""
    sync = barrier or (lambda: None)
    times: dict[Any, list[float]] = {k: [] for k in fns}
    for fn in fns.values():
        sync()
        fn()
    for _ in range(rounds):
        for name, fn in fns.items():
            sync()
            t0 = time.perf_counter()
            fn()
            sync()
            times[name].append(time.perf_counter() - t0)
    return times


def spawn_ranks(target: Callable[..., None], world: int, args: tuple, deadline_s: float) -> Any:
    """Run `target(rank, port, *args, results)` in `world` spawned processes (a free loopback port
    for their rendezvous) and return the first thing one of them puts on `results` (rank 0's
    figures); a process that exits with an error, or nothing within `deadline_s`, ends the
    benchmark with a message saying which. Every process is joined or killed on the way out."""
    import queue
    import socket

    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    results = ctx.Queue()
    procs = [ctx.Process(target=target, args=(rank, port, *args, results)) for rank in range(world)]
    for p in procs:
        p.start()
    end = time.monotonic() + deadline_s
    try:
        while time.monotonic() < end:
            try:
                return results.get(timeout=1.0)
            except queue.Empty:
                if any(p.exitcode not in (None, 0) for p in procs):
                    raise SystemExit(f"a benchmark process failed (exit codes {[p.exitcode for p in procs]})") from None
        raise SystemExit(f"the benchmark processes reported nothing within {deadline_s:g} s")
    finally:
        for p in procs:
            p.join(timeout=60)
            if p.is_alive():
                p.kill()
