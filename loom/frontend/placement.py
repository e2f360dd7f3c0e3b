"""Placing parts of a traced program on devices (MPMD): `with loom.placement(device):`.

    @loom.jit
    def f(x):
        with loom.placement(0):
            y = lnp.tanh(x)
        with loom.placement(1):
            return y * 2.0

While a placement is active, every op the trace inserts gets the attribute `mpmd.device = d : i64`
(`DEVICE_ATTRIBUTE`), loop and branch bodies included; the innermost placement wins, so a loop
placed on device 0 may hold a body part placed on device 1. Placement marks ops and changes no
value: the traced program runs as it is on one device, and `loom.transforms.mpmd_partition` cuts
it into one program per device, with a send / recv pair for every value that crosses devices.
An op without the attribute (one a pass made, a constant) goes where the partitioning pass puts
it: with the values it reads (see that pass).

    program = mpmd_program(f, x, parallel_iterations=4)   # traced, partitioned, compiled
    y = program(x)                                        # one thread per device
    y = program.run_processes(x)                          # under torchrun: one process per device
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from loom.dialects.mpmd import DEVICE_ATTRIBUTE, device_of
from loom.ir.attributes import IntegerAttr
from loom.ir.core import Operation
from loom.transforms.mpmd_partition import DEFAULT_PARALLEL_ITERATIONS, partition


class _Placements(threading.local):
    def __init__(self) -> None:
        self.devices: list[int] = []


_LOCAL = _Placements()


def device_index(device: Any) -> int:
    """The device number of `device`: an int, or a `loom.Device` (its `id`)."""
    index = getattr(device, "id", device)
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        raise ValueError(f"loom.placement takes a device number >= 0 or a loom.Device, not {device!r}")
    return index


@contextlib.contextmanager
def placement(device: Any) -> Iterator[int]:
    """Place the ops traced inside the block on `device` (an int or a `loom.Device`)."""
    _LOCAL.devices.append(device_index(device))
    try:
        yield _LOCAL.devices[-1]
    finally:
        _LOCAL.devices.pop()


def current_placement() -> int | None:
    """The device of the innermost active placement on this thread, or None."""
    return _LOCAL.devices[-1] if _LOCAL.devices else None


class PlacementListener:
    """A builder listener marking each inserted op with the active placement (when there is one
    and the op has no device yet)."""

    def notify_op_inserted(self, op: Operation) -> None:
        if _LOCAL.devices and DEVICE_ATTRIBUTE not in op.attributes:
            op.attributes[DEVICE_ATTRIBUTE] = IntegerAttr.get(_LOCAL.devices[-1])


PLACEMENT_LISTENER = PlacementListener()


def mpmd_program(fun: Callable[..., Any], *example_args: Any, parallel_iterations: int = DEFAULT_PARALLEL_ITERATIONS,
                 num_devices: int | None = None, executor: str = "compiled") -> Any:
    """`fun` (placed with `placement`) traced for arguments like `example_args`, cut into one
    program per device with at most `parallel_iterations` iterations of each loop in flight, and
    compiled: call the result to run it in this process (one thread per device), or its
    `run_processes` under torch.distributed (one process per device)."""
    from loom.frontend.jit import Jitted  # the tracing core imports this module: these load later
    from loom.runtime.mpmd import MPMDProgram
    module = Jitted(fun).lower(*example_args).module
    return MPMDProgram(partition(module, parallel_iterations=parallel_iterations, num_devices=num_devices), executor)


__all__ = ["DEVICE_ATTRIBUTE", "PLACEMENT_LISTENER", "current_placement", "device_index", "device_of", "mpmd_program",
           "placement"]
