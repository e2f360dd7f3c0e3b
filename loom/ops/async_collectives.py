"""The kernels of the comm dialect's asynchronous collectives (loom.dialects.comm).

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
from loom.ops.collectives import ProcessGroups, _collective_permute, collective_permute, describe
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
