"""Collectives and the other distributed and host-communication ops.

The collectives run in partitioned programs: each partition runs the per-device program with a
`Communicator` and its partition id installed (`loom.runtime.communicator.spmd_context`), and the
kernels below read them. They follow the StableHLO spec's process groups with one replica
(`mhlo.num_replicas = 1`):

- `cross_replica` (no `channel_handle`, or handle <= 0, without `use_global_device_ids`): the
  groups hold replica ids, so every group is one partition (the op is local);
- `cross_replica_and_partition` (all_gather, all_reduce, reduce_scatter with a positive
  `channel_handle` but no `use_global_device_ids`): the groups hold replica ids, each extended
  to every partition of those replicas: with one replica, one group of all partitions;
- `cross_partition` (all_to_all, collective_permute, collective_broadcast with a positive
  `channel_handle`): the groups hold partition ids; `replica_groups` empty means all partitions;
- `flattened_ids` (a positive `channel_handle` with `use_global_device_ids`): the groups hold
  `replica_id * num_partitions + partition_id`, i.e. partition ids (as JAX's shard_map writes).

The reductions of `all_reduce` and `reduce_scatter` are the communicator's (sum, prod, max, min,
and, or, xor) when the reducer region is one of those ops; any other reducer is applied pairwise,
in group order, through the region (a variadic all_reduce applies it to each operand). A
`collective_permute` target that receives nothing, and a `collective_broadcast` partition in no
group, get zeros.

The kernels are `KERNELS` entries, so the compiled executor and the interpreter both run them.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from loom.backend.common import ExecutionError, torch_kernels_in
from loom.backend.compiled import ELEMENTWISE, reducer_ufunc
from loom.backend.interpreter import Interpreter
from loom.backend.kernels import ALL, KERNELS, Kernel, kernel
from loom.dialects import func as func_dialect
from loom.dialects.sdy import DimSharding, MeshAttr, TensorShardingAttr
from loom.dialects.stablehlo.collectives import channel_handle_attr
from loom.ir.attributes import IntegerAttr, StringAttr, TypeAttr, UnitAttr
from loom.ir.core import Operation, Region
from loom.ir.types import FunctionType, IntegerType
from loom.ops import registry
from loom.ops.registry import declare, register, unsupported
from loom.runtime.communicator import SPMDContext, current
from loom.transforms.autodiff import VJP_RULES, MissingRuleError, full_like, is_float
from loom.transforms.batching import BATCH_RULES, moveaxis
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.rule_builders import rule
from loom.transforms.sharding_propagation import SHARDING_RULES as _SHARDING_RULES

# Reducer region ops -> the communicator's reduction names.
REDUCTION_OF_UFUNC: dict[Any, str] = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
                      np.bitwise_and: "and", np.bitwise_or: "or", np.bitwise_xor: "xor"}


# Reading the attributes ---------------------------------------------------------------------

def describe(op: Operation) -> str:
    """`'stablehlo.all_reduce' at <location>` for error messages."""
    loc = getattr(op, "location", None)
    return f"'{op.name}'" + (f" at {loc}" if loc is not None and str(loc) != "loc(unknown)" else "")


def dense_ids(op: Operation, name: str) -> tuple[tuple[int, ...], ...]:
    """A `tensor<G x N x i64>` attribute (`replica_groups`, `source_target_pairs`) as rows of ids;
    negative ids (padding of ragged groups) dropped. Absent: no rows."""
    attr = op.get_attr(name)
    if attr is None:
        return ()
    ids = np.asarray(attr.to_numpy() if hasattr(attr, "to_numpy") else attr, dtype=np.int64)
    if ids.size == 0:
        return ()
    if ids.ndim != 2:
        raise ExecutionError(f"{describe(op)}: {name} must be a 2-d tensor of ids, got shape {ids.shape}")
    return tuple(tuple(int(i) for i in row if i >= 0) for row in ids)


def channel_id(op: Operation) -> int:
    """The handle of the op's `channel_handle` (0 when absent)."""
    attr = op.get_attr("channel_handle")
    if attr is None:
        return 0
    handle = getattr(attr, "handle", None)
    if handle is not None:
        return int(handle)
    found = re.search(r"handle\s*=\s*(-?\d+)", str(attr))
    if found is None:
        raise ExecutionError(f"{describe(op)}: cannot read channel_handle {attr}")
    return int(found.group(1))


def int_attr(op: Operation, name: str) -> int:
    attr = op.get_attr(name)
    if attr is None:
        raise ExecutionError(f"{describe(op)}: missing attribute {name}")
    return int(attr.value)


@dataclass(frozen=True)
class ProcessGroups:
    """The process groups of one collective op, resolved at run time for the calling partition
    (a class, not a tuple, so the compiled executor hoists it as one object)."""

    where: str                                  # the op, for errors
    mode: str                                   # cross_replica, cross_partition or flattened_ids
    groups: tuple[tuple[int, ...], ...]         # as written (empty: all)
    # the group of each (partition, number of partitions) asked for: resolved once per op and
    # partition, since a collective in a loop asks at every iteration
    _resolved: dict = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    @staticmethod
    def of(op: Operation, replicas_and_partitions: bool = True) -> ProcessGroups:
        """The groups of `op`: `replicas_and_partitions` for all_gather, all_reduce and
        reduce_scatter (a channel without global ids spans replicas and partitions), False for
        the collectives whose channel means cross_partition."""
        unit = op.get_attr("use_global_device_ids") is not None
        if channel_id(op) <= 0:
            if unit:
                raise ExecutionError(f"{describe(op)}: use_global_device_ids needs a channel_handle")
            mode = "cross_replica"
        elif not replicas_and_partitions:
            mode = "cross_partition"
        else:
            mode = "flattened_ids" if unit else "cross_replica_and_partition"
        groups = dense_ids(op, "replica_groups")
        if mode == "flattened_ids" and not groups:
            raise ExecutionError(f"{describe(op)}: use_global_device_ids needs replica_groups that name the devices "
                                 "(they are empty)")
        return ProcessGroups(describe(op), mode, groups)

    def group_of(self, ctx: SPMDContext) -> tuple[int, ...]:
        """The group (partition ids, in order) the calling partition belongs to."""
        group = self._resolved.get((ctx.partition_id, ctx.num_partitions)) or self.group_or_none(ctx)
        if group is None:
            groups = list(self.groups or (tuple(range(ctx.num_partitions)),))
            raise ExecutionError(f"{self.where}: partition {ctx.partition_id} is in none of the replica_groups "
                                 f"{groups}")
        return group

    def group_or_none(self, ctx: SPMDContext) -> tuple[int, ...] | None:
        """The calling partition's group, None when it is in none."""
        key = (ctx.partition_id, ctx.num_partitions)
        try:
            return self._resolved[key]
        except KeyError:
            group = self._resolved[key] = _group_of(self, *key)
            return group


def _group_of(pg: ProcessGroups, me: int, num_partitions: int) -> tuple[int, ...] | None:
    """The group of partition `me` of `num_partitions` in `pg`, None when it is in none (what
    `ProcessGroups.group_or_none` keeps)."""
    if pg.mode in ("cross_replica", "cross_replica_and_partition"):  # replica ids: only 0
        bad = [i for g in pg.groups for i in g if i != 0]
        if bad:
            raise ExecutionError(f"{pg.where}: replica id {bad[0]} in replica_groups, but there is one "
                                 f"replica ({pg.mode} groups: "
                                 + ("no channel_handle" if pg.mode == "cross_replica" else
                                    "a channel_handle without use_global_device_ids") + ")")
        return (me,) if pg.mode == "cross_replica" else tuple(range(num_partitions))
    groups = pg.groups or (tuple(range(num_partitions)),)
    beyond = [i for g in groups for i in g if i >= num_partitions]
    if beyond:
        raise ExecutionError(f"{pg.where}: partition id {beyond[0]} in replica_groups, but there are "
                             f"{num_partitions} partitions")
    return next((g for g in groups if me in g), None)


# Reducers -------------------------------------------------------------------------------------

class RegionReducer:
    """A reducer region `(tensor<E>, tensor<E>) -> tensor<E>` applied to whole arrays: at once
    when the region is elementwise, element by element otherwise. A fresh interpreter per call,
    so partitions running in threads share nothing."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        region: Region = op.regions[0]
        self.block = region.blocks[0]
        self.elementwise = len(region.blocks) == 1 and all(o.name in ELEMENTWISE for o in self.block.ops)

    def __call__(self, lhs: np.ndarray, rhs: np.ndarray) -> np.ndarray:
        interp = Interpreter(self.op)
        if self.elementwise:
            return np.asarray(interp.run_block(self.block, [lhs, rhs], {})[0])
        out = np.empty(lhs.shape, lhs.dtype)
        for idx in np.ndindex(*lhs.shape):
            out[idx] = interp.run_block(self.block, [np.asarray(lhs[idx]), np.asarray(rhs[idx])], {})[0]
        return out


def fold(reducer: RegionReducer, stack: np.ndarray) -> np.ndarray:
    """Reduce the stacked operands (member on axis 0) pairwise in group order."""
    acc = stack[0]
    for k in range(1, stack.shape[0]):
        acc = reducer(acc, stack[k])
    return np.array(acc)


def reduction_of(op: Operation) -> str | None:
    """The communicator's name for the op's reducer, or None for another reducer. (A variadic
    all_reduce applies its one binary reducer to each operand.)"""
    ufunc = reducer_ufunc(op.regions[0])
    return REDUCTION_OF_UFUNC.get(ufunc) if ufunc is not None else None


def _results(values: Sequence[np.ndarray]) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


# The kernels run on numpy arrays, and on torch tensors where a communicator computes on them
# (loom.ops.collectives_torch): what they make themselves is of their operand's kind.
def _copy(x: Any) -> Any:
    return np.array(x) if isinstance(x, np.ndarray) or not hasattr(x, "clone") else x.clone()


def _zeros_like(x: Any) -> Any:
    return np.zeros_like(x) if isinstance(x, np.ndarray) or not hasattr(x, "new_zeros") else x.new_zeros(x.shape)


# Kernels --------------------------------------------------------------------------------------

def partition_id() -> np.ndarray:
    return np.array(current().partition_id, np.uint32)


def replica_id() -> np.ndarray:
    return np.array(0, np.uint32)  # one replica


@kernel("stablehlo.partition_id")
def _partition_id(op: Operation) -> Kernel:
    return Kernel(partition_id)


@kernel("stablehlo.replica_id")
def _replica_id(op: Operation) -> Kernel:
    return Kernel(replica_id)


def all_reduce(groups: ProcessGroups, reduction: str | None, reducer: RegionReducer, *xs: np.ndarray,
               in_place: bool = False) -> Any:
    """`in_place`: the program never reads the operands again (the communicator may write the
    results into them; `loom.runtime.executable.dead_operand_collectives`)."""
    ctx = current()
    group = groups.group_of(ctx)
    if len(group) == 1:
        return _results([_copy(x) for x in xs])
    comm, me = ctx.communicator, ctx.partition_id
    if reduction is not None:
        if len(xs) == 1:  # (the common case, without building a list)
            return comm.all_reduce(me, xs[0], group, reduction, in_place)
        return _results([comm.all_reduce(me, x, group, reduction, in_place) for x in xs])
    return _results([fold(reducer, comm.all_gather(me, np.expand_dims(x, 0), group, 0)) for x in xs])


@kernel("stablehlo.all_reduce")
def _all_reduce(op: Operation) -> Kernel:
    return Kernel(all_reduce, ProcessGroups.of(op), reduction_of(op), RegionReducer(op), ALL)


def reduce_scatter(groups: ProcessGroups, dim: int, reduction: str | None, reducer: RegionReducer,
                   x: np.ndarray) -> np.ndarray:
    ctx = current()
    group = groups.group_of(ctx)
    n = len(group)
    if x.shape[dim] % n:
        raise ExecutionError(f"{groups.where}: scatter dimension {dim} of size {x.shape[dim]} does not split "
                             f"into {n} equal parts")
    if n == 1:
        return _copy(x)
    comm, me = ctx.communicator, ctx.partition_id
    if reduction is not None:
        return comm.reduce_scatter(me, x, group, dim, reduction)
    total = fold(reducer, comm.all_gather(me, np.expand_dims(x, 0), group, 0))
    return np.array(np.split(total, n, axis=dim)[group.index(me)])


@kernel("stablehlo.reduce_scatter")
def _reduce_scatter(op: Operation) -> Kernel:
    return Kernel(reduce_scatter, ProcessGroups.of(op), int_attr(op, "scatter_dimension"), reduction_of(op),
                  RegionReducer(op), ALL)


def all_gather(groups: ProcessGroups, dim: int, *xs: np.ndarray) -> Any:
    ctx = current()
    group = groups.group_of(ctx)
    if len(group) == 1:
        return _results([_copy(x) for x in xs])
    if len(xs) == 1:  # (the common case, without building a list)
        return ctx.communicator.all_gather(ctx.partition_id, xs[0], group, dim)
    return _results([ctx.communicator.all_gather(ctx.partition_id, x, group, dim) for x in xs])


@kernel("stablehlo.all_gather")
def _all_gather(op: Operation) -> Kernel:
    return Kernel(all_gather, ProcessGroups.of(op), int_attr(op, "all_gather_dim"), ALL)


def all_to_all(groups: ProcessGroups, split_dim: int, concat_dim: int, split_count: int, *xs: np.ndarray) -> Any:
    ctx = current()
    group = groups.group_of(ctx)
    if len(group) != split_count:
        raise ExecutionError(f"{groups.where}: split_count {split_count} differs from the group size {len(group)} "
                             f"(group {list(group)})")
    for x in xs:
        if x.shape[split_dim] % split_count:
            raise ExecutionError(f"{groups.where}: split dimension {split_dim} of size {x.shape[split_dim]} does "
                                 f"not split into {split_count} equal parts")
    if split_count == 1:
        return _results([_copy(x) for x in xs])
    return _results([ctx.communicator.all_to_all(ctx.partition_id, x, group, split_dim, concat_dim) for x in xs])


@kernel("stablehlo.all_to_all")
def _all_to_all(op: Operation) -> Kernel:
    return Kernel(all_to_all, ProcessGroups.of(op, replicas_and_partitions=False), int_attr(op, "split_dimension"),
                  int_attr(op, "concat_dimension"), int_attr(op, "split_count"), ALL)


def collective_permute(groups: ProcessGroups, pairs: tuple[tuple[int, int], ...], x: np.ndarray) -> np.ndarray:
    ctx = current()
    if groups.mode == "cross_replica":  # pairs of replica ids: with one replica, (0, 0) or nothing
        beyond = [i for pair in pairs for i in pair if i != 0]
        if beyond:
            raise ExecutionError(f"{groups.where}: source_target_pairs names replica {beyond[0]}, but there is "
                                 "one replica (cross_replica pairs: no channel_handle)")
        return _copy(x) if (0, 0) in pairs else _zeros_like(x)
    for pair in pairs:
        if any(i >= ctx.num_partitions for i in pair):
            raise ExecutionError(f"{groups.where}: source_target_pairs names partition {max(pair)}, but there are "
                                 f"{ctx.num_partitions} partitions")
    return ctx.communicator.collective_permute(ctx.partition_id, x, pairs)


@kernel("stablehlo.collective_permute")
def _collective_permute(op: Operation) -> Kernel:
    pairs = dense_ids(op, "source_target_pairs")
    if any(len(p) != 2 for p in pairs):
        raise ExecutionError(f"{describe(op)}: source_target_pairs must be pairs, got {list(pairs)}")
    groups = ProcessGroups.of(op, replicas_and_partitions=False)
    return Kernel(collective_permute, groups, tuple((int(s), int(t)) for s, t in pairs), ALL)


def collective_broadcast(groups: ProcessGroups, x: np.ndarray) -> np.ndarray:
    ctx = current()
    group = groups.group_or_none(ctx)
    if group is None:
        return _zeros_like(x)
    if len(group) == 1:
        return _copy(x)
    return ctx.communicator.collective_broadcast(ctx.partition_id, x, group)


@kernel("stablehlo.collective_broadcast")
def _collective_broadcast(op: Operation) -> Kernel:
    return Kernel(collective_broadcast, ProcessGroups.of(op, replicas_and_partitions=False), ALL)


def collective_reduce(groups: ProcessGroups, reduction: str | None, reducer: RegionReducer, dynamic_root: bool,
                      *xs: np.ndarray) -> Any:
    """Each data operand reduced over the group (as all_reduce), kept by the root only: the
    group's first process, or the one at the index the root operand gives; zeros elsewhere."""
    ctx = current()
    data = xs[:-1] if dynamic_root else xs
    group = groups.group_or_none(ctx)
    if group is None:
        return _results([np.zeros_like(x) for x in data])
    roots = [int(r) for r in np.asarray(xs[-1]).reshape(-1)] if dynamic_root else [0] * len(data)
    bad = [r for r in roots if not 0 <= r < len(group)]
    if bad or len(roots) != len(data):
        raise ExecutionError(f"{groups.where}: root indices {roots} must give one index into the group "
                             f"{list(group)} per data operand ({len(data)})")
    total = all_reduce(groups, reduction, reducer, *data)
    totals = [total] if len(data) == 1 else list(total)
    me = ctx.partition_id
    return _results([t if group[r] == me else np.zeros_like(t) for t, r in zip(totals, roots)])


@kernel("stablehlo.collective_reduce")
def _collective_reduce(op: Operation) -> Kernel:
    return Kernel(collective_reduce, ProcessGroups.of(op), reduction_of(op), RegionReducer(op),
                  op.get_attr("has_dynamic_root") is not None, ALL)


declare("stablehlo.collective_reduce", unsupported("reduces on the host: the numpy kernel on the tensors' values"),
        tables=("torch",))
declare("stablehlo.collective_reduce", unsupported("no front-end collective lowers to it; it appears only in "
                                                   "per-device programs other producers write"),
        tables=("jvp", "vjp", "batching", "sharding"))
declare(["stablehlo.partition_id", "stablehlo.replica_id"],
        unsupported("the ids are host integers: the numpy kernel's value is put on the device"), tables=("torch",))
torch_kernels_in("loom.ops.collectives_torch")  # the others' torch kernels
declare(["stablehlo.collective_broadcast", "stablehlo.partition_id", "stablehlo.replica_id"],
        unsupported("not differentiated or batched: no front-end collective lowers to them, and the ids are "
                    "integers"), tables=("jvp", "vjp", "batching"))
declare(["stablehlo.cross-replica-sum", "stablehlo.async_start", "stablehlo.async_done"],
        unsupported("legacy and asynchronous collective wrappers: parsed and printed only"))



def _collective_sharding(op: Operation):
    """In the body of a manual computation over some mesh axes, a collective (over those axes)
    acts on each device's piece: a dimension it does not gather, scatter or split keeps its
    split over the other axes. Elsewhere collectives appear only in per-device programs."""
    from loom.transforms.sharding_propagation import Factors, shape_of
    if len(op.operands) != 1 or len(op.results) != 1:
        return None
    moved = {int(op.properties[k].value) for k in ("all_gather_dim", "scatter_dimension", "split_dimension",
                                                   "concat_dimension") if k in op.properties}
    f = Factors()
    shared = [None if d in moved else f.new(n) for d, n in enumerate(shape_of(op.results[0]))]
    blocked: set[int] = set()

    def dims(v):
        out = []
        for d, n in enumerate(shape_of(v)):
            out.append(shared[d] if shared[d] is not None else f.new(n))
            if shared[d] is None:
                blocked.add(out[-1])
        return out
    return f.rule([dims(op.operands[0])], [dims(op.results[0])], need_replication=blocked)


for _name in ("stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.all_to_all", "stablehlo.collective_permute",
              "stablehlo.reduce_scatter", "stablehlo.collective_broadcast"):
    registry.register(_SHARDING_RULES, _name, _collective_sharding)
declare(["stablehlo.partition_id", "stablehlo.replica_id", "stablehlo.cross-replica-sum", "stablehlo.async_start",
         "stablehlo.async_done"], unsupported("ids and legacy wrappers: run as they are"), tables=("sharding",))

__all__ = ["REDUCTION_OF_UFUNC", "ProcessGroups", "RegionReducer", "channel_id", "dense_ids"]


# Derivatives and batching ---------------------------------------------------------------------
#
# The collectives of a shard_map body (psum -> all_reduce, all_gather, psum_scatter ->
# reduce_scatter, ppermute -> collective_permute, all_to_all) and the sdy ops around them.
# `sdy.manual_computation` runs, in a program on one device, by splitting its operands over the
# mesh by `in_shardings`, running its body once per device (`loom.runtime.local.run_spmd`, one
# thread per partition, the collectives meeting in between) and assembling its results by
# `out_shardings`; `sdy.sharding_constraint` and `sdy.reshard` are identities on values. Their
# derivatives and batching build the same op around the transformed body.



# the channel JAX writes on every collective of a shard_map body (cross-partition, handle 1)
_CHANNEL = channel_handle_attr(1)


def _identity(op: Operation) -> Kernel:
    return Kernel(lambda x: x)


for _name in ("sdy.sharding_constraint", "sdy.reshard"):
    KERNELS[_name] = _identity


def _blocks(sharding: TensorShardingAttr, mesh: MeshAttr, shape: Sequence[int], p: int) -> tuple[slice, ...]:
    """The block of a value of global `shape` that partition `p` holds under `sharding`."""
    names = [n for n, _ in mesh.axes]
    sizes = [s for _, s in mesh.axes]
    coords = np.unravel_index(p, sizes) if sizes else ()
    out = []
    for d, n in enumerate(shape):
        axes = sharding.dims[d].axes if d < len(sharding.dims) else ()
        index, count = 0, 1
        for a in axes:
            if a.size is not None:
                raise ExecutionError(f"sub-axis {a} in {sharding}: not run by the one-process mesh")
            i = names.index(a.name)
            index = index * sizes[i] + int(coords[i])
            count *= sizes[i]
        local = n // count
        out.append(slice(index * local, (index + 1) * local))
    return tuple(out)


def per_device_module(op: Operation, mesh: MeshAttr) -> Operation:
    """The body of a manual computation as a per-device program: a module with
    `mhlo.num_partitions` and `@main` taking the local operands, returning the local results
    (local over the manual axes; over the others the body is global, run alike on each device)."""
    from loom.dialects import builtin
    block = op.regions[0].blocks[0]
    ret = block.last_op
    ftype = FunctionType(tuple(a.type for a in block.args), tuple(v.type for v in ret.operands))
    module = builtin.ModuleOp.build()
    i32 = IntegerType(32)
    size = int(np.prod([s for _, s in mesh.axes]))
    module.attributes["mhlo.num_partitions"] = IntegerAttr(i32, size)
    module.attributes["mhlo.num_replicas"] = IntegerAttr(i32, 1)
    module.body.append(Operation.create("sdy.mesh", properties={"mesh": mesh, "sym_name": StringAttr("mesh")}))
    fn = func_dialect.FuncOp.build("main", ftype)
    module.body.append(fn)
    fb = fn.regions[0].blocks[0]
    mapping = dict(zip(block.args, fb.args))
    for o in block.ops:
        if o is ret:
            fb.append(func_dialect.ReturnOp.build([mapping.get(v, v) for v in o.operands]))
            break
        fb.append(o.clone(mapping))
    fn.properties["function_type"] = TypeAttr(ftype)
    return module


def _manual_computation(op: Operation) -> Kernel:
    from loom.runtime.local import run_spmd  # the one-process mesh
    mesh = op.mesh
    if mesh is None:
        raise ExecutionError(f"{describe(op)}: its shardings name no mesh of the module")
    module = per_device_module(op, mesh)
    n = int(np.prod([s for _, s in mesh.axes]))
    ins, outs = op.in_shardings.shardings, op.out_shardings.shardings
    out_types = [(tuple(t.shape), t.element_type) for t in op.result_types]

    def run(*xs: np.ndarray) -> Any:
        args = [[np.ascontiguousarray(np.asarray(x)[_blocks(s, mesh, np.shape(x), p)]) for x, s in zip(xs, ins)]
                for p in range(n)]
        results = run_spmd(module, args)
        values = []
        for k, (shape, _) in enumerate(out_types):
            first = np.asarray(results[0][k])
            full = np.empty(shape, first.dtype)
            for p in reversed(range(n)):  # a block held by several devices: the first one's, as JAX
                full[_blocks(outs[k], mesh, shape, p)] = results[p][k]
            values.append(full)
        return values[0] if len(values) == 1 else tuple(values)
    return Kernel(run)


KERNELS["sdy.manual_computation"] = _manual_computation


# --- building collectives in the IR ---

def build_collective(b: Any, name: str, x: Any, shape: Sequence[int], properties: dict[str, Any],
                     reducer: str | None = None) -> Any:
    """`name` (a collective) on the value `x` with result `shape`; `reducer` (an op name) makes
    its reduction region."""
    from loom.dialects.stablehlo.base import build_region
    from loom.ir.types import RankedTensorType
    et = x.type.element_type
    regions = []
    if reducer is not None:
        scalar = RankedTensorType((), et, None)
        regions.append(build_region([scalar, scalar], lambda rb, args: [rb.create(reducer, args, [scalar]).results[0]],
                                    b.location))
    return b.create(name, [x], [RankedTensorType(tuple(shape), et, None)], dict(properties),
                    regions=regions).results[0]


def _with(b: Any, op: Operation, x: Any, shape: Sequence[int] | None = None, **changes: int) -> Any:
    """`op`'s collective applied to `x` (result `shape`, default `x`'s), its integer properties
    changed as given, its reduction region kept."""
    from loom.ir.types import RankedTensorType, i64
    props = dict(op.properties)
    props.update((k, IntegerAttr(i64, v)) for k, v in changes.items())
    shape = tuple(x.type.shape) if shape is None else tuple(shape)
    return b.create(op.name, [x], [RankedTensorType(shape, x.type.element_type, None)], props, dict(op.attributes),
                    regions=[r.clone() for r in op.regions]).results[0]


# --- the mesh a rule builds for ---

class _Scope(threading.local):
    def __init__(self) -> None:
        self.meshes: list[MeshAttr] = []


_SCOPE = _Scope()


@contextlib.contextmanager
def mesh_scope(module: Operation) -> Iterator[None]:
    """While transforming `module`: its `sdy.mesh` is the mesh of the manual computations the
    transformations copy into functions not yet in a module (where no symbol can be looked up)."""
    mesh = next((o.properties["mesh"] for o in module.regions[0].blocks[0].ops if o.name == "sdy.mesh"), None)
    if mesh is not None:
        _SCOPE.meshes.append(mesh)
    try:
        yield
    finally:
        if mesh is not None:
            _SCOPE.meshes.pop()


def _mesh(op: Operation) -> MeshAttr:
    mesh = op.mesh if op.parent is not None else None
    if mesh is None and _SCOPE.meshes:
        mesh = _SCOPE.meshes[-1]
    if mesh is None:
        raise ExecutionError(f"{describe(op)}: no sdy.mesh for its shardings")
    return mesh


def _axis_index(b: Any, mesh: MeshAttr, axis: str) -> Any:
    """This device's index along `axis` (ui32 scalar): (partition_id / stride) % size."""
    from loom.dialects import stablehlo
    from loom.ir.types import RankedTensorType
    names = [n for n, _ in mesh.axes]
    sizes = [s for _, s in mesh.axes]
    i = names.index(axis)
    u32 = RankedTensorType((), IntegerType(32, "u"), None)
    pid = b.create("stablehlo.partition_id", [], [u32]).results[0]
    stride = stablehlo.constant(b, np.asarray(int(np.prod(sizes[i + 1:])), np.uint32), u32)
    size = stablehlo.constant(b, np.asarray(sizes[i], np.uint32), u32)
    return stablehlo.remainder(b, stablehlo.divide(b, pid, stride), size)


def _unused_axes(sharding: TensorShardingAttr, mesh: MeshAttr) -> list[str]:
    """The mesh axes a sharding does not split along (the value is replicated over them)."""
    used = {a.name for d in sharding.dims for a in d.axes}
    return [n for n, _ in mesh.axes if n not in used]


def axis_groups(mesh: MeshAttr, axes: Sequence[str]) -> np.ndarray:
    """The partition ids of each group of devices along `axes`, as JAX writes `replica_groups`:
    one row per combination of the other axes, ids ordered along `axes` major to minor
    (partition p is the p-th device of the mesh in row-major order)."""
    names = [n for n, _ in mesh.axes]
    sizes = [s for _, s in mesh.axes]
    ids = np.arange(int(np.prod(sizes))).reshape(sizes)
    order = [names.index(a) for a in names if a not in axes] + [names.index(a) for a in axes]
    return ids.transpose(order).reshape(-1, int(np.prod([sizes[names.index(a)] for a in axes])))


def _groups_over(mesh: MeshAttr, axes: Sequence[str]) -> Any:
    from loom.dialects.stablehlo.collectives import replica_groups_attr
    return replica_groups_attr(axis_groups(mesh, axes).tolist())


def _psum_over(b: Any, mesh: MeshAttr, axes: Sequence[str], x: Any) -> Any:
    if not axes:
        return x
    props = {"channel_handle": _CHANNEL, "replica_groups": _groups_over(mesh, axes),
             "use_global_device_ids": UnitAttr()}
    return build_collective(b, "stablehlo.all_reduce", x, x.type.shape, props, "stablehlo.add")


def _first_along(b: Any, mesh: MeshAttr, axes: Sequence[str], x: Any) -> Any:
    """`x` on the devices whose index along every axis of `axes` is 0, zeros elsewhere: the
    cotangent of a result replicated over `axes` (the global result is the first device's)."""
    from loom.dialects import stablehlo
    from loom.ir.types import RankedTensorType
    if not axes:
        return x
    u32 = RankedTensorType((), IntegerType(32, "u"), None)
    zero = stablehlo.constant(b, np.asarray(0, np.uint32), u32)
    first = None
    for a in axes:
        here = stablehlo.compare(b, _axis_index(b, mesh, a), zero, "EQ")
        first = here if first is None else stablehlo.and_(b, first, here)
    shape = tuple(x.type.shape)
    pred = stablehlo.broadcast_in_dim(b, first, shape, []) if shape else first
    return stablehlo.select(b, pred, x, full_like(b, 0, x))


# --- derivatives of the collectives: linear ops apply themselves to tangents ---

def _linear_jvp(b, op, xs, ts):
    return [_with(b, op, ts[0], op.result_types[0].shape)]


def _reducer(op: Operation) -> str:
    return next(iter(op.regions[0].blocks[0].ops)).name


def _selected(b: Any, op: Operation) -> tuple[Any, Any]:
    """For a pmax / pmin (`all_reduce` with maximum / minimum): the mask of the positions where
    this device holds the result (1.0 / 0.0) and how many devices of the group hold it."""
    from loom.dialects import stablehlo
    x, y = op.operands[0], op.results[0]
    mask = stablehlo.convert(b, stablehlo.compare(b, x, y, "EQ"), x.type.element_type)
    props = dict(op.properties)
    count = build_collective(b, "stablehlo.all_reduce", mask, x.type.shape, props, "stablehlo.add")
    return mask, count


@rule(JVP_RULES, "stablehlo.all_reduce")
def _all_reduce_jvp(b, op, xs, ts):
    from loom.dialects import stablehlo
    kind = _reducer(op)
    if kind == "stablehlo.add":
        return _linear_jvp(b, op, xs, ts)
    if kind not in ("stablehlo.maximum", "stablehlo.minimum"):
        raise MissingRuleError(f"the jvp transformation has no rule for an all_reduce reducing with '{kind}' "
                               f"(at {op.location})")
    # the tangent of the selected positions, ties sharing it equally (as reduce_max's derivative)
    mask, count = _selected(b, op)
    picked = build_collective(b, "stablehlo.all_reduce", stablehlo.multiply(b, ts[0], mask), op.operands[0].type.shape,
                              dict(op.properties), "stablehlo.add")
    return [stablehlo.divide(b, picked, count)]


@rule(VJP_RULES, "stablehlo.all_reduce")
def _all_reduce_vjp(b, op, cts):
    # Each device's result is the reduction of every device's operand, and each device's result
    # has a cotangent of its own: the operand's cotangent sums them (a psum), for a maximum or
    # minimum over the positions that were selected.
    from loom.dialects import stablehlo
    kind = _reducer(op)
    total = build_collective(b, "stablehlo.all_reduce", cts[0], cts[0].type.shape, dict(op.properties),
                             "stablehlo.add")
    if kind == "stablehlo.add":
        return [total]
    if kind not in ("stablehlo.maximum", "stablehlo.minimum"):
        raise MissingRuleError(f"the vjp transformation has no rule for an all_reduce reducing with '{kind}' "
                               f"(at {op.location})")
    mask, count = _selected(b, op)
    return [stablehlo.divide(b, stablehlo.multiply(b, total, mask), count)]


@rule(VJP_RULES, "stablehlo.all_gather")
def _all_gather_vjp(b, op, cts):
    # the transpose of gathering is summing the cotangents and handing each device its block
    props = {k: v for k, v in op.properties.items() if k != "all_gather_dim"}
    props["scatter_dimension"] = op.properties["all_gather_dim"]
    return [build_collective(b, "stablehlo.reduce_scatter", cts[0], op.operands[0].type.shape, props,
                             "stablehlo.add")]


@rule(VJP_RULES, "stablehlo.reduce_scatter")
def _reduce_scatter_vjp(b, op, cts):
    props = {k: v for k, v in op.properties.items() if k != "scatter_dimension"}
    props["all_gather_dim"] = op.properties["scatter_dimension"]
    return [build_collective(b, "stablehlo.all_gather", cts[0], op.operands[0].type.shape, props)]


@rule(VJP_RULES, "stablehlo.collective_permute")
def _collective_permute_vjp(b, op, cts):
    from loom.ir.attributes import DenseElementsAttr
    pairs = np.asarray(op.properties["source_target_pairs"].to_numpy())
    props = dict(op.properties)
    props["source_target_pairs"] = DenseElementsAttr.get(np.ascontiguousarray(pairs[:, ::-1]),
                                                         op.properties["source_target_pairs"].type)
    return [b.create(op.name, [cts[0]], [cts[0].type], props, dict(op.attributes)).results[0]]


@rule(VJP_RULES, "stablehlo.all_to_all")
def _all_to_all_vjp(b, op, cts):
    split, concat = int_attr(op, "split_dimension"), int_attr(op, "concat_dimension")
    return [_with(b, op, cts[0], op.operands[0].type.shape, split_dimension=concat, concat_dimension=split)]


for _name in ("stablehlo.all_gather", "stablehlo.reduce_scatter", "stablehlo.collective_permute",
              "stablehlo.all_to_all"):
    register(JVP_RULES, _name, _linear_jvp)


# --- batching: the batch dimension moves to the front, the collective acts on the rest ---

def _batched_shape(op: Operation, size: int) -> tuple[int, ...]:
    return (size, *op.result_types[0].shape)


@rule(BATCH_RULES, "stablehlo.all_reduce")
@rule(BATCH_RULES, "stablehlo.collective_permute")
def _per_element_batch(b, op, args, dims):
    x = moveaxis(b, args[0], dims[0], 0)
    return [_with(b, op, x, (x.type.shape[0], *op.result_types[0].shape))], [0]


@rule(BATCH_RULES, "stablehlo.all_gather")
def _all_gather_batch(b, op, args, dims):
    x = moveaxis(b, args[0], dims[0], 0)
    dim = int_attr(op, "all_gather_dim") + 1
    return [_with(b, op, x, _batched_shape(op, x.type.shape[0]), all_gather_dim=dim)], [0]


@rule(BATCH_RULES, "stablehlo.reduce_scatter")
def _reduce_scatter_batch(b, op, args, dims):
    x = moveaxis(b, args[0], dims[0], 0)
    return [_with(b, op, x, _batched_shape(op, x.type.shape[0]),
                  scatter_dimension=int_attr(op, "scatter_dimension") + 1)], [0]


@rule(BATCH_RULES, "stablehlo.all_to_all")
def _all_to_all_batch(b, op, args, dims):
    x = moveaxis(b, args[0], dims[0], 0)
    return [_with(b, op, x, _batched_shape(op, x.type.shape[0]), split_dimension=int_attr(op, "split_dimension") + 1,
                  concat_dimension=int_attr(op, "concat_dimension") + 1)], [0]


# --- sdy.sharding_constraint: an identity whose tangent and cotangent keep the sharding ---

def _constrained(b: Any, op: Operation, x: Any, sharding: Any = None) -> Any:
    return b.create(op.name, [x], [x.type], {"sharding": sharding or op.properties["sharding"]},
                    dict(op.attributes)).results[0]


def _front_dim(sharding: TensorShardingAttr) -> TensorShardingAttr:
    """`sharding` with an unsplit leading dimension (the batch dimension)."""
    return TensorShardingAttr(sharding.mesh, (DimSharding(), *sharding.dims), sharding.replicated, sharding.unreduced)


for _name in ("sdy.sharding_constraint", "sdy.reshard"):
    register(JVP_RULES, _name, lambda b, op, xs, ts: [_constrained(b, op, ts[0])])
    register(VJP_RULES, _name, lambda b, op, cts: [_constrained(b, op, cts[0])])
    register(BATCH_RULES, _name, lambda b, op, args, dims: (
        [_constrained(b, op, moveaxis(b, args[0], dims[0], 0), _front_dim(op.properties["sharding"]))], [0]))


# --- sdy.manual_computation: the same op around the transformed body ---

def _body_function(op: Operation) -> Operation:
    from loom.transforms.autodiff import region_function
    return region_function(op.regions[0], [], name="body")


def _manual(b: Any, op: Operation, operands: Sequence[Any], in_shardings: Sequence[Any],
            out_shardings: Sequence[Any], result_types: Sequence[Any], body: Callable[[Any, list], list]) -> Operation:
    """A manual computation over `op`'s manual axes whose body `body(builder, block_args)` builds."""
    from loom.dialects.sdy import TensorShardingPerValueAttr
    from loom.ir.builder import Builder, InsertionPoint
    from loom.ir.core import Block
    region = Region()
    block = region.add_block(Block([_local(t, s, op) for t, s in zip([v.type for v in operands], in_shardings)]))
    bb = Builder(InsertionPoint.at_end(block), b.location)
    results = body(bb, list(block.args))
    bb.create("sdy.return", list(results), [])
    props = {"in_shardings": TensorShardingPerValueAttr(tuple(in_shardings)),
             "manual_axes": op.properties["manual_axes"],
             "out_shardings": TensorShardingPerValueAttr(tuple(out_shardings))}
    return b.create(op.name, list(operands), list(result_types), props, regions=[region])


def _local(t: Any, sharding: TensorShardingAttr, op: Operation) -> Any:
    from loom.dialects.sdy import local_type
    return local_type(t, sharding, op.properties["manual_axes"].axes, _mesh(op))


def _inline(bb: Any, fn: Operation, values: Sequence[Any], skip: int = 0) -> list:
    from loom.transforms.autodiff import _inline_body
    block = fn.regions[0].blocks[0]
    return _inline_body(bb, block, dict(zip(block.args, values)), skip)


@rule(JVP_RULES, "sdy.manual_computation")
def _manual_computation_jvp(b, op, xs, ts):
    # one manual computation carrying primals and tangents: its body is the body's JVP
    from loom.transforms.forward_ad import jvp_function, replace_op
    fn = jvp_function(_body_function(op))
    ins, outs = op.in_shardings.shardings, op.out_shardings.shardings
    tangents = [t if t is not None else (full_like(b, 0, x) if is_float(x.type) else x) for x, t in zip(xs, ts)]
    new = _manual(b, op, [*xs, *tangents], [*ins, *ins], [*outs, *outs], [*op.result_types, *op.result_types],
                  lambda bb, args: _inline(bb, fn, args))
    k = len(op.results)
    replace_op(op, list(new.results[:k]))
    return [t if is_float(t.type) else None for t in new.results[k:]]


@rule(VJP_RULES, "sdy.manual_computation")
def _manual_computation_vjp(b, op, cts):
    # A manual computation whose body recomputes the forward body and runs its VJP. The global
    # value of a result replicated over some axes is the first device's along them, so only that
    # device's copy receives the cotangent; an operand replicated over some axes was handed to
    # every device along them, so its cotangent sums theirs.
    from loom.transforms.autodiff import vjp_function
    mesh = _mesh(op)
    xs = list(op.operands)
    wrt = [i for i, x in enumerate(xs) if is_float(x.type)]
    if not wrt:
        return [None] * len(xs)
    fn = vjp_function(_body_function(op), wrt)
    ins, outs = op.in_shardings.shardings, op.out_shardings.shardings
    seeds = [c if c is not None else full_like(b, 0, r) for c, r in zip(cts, op.results)]
    n, k = len(xs), len(op.results)

    def body(bb: Any, args: list) -> list:
        local_cts = [_first_along(bb, mesh, _unused_axes(s, mesh), c) for s, c in zip(outs, args[n:])]
        grads = _inline(bb, fn, [*args[:n], *local_cts], skip=k)
        return [_psum_over(bb, mesh, _unused_axes(ins[i], mesh), g) for i, g in zip(wrt, grads)]
    new = _manual(b, op, [*xs, *seeds], [*ins, *outs], [ins[i] for i in wrt], [xs[i].type for i in wrt], body)
    got = dict(zip(wrt, new.results))
    return [got.get(i) for i in range(n)]


@rule(BATCH_RULES, "sdy.manual_computation")
def _manual_computation_batch(b, op, args, dims):
    # the batch dimension leads every batched operand and every result, split over no axis
    from loom.ir.types import RankedTensorType
    from loom.transforms.batching import vmap_function
    size = next(a.type.shape[d] for a, d in zip(args, dims) if d is not None)
    xs = [moveaxis(b, a, d, 0) if d is not None else a for a, d in zip(args, dims)]
    in_dims = [0 if d is not None else None for d in dims]
    fn = vmap_function(_body_function(op), in_dims, size, 0)
    ins = [_front_dim(s) if d is not None else s for s, d in zip(op.in_shardings.shardings, in_dims)]
    outs = [_front_dim(s) for s in op.out_shardings.shardings]
    types = [RankedTensorType((size, *t.shape), t.element_type, None) for t in op.result_types]
    new = _manual(b, op, xs, ins, outs, types, lambda bb, a: _inline(bb, fn, a))
    return list(new.results), [0] * len(types)
