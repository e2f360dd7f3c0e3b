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
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from loom.dialects.mpmd import DEVICE_ATTRIBUTE, device_of
from loom.ir.attributes import IntegerAttr
from loom.ir.core import Operation


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


__all__ = ["DEVICE_ATTRIBUTE", "PLACEMENT_LISTENER", "current_placement", "device_index", "device_of", "placement"]
