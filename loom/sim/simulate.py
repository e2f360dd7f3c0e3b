"""The step-time simulator: runs a partitioned (per-device) program's schedule against the cost
model, op by op in program order, on three lanes per device: "compute" (one in-order stream) and
"link+" / "link-" (the two directions of the device's ring links; on a torus, one link each way per
axis, all drawn on the direction's lane).

- Every op but a collective takes its roofline time (loom.sim.cost.op_time) on the compute lane.
- A synchronous collective (all_gather, reduce_scatter, all_reduce, all_to_all,
  collective_broadcast, collective_permute) blocks compute: it starts when compute is free and
  the transfers in flight on its links have finished, and holds them alone until it ends
  (compute resumes then); a permute uses the link of its direction, the others both.
- `comm.collective_permute_start` issues its transfer on its direction's link lane and costs
  compute nothing; `comm.collective_permute_done` waits for it. Compute between the two runs
  while the data travels. `comm.all_gather_start` / `_done` likewise, the gather's time (cost's
  algorithm) on both directions of each torus axis its group spans.
- Link contention. A link direction is shared equally by the transfers in flight on it
  (processor sharing): two equal transfers issued together both end after twice the time of
  one; the two directions never contend. A transfer's bytes take bytes / bandwidth of the whole
  link, its hops' latency comes on top after its last byte. Across devices, the pairs of one
  permute (issued by every device at once) whose routes cross a common link split that link's
  bandwidth (loom.sim.cost.permute_loads). Routes assumed: dimension-order routing on a ring or
  torus (axis by axis, the shorter way around each, the + way at a tie); through a switch, the
  source's uplink and the target's downlink. Transfers of different ops on different devices do
  not contend, and the synchronous collectives are priced alone (cost's ring and torus
  algorithms on their group's axes).
- A shared medium (topology "shared"): a device's transfers all take one lane, "link", and each
  is priced with every device's traffic of its op on the medium (cost's "shared"), so with every
  device running the same ops in step, k transfers in flight on each device share the medium as
  k · devices transfers would.
- Shared cores (`Machine.cores` C below the partitions N): the devices run in step, so each
  computes while the others do, and every op on the compute lane takes N/C of its time
  (cost.core_share). A device's transfers keep `Machine.transfer_cpu` of a core busy until their
  last byte is sent; while compute overlaps them, both run cost.transfer_slowdown times slower
  (the compute's op and the link's bytes alike; 1 where the cores have room for both).
- `stablehlo.while` runs its condition and body once per iteration, the trip count read from
  constant bounds (an induction variable compared against a constant, started from a constant,
  stepped by a constant); `stablehlo.case` / `stablehlo.if` take their slowest branch;
  `func.call` runs its callee.

The program is SPMD: every device runs the same ops, but a permute's direction and hops and a
group's placement on the topology depend on the device, so each device in `devices` is simulated
on its own (all of them by default, up to 64; beyond, an even sample including the first and last).
"""

from __future__ import annotations

import copy
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from loom.ir.core import Block, Operation, Value
from loom.ir.diagnostics import VerifyError
from loom.sim.cost import (
    collective_of,
    collective_time_on,
    core_share,
    group_axes,
    hops,
    op_flops,
    op_time,
    permute_loads,
    route,
    shared_bytes,
    torus_shape,
    transfer_slowdown,
)
from loom.sim.machine import Machine
from loom.sim.timeline import Timeline


class SimulationError(VerifyError):
    """An op the simulator cannot time (e.g. a loop without constant bounds), named with its
    location."""


@dataclass
class Prediction:
    """Predicted times in seconds. `step_time` is the slowest simulated device's; `compute_time`
    and `communication_time` are that device's busy time on its compute lane and its link lanes
    (a transfer counted once however many lanes it occupies); `flops` its total FLOPs;
    `op_time_by_name` its seconds by op name (collectives included)."""

    step_time: float
    device_times: dict[int, float]
    compute_time: float
    communication_time: float
    flops: float
    op_time_by_name: dict[str, float]
    timeline: Timeline = field(repr=False)

    @property
    def exposed_communication_time(self) -> float:
        """Step time not covered by compute: communication nothing overlapped."""
        return self.step_time - self.compute_time


_SYNC_COLLECTIVES = {f"stablehlo.{k}" for k in ("all_gather", "reduce_scatter", "all_reduce", "all_to_all",
                                                  "collective_permute", "collective_broadcast")}


class _Link:
    """One link direction of a device, shared equally by the transfers in flight on it (processor
    sharing): each transfer is `work` seconds of the whole link's bandwidth, and while k are in
    flight each gets 1/k of it. `now`: the time up to which `active` (remaining work by key) is
    brought; `sent`: when each finished transfer's last byte left."""

    def __init__(self) -> None:
        self.now = 0.0
        self.active: dict[object, float] = {}
        self.sent: dict[object, float] = {}

    def copy(self) -> _Link:
        link = _Link()
        link.now, link.active, link.sent = self.now, dict(self.active), dict(self.sent)
        return link

    def _advance(self, until: float, rate: float = 1.0) -> bool:
        """Bring the transfers to `until` or to the first one finishing before it, the link moving
        `rate` of its bandwidth meanwhile; whether one finished."""
        if not self.active:
            self.now = max(self.now, until)
            return False
        share = len(self.active)
        key, least = min(self.active.items(), key=lambda kv: kv[1])
        finish = self.now + least * share / rate
        step = min(finish, until) - self.now
        for k in self.active:
            self.active[k] -= step * rate / share
        self.now += step
        if finish <= until:
            del self.active[key]
            self.sent[key] = finish
            return True
        return False

    def add(self, key: object, at: float, work: float) -> None:
        """A transfer of `work` seconds issued at `at` (no earlier than `now`: the device issues in
        time order)."""
        while self._advance(at):
            pass
        self.active[key] = work

    def finish(self, key: object) -> float:
        """When transfer `key` has sent its last byte (no later transfer can be issued before it:
        the device is waiting for it)."""
        while key not in self.sent:
            self._advance(math.inf)
        return self.sent.pop(key)

    def left(self, at: float) -> float:
        """Seconds of the whole link's bandwidth the transfers in flight still need at `at`."""
        while self._advance(max(at, self.now)):
            pass
        return sum(self.active.values())

    def dilate(self, start: float, end: float, slowdown: float) -> None:
        """The transfers move `slowdown` times slower from `start` to `end` (their device's compute
        takes part of the cores their copies need)."""
        while self._advance(max(start, self.now)):
            pass
        while self._advance(max(end, self.now), 1.0 / slowdown):
            pass

    def free(self) -> float:
        """When every transfer in flight has finished."""
        while self.active:
            self._advance(math.inf)
        return self.now

    def occupy(self, start: float, end: float) -> None:
        """A synchronous collective holds the link alone (from `start`, after `free()`)."""
        self.sent.clear()
        self.now = max(end, start)


class _Device:
    """One device's clocks: the compute stream, its two link directions, and every transfer in
    flight (by its future: its link, its start and its latency)."""

    def __init__(self, device: int, machine: Machine, num_partitions: int, timeline: Timeline | None,
                 cache: dict) -> None:
        self.device, self.machine, self.num_partitions = device, machine, num_partitions
        self.timeline, self.cache = timeline, cache  # op times shared by the devices
        self.clock = 0.0
        self.links: dict[tuple[str, int], _Link] = {}  # by lane and the torus axis of the first hop
        self.in_flight: dict[Value, tuple[tuple[str, int], float, float, Operation]] = {}
        self.compute = self.communication = self.flops = 0.0
        self.by_name: dict[str, float] = {}

    def copy(self) -> _Device:
        d = copy.copy(self)
        d.links = {key: link.copy() for key, link in self.links.items()}
        d.in_flight, d.by_name = dict(self.in_flight), dict(self.by_name)
        return d

    def idle(self) -> float:
        """When the device's compute and both links are done."""
        return max([self.clock, *(link.free() for link in self.links.values())])

    def link(self, key: tuple[str, int]) -> _Link:
        if key not in self.links:
            self.links[key] = _Link()
        return self.links[key]

    def span(self, lane: str, op: Operation, start: float, end: float) -> None:
        if self.timeline is not None and end > start:
            self.timeline.add(self.device, lane, op.name.split(".", 1)[-1], start, end)

    def charge(self, op: Operation, seconds: float) -> None:
        self.by_name[op.name] = self.by_name.get(op.name, 0.0) + seconds

    # -- ops -------------------------------------------------------------------------------

    def run_block(self, block: Block) -> None:
        for op in block.ops:
            self.run_op(op)

    def run_op(self, op: Operation) -> None:
        name = op.name
        if name == "stablehlo.while":
            self.run_while(op)
        elif name in ("stablehlo.case", "stablehlo.if"):
            self.run_branches(op)
        elif name == "func.call":
            self.run_block(_callee(op).regions[0].entry)
        elif name in ("comm.collective_permute_start", "comm.all_gather_start"):
            if name == "comm.all_gather_start":  # both directions of every torus axis its group spans
                latency, work = 0.0, self.collective(op)
                keys = [(lane, axis) for lane in self.lanes() for axis in self.group_axes(op)]
            else:
                (latency, work), key = self.permute(op)
                keys = [key]
            for key in keys:
                self.link(key).add((op.results[0], key), self.clock, work)
            self.in_flight[op.results[0]] = (keys, self.clock, latency, op)
            self.communication += latency + work
            self.charge(op, latency + work)
        elif name in ("comm.collective_permute_done", "comm.all_gather_done"):
            future = op.operands[0]
            if future not in self.in_flight:
                raise SimulationError(op, "waits for a transfer this program never started")
            keys, start, latency, started = self.in_flight.pop(future)
            end = max(self.link(key).finish((future, key)) for key in keys) + latency
            for lane in dict.fromkeys(key[0] for key in keys):
                self.span(lane, started, start, end)
            self.clock = max(self.clock, end)
        elif name in _SYNC_COLLECTIVES:
            if name == "stablehlo.collective_permute":
                (latency, work), key = self.permute(op)
                seconds, lanes = latency + work, [key[0]]
            else:
                seconds, lanes = self.collective(op), self.lanes()
            held = [link for key, link in self.links.items() if key[0] in lanes]  # every axis: it waits for all
            start = max([self.clock, *(link.free() for link in held)])
            self.clock = start + seconds
            for link in held:
                link.occupy(start, self.clock)
            for lane in lanes:
                self.span(lane, op, start, self.clock)
            self.communication += seconds
            self.charge(op, seconds)
        else:
            key = id(op)
            if key not in self.cache:
                self.cache[key] = op_time(op, self.machine) * core_share(self.machine, self.num_partitions)
            seconds = self.beside_transfers(self.cache[key])
            self.span("compute", op, self.clock, self.clock + seconds)
            self.clock += seconds
            self.compute += seconds
            self.flops += op_flops(op)
            self.charge(op, seconds)

    def beside_transfers(self, seconds: float) -> float:
        """The time of `seconds` of compute starting now. While this device's transfers are in
        flight, it and they share the cores and both run `transfer_slowdown` (sigma) times slower
        until the first of them is done: the compute overlaps min(seconds, the links' most work
        left) of its own for sigma times that, and every busy link is dilated over that time."""
        slowdown = transfer_slowdown(self.machine, self.num_partitions)
        busy = [link for link in self.links.values() if link.active]
        if slowdown == 1.0 or not busy:
            return seconds
        overlapped = min(seconds, max(link.left(self.clock) for link in busy))
        for link in busy:
            link.dilate(self.clock, self.clock + overlapped * slowdown, slowdown)
        return overlapped * slowdown + seconds - overlapped

    def permute(self, op: Operation) -> tuple[tuple[float, float], tuple[str, int]]:
        """This device's transfer ((latency, seconds of its link's whole bandwidth)) and link (the
        lane of the permute's direction around its ring, the torus axis of its first hop)."""
        key = (id(op), "permute")
        if key not in self.cache:
            self.cache[key] = _permute_routes(op, self.machine)
        return self.cache[key].get(self.device, ((0.0, 0.0), ("link+", 0)))

    def lanes(self) -> list[str]:
        """The link lanes a collective holds: both directions, or the shared medium."""
        return ["link"] if self.machine.topology == "shared" else ["link+", "link-"]

    def group(self, op: Operation) -> list[int]:
        groups = collective_of(op, self.num_partitions)[2]
        return next((g for g in groups if self.device in g), groups[0])

    def collective(self, op: Operation) -> float:
        kind, nbytes, groups = collective_of(op, self.num_partitions)
        return collective_time_on(kind, shared_bytes(nbytes, groups, self.machine),
                                  group_axes(self.group(op), self.machine), self.machine)

    def group_axes(self, op: Operation) -> list[int]:
        """The torus axes this device's group of `op` spans (axis 0 of a switch or a ring)."""
        group = self.group(op)
        if self.machine.topology in ("switch", "shared") or len(group) <= 1:
            return [0]
        coords = np.array(np.unravel_index(np.asarray(group), torus_shape(self.machine, max(group))))
        return [a for a in range(len(coords)) if len(set(coords[a].tolist())) > 1]

    def run_while(self, op: Operation) -> None:
        cond, body = op.regions[0].entry, op.regions[1].entry
        for _ in range(trip_count(op)):
            self.run_block(cond)
            self.run_block(body)
        self.run_block(cond)

    def run_branches(self, op: Operation) -> None:
        outcomes = []
        for region in op.regions:
            branch = self.copy()
            branch.run_block(region.entry)
            outcomes.append(branch)
        slowest = max(outcomes, key=lambda d: (d.clock, d.copy().idle()))
        self.__dict__.update(slowest.__dict__)


def _permute_routes(op: Operation, machine: Machine) -> dict[int, tuple[tuple[float, float], tuple[str, int]]]:
    """For each source device of a collective_permute: its transfer's latency (hops · latency) and
    its seconds at the link's whole bandwidth (bytes · load / bandwidth: the permute's pairs that
    share a link of its route share its bandwidth, loom.sim.cost.permute_loads), and "link+" when
    its target is ahead of it on its ring (the cycle of the permutation through it, its devices in
    id order; within half the ring), else "link-", with the torus axis of its route's first hop
    (a device's links along different axes are different links)."""
    _, nbytes, pairs = collective_of(op, 0)
    return _routes(tuple((s, t) for s, t in pairs), nbytes, machine)


@functools.lru_cache(maxsize=1 << 12)  # the loops of every layer permute the same pairs
def _routes(pairs: tuple[tuple[int, int], ...], nbytes: float,
            machine: Machine) -> dict[int, tuple[tuple[float, float], tuple[str, int]]]:
    """`_permute_routes` of a permute of `pairs`, `nbytes` per device (callers do not mutate it)."""
    loads = permute_loads(list(pairs), machine)
    target = {s: t for s, t in pairs}
    rings: dict[int, dict[int, int]] = {}  # device -> its ring's devices by position
    for s, _ in pairs:
        if s in rings:
            continue
        cycle, d = [s], target.get(s)
        while d is not None and d != s and len(cycle) <= len(target):
            cycle.append(d)
            d = target.get(d)
        ring = {v: i for i, v in enumerate(sorted(cycle))}
        rings.update(dict.fromkeys(cycle if d == s else [s], ring))  # a cycle is every member's ring
    routes = {}
    for s, t in pairs:
        ring = rings[s]
        ahead = (ring[t] - ring[s]) % len(ring) if t in ring else 1
        far = hops(s, t, machine)
        latency = far * machine.link_latency
        work = collective_time_on("collective_permute", nbytes, [2], machine, far, loads[s]) - latency
        axis = next(iter(route(s, t, machine)), (0, 0, 0))[1]
        lane = "link" if machine.topology == "shared" else "link+" if ahead <= len(ring) // 2 else "link-"
        routes[s] = ((latency, work), (lane, axis))
    return routes


def _callee(call: Operation) -> Operation:
    symbol = str(call.properties.get("callee") or call.attributes.get("callee")).lstrip("@")
    root = call
    while root.parent_op is not None:
        root = root.parent_op
    for op in root.walk():
        if op.name == "func.func" and str(op.attributes.get("sym_name", op.properties.get("sym_name"))).strip('"') \
                == symbol:
            return op
    raise SimulationError(call, f"calls @{symbol}, which the module does not define")


def _constant(v: Value) -> int | None:
    op = v.owner_op
    if op is None or op.name != "stablehlo.constant":
        return None
    a = np.asarray(op.properties["value"].to_numpy())
    return int(a.reshape(-1)[0]) if a.size >= 1 and (a == a.reshape(-1)[0]).all() else None


def trip_count(op: Operation) -> int:
    """Iterations of a `stablehlo.while` whose condition compares a loop-carried value against a
    constant, started from a constant operand and stepped by adding a constant in the body."""
    cond, body = op.regions[0].entry, op.regions[1].entry
    compare = cond.terminator.operands[0].owner_op if cond.terminator is not None else None
    if compare is None or compare.name != "stablehlo.compare":
        raise SimulationError(op, "has no constant trip count: its condition is not a comparison")
    direction = str(compare.properties["comparison_direction"]).split()[-1].strip(">").upper()
    for index, (var, bound) in enumerate((compare.operands, compare.operands[::-1])):
        arg = var if var in cond.args else None
        limit = _constant(bound)
        if arg is None or limit is None:
            continue
        j = list(cond.args).index(arg)
        start = _constant(op.operands[j])
        update = body.terminator.operands[j].owner_op
        step = None
        if update is not None and update.name in ("stablehlo.add", "stablehlo.subtract") \
                and update.operands[0] is body.args[j]:
            step = _constant(update.operands[1])
            step = -step if step is not None and update.name == "stablehlo.subtract" else step
        if start is None or not step:
            continue
        if index == 1:  # bound OP var: flip the comparison
            direction = {"LT": "GT", "GT": "LT", "LE": "GE", "GE": "LE"}.get(direction, direction)
        return _iterations(direction, start, limit, step)
    raise SimulationError(op, "has no constant trip count: the simulator needs an induction variable "
                              "started from a constant, stepped by a constant and compared with a constant")


def _iterations(direction: str, start: int, limit: int, step: int) -> int:
    for suffix in ("COMPARISON_DIRECTION_", "#STABLEHLO<", "STABLEHLO."):
        direction = direction.replace(suffix, "")
    span = {"LT": limit - start, "LE": limit - start + (1 if step > 0 else -1),
            "GT": limit - start, "GE": limit - start + (1 if step > 0 else -1),
            "NE": limit - start}[direction]
    if direction == "NE" and span % step:
        raise ValueError(f"a loop from {start} by {step} never reaches {limit}")
    return max(0, math.ceil(span / step)) if (span > 0) == (step > 0) else 0


def _entry(module: Operation) -> Operation:
    funcs = [op for op in module.walk() if op.name == "func.func"]
    for f in funcs:
        if str(f.attributes.get("sym_name", f.properties.get("sym_name"))).strip('"') == "main":
            return f
    if not funcs:
        raise SimulationError(module, "has no func.func to simulate")
    return funcs[0]


def _num_partitions(module: Operation) -> int:
    attr = module.attributes.get("mhlo.num_partitions")
    if attr is not None:
        return int(getattr(attr, "value", attr))
    ids = [0]
    for op in module.walk():
        for key in ("replica_groups", "source_target_pairs"):
            if key in op.properties:
                ids.append(int(np.max(op.properties[key].to_numpy(), initial=0)))
    return max(ids) + 1


def _default_devices(n: int) -> list[int]:
    return list(range(n)) if n <= 64 else sorted({int(d) for d in np.linspace(0, n - 1, 16)})


@dataclass(frozen=True)
class DeviceTime:
    """One device's time to run a block from idle lanes (`step`: until its last op and transfer
    end), and its busy time on compute and on its links."""

    step: float
    compute: float
    communication: float


def device_times(block: Block, machine: Machine, num_partitions: int, devices: Sequence[int]) -> dict[int, DeviceTime]:
    """Run `block` alone on each of `devices`, as `simulate` runs a function body."""
    cache: dict = {}
    times = {}
    for d in devices:
        state = _Device(d, machine, num_partitions, None, cache)
        state.run_block(block)
        times[d] = DeviceTime(state.idle(), state.compute, state.communication)
    return times


def simulate(module: Operation, machine: Machine, *, num_partitions: int | None = None,
             devices: Sequence[int] | None = None, trace_devices: int = 8) -> Prediction:
    """Predict the step time of a partitioned program (its `main` function, or its only one) on
    `machine`. `num_partitions`: the module's `mhlo.num_partitions` unless given; `devices`: which
    to simulate (see the module's doc); the timeline holds the first `trace_devices` of them."""
    n = num_partitions or _num_partitions(module)
    chosen = list(devices) if devices is not None else _default_devices(n)
    if not chosen or any(not 0 <= d < n for d in chosen):
        raise ValueError(f"simulate: devices must be in [0, {n}), got {chosen}")
    entry = _entry(module).regions[0].entry
    timeline = Timeline(f"predicted on {machine.name}")
    cache: dict = {}
    states = []
    for i, d in enumerate(chosen):
        state = _Device(d, machine, n, timeline if i < trace_devices else None, cache)
        state.run_block(entry)
        state.clock = state.idle()
        states.append(state)
    slowest = max(states, key=lambda s: s.clock)
    return Prediction(step_time=slowest.clock, device_times={s.device: s.clock for s in states},
                      compute_time=slowest.compute, communication_time=slowest.communication, flops=slowest.flops,
                      op_time_by_name=slowest.by_name, timeline=timeline)


__all__ = ["DeviceTime", "Prediction", "SimulationError", "device_times", "simulate", "trip_count"]
