"""What every benchmark script prints: the machine it ran on, and durations."""

from __future__ import annotations

import os
import platform


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
