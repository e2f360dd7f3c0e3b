"""Many processes running one partitioned program, with JAX's names (`jax.distributed`):

    import loom.distributed
    loom.distributed.initialize()          # under torchrun; or initialize("host:port", n, rank)
    loom.distributed.process_index(), loom.distributed.process_count()

One process per partition: the rank is the partition id. The collectives run on torch.distributed
(gloo on the CPU, nccl on CUDA). A partitioned module (`loom.sharding.partition`) runs on each
process's own pieces (`run_partitioned`, with `local_shard` and `assemble` to split and gather
global arrays), or on global values (`DistributedExecutable`).
"""

from __future__ import annotations

from loom.runtime.distributed import (
    CollectiveError,
    DistributedError,
    DistributedExecutable,
    assemble,
    initialize,
    is_initialized,
    local_shard,
    process_count,
    process_index,
    run_partitioned,
    shutdown,
)

__all__ = ["CollectiveError", "DistributedError", "DistributedExecutable", "assemble", "initialize", "is_initialized",
           "local_shard", "process_count", "process_index", "run_partitioned", "shutdown"]
