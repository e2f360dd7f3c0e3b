"""Collectives and the other distributed and host-communication ops.

The collectives run in partitioned programs: each partition runs the per-device program with a
`Communicator` and its partition id installed (`loom.runtime.communicator.spmd_context`), and the
kernels below read them. They follow the StableHLO spec's process groups with one replica
(`mhlo.num_replicas = 1`):

- `cross_replica` (no `channel_handle`, or handle <= 0, without `use_global_device_ids`): the
  groups hold replica ids, so every group is one partition (the op is local);
- `cross_partition` (a positive `channel_handle` without `use_global_device_ids`): the groups
  hold partition ids; `replica_groups` empty means all partitions in one group;
- `flattened_ids` (a positive `channel_handle` with `use_global_device_ids`): the groups hold
  `replica_id * num_partitions + partition_id`, i.e. partition ids.

`all_to_all`, `collective_permute` and `collective_broadcast` choose cross_replica or
cross_partition by the channel handle alone. The reductions of `all_reduce` and `reduce_scatter`
are the communicator's (sum, prod, max, min, and, or, xor) when the reducer region is one of those
ops; any other reducer is applied pairwise, in group order, through the region. A
`collective_permute` target that receives nothing, and a `collective_broadcast` partition in no
group, get zeros.

The kernels are `KERNELS` entries, so the compiled executor and the interpreter both run them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.backend.common import ExecutionError
from loom.backend.compiled import ELEMENTWISE, reducer_ufunc
from loom.backend.interpreter import Interpreter
from loom.backend.kernels_numpy import ALL, Kernel, kernel
from loom.ir.core import Operation, Region
from loom.ops.registry import declare, unsupported
from loom.runtime.communicator import SPMDContext, current

# Reducer region ops -> the communicator's reduction names.
REDUCTION_OF_UFUNC = {np.add: "sum", np.multiply: "prod", np.maximum: "max", np.minimum: "min",
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

    @staticmethod
    def of(op: Operation, global_ids: bool = True) -> ProcessGroups:
        unit = op.get_attr("use_global_device_ids") is not None if global_ids else False
        if channel_id(op) <= 0:
            if unit:
                raise ExecutionError(f"{describe(op)}: use_global_device_ids needs a channel_handle")
            mode = "cross_replica"
        else:
            mode = "flattened_ids" if unit else "cross_partition"
        return ProcessGroups(describe(op), mode, dense_ids(op, "replica_groups"))

    def group_of(self, ctx: SPMDContext, required: bool = True) -> tuple[int, ...] | None:
        """The group (partition ids, in order) the calling partition belongs to; None when it is
        in none and `required` is False."""
        me = ctx.partition_id
        if self.mode == "cross_replica":
            bad = [i for g in self.groups for i in g if i != 0]
            if bad:
                raise ExecutionError(f"{self.where}: replica id {bad[0]} in replica_groups, but there is one "
                                     "replica (cross-replica groups without a channel_handle)")
            return (me,)
        groups = self.groups or (tuple(range(ctx.num_partitions)),)
        for g in groups:
            for i in g:
                if i >= ctx.num_partitions:
                    raise ExecutionError(f"{self.where}: partition id {i} in replica_groups, but there are "
                                         f"{ctx.num_partitions} partitions")
            if me in g:
                return g
        if required:
            raise ExecutionError(f"{self.where}: partition {me} is in none of the replica_groups {list(groups)}")
        return None


# Reducers -------------------------------------------------------------------------------------

class RegionReducer:
    """A reducer region applied to whole arrays (`fn(lhs..., rhs...) -> results`): at once when
    the region is elementwise, element by element otherwise. A fresh interpreter per call, so
    partitions running in threads share nothing."""

    def __init__(self, op: Operation) -> None:
        self.op = op
        region: Region = op.regions[0]
        self.block = region.blocks[0]
        self.elementwise = len(region.blocks) == 1 and all(o.name in ELEMENTWISE for o in self.block.ops)

    def __call__(self, *args: np.ndarray) -> list[np.ndarray]:
        interp = Interpreter(self.op)
        if self.elementwise:
            return [np.asarray(r) for r in interp.run_block(self.block, args, {})]
        shape = np.shape(args[0])
        outs = [np.empty(shape, np.asarray(a).dtype) for a in args[:len(args) // 2]]
        for idx in np.ndindex(*shape):
            res = interp.run_block(self.block, [np.asarray(a[idx]) for a in args], {})
            for o, r in zip(outs, res):
                o[idx] = r
        return outs


def fold(reducer: RegionReducer, stacks: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Reduce the stacked operands (member on axis 0) pairwise in group order."""
    acc = [s[0] for s in stacks]
    for k in range(1, stacks[0].shape[0]):
        acc = reducer(*acc, *[s[k] for s in stacks])
    return [np.array(a) for a in acc]


def reduction_of(op: Operation) -> str | None:
    """The communicator's name for the op's reducer, or None for another reducer."""
    ufunc = reducer_ufunc(op.regions[0]) if len(op.operands) == 1 else None
    return REDUCTION_OF_UFUNC.get(ufunc) if ufunc is not None else None


def _results(values: list[np.ndarray]) -> Any:
    return values[0] if len(values) == 1 else tuple(values)


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


def all_reduce(groups: ProcessGroups, reduction: str | None, reducer: RegionReducer, *xs: np.ndarray) -> Any:
    ctx = current()
    group = groups.group_of(ctx)
    if len(group) == 1:
        return _results([np.array(x) for x in xs])
    comm, me = ctx.communicator, ctx.partition_id
    if reduction is not None:
        return comm.all_reduce(me, xs[0], group, reduction)
    stacks = [comm.all_gather(me, np.expand_dims(x, 0), group, 0) for x in xs]
    return _results(fold(reducer, stacks))


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
        return np.array(x)
    comm, me = ctx.communicator, ctx.partition_id
    if reduction is not None:
        return comm.reduce_scatter(me, x, group, dim, reduction)
    stack = comm.all_gather(me, np.expand_dims(x, 0), group, 0)
    total = fold(reducer, [stack])[0]
    return np.array(np.split(total, n, axis=dim)[group.index(me)])


@kernel("stablehlo.reduce_scatter")
def _reduce_scatter(op: Operation) -> Kernel:
    return Kernel(reduce_scatter, ProcessGroups.of(op), int_attr(op, "scatter_dimension"), reduction_of(op),
                  RegionReducer(op), ALL)


def all_gather(groups: ProcessGroups, dim: int, *xs: np.ndarray) -> Any:
    ctx = current()
    group = groups.group_of(ctx)
    if len(group) == 1:
        return _results([np.array(x) for x in xs])
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
        return _results([np.array(x) for x in xs])
    return _results([ctx.communicator.all_to_all(ctx.partition_id, x, group, split_dim, concat_dim) for x in xs])


@kernel("stablehlo.all_to_all")
def _all_to_all(op: Operation) -> Kernel:
    return Kernel(all_to_all, ProcessGroups.of(op, global_ids=False), int_attr(op, "split_dimension"),
                  int_attr(op, "concat_dimension"), int_attr(op, "split_count"), ALL)


def collective_permute(groups: ProcessGroups, pairs: tuple[tuple[int, int], ...], x: np.ndarray) -> np.ndarray:
    ctx = current()
    if groups.mode == "cross_replica":  # pairs of replica ids: with one replica, (0, 0) or nothing
        return np.array(x) if (0, 0) in pairs else np.zeros_like(x)
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
    groups = ProcessGroups.of(op, global_ids=False)
    return Kernel(collective_permute, groups, tuple((int(s), int(t)) for s, t in pairs), ALL)


def collective_broadcast(groups: ProcessGroups, x: np.ndarray) -> np.ndarray:
    ctx = current()
    group = groups.group_of(ctx, required=False)
    if group is None:
        return np.zeros_like(x)
    if len(group) == 1:
        return np.array(x)
    return ctx.communicator.collective_broadcast(ctx.partition_id, x, group)


@kernel("stablehlo.collective_broadcast")
def _collective_broadcast(op: Operation) -> Kernel:
    return Kernel(collective_broadcast, ProcessGroups.of(op, global_ids=False), ALL)


_COLLECTIVES = ["stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.all_to_all",
                "stablehlo.collective_broadcast", "stablehlo.collective_permute", "stablehlo.reduce_scatter",
                "stablehlo.partition_id", "stablehlo.replica_id"]
declare(_COLLECTIVES, unsupported("collectives run on numpy arrays between threads or processes; no torch kernels "
                                  "yet"), tables=("torch",))
declare(_COLLECTIVES, unsupported("collectives are not differentiated or batched yet"), tables=("jvp", "vjp",
                                                                                                 "batching"))
declare(["stablehlo.cross-replica-sum", "stablehlo.async_start", "stablehlo.async_done"],
        unsupported("legacy and asynchronous collective wrappers: parsed and printed only"))
declare(["stablehlo.send", "stablehlo.recv", "stablehlo.infeed", "stablehlo.outfeed", "stablehlo.after_all",
         "stablehlo.create_token"], unsupported("host communication and tokens: parsed and printed only"))

__all__ = ["REDUCTION_OF_UFUNC", "ProcessGroups", "RegionReducer", "channel_id", "dense_ids"]
