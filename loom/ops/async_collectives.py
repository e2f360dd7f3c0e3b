"""The kernels of the comm dialect's asynchronous collectives (loom.dialects.comm).

`comm.all_gather_start` gathers as `stablehlo.all_gather` does, through the communicator's
`all_gather_start` (a `Transfer`); `comm.all_gather_done` waits for it.

`comm.collective_permute_start` checks its pairs as `stablehlo.collective_permute` does and hands
the operand to the communicator's `collective_permute_start`, which returns at once with a
`Transfer`; `comm.collective_permute_done` waits for it. A communicator without asynchronous
transfers runs the permute at the start (`Completed`). The kernels are `KERNELS` entries, so the
compiled executor and the interpreter both run them.
"""

from __future__ import annotations

import numpy as np

from loom.backend.common import ExecutionError
from loom.backend.kernels import ALL, Kernel, kernel
from loom.ir.core import Operation
from loom.ops.collectives import ProcessGroups, _collective_permute, all_gather, collective_permute, describe, int_attr
from loom.runtime.communicator import Completed, Transfer, current


def collective_permute_start(groups: ProcessGroups, pairs: tuple[tuple[int, int], ...], x: np.ndarray) -> Transfer:
    ctx = current()
    start = getattr(ctx.communicator, "collective_permute_start", None)
    if groups.mode == "cross_replica" or start is None:
        return Completed(collective_permute(groups, pairs, x))
    for pair in pairs:
        if any(i >= ctx.num_partitions for i in pair):
            raise ExecutionError(f"{groups.where}: source_target_pairs names partition {max(pair)}, but there are "
                                 f"{ctx.num_partitions} partitions")
    return start(ctx.partition_id, x, pairs)


def collective_permute_done(where: str, transfer: Transfer) -> np.ndarray:
    if not hasattr(transfer, "wait"):
        raise ExecutionError(f"{where}: its operand is not a transfer in flight, got {type(transfer).__name__}")
    return transfer.wait()


@kernel("comm.collective_permute_start")
def _collective_permute_start(op: Operation) -> Kernel:
    return Kernel(collective_permute_start, *_collective_permute(op).template)  # the permute's arguments


@kernel("comm.collective_permute_done")
def _collective_permute_done(op: Operation) -> Kernel:
    return Kernel(collective_permute_done, describe(op), ALL)


def all_gather_start(groups: ProcessGroups, dim: int, x: np.ndarray) -> Transfer:
    ctx = current()
    group = groups.group_of(ctx)
    start = getattr(ctx.communicator, "all_gather_start", None)
    if len(group) == 1 or start is None:
        return Completed(all_gather(groups, dim, x))
    return start(ctx.partition_id, x, group, dim)


@kernel("comm.all_gather_start")
def _all_gather_start(op: Operation) -> Kernel:
    return Kernel(all_gather_start, ProcessGroups.of(op), int_attr(op, "all_gather_dim"), ALL)


@kernel("comm.all_gather_done")
def _all_gather_done(op: Operation) -> Kernel:
    return Kernel(collective_permute_done, describe(op), ALL)  # the same wait
