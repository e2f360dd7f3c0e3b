"""The cost model: a roofline for each op (time = max(FLOPs / peak, bytes / memory bandwidth),
FLOPs and bytes counted from the op's types) and the standard algorithms' times for collectives
on the machine's topology (bandwidth term + per-hop latency), plus XLA's windowed-einsum
profitability inequality (Wang et al., ASPLOS'23; `GetWindowedEinsumConfiguration` in XLA's
dot_handler.cc). A roofline, not a cycle model: no caches, no launch overheads; a permute's
pairs share the links their routes have in common, other collectives are priced alone (the
simulator shares a device's link directions between the transfers in flight on them).

Collective sizes (`nbytes`) are per device: for all_gather the gathered (result) size, for
reduce_scatter and all_reduce the unreduced (operand) size, for all_to_all the operand, for
collective_permute and collective_broadcast the tensor sent.

Topologies. A group of N devices on a ring or torus spans some of the torus's axes, n_a devices
along axis a (N = prod n_a); each axis is a ring whose links carry data both ways at once:
- all_gather / reduce_scatter: every device must receive (N-1)/N of the data over its 2·D
  incoming links (D axes spanned), so T = sum_a ceil((n_a-1)/2)·latency + V·(N-1)/N / (2·D·W);
  on one axis this is the bidirectional ring: ceil((N-1)/2) hops of V/N per direction.
- all_reduce = reduce_scatter + all_gather of the same size.
- all_to_all: each device sends V/N to each other device along shortest paths; the busiest link
  carries V·sum_a n_a / (8·D) per direction.
- collective_permute: a pair's hops · latency + V · load / W, cut-through along its route
  (`route`: dimension-order routing on a torus; uplink and downlink through a switch), where
  load is the most of the permute's pairs that cross one link of that route (they share its
  bandwidth: every device issues the permute at once); the op's time is its slowest pair's.
- switch: each device has one link of W per direction to a crossbar; ring algorithms over it,
  (N - 1) steps of latency, V·(N-1)/N / W for all_gather / reduce_scatter.
- shared: one medium of W in all (a bus; a loopback metered by one token bucket). Every transfer
  crosses it: a permute's pairs all share it (load = the pairs that move data), and a collective
  over groups of N moves every group's whole traffic through it: (N - 1) steps of latency,
  V·(N-1)·groups / W (each of the N devices receives V·(N-1)/N; all_to_all and broadcast alike).
- cores (`core_share`): N devices running in step on C < N shared cores each get C/N of a core,
  so every op that computes takes N/C of its time alone.
- transfer CPU (`transfer_slowdown`): a device's transfers keep `Machine.transfer_cpu` (u) of a
  core busy while in flight; where the cores (C for N devices) leave no room for both, compute and
  the transfers it overlaps share them and both run sigma = 1 + min(1, u/a0)·(a0/a1 - 1) times
  slower, a0 = min(1, C/N) and a1 = min(1, C/(2N)) a thread's share of a core without and with
  the other.
- calibrated collectives (`Machine.collective_bandwidth`): a kind's algorithm above, its bytes
  at the bandwidth measured for that kind (an implementation slower than the model's ring keeps
  the model's latency steps and pays for its bytes at its own rate).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from loom.ir.core import Operation
from loom.ir.types import RankedTensorType
from loom.sim.machine import COLLECTIVES, Machine
from loom.transforms.spmd_partition import byte_width

# ops that move no data at all (views, constants folded into their users, process ids)
_FREE = {"stablehlo.reshape", "stablehlo.constant", "stablehlo.partition_id", "stablehlo.replica_id",
         "stablehlo.get_tuple_element", "stablehlo.tuple", "stablehlo.optimization_barrier",
         "stablehlo.return", "func.return", "stablehlo.bitcast_convert", "sdy.sharding_constraint"}
# ops whose work is one operation per element of their largest operand or result
_PER_ELEMENT = {"stablehlo.reduce", "stablehlo.reduce_window", "stablehlo.select_and_scatter",
                "stablehlo.scatter", "stablehlo.sort", "stablehlo.select", "stablehlo.clamp", "stablehlo.map",
                "stablehlo.reduce_precision", "stablehlo.compare", "stablehlo.convert"}


def tensor_bytes(t: object) -> int:
    """Bytes of a statically shaped tensor (0 for anything else: tokens, futures' wrappers)."""
    if not isinstance(t, RankedTensorType):
        inner = getattr(t, "tensor_type", None) or getattr(t, "value_type", None)
        return tensor_bytes(inner) if inner is not None else 0
    return _elements(t) * byte_width(t.element_type)


def _elements(t: RankedTensorType) -> int:
    if any(s < 0 for s in t.shape):
        raise ValueError(f"the cost model needs static shapes, got {t}")
    return int(np.prod(t.shape, dtype=np.int64))


def _elements_of(values: Sequence[object]) -> int:
    return max((_elements(v.type) for v in values if isinstance(v.type, RankedTensorType)), default=0)


def op_flops(op: Operation) -> float:
    """Floating-point (or integer) operations of one execution of `op`, from its types:
    2·M·N·K for a contraction, one per output element of elementwise ops, one per input element
    for reductions and the like, none for data movement."""
    name = op.name
    if name == "stablehlo.dot_general":
        dn = op.properties["dot_dimension_numbers"]
        lhs = op.operands[0].type
        k = math.prod(lhs.shape[d] for d in dn.lhs_contracting_dimensions)
        return 2.0 * _elements(op.results[0].type) * k
    if name == "stablehlo.dot":
        lhs = op.operands[0].type
        return 2.0 * _elements(op.results[0].type) * lhs.shape[-1]
    if name == "stablehlo.convolution":
        dn = op.properties["dimension_numbers"]
        kernel = op.operands[1].type
        per_output = _elements(kernel) // kernel.shape[dn.kernel_output_feature_dimension]
        return 2.0 * _elements(op.results[0].type) * per_output
    if name in _PER_ELEMENT:
        return float(max(_elements_of(op.operands), _elements_of(op.results)))
    if _is_elementwise(op):
        return float(_elements_of(op.results))
    return 0.0


def _is_elementwise(op: Operation) -> bool:
    from loom.dialects.stablehlo.base import Elementwise

    has = getattr(op, "has_trait", None)
    return bool(has and has(Elementwise))


def op_bytes(op: Operation) -> float:
    """Bytes `op` reads and writes in memory: its operands and results, except that in-place
    updates (dynamic_update_slice, scatter) touch only the update, a slice only what it reads, and
    views and constants nothing."""
    name = op.name
    if name in _FREE or name.startswith(("comm.", "func.", "sdy.")):
        return 0.0
    if name == "stablehlo.dynamic_update_slice":
        return 2.0 * tensor_bytes(op.operands[1].type)
    if name in ("stablehlo.dynamic_slice", "stablehlo.slice", "stablehlo.real_dynamic_slice"):
        return 2.0 * tensor_bytes(op.results[0].type)
    if name == "stablehlo.scatter":
        n = len(op.results)
        return 2.0 * sum(tensor_bytes(v.type) for v in op.operands[n + 1:]) + tensor_bytes(op.operands[n].type)
    return float(sum(tensor_bytes(v.type) for v in op.operands) + sum(tensor_bytes(v.type) for v in op.results))


def roofline_time(flops: float, nbytes: float, machine: Machine) -> float:
    return max(flops / machine.peak_flops, nbytes / machine.memory_bandwidth)


def group_axes(group: Sequence[int], machine: Machine) -> list[int]:
    """How many devices of `group` lie along each axis of the machine's torus (device d at the
    row-major coordinate of d in topology_shape); a switch or a ring: [len(group)]."""
    if machine.topology in ("switch", "shared") or len(group) <= 1:
        return [len(group)]
    shape = torus_shape(machine, max(group))
    coords = np.array(np.unravel_index(np.asarray(group), shape)).T
    return [len(set(coords[:, a].tolist())) for a in range(len(shape)) if len(set(coords[:, a].tolist())) > 1]


def compact_axes(group_size: int, machine: Machine) -> list[int]:
    """The axes a compact group of `group_size` consecutive device ids spans (the last torus axis
    filled first, as row-major ids lay them out)."""
    return group_axes(list(range(group_size)), machine)


@functools.lru_cache(maxsize=1 << 16)
def hops(source: int, target: int, machine: Machine) -> int:
    """Links between two devices: 1 through a switch or the shared medium, the torus (wraparound)
    distance otherwise."""
    if machine.topology in ("switch", "shared") or source == target:
        return int(source != target)
    shape = torus_shape(machine, max(source, target))
    a, b = np.unravel_index(source, shape), np.unravel_index(target, shape)
    return int(sum(min(abs(int(x) - int(y)), s - abs(int(x) - int(y))) for x, y, s in zip(a, b, shape)))


def torus_shape(machine: Machine, largest: int) -> tuple[int, ...]:
    """The torus (or ring) extents device ids lie in: topology_shape, or one ring of all ids when
    it holds fewer devices than named."""
    return machine.topology_shape if math.prod(machine.topology_shape or (0,)) > largest else (largest + 1,)


@functools.lru_cache(maxsize=1 << 16)  # rings repeat: every step of a loop permutes the same pairs
def route(source: int, target: int, machine: Machine) -> tuple[tuple[int, int, int], ...]:
    """The directed links (device, axis, +1 / -1) a transfer crosses: through a switch, the
    source's uplink and the target's downlink (axis 0, +1 and -1); on a ring or torus, dimension
    order routing: axis by axis, first to last, the shorter way around each (the + way at a tie),
    each link named by the device it leaves; on a shared medium, the medium (0, 0, 0)."""
    if source == target:
        return ()
    if machine.topology == "shared":
        return ((0, 0, 0),)
    if machine.topology == "switch":
        return ((source, 0, 1), (target, 0, -1))
    shape = torus_shape(machine, max(source, target))
    here, there = list(np.unravel_index(source, shape)), np.unravel_index(target, shape)
    links = []
    for axis, size in enumerate(shape):
        ahead = (int(there[axis]) - int(here[axis])) % size
        sign = 1 if ahead <= size - ahead else -1
        for _ in range(ahead if sign > 0 else size - ahead):
            links.append((int(np.ravel_multi_index(here, shape)), axis, sign))
            here[axis] = (here[axis] + sign) % size
    return tuple(links)


def permute_loads(pairs: Sequence[tuple[int, int]], machine: Machine) -> dict[int, int]:
    """For each source of a collective_permute: the most of the permute's transfers (all issued
    together, as every device runs the same program) that cross one link of its route; its
    transfer gets that share of the link's bandwidth."""
    routes = {s: route(s, t, machine) for s, t in pairs}
    crossing: dict[tuple[int, int, int], int] = {}
    for links in routes.values():
        for link in links:
            crossing[link] = crossing.get(link, 0) + 1
    return {s: max((crossing[link] for link in links), default=1) for s, links in routes.items()}


def collective_time_on(kind: str, nbytes: float, axes: Sequence[int], machine: Machine,
                       permute_hops: int = 1, permute_load: int = 1) -> float:
    """The time of collective `kind` over a group spanning `axes` (devices per torus axis; one
    entry for a ring or a switch), `nbytes` per device as the module's doc defines it, its bytes
    moving at the machine's bandwidth for `kind` (Machine.bandwidth_of)."""
    if kind not in COLLECTIVES:
        raise ValueError(f"unknown collective kind {kind!r}; kinds: {COLLECTIVES}")
    n = math.prod(axes)
    w, lat = machine.bandwidth_of(kind), machine.link_latency
    if kind == "collective_permute":
        return permute_hops * lat + nbytes * permute_load / w if permute_hops else 0.0
    if n <= 1:
        return 0.0
    if kind == "all_reduce":
        return 2 * _algorithm_time("all_gather", nbytes, axes, machine.topology, w, lat)
    return _algorithm_time(kind, nbytes, axes, machine.topology, w, lat)


def _algorithm_time(kind: str, nbytes: float, axes: Sequence[int], topology: str, w: float, lat: float) -> float:
    n = math.prod(axes)
    if topology == "shared":
        steps = {"all_to_all": 1}.get(kind, n - 1)
        return steps * lat + nbytes * (n - 1) / w
    if topology == "switch":
        steps = {"all_to_all": 1, "collective_broadcast": n - 1}.get(kind, n - 1)
        return steps * lat + nbytes * (n - 1) / n / w
    d = len(axes)
    if kind == "all_to_all":
        return sum(math.ceil(a / 2) for a in axes) * lat + nbytes * sum(axes) / (8 * d * w)
    if kind == "collective_broadcast":
        return sum(a // 2 for a in axes) * lat + nbytes / w
    return sum(math.ceil((a - 1) / 2) for a in axes) * lat + nbytes * (n - 1) / n / (2 * d * w)


def collective_time(kind: str, nbytes: float, group_size: int, machine: Machine) -> float:
    """The time of collective `kind` ("all_gather", "reduce_scatter", "all_reduce", "all_to_all",
    "collective_permute", "collective_broadcast") of `nbytes` per device over a compact group of
    `group_size` devices (a permute: each to a neighbour, one hop; on a shared medium all
    `group_size` transfers share it)."""
    load = group_size if machine.topology == "shared" and kind == "collective_permute" else 1
    return collective_time_on(kind, nbytes, compact_axes(group_size, machine), machine, permute_load=load)


def collective_of(op: Operation, num_partitions: int) -> tuple[str, float, list[list[int]]] | None:
    """(kind, bytes per device as collective_time counts them, the groups of device ids) of a
    collective op (stablehlo's, comm.collective_permute_start or comm.all_gather_start), else
    None."""
    name = op.name.split(".", 1)[1] if op.name.startswith("stablehlo.") else op.name
    name = {"comm.all_gather_start": "all_gather"}.get(name, name)
    if name in ("collective_permute", "comm.collective_permute_start"):
        pairs = op.properties["source_target_pairs"].to_numpy().reshape(-1, 2).tolist()
        return "collective_permute", float(tensor_bytes(op.operands[0].type)), [list(p) for p in pairs]
    if name not in COLLECTIVES:
        return None
    groups = [[i for i in g if i != -1] for g in op.properties["replica_groups"].to_numpy().tolist()] \
        if "replica_groups" in op.properties else []
    if not groups or not groups[0]:
        groups = [list(range(num_partitions))]
    sized = op.results[0] if name == "all_gather" else op.operands[0]
    return name, float(tensor_bytes(sized.type)), groups


def op_time(op: Operation, machine: Machine, num_partitions: int = 1) -> float:
    """One execution of `op`: a collective's time on the topology (its first group's placement;
    a permute's farthest pair), any other op's roofline plus the machine's op_overhead when it
    does any work. Ops with regions count themselves only."""
    coll = collective_of(op, num_partitions)
    if coll is None:
        flops, nbytes = op_flops(op), op_bytes(op)
        return roofline_time(flops, nbytes, machine) + (machine.op_overhead if flops or nbytes else 0.0)
    kind, nbytes, groups = coll
    if kind == "collective_permute":
        loads = permute_loads(groups, machine)
        return max((collective_time_on(kind, nbytes, [2], machine, hops(s, t, machine), loads[s]) for s, t in groups),
                   default=0.0)
    return collective_time_on(kind, shared_bytes(nbytes, groups, machine), group_axes(groups[0], machine), machine)


def shared_bytes(nbytes: float, groups: Sequence[Sequence[int]], machine: Machine) -> float:
    """The bytes per device a collective over `groups` is priced for: on a shared medium every
    group's traffic crosses it at once, elsewhere a group's links are its own."""
    return nbytes * len(groups) if machine.topology == "shared" else nbytes


def core_share(machine: Machine, devices: int) -> float:
    """How many times longer an op that computes takes when `devices` run it at once on the
    machine's shared cores (1 with a core per device)."""
    return max(1.0, devices / machine.cores) if machine.cores else 1.0


def transfer_slowdown(machine: Machine, devices: int) -> float:
    """How many times longer both an op that computes and a transfer in flight take while they
    overlap on a device than either alone, when `devices` (N) run in step on the machine's cores
    (C; one per device when `cores` is 0) and a transfer alone keeps `transfer_cpu` (u) of a core
    busy. A transfer alternates between copying bytes (a thread that wants a whole core) and
    waiting on the wire. Alone, the N copying threads share the cores, each a0 = min(1, C/N) of
    one, so a transfer copies u/a0 of its time; beside compute, each copying thread shares with a
    compute thread too, a1 = min(1, C/(2N)): the copies take a0/a1 times longer and the transfer
    1 + (u/a0)·(a0/a1 - 1) times. The compute loses those same shares while the copies run, which
    stretches it by the same factor: sigma = 1 + min(1, u/a0)·(a0/a1 - 1) (1 with cores for both)."""
    alone, beside = thread_shares(machine, devices)
    return 1.0 + min(1.0, machine.transfer_cpu / alone) * (alone / beside - 1.0)


def thread_shares(machine: Machine, devices: int) -> tuple[float, float]:
    """The share of a core a thread of each of `devices` running in step gets on the machine's
    cores (one per device when `cores` is 0): with one thread per device, and with two
    (transfer_slowdown's a0 and a1)."""
    cores = machine.cores or devices
    return min(1.0, cores / devices), min(1.0, cores / (2 * devices))


@dataclass(frozen=True)
class Decision:
    """Whether to decompose, why (with the figures), and the inequality's two sides in seconds."""

    decompose: bool
    reason: str
    t_before: float
    t_after: float


def windowed_einsum_decision(kind: str, dot_flops: float, full_bytes: int, n: int, machine: Machine,
                             bidirectional: bool = False, *, dot_time: float | None = None,
                             loop_compute_time: float | None = None) -> Decision:
    """XLA's analytic check for a windowed einsum over a ring of `n` devices. `dot_flops`: the
    per-device dot as it runs undecomposed; `full_bytes`: the gathered operand (all_gather) or the
    unreduced dot result (reduce_scatter). T_comp = the dot's time (`dot_time`, else
    dot_flops / peak); T_loop = the compute of the loop's n steps (`loop_compute_time`, else
    T_comp: XLA's assumption that the pieces cost what the whole does); T_comm = the collective the
    loop replaces (its reduce_scatter, where XLA prices the reduce-scatter case by an all-reduce);
    m = the loop's transfer time over T_comm (n - 1 one-hop shard transfers one way, or
    ceil((n - 1) / 2) rounds both ways); extra = T_comm·m·2/n, the un-overlapped first and last
    step. Decompose iff max(T_loop, T_comm·m) + extra < T_comp + T_comm and T_comm > 1e-8 s
    (XLA: 1e-5 ms)."""
    if kind not in ("all_gather", "reduce_scatter"):
        raise ValueError(f"windowed_einsum_decision: kind must be 'all_gather' or 'reduce_scatter', got {kind!r}")
    if n < 2:
        return Decision(False, f"a group of {n} device has nothing to communicate", 0.0, 0.0)
    t_comp = dot_flops / machine.peak_flops if dot_time is None else dot_time
    t_loop = t_comp if loop_compute_time is None else loop_compute_time
    t_comm = collective_time(kind, full_bytes, n, machine)
    steps = math.ceil((n - 1) / 2) if bidirectional else n - 1
    t_transfers = steps * collective_time("collective_permute", full_bytes / n, n, machine)
    m = t_transfers / t_comm if t_comm > 0 else 1.0
    extra = t_comm * m * 2 / n
    t_before, t_after = t_comp + t_comm, max(t_loop, t_comm * m) + extra
    loop = "" if loop_compute_time is None else f"T_loop {t_loop * 1e6:.3g} us, "
    figures = (f"T_comp {t_comp * 1e6:.3g} us, {loop}T_comm {t_comm * 1e6:.3g} us, m {m:.3g}, "
               f"extra {extra * 1e6:.3g} us on {machine.name}: "
               f"max({'T_loop' if loop else 'T_comp'}, T_comm*m) + extra = {t_after * 1e6:.3g} us")
    if t_comm <= 1e-8:
        return Decision(False, f"communication is negligible ({figures})", t_before, t_after)
    if t_after >= t_before:
        return Decision(False, f"the loop would not be faster: {figures} >= T_comp + T_comm = "
                               f"{t_before * 1e6:.3g} us", t_before, t_after)
    return Decision(True, f"the loop is faster: {figures} < T_comp + T_comm = {t_before * 1e6:.3g} us",
                    t_before, t_after)


def closed_form_decision(collective: Operation, dot: Operation, machine: Machine,
                         bidirectional: bool = False) -> Decision:
    """windowed_einsum_decision (XLA's closed form) for an all_gather feeding `dot` or a
    reduce_scatter fed by it, with the dot's and the loop's compute priced by the roofline
    rather than by FLOPs alone: each of the N steps multiplies a 1/N piece (the window, or the
    slice of the reduce-scatter's operand) by the other operand (whole, or its matching 1/N
    slice when the window is on a contracting or batch dimension) and writes a 1/N block
    (dynamic_update_slice) or adds into an accumulator (the reduce-scatter's shard; the full
    result when the window is contracting). Thin partial dots are memory-bound where the whole
    dot was not, which XLA's FLOP-only inequality misses."""
    kind = collective.name.split(".", 1)[-1]
    groups = collective.properties["replica_groups"].to_numpy()
    n = int((groups[0] != -1).sum())
    flops = op_flops(dot)
    out = tensor_bytes(dot.results[0].type)
    dn = dot.properties["dot_dimension_numbers"]
    if kind == "all_gather":
        side = 0 if dot.operands[0] is collective.results[0] else 1
        full = tensor_bytes(collective.results[0].type)
        other = tensor_bytes(dot.operands[1 - side].type)
        d = collective.properties["all_gather_dim"].value
        contracting = d in (dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions)[side]
        batching = d in (dn.lhs_batching_dimensions, dn.rhs_batching_dimensions)[side]
        if contracting:  # the other operand's matching slice; the partial product added into the whole result
            step_bytes = full / n + 3 * other / n + out + 3 * out
        elif batching:  # the other operand's matching batch block; the block written in place
            step_bytes = full / n + 3 * other / n + 3 * out / n
        else:  # the other operand whole; the block written in place
            step_bytes = full / n + other + 3 * out / n
    elif kind == "reduce_scatter":
        full = out
        # the operand whose free dimension is scattered is sliced (1/N read, written, read again by
        # the dot); the other is read whole; the partial block is added into the accumulator
        lhs_free = dot.operands[0].type.rank - len(dn.lhs_batching_dimensions) - len(dn.lhs_contracting_dimensions)
        r = collective.properties["scatter_dimension"].value - len(dn.lhs_batching_dimensions)
        side = 0 if r < lhs_free else 1
        sizes = [tensor_bytes(v.type) for v in dot.operands]
        step_bytes = 3 * sizes[side] / n + sizes[1 - side] + out / n + 3 * out / n
    else:
        raise ValueError(f"closed_form_decision: {collective.name} is not an all_gather or a reduce_scatter")
    dot_time = roofline_time(flops, op_bytes(dot), machine)
    loop = n * roofline_time(flops / n, step_bytes, machine)
    return windowed_einsum_decision(kind, flops, full, n, machine, bidirectional, dot_time=dot_time,
                                    loop_compute_time=loop)


def ring_positions(groups: Sequence[Sequence[int]], machine: Machine) -> list[int]:
    """One device of each kind of ring position in `groups`: the same hops to the previous and to
    the next position of its group, the same share of its routes' links (permute_loads) each way,
    and its group spanning the same torus axes. The simulator
    times a device's collectives and transfers from these alone, so devices of one kind take the
    same time on the same program."""
    up = permute_loads([(d, g[j - 1]) for g in groups for j, d in enumerate(g)], machine)
    down = permute_loads([(d, g[(j + 1) % len(g)]) for g in groups for j, d in enumerate(g)], machine)
    kinds: dict[tuple, int] = {}
    for g in groups:
        axes = tuple(group_axes(g, machine))
        for j, d in enumerate(g):
            kinds.setdefault((hops(d, g[j - 1], machine), hops(d, g[(j + 1) % len(g)], machine), up[d], down[d],
                              axes), d)
    return sorted(kinds.values())


def collective_matmul_decision(collective: Operation, dot: Operation, machine: Machine,
                               bidirectional: bool = False, unroll: bool = False,
                               concatenate: bool = False) -> Decision:
    """Whether to decompose an all_gather feeding `dot` or a reduce_scatter fed by it: XLA's
    inequality in closed form (closed_form_decision), then the same inequality simulated,
    T_loop < T_comp + T_comm with all three times from loom.sim's simulator. It runs the pair
    alone and the loop decompose-collective-matmul writes for it with these options, scheduled by
    schedule-latency-hiding (loom.transforms.collective_matmul.isolated_pair), on one device of
    each kind of ring position (ring_positions): the loop is priced with the simulator's own
    per-step model (each partial dot's roofline, each step's transfers with their hops' latency,
    the two-way step structure, the prologue and epilogue), where the closed form assumes even
    steps, one hop and one prologue transfer. Both must find the loop faster on every kind of
    position. The simulator runs a program's ops one after another, and every transfer of a loop
    ends within it, so replacing the pair by a loop chosen here cannot make a simulated device
    slower. `t_before` / `t_after`: the simulated sides, on the device where the loop gains least
    (the closed form's when it refuses first)."""
    from loom.sim.simulate import device_times
    from loom.transforms.collective_matmul import isolated_pair

    closed = closed_form_decision(collective, dot, machine, bidirectional)
    if not closed.decompose:
        return closed
    groups = [[i for i in g if i != -1] for g in collective.properties["replica_groups"].to_numpy().tolist()]
    devices = ring_positions(groups, machine)
    partitions = max(max(g) for g in groups) + 1
    before = device_times(isolated_pair(collective, False), machine, partitions, devices)
    after = device_times(isolated_pair(collective, True, bidirectional, unroll, concatenate), machine, partitions,
                         devices)
    d = max(devices, key=lambda d: after[d].step - before[d].step)
    t_before, t_after = before[d].step, after[d].step
    figures = (f"T_comp {before[d].compute * 1e6:.3g} us, T_comm {before[d].communication * 1e6:.3g} us, "
               f"T_loop {t_after * 1e6:.3g} us (compute {after[d].compute * 1e6:.3g} us, transfers "
               f"{after[d].communication * 1e6:.3g} us) on {machine.name}, device {d} of {len(devices)} kinds of "
               f"ring position")
    if t_after >= t_before:
        return Decision(False, f"the simulated loop would not be faster: {figures}: T_loop >= T_comp + T_comm = "
                               f"{t_before * 1e6:.3g} us (XLA's closed form: {closed.reason})", t_before, t_after)
    return Decision(True, f"{closed.reason}; simulated: {figures}: T_loop < T_comp + T_comm = "
                          f"{t_before * 1e6:.3g} us", t_before, t_after)


__all__ = ["COLLECTIVES", "Decision", "closed_form_decision", "collective_matmul_decision", "collective_of",
           "collective_time", "collective_time_on", "core_share", "group_axes", "hops", "op_bytes", "op_flops",
           "op_time", "permute_loads", "ring_positions", "route", "roofline_time", "shared_bytes", "tensor_bytes",
           "thread_shares", "torus_shape", "transfer_slowdown", "windowed_einsum_decision"]
