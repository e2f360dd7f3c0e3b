"""Kernels of the mpmd dialect (send, recv, iteration) for both executors.

They run in the per-device programs of `loom.transforms.mpmd_partition`, under a runtime of
`loom.runtime.mpmd` (threads in one process, or processes on torch.distributed) that installs a
communicator with `spmd_context` (`loom.runtime.mpmd.Transfers`); a transfer is keyed by
(channel, iterations). The ops are
side effects: no derivative, batching or sharding rule (a program is differentiated before it is
partitioned).
"""

from __future__ import annotations

import numpy as np

from loom.backend.common import dtype_of
from loom.backend.kernels import ALL, Kernel, kernel
from loom.dialects.mpmd import CARRIES_ATTRIBUTE, RIDES_ATTRIBUTE
from loom.ir.core import Operation
from loom.ops.registry import declare, unsupported
from loom.runtime.communicator import current


def _iterations(counters: tuple) -> tuple[int, ...]:
    return tuple(map(int, counters))


def send(channel: int, peer: int, dtype: np.dtype, join: tuple[str, int] | None, window: int, value: np.ndarray,
         *counters: np.ndarray) -> None:
    ctx = current()  # a C-ordered array of its own, of the IR's type: the communicator may send its bytes as they are
    ctx.communicator.send(ctx.partition_id, peer, (channel, _iterations(counters)), np.array(value, dtype), join,
                          window)


def recv(channel: int, peer: int, like: tuple[np.dtype, tuple[int, ...], int], join: tuple[str, int] | None,
         window: int, *counters: np.ndarray) -> np.ndarray:
    ctx = current()
    return ctx.communicator.recv(ctx.partition_id, peer, (channel, _iterations(counters)), like, join, window)


def begin_iteration(loop: int, devices: tuple[int, ...], parallel: int, *counters: np.ndarray) -> None:
    ctx = current()
    its = _iterations(counters)
    ctx.communicator.begin_iteration(ctx.partition_id, (loop, its[:-1]), its[-1], devices, parallel)


def _props(op: Operation) -> tuple[int, int]:
    return int(op.properties["channel"].value), int(op.properties["peer"].value)


def _join(op: Operation) -> tuple[str, int] | None:
    """("carries", the predicate's channel) on a loop's data message that carries the predicate,
    ("rides", the data's channel) on the predicate riding on it, else None."""
    for role, name in (("carries", CARRIES_ATTRIBUTE), ("rides", RIDES_ATTRIBUTE)):
        if name in op.attributes:
            return role, int(op.attributes[name].value)
    return None


def _window(op: Operation) -> int:
    """The `parallel` of the innermost partitioned loop that holds `op` (the mpmd.iteration that
    opens its body), 0 outside loops: both ends of a channel are in the same loop."""
    loop = op.parent_op
    while loop is not None:
        if loop.name == "stablehlo.while":
            for inner in loop.regions[1].blocks[0]:
                if inner.name == "mpmd.iteration":
                    return int(inner.properties["parallel"].value)
        loop = loop.parent_op
    return 0


@kernel("mpmd.send")
def _send(op: Operation) -> Kernel:
    return Kernel(send, *_props(op), dtype_of(op.operands[0].type), _join(op), _window(op), ALL)


@kernel("mpmd.recv")
def _recv(op: Operation) -> Kernel:
    t = op.results[0].type  # the IR's types are static: a message carries bytes only
    dtype, shape = dtype_of(t), tuple(int(d) for d in t.shape)
    return Kernel(recv, *_props(op), (dtype, shape, dtype.itemsize * int(np.prod(shape, dtype=np.int64))), _join(op),
                  _window(op), ALL)


@kernel("mpmd.iteration")
def _iteration(op: Operation) -> Kernel:
    p = op.properties
    return Kernel(begin_iteration, int(p["loop"].value), tuple(int(d) for d in p["devices"].values),
                  int(p["parallel"].value), ALL)


declare(["mpmd.send", "mpmd.recv", "mpmd.iteration"],
        unsupported("transfers between per-device programs: a program is differentiated, batched and sharded "
                    "before it is partitioned"), tables=("jvp", "vjp", "batching", "sharding", "torch"))
