"""A timeline of spans per device and lane ("compute", and "link+" / "link-" for the two
directions of a device's ring links), written as a Chrome trace (the JSON that Perfetto and
chrome://tracing open): one process per device, one thread per lane. The simulator writes its
predictions through it and the runtimes their measurements."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LANES = ("compute", "link+", "link-")


@dataclass(frozen=True)
class Span:
    name: str
    start: float  # seconds
    end: float
    args: dict[str, Any] = field(default_factory=dict)

    @property
    def duration(self) -> float:
        return self.end - self.start


class Timeline:
    """Spans in seconds, by (device, lane). Thread-safe: runtimes add from their transfer threads."""

    def __init__(self, name: str = "loom") -> None:
        self.name = name
        self._spans: dict[tuple[int, str], list[Span]] = {}
        self._lock = threading.Lock()

    def add(self, device: int, lane: str, name: str, start: float, end: float, **args: Any) -> None:
        if end < start:
            raise ValueError(f"span {name!r} on device {device}, lane {lane!r} ends before it starts "
                             f"({start} > {end})")
        with self._lock:
            self._spans.setdefault((int(device), lane), []).append(Span(name, float(start), float(end), args))

    def spans(self, device: int, lane: str) -> list[Span]:
        """The spans of one device's lane, by start time."""
        with self._lock:
            return sorted(self._spans.get((device, lane), []), key=lambda s: (s.start, s.end))

    def devices(self) -> list[int]:
        return sorted({d for d, _ in self._spans})

    def lanes(self, device: int | None = None) -> list[str]:
        """Lanes in use: LANES' order first, then others by name."""
        used = {lane for d, lane in self._spans if device is None or d == device}
        return [lane for lane in LANES if lane in used] + sorted(used - set(LANES))

    def end(self) -> float:
        return max((s.end for spans in self._spans.values() for s in spans), default=0.0)

    def busy(self, device: int, lane: str) -> float:
        """Seconds the lane is busy (overlapping spans counted once)."""
        total, reach = 0.0, float("-inf")
        for s in self.spans(device, lane):
            if s.end > reach:
                total += s.end - max(s.start, reach)
                reach = s.end
        return total

    def to_chrome(self) -> dict[str, Any]:
        """Chrome trace events: complete ("X") events in microseconds; pid = device, tid = the
        lane's index in lanes(); metadata names every process and thread."""
        lanes = self.lanes()
        events: list[dict[str, Any]] = []
        for device in self.devices():
            events.append({"ph": "M", "name": "process_name", "pid": device, "tid": 0,
                           "args": {"name": f"device {device}"}})
            for tid, lane in enumerate(lanes):
                if (device, lane) not in self._spans:
                    continue
                events.append({"ph": "M", "name": "thread_name", "pid": device, "tid": tid, "args": {"name": lane}})
                for s in self.spans(device, lane):
                    events.append({"ph": "X", "name": s.name, "pid": device, "tid": tid, "ts": s.start * 1e6,
                                   "dur": s.duration * 1e6, "args": {k: _jsonable(v) for k, v in s.args.items()}})
        return {"traceEvents": events, "displayTimeUnit": "ms", "otherData": {"timeline": self.name}}

    def write_chrome(self, path: str | Path) -> Path:
        path = Path(path)
        path.write_text(json.dumps(self.to_chrome()))
        return path


COLORS = {"compute": "tab:blue", "link+": "tab:orange", "link-": "tab:green", "link": "tab:orange"}


def draw_png(timelines: dict[str, Timeline], path: str | Path, dpi: int = 110) -> Path:
    """Timelines one above the other on one time axis (ms), a row per device and lane, as a PNG
    (matplotlib, an optional dependency: an ImportError says so)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        raise ImportError("drawing a timeline needs matplotlib (pip install matplotlib)") from e
    rows = [[(d, lane) for d in tl.devices() for lane in tl.lanes(d)] for tl in timelines.values()]
    fig, axes = plt.subplots(len(timelines), 1, figsize=(12, 1.2 + 0.45 * sum(map(len, rows))), sharex=True,
                             squeeze=False)
    for ax, (title, tl), lanes in zip(axes[:, 0], timelines.items(), rows):
        for row, (d, lane) in enumerate(lanes):
            ax.broken_barh([(s.start * 1e3, s.duration * 1e3) for s in tl.spans(d, lane)], (row - 0.4, 0.8),
                           color=COLORS.get(lane, "tab:gray"))
        ax.set_yticks(range(len(lanes)), [f"device {d} {lane}" for d, lane in lanes])
        ax.invert_yaxis()
        ax.set_title(title)
    axes[-1, 0].set_xlabel("ms")
    fig.tight_layout()
    path = Path(path)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def _jsonable(v: Any) -> Any:
    return v if isinstance(v, (int, float, str, bool)) or v is None else str(v)


__all__ = ["COLORS", "LANES", "Span", "Timeline", "draw_png"]
