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

A loop can say where it runs and how far its devices may drift apart, per loop:

    lax.while_loop(cond, body, init, parallel_iterations=1, devices=(0, 1))

- `parallel_iterations=k` bounds the iterations of this loop in flight at once once it is
  partitioned (`mpmd.parallel_iterations` on the loop); a loop without it, nested or not, takes
  the program's default (`mpmd_program(parallel_iterations=)`), never its enclosing loop's.
- `devices=(d0, d1, ...)` makes `d0` the loop's home: the loop is traced under
  `loom.placement(d0)`, so its condition (the predicate: `d0` sends it to every other
  participating device each iteration) and every op of its body not placed otherwise run on `d0`;
  a `with loom.placement(d)` inside the body still wins, and `d` must be one of `devices`
  (`mpmd.devices` on the loop; the partitioning pass rejects an op placed elsewhere, naming it).
  The other devices are not given work: a device takes part in the loop (runs its own copy of
  the loop's control) when it holds some of the loop's ops or carries.

Both are attributes of the traced loop. The forward and backward loops that reverse mode makes
from it keep its bound; the forward loop also keeps its devices, while the backward loop's
control goes where its body starts (the backward pass of a placed line runs on its device).

    program = mpmd_program(f, x, parallel_iterations=4)   # traced, partitioned, compiled
    y = program(x)                                        # one thread per device
    y = program.run_processes(x)                          # under torchrun: one process per device
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from loom.dialects.mpmd import DEVICE_ATTRIBUTE, LOOP_DEVICES_ATTRIBUTE, PARALLEL_ITERATIONS_ATTRIBUTE, device_of
from loom.ir.attributes import Attribute, DenseArrayAttr, IntegerAttr
from loom.ir.core import Operation
from loom.ir.types import i64
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


@contextlib.contextmanager
def loop_settings(parallel_iterations: int | None = None,
                  devices: Sequence[Any] | None = None) -> Iterator[dict[str, Attribute]]:
    """`lax.while_loop`'s `parallel_iterations=` and `devices=` (see the module's doc): trace the
    loop inside the block, under `placement(devices[0])` when `devices` is given; the block gets
    the attributes its `stablehlo.while` takes."""
    attributes: dict[str, Attribute] = {}
    if parallel_iterations is not None:
        if isinstance(parallel_iterations, bool) or not isinstance(parallel_iterations, int) or parallel_iterations < 1:
            raise ValueError(f"while_loop: parallel_iterations must be an int >= 1, not {parallel_iterations!r}")
        attributes[PARALLEL_ITERATIONS_ATTRIBUTE] = IntegerAttr.get(parallel_iterations)
    if devices is None:
        yield attributes
        return
    if isinstance(devices, (int, str)) or not isinstance(devices, Sequence) or not devices:
        raise ValueError(f"while_loop: devices must be a non-empty sequence of devices, not {devices!r}")
    indices = []
    for k, d in enumerate(devices):
        try:
            indices.append(device_index(d))
        except ValueError as e:
            raise ValueError(f"while_loop: devices[{k}]: {e}") from None
    attributes[LOOP_DEVICES_ATTRIBUTE] = DenseArrayAttr.get(i64, indices)
    with placement(indices[0]):
        yield attributes


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
    program per device with at most `parallel_iterations` iterations in flight of each loop that
    sets no bound of its own (`lax.while_loop(parallel_iterations=)`), and
    compiled: call the result to run it in this process (one thread per device), or its
    `run_processes` under torch.distributed (one process per device)."""
    from loom.frontend.jit import Jitted  # the tracing core imports this module: these load later
    from loom.runtime.mpmd import MPMDProgram
    module = Jitted(fun).lower(*example_args).module
    return MPMDProgram(partition(module, parallel_iterations=parallel_iterations, num_devices=num_devices), executor)


__all__ = ["DEVICE_ATTRIBUTE", "PLACEMENT_LISTENER", "current_placement", "device_index", "device_of", "loop_settings",
           "mpmd_program", "placement"]
