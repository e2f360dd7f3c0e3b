"""Step-time prediction of MPMD programs: the per-device functions of a module cut by
`loom.transforms.mpmd_partition`, each device running its own program, meeting the others only
at transfers and at the bound on iterations in flight. A discrete-event simulation on the cost
model of `loom.sim.cost`:

- Every op but the mpmd ops and control flow takes its roofline time (`op_time`) on the device's
  compute stream, in program order.
- `mpmd.send` does not block compute: the message leaves on the device's outgoing link ("link+"
  lane) when both compute has reached it and the link has sent the earlier messages' bytes
  (a link serialises bandwidth, not latency), and arrives `hops · link_latency + bytes /
  link_bandwidth` after it left (a collective_permute's time). `mpmd.recv` waits for its message: compute resumes at
  max(its clock, the arrival). Messages are keyed as the runtime keys them: (sender, receiver,
  channel, the iterations of the enclosing loops).
- `mpmd.iteration` (device d opens iteration i of a loop with bound P) announces i at d's clock
  and waits until every other device of the loop announced iteration i - P + 1, plus the link's
  latency for that announcement to travel (the runtime's iteration-started token).
- `stablehlo.while` runs `trips` iterations (condition, body) and the condition once more: the
  partitioned loop's trip count is decided by data on one device and only received by the others,
  so it comes from `trips` (one count for every loop, or by loop id, the `loop` of its
  `mpmd.iteration`), else from constant bounds (`loom.sim.simulate.trip_count`) on the copy of the
  device that decides it. Every execution of a loop runs the same number of iterations.
- `stablehlo.if` / `stablehlo.case` take branch `branch` (0 by default: `if`'s true branch) on
  every device, so that the devices agree on which transfers happen.

With no bound (parallel iterations >= the trip count), S stages of t seconds each in a chain over
S devices, each passing c seconds of transfer to the next, take (N + S - 1)·t + (S - 1)·c for N
iterations; with a bound of 1 every device opens iteration i only after every device announced
it, so the iterations do not overlap: about N·(S·t + (S - 1)·c + latency). tests/sim/test_mpmd_sim.py
checks both.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Mapping
from typing import Any

from loom.ir.core import Block, Operation
from loom.sim.cost import collective_time_on, hops, op_flops, op_time, tensor_bytes
from loom.sim.machine import Machine
from loom.sim.simulate import Prediction, SimulationError, trip_count
from loom.sim.timeline import Timeline
from loom.transforms.mpmd_partition import device_functions

Key = tuple  # what a device waits for: ("message", sender, receiver, channel, iterations) or ("started", ...)
Wait = Generator[tuple[Key, Operation], None, Any]


def _loop_id(loop: Operation) -> int | None:
    """The id of a partitioned loop: the `loop` of the `mpmd.iteration` opening its body."""
    first = loop.regions[1].entry.first_op
    return int(first.properties["loop"].value) if first is not None and first.name == "mpmd.iteration" else None


def _describe(key: Key) -> str:
    if key[0] == "message":
        _, sender, _, channel, iterations = key
        return f"device {sender}'s message on channel {channel}" + (f" iteration {list(iterations)}" if iterations
                                                                    else "")
    _, loop, outer, i, peer = key
    return f"device {peer} to start iteration {[*outer, i]} of loop {loop}"


class _Device:
    """One device's clocks (compute, outgoing link) and totals, running its function as a
    generator that yields whenever it must wait for another device."""

    def __init__(self, sim: _Simulation, device: int, function: Operation) -> None:
        self.sim, self.device, self.function = sim, device, function
        self.clock = self.link = 0.0
        self.compute = self.communication = self.flops = 0.0
        self.by_name: dict[str, float] = {}

    def span(self, lane: str, op: Operation, start: float, end: float) -> None:
        if self.sim.timeline is not None and self.device < self.sim.trace_devices and end > start:
            self.sim.timeline.add(self.device, lane, op.name.split(".", 1)[-1], start, end)

    def charge(self, op: Operation, seconds: float) -> None:
        self.by_name[op.name] = self.by_name.get(op.name, 0.0) + seconds

    def wait(self, key: Key, op: Operation) -> Wait:
        while key not in self.sim.posted:
            yield key, op
        return self.sim.posted[key]

    def run(self) -> Wait:
        yield from self.block(self.function.regions[0].entry, ())

    def block(self, block: Block, iterations: tuple[int, ...]) -> Wait:
        for op in block.ops:
            yield from self.op(op, iterations)

    def op(self, op: Operation, iterations: tuple[int, ...]) -> Wait:
        name = op.name
        if name == "stablehlo.while":
            yield from self.loop(op, iterations)
        elif name in ("stablehlo.if", "stablehlo.case"):
            regions = op.regions
            yield from self.block(regions[min(self.sim.branch, len(regions) - 1)].entry, iterations)
        elif name == "mpmd.send":
            peer, channel = int(op.properties["peer"].value), int(op.properties["channel"].value)
            nbytes = tensor_bytes(op.operands[0].type)
            start = max(self.clock, self.link)
            self.link = start + nbytes / self.sim.machine.link_bandwidth
            arrival = start + self.sim.transfer_time(self.device, peer, nbytes)
            self.sim.post(("message", self.device, peer, channel, iterations), arrival)
            self.span("link+", op, start, arrival)
            self.communication += arrival - start
            self.charge(op, arrival - start)
        elif name == "mpmd.recv":
            peer, channel = int(op.properties["peer"].value), int(op.properties["channel"].value)
            arrival = yield from self.wait(("message", peer, self.device, channel, iterations), op)
            self.clock = max(self.clock, arrival)
        elif name == "mpmd.iteration":
            loop, parallel = int(op.properties["loop"].value), int(op.properties["parallel"].value)
            devices = [int(d) for d in op.properties["devices"].values]
            outer, i = iterations[:-1], iterations[-1]
            self.sim.post(("started", loop, outer, i, self.device), self.clock)
            need = i - parallel + 1
            for peer in devices:
                if peer != self.device and need >= 0:
                    started = yield from self.wait(("started", loop, outer, need, peer), op)
                    self.clock = max(self.clock, started + self.sim.transfer_time(peer, self.device, 0))
        elif name not in ("stablehlo.return", "func.return"):
            seconds = self.sim.op_time(op)
            self.span("compute", op, self.clock, self.clock + seconds)
            self.clock += seconds
            self.compute += seconds
            self.flops += op_flops(op)
            self.charge(op, seconds)

    def loop(self, op: Operation, iterations: tuple[int, ...]) -> Wait:
        cond, body = op.regions[0].entry, op.regions[1].entry
        loop = _loop_id(op)
        trips = self.sim.trips[loop] if loop is not None else trip_count(op)
        tag = (lambda k: (*iterations, k)) if loop is not None else (lambda k: iterations)
        for k in range(trips):
            yield from self.block(cond, tag(k))
            yield from self.block(body, tag(k))
        yield from self.block(cond, tag(trips))


class _Simulation:
    def __init__(self, module: Operation, machine: Machine, trips: int | Mapping[int, int] | None, branch: int,
                 trace_devices: int) -> None:
        self.machine, self.branch, self.trace_devices = machine, branch, trace_devices
        self.functions = device_functions(module)
        if not self.functions:
            raise SimulationError(module, "has no per-device functions (mpmd.device): run mpmd-partition first")
        self.timeline: Timeline | None = Timeline(f"predicted on {machine.name}")
        self.posted: dict[Key, float] = {}
        self._times: dict[int, float] = {}
        self.trips = self._trip_counts(trips)

    def _trip_counts(self, given: int | Mapping[int, int] | None) -> dict[int, int]:
        counts: dict[int, int] = {}
        undecided: dict[int, Operation] = {}
        for function in self.functions.values():
            for op in function.walk():
                loop = _loop_id(op) if op.name == "stablehlo.while" else None
                if loop is None or loop in counts:
                    continue
                if isinstance(given, int):
                    counts[loop] = given
                elif given is not None and loop in given:
                    counts[loop] = int(given[loop])
                else:
                    try:
                        counts[loop] = trip_count(op)
                        undecided.pop(loop, None)
                    except SimulationError:
                        undecided.setdefault(loop, op)
        for loop, op in undecided.items():
            if loop not in counts:
                raise SimulationError(op, f"loop {loop} has no constant trip count on any device: pass "
                                          f"trips={{{loop}: n}} (or trips=n for every loop)")
        return counts

    def op_time(self, op: Operation) -> float:
        key = id(op)
        if key not in self._times:
            self._times[key] = op_time(op, self.machine)
        return self._times[key]

    def transfer_time(self, source: int, target: int, nbytes: float) -> float:
        return collective_time_on("collective_permute", nbytes, [2], self.machine,
                                  permute_hops=hops(source, target, self.machine))

    def post(self, key: Key, time: float) -> None:
        self.posted[key] = time
        for device in self._waiting.pop(key, ()):
            self._ready.append(device)

    def run(self) -> dict[int, _Device]:
        devices = {d: _Device(self, d, f) for d, f in self.functions.items()}
        runs = {d: dev.run() for d, dev in devices.items()}
        self._ready: deque[int] = deque(sorted(runs))
        self._waiting: dict[Key, list[int]] = {}
        blocked: dict[int, tuple[Key, Operation]] = {}
        while self._ready:
            d = self._ready.popleft()
            blocked.pop(d, None)
            try:
                key, op = next(runs[d])
            except StopIteration:
                continue
            blocked[d] = (key, op)
            if key in self.posted:
                self._ready.append(d)
            else:
                self._waiting.setdefault(key, []).append(d)
        if blocked:
            waits = "; ".join(f"device {d} at {o.name} waits for {_describe(w)}"
                              for d, (w, o) in sorted(blocked.items()))
            op = min(blocked.items())[1][1]
            raise SimulationError(op, f"the devices wait for each other forever: {waits}")
        return devices


def simulate_mpmd(module: Operation, machine: Machine, *, trips: int | Mapping[int, int] | None = None,
                  branch: int = 0, trace_devices: int = 8) -> Prediction:
    """Predict the step time of a partitioned MPMD module on `machine` (see the module's doc):
    `trips` sets the iterations of its loops (one count for all, or by loop id), `branch` the
    branch every conditional takes; the timeline holds the devices below `trace_devices`."""
    sim = _Simulation(module, machine, trips, branch, trace_devices)
    devices = sim.run()
    ends = {d: max(dev.clock, dev.link) for d, dev in devices.items()}
    slowest = devices[max(ends, key=lambda d: ends[d])]
    assert sim.timeline is not None
    return Prediction(step_time=max(ends.values()), device_times=ends, compute_time=slowest.compute,
                      communication_time=slowest.communication, flops=slowest.flops,
                      op_time_by_name=slowest.by_name, timeline=sim.timeline)


__all__ = ["simulate_mpmd"]
