"""The collectives' torch kernels (imported with torch: see `loom.ops.collectives`).

On a mesh of torch devices in one process (loom.runtime.device_mesh) the communicator computes on
the tensors where they are: the kernels hand it the tensors. Under any other communicator (a
torch.distributed process, whose kernels read host values), and for the forms the devices do not
compute as the host does (a reducer region other than the communicator's reductions, element
types other than `ON_DEVICE`, complex max / min), they run the numpy kernel on the tensors' host
values, as every op without a torch kernel (collective_reduce, partition_id) does (`NumpyFallback`).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import torch

from loom.backend import common
from loom.backend.kernels import KERNELS, Kernel
from loom.backend.torch_kernels import BF16, NARROW_FLOATS, TORCH_KERNELS, NumpyFallback, to_numpy
from loom.ir.core import Operation
from loom.ops.collectives import reduction_of
from loom.runtime.communicator import current

# Element types whose values torch holds as they are and computes on, on every device.
ON_DEVICE = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64, np.int8, np.int16, np.int32,
                                            np.int64, np.uint8, np.bool_, np.complex64, np.complex128)) | {BF16}
# The ops whose kernels reduce (their reducer region must be one of the communicator's reductions).
REDUCING = frozenset({"stablehlo.all_reduce", "stablehlo.reduce_scatter"})


def _dtypes(op: Operation) -> list[np.dtype]:
    return [common.dtype_of(v.type) for v in (*op.operands, *op.results) if hasattr(v.type, "element_type")]


def _on_device(op: Operation) -> bool:
    """Whether the communicator may compute `op` on the tensors themselves."""
    dtypes = _dtypes(op)
    if any(d not in ON_DEVICE for d in dtypes):
        return False
    if op.name in REDUCING:
        reduction = reduction_of(op)
        return reduction is not None and not (reduction in ("max", "min") and any(d.kind == "c" for d in dtypes))
    return True


class OnDevices:
    """A collective's numpy kernel given the tensors themselves when it is `native` and the
    communicator computes on them (`takes_tensors`); otherwise run on their host values (of
    `host_dtype`, where the tensors hold a narrower float in float32), its results put back on the
    device of its tensor operands."""

    __slots__ = ("fn", "native", "host_dtype", "__name__")

    def __init__(self, fn: Callable, native: bool, host_dtype: np.dtype | None = None) -> None:
        self.fn, self.native, self.host_dtype = fn, native, host_dtype
        self.__name__ = getattr(fn, "__name__", "collective").strip("_") + "_on_devices"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.native and getattr(current().communicator, "takes_tensors", False):
            return self.fn(*args, **kwargs)
        device = next((a.device for a in args if isinstance(a, torch.Tensor)), None)
        if self.host_dtype is not None:
            args = tuple(to_numpy(a).astype(self.host_dtype) if isinstance(a, torch.Tensor) else a for a in args)
        return NumpyFallback(functools.partial(self.fn, **kwargs), device)(*args)


def _maker(name: str) -> Callable[[Operation], Kernel]:
    def make(op: Operation) -> Kernel:
        narrow = [d for d in _dtypes(op) if d in NARROW_FLOATS]
        k = KERNELS[name](op)
        return Kernel(OnDevices(k.fn, _on_device(op), narrow[0] if narrow else None), *k.template)
    return make


for _name in ("stablehlo.all_reduce", "stablehlo.reduce_scatter", "stablehlo.all_gather", "stablehlo.all_to_all",
              "stablehlo.collective_permute", "stablehlo.collective_broadcast", "comm.collective_permute_start",
              "comm.all_gather_start"):
    TORCH_KERNELS[_name] = _maker(_name)

__all__ = ["ON_DEVICE", "OnDevices"]
