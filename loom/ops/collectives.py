"""Collectives and the other distributed and host-communication ops. None has a rule yet: they
run once programs are partitioned across devices.
"""

from __future__ import annotations

from loom.ops.registry import declare, unsupported

declare(["stablehlo.all_gather", "stablehlo.all_reduce", "stablehlo.all_to_all", "stablehlo.collective_broadcast",
         "stablehlo.collective_permute", "stablehlo.reduce_scatter", "stablehlo.cross-replica-sum",
         "stablehlo.partition_id", "stablehlo.replica_id", "stablehlo.async_start", "stablehlo.async_done"],
        unsupported("collectives: not run on one device yet"))
declare(["stablehlo.send", "stablehlo.recv", "stablehlo.infeed", "stablehlo.outfeed", "stablehlo.after_all",
         "stablehlo.create_token"], unsupported("host communication and tokens: parsed and printed only"))
