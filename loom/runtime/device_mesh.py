"""A mesh of torch devices in one process: one thread per partition, each partition's values torch
tensors on its own device (the GPUs of a machine, "cuda:0" ... "cuda:N-1"), collectives as copies
between the devices.

    mesh = loom.make_mesh((2, 2), ("data", "model"), devices=loom.devices("cuda"))
    y = MeshExecutable(loom.sharding.partition(module), mesh)(x, w)   # loom.runtime.local

Each partition's program is compiled for its device (`loom.backend.compiled.TorchExecutable`) and
runs in its own thread, as on the host's mesh (loom.runtime.local); the collective kernels hand
their tensors to a `TensorCommunicator` (`takes_tensors`), which meets the partitions as the
`ThreadCommunicator` does and computes every result on the devices with torch: all_reduce,
reduce_scatter, all_gather, all_to_all, collective_permute and collective_broadcast are peer
copies (`tensor.to(device)`: device to device, never through the host) and torch reductions.

The member of a collective that arrives last issues every member's copies and reductions while the
others wait (`ThreadCommunicator.combine`); on a GPU they are queued on the devices' current
streams, one per device (torch orders a copy between devices after the work queued on both and
before what is queued after it), and the thread returns without waiting for them. Issuing them
all before any member leaves is what makes this safe: an operand's memory, freed by its
partition after the collective, is reused only by work queued behind the copies that read it.

Reductions the devices cannot compute as the host does (a reducer region other than the
communicator's reductions, the 8-bit and narrower floats loom holds in float32, unsigned integers
torch has no arithmetic for) go through the host: the kernel hands the communicator numpy values,
which it reduces as the ThreadCommunicator does (loom.ops.collectives_torch decides, per op). A
mesh of torch devices on the host ("torch:cpu" devices, `Device("cpu", i)`) runs the same code on
CPU tensors.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.runtime.communicator import Completed, Transfer
from loom.runtime.devices import is_tensor
from loom.runtime.local import DEFAULT_TIMEOUT, ThreadCommunicator


def _torch() -> Any:
    import torch
    return torch


def _reduce(reduction: str, dtype: Any) -> Callable[[Any, Any], Any]:
    """The torch function of `reduction` on tensors of `dtype` (on booleans, the logical ones, as
    numpy's ufuncs)."""
    torch = _torch()
    if dtype == torch.bool:
        return {"sum": torch.logical_or, "max": torch.logical_or, "or": torch.logical_or,
                "prod": torch.logical_and, "min": torch.logical_and, "and": torch.logical_and,
                "xor": torch.logical_xor}[reduction]
    return {"sum": torch.add, "prod": torch.mul, "max": torch.maximum, "min": torch.minimum,
            "and": torch.bitwise_and, "or": torch.bitwise_or, "xor": torch.bitwise_xor}[reduction]


def _fold(fn: Callable[[Any, Any], Any], pieces: Sequence[Any], device: Any) -> Any:
    """The reduction of `pieces` in group order, computed on `device` (each piece copied there)."""
    acc = pieces[0].to(device, copy=True)
    for piece in pieces[1:]:
        acc = fn(acc, piece.to(device))
    return acc


def _piece(x: Any, dim: int, n: int, pos: int) -> Any:
    """Piece `pos` of `x` cut into `n` equal pieces along `dim` (a view)."""
    dim %= x.dim()
    size, rest = divmod(x.shape[dim], n)
    if rest:
        raise ValueError(f"dimension {dim} of the operand, of size {x.shape[dim]}, does not split into {n} pieces")
    return x.narrow(dim, pos * size, size)


class TensorCommunicator(ThreadCommunicator):
    """The communicator of partitions whose values are torch tensors on their own devices (see the
    module docstring). Numpy operands (the collectives the kernels run through the host) meet as
    in the ThreadCommunicator. `timeout` and `timeline` as there; there is no link model."""

    takes_tensors = True  # the collective kernels hand it tensors (loom.ops.collectives_torch)

    def __init__(self, devices: Sequence[Any], timeout: float = DEFAULT_TIMEOUT, timeline: Any = None,
                 origin: float | None = None) -> None:
        super().__init__(len(devices), timeout, None, timeline, origin)
        self.devices = [d.torch_device if hasattr(d, "torch_device") else _torch().device(d) for d in devices]

    def begin(self, me: int) -> None:
        """Partition `me`'s thread starts: on a GPU, that device becomes the thread's current one
        (where torch puts what the thread makes without saying where)."""
        device = self.devices[me]
        if device.type == "cuda":
            _torch().cuda.set_device(device)
        super().begin(me)

    def _on_devices(self, me: int, group: Sequence[int], x: Any, signature: tuple,
                    result: Callable[[list, int], Any]) -> Any:
        """A rendezvous of `group` whose last member computes each member's result,
        `result(operands, i)` for the i-th member (on that member's device), for all of them."""
        self._enter(me)
        slot = [x, None]

        def work(deposits: list) -> None:
            operands = [d[0] for d in deposits]
            for i, d in enumerate(deposits):
                d[1] = result(operands, i)

        self.combine(me, group, slot, signature, work)
        self._leave(me)
        return slot[1]

    def all_reduce(self, me: int, x: Any, group: Sequence[int], reduction: str, in_place: bool = False) -> Any:
        if not is_tensor(x):
            return super().all_reduce(me, x, group, reduction, in_place)
        fn = _reduce(reduction, x.dtype)
        return self._on_devices(me, group, x, ("all_reduce", reduction, tuple(x.shape), x.dtype),
                                lambda ops, i: _fold(fn, ops, ops[i].device))

    def reduce_scatter(self, me: int, x: Any, group: Sequence[int], dim: int, reduction: str) -> Any:
        if not is_tensor(x):
            return super().reduce_scatter(me, x, group, dim, reduction)
        fn, n = _reduce(reduction, x.dtype), len(group)
        _piece(x, dim, n, 0)  # the split is checked before the rendezvous
        return self._on_devices(me, group, x, ("reduce_scatter", reduction, dim, tuple(x.shape), x.dtype),
                                lambda ops, i: _fold(fn, [_piece(o, dim, n, i) for o in ops], ops[i].device))

    def all_gather(self, me: int, x: Any, group: Sequence[int], dim: int) -> Any:
        if not is_tensor(x):
            return super().all_gather(me, x, group, dim)
        torch = _torch()
        return self._on_devices(me, group, x, ("all_gather", dim, x.dtype),
                                lambda ops, i: torch.cat([o.to(ops[i].device) for o in ops], dim))

    def all_to_all(self, me: int, x: Any, group: Sequence[int], split_dim: int, concat_dim: int) -> Any:
        if not is_tensor(x):
            return super().all_to_all(me, x, group, split_dim, concat_dim)
        torch, n = _torch(), len(group)
        _piece(x, split_dim, n, 0)
        return self._on_devices(
            me, group, x, ("all_to_all", split_dim, concat_dim, tuple(x.shape), x.dtype),
            lambda ops, i: torch.cat([_piece(o, split_dim, n, i).to(ops[i].device) for o in ops], concat_dim))

    def collective_permute(self, me: int, x: Any, pairs: Sequence[tuple[int, int]]) -> Any:
        if not is_tensor(x):
            return super().collective_permute(me, x, pairs)
        pairs = tuple((int(s), int(t)) for s, t in pairs)
        source_of = {t: s for s, t in pairs}

        def result(ops: list, i: int) -> Any:
            source = source_of.get(i)
            return ops[i].new_zeros(ops[i].shape) if source is None else ops[source].to(ops[i].device, copy=True)

        return self._on_devices(me, range(self.num_partitions), x,
                                ("collective_permute", pairs, tuple(x.shape), x.dtype), result)

    def collective_permute_start(self, me: int, x: Any, pairs: Sequence[tuple[int, int]]) -> Transfer:
        # The copies are queued on the devices' streams, which run them while the partitions go on.
        if not is_tensor(x):
            return super().collective_permute_start(me, x, pairs)
        return Completed(self.collective_permute(me, x, pairs))

    def all_gather_start(self, me: int, x: Any, group: Sequence[int], dim: int) -> Transfer:
        if not is_tensor(x):
            return super().all_gather_start(me, x, group, dim)
        return Completed(self.all_gather(me, x, group, dim))

    def collective_broadcast(self, me: int, x: Any, group: Sequence[int]) -> Any:
        if not is_tensor(x):
            return super().collective_broadcast(me, x, group)
        return self._on_devices(me, group, x, ("collective_broadcast", tuple(x.shape), x.dtype),
                                lambda ops, i: ops[0].to(ops[i].device, copy=True))


def on_torch_devices(devices: Sequence[Any]) -> bool:
    """Whether `devices` (loom Devices) are torch devices: all of them, or none (an error
    otherwise: a mesh runs one array library)."""
    kinds = {getattr(d, "backend", "numpy") for d in devices}
    if len(kinds) > 1:
        raise ValueError(f"a mesh of host (numpy) and torch devices: {[str(d) for d in devices]}; a mesh runs on "
                         "one kind (loom.devices('numpy') or torch devices such as loom.devices('cuda'))")
    return kinds == {"torch"}


def to_device(x: Any, device: Any) -> Any:
    """`x` (a numpy array or a tensor) as a tensor on the loom Device `device`."""
    from loom.backend.torch_kernels import to_torch
    return to_torch(x if is_tensor(x) else np.asarray(x), device.torch_device)


__all__ = ["TensorCommunicator", "on_torch_devices", "to_device"]
