"""Devices and arrays that live on them.

loom runs a program on one device. The host CPU runs programs with the numpy backend and numpy
arrays in and out (loom's default, as before); PyTorch devices ("cuda", "cuda:1", and "torch:cpu"
for torch's own CPU tensors) run the same compiled programs on torch tensors. Results computed on a
torch device stay there, as `loom.Array`s, until the user asks for host values:

    x = loom.device_put(np.ones(3, np.float32), "cuda")     # a loom.Array on cuda:0
    y = loom.jit(f)(x)                                      # runs on cuda:0, as JAX places work
    np.asarray(y)                                           # host copy through __array__
    t = torch.from_dlpack(y); z = loom.from_dlpack(t)       # DLPack both ways, no copy

Placement follows the inputs as in JAX: a jitted function runs where its `loom.Array` (or torch
tensor) arguments live; numpy arrays and Python scalars go wherever the computation goes;
arguments committed to two different devices are an error that names both. `jit(f, device=...)`
pins a function to a device. `grad`, `vjp`, `jvp`, `vmap` and `linearize` called outside `jit`
place their work the same way: `loom.grad(f)(x)` of a loom.Array `x` on "cuda" runs there and
returns loom.Arrays there.

`offload` / `OffloadedValue` move tensors to pinned host memory asynchronously and back: the
`offload` memory policy for the saved-value stacks of reverse-mode loops.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np

_PLATFORMS = ("cpu", "cuda")


class Device:
    """One device: `platform` ("cpu", "cuda" or another torch device type), `id`, and the array
    library that runs there (`backend`: "numpy" for the host's numpy arrays, "torch" for tensors)."""

    __slots__ = ("platform", "id", "backend")

    def __init__(self, platform: str, id: int = 0, backend: str = "torch") -> None:  # noqa: A002 - jax's name
        if backend not in ("numpy", "torch"):
            raise ValueError(f"unknown backend {backend!r}; expected numpy or torch")
        if backend == "numpy" and platform != "cpu":
            raise ValueError(f"the numpy backend runs on the cpu only, not on {platform!r}")
        self.platform = platform
        self.id = id
        self.backend = backend

    @property
    def torch_device(self) -> Any:
        """The torch.device (None for the numpy host device)."""
        if self.backend != "torch":
            return None
        return _torch_device(self.platform, self.id)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and (self.platform, self.id, self.backend) == \
            (other.platform, other.id, other.backend)

    def __hash__(self) -> int:
        return hash((self.platform, self.id, self.backend))

    def __str__(self) -> str:
        if self.backend == "numpy":
            return "cpu"
        if self.platform == "cpu":
            return "torch:cpu"
        return f"{self.platform}:{self.id}"

    def __repr__(self) -> str:
        kind = "CpuDevice" if self.backend == "numpy" else \
            ("TorchCpuDevice" if self.platform == "cpu" else "CudaDevice")
        return f"{kind}(id={self.id})"


@functools.cache
def _torch_device(platform: str, index: int) -> Any:
    import torch
    return torch.device(platform) if platform in ("cpu", "meta") else torch.device(platform, index)


HOST = Device("cpu", 0, "numpy")


def _torch() -> Any:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a test extra
        return None
    return torch


def devices(backend: str | None = None) -> list[Device]:
    """The devices loom can run on: the host ("cpu", numpy), torch's CPU ("torch:cpu") when torch
    is installed, and each CUDA device. `backend` ("numpy", "torch", "cpu" or "cuda") filters."""
    out = [HOST]
    torch = _torch()
    if torch is not None:
        out.append(Device("cpu", 0, "torch"))
        if torch.cuda.is_available():
            out += [Device("cuda", i) for i in range(torch.cuda.device_count())]
    if backend is None:
        return out
    if backend in ("numpy", "torch"):
        return [d for d in out if d.backend == backend]
    if backend in _PLATFORMS:
        return [d for d in out if d.platform == backend]
    raise ValueError(f"unknown backend {backend!r}; expected numpy, torch, cpu or cuda")


def get_device(spec: Any) -> Device:
    """A Device from a Device, "cpu" (numpy host), "torch:cpu", "cuda", "cuda:N", "torch" (the
    first CUDA device if any, else torch:cpu) or a torch.device."""
    if isinstance(spec, Device):
        return spec
    if spec is None or spec == "cpu" or spec == "numpy":
        return HOST
    torch = _torch()
    if torch is not None and isinstance(spec, torch.device):
        return Device(spec.type, spec.index or 0)
    if isinstance(spec, str):
        if spec == "torch":
            return Device("cuda", 0) if torch is not None and torch.cuda.is_available() else Device("cpu", 0)
        if spec == "torch:cpu":
            return Device("cpu", 0, "torch")
        if spec == "cuda":
            return Device("cuda", 0)
        if spec.startswith("cuda:") and spec[5:].isdigit():
            return Device("cuda", int(spec[5:]))
    return _unknown(spec)


def _unknown(spec: Any) -> Device:
    raise ValueError(f"unknown device {spec!r}; expected 'cpu', 'torch:cpu', 'cuda', 'cuda:N', a torch.device "
                     "or a loom Device (see loom.devices())")


def device_of(x: Any) -> Device | None:
    """The device a value is committed to: a loom.Array's or a torch tensor's; None for numpy
    arrays, Python scalars and other host values (they go where the computation goes)."""
    if isinstance(x, Array):
        return x.device
    torch = _torch_if_loaded()
    if torch is not None and isinstance(x, torch.Tensor):
        return Device(x.device.type, x.device.index or 0)
    return None


def _torch_if_loaded() -> Any:
    import sys
    return sys.modules.get("torch")


class Array:
    """An array on a torch device (what loom returns from a computation there): numpy-like
    `shape`, `dtype` (a numpy dtype, bfloat16 as ml_dtypes'), `ndim`, `size`; `device`;
    `np.asarray(a)` copies to the host; DLPack (`__dlpack__`) for torch, jax and numpy;
    `torch()` is the tensor itself (no copy). A donated array is deleted: using it raises."""

    __slots__ = ("_tensor", "__weakref__")

    __array_priority__ = 100  # numpy defers binary operators to Array's

    def __init__(self, tensor: Any) -> None:
        self._tensor = tensor

    # The tensor and its properties -----------------------------------------------------------
    def torch(self) -> Any:
        """The underlying torch tensor (shared, not copied)."""
        if self._tensor is None:
            raise RuntimeError("this loom.Array was donated to a jitted function (donate_argnums) and deleted; "
                               "use that function's result instead")
        return self._tensor

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.torch().shape)

    @property
    def dtype(self) -> np.dtype:
        from loom.backend.kernels_torch import numpy_dtype_of
        return numpy_dtype_of(self.torch().dtype)

    @property
    def ndim(self) -> int:
        return self.torch().ndim

    @property
    def size(self) -> int:
        return self.torch().numel()

    @property
    def device(self) -> Device:
        d = self.torch().device
        return Device(d.type, d.index or 0)

    def devices(self) -> set[Device]:
        return {self.device}

    def is_deleted(self) -> bool:
        return self._tensor is None

    def delete(self) -> None:
        """Drop the buffer now (later uses raise)."""
        self._tensor = None

    def block_until_ready(self) -> Array:
        t = self.torch()
        if t.device.type == "cuda":
            import torch
            torch.cuda.synchronize(t.device)
        return self

    # Host values -------------------------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        from loom.backend.kernels_torch import to_numpy
        a = to_numpy(self.torch())
        if self.torch().device.type == "cpu":
            a = np.array(a)  # never hand out a view numpy could write into
        return a if dtype is None else a.astype(dtype)

    def item(self) -> Any:
        return np.asarray(self).item()

    def tolist(self) -> Any:
        return np.asarray(self).tolist()

    def __float__(self) -> float:
        return float(np.asarray(self))

    def __int__(self) -> int:
        return int(np.asarray(self))

    def __bool__(self) -> bool:
        return bool(np.asarray(self))

    def __index__(self) -> int:
        return int(np.asarray(self))

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __repr__(self) -> str:
        if self._tensor is None:
            return "Array(<deleted>)"
        body = np.array2string(np.asarray(self), separator=", ")
        return f"Array({body}, dtype={self.dtype.name}, device={self.device})"

    # DLPack ------------------------------------------------------------------------------------
    def __dlpack__(self, *args: Any, **kwargs: Any) -> Any:
        return self.torch().detach().__dlpack__(*args, **kwargs)

    def __dlpack_device__(self) -> tuple:
        return self.torch().__dlpack_device__()

    # A few operators, computed by torch on the device ----------------------------------------
    def __getitem__(self, index: Any) -> Array:
        if isinstance(index, Array):
            index = index.torch()
        return Array(self.torch()[index])

    def _binary(self, other: Any, fn: Any, reverse: bool = False) -> Array:
        a = self.torch()
        b = _operand(other, a)
        return Array(fn(b, a) if reverse else fn(a, b))

    def __add__(self, o: Any) -> Array:
        return self._binary(o, operator_add)

    def __radd__(self, o: Any) -> Array:
        return self._binary(o, operator_add, True)

    def __sub__(self, o: Any) -> Array:
        return self._binary(o, operator_sub)

    def __rsub__(self, o: Any) -> Array:
        return self._binary(o, operator_sub, True)

    def __mul__(self, o: Any) -> Array:
        return self._binary(o, operator_mul)

    def __rmul__(self, o: Any) -> Array:
        return self._binary(o, operator_mul, True)

    def __truediv__(self, o: Any) -> Array:
        return self._binary(o, operator_truediv)

    def __rtruediv__(self, o: Any) -> Array:
        return self._binary(o, operator_truediv, True)

    def __matmul__(self, o: Any) -> Array:
        return self._binary(o, operator_matmul)

    def __neg__(self) -> Array:
        return Array(-self.torch())

    def __eq__(self, o: Any) -> Array:  # type: ignore[override]
        return self._binary(o, operator_eq)

    def __lt__(self, o: Any) -> Array:
        return self._binary(o, operator_lt)

    def __gt__(self, o: Any) -> Array:
        return self._binary(o, operator_gt)

    __hash__ = None  # type: ignore[assignment]  # arrays are mutable-valued, as numpy's


import operator as _operator  # noqa: E402

operator_add, operator_sub, operator_mul = _operator.add, _operator.sub, _operator.mul
operator_truediv, operator_matmul = _operator.truediv, _operator.matmul
operator_eq, operator_lt, operator_gt = _operator.eq, _operator.lt, _operator.gt


def _operand(x: Any, like: Any) -> Any:
    """The other operand of an Array operator, on `like`'s device (Python scalars stay scalars,
    so torch keeps the array's dtype as JAX's weak types do)."""
    if isinstance(x, Array):
        return x.torch()
    if isinstance(x, (bool, int, float, complex)):
        return x
    from loom.backend.kernels_torch import to_torch
    return to_torch(np.asarray(x), like.device)


# Moving values ----------------------------------------------------------------------------------

def device_put(x: Any, device: Any = None) -> Any:
    """`x` (a pytree of arrays) on `device`: numpy arrays for the host device ("cpu", the
    default), loom.Arrays for torch devices. Values already there are not copied."""
    from loom.frontend.pytree import tree_map
    target = get_device(device)
    return tree_map(lambda leaf: _put(leaf, target), x)


def _put(x: Any, target: Device) -> Any:
    if target.backend == "numpy":
        if isinstance(x, np.ndarray):
            return x
        return np.asarray(x)
    from loom.backend.kernels_torch import to_torch
    torch = _torch()
    if isinstance(x, Array):
        t = x.torch()
    elif isinstance(x, torch.Tensor):
        t = x
    else:
        return Array(to_torch(np.asarray(x), target.torch_device, copy=True))  # never share the caller's array
    if t.device != target.torch_device:
        t = t.to(target.torch_device)
    return Array(t)


def from_dlpack(x: Any, device: Any = None) -> Array | np.ndarray:
    """Any DLPack array (torch, jax, numpy, cupy...) as a loom.Array on its own device, sharing
    its memory; with `device`, moved there (the host device gives a numpy array)."""
    torch = _torch()
    if torch is None:  # pragma: no cover
        return np.from_dlpack(x)
    tensor = x if isinstance(x, torch.Tensor) else torch.from_dlpack(x)
    out = Array(tensor)
    return out if device is None else _put(out, get_device(device))


# Placement --------------------------------------------------------------------------------------

def committed_device(leaves: Sequence[Any], names: Sequence[str] | None = None) -> Device | None:
    """The one device the committed values among `leaves` live on (None if none is); values on
    two devices are an error naming both arguments and devices."""
    found: Device | None = None
    found_name = ""
    for i, leaf in enumerate(leaves):
        d = device_of(leaf)
        if d is None:
            continue
        name = names[i] if names is not None else f"argument {i}"
        if found is None:
            found, found_name = d, name
        elif d != found:
            raise ValueError(f"arguments on different devices: {found_name} is on {found} and {name} is on {d}; "
                             "move them to one device with loom.device_put")
    return found


# Pinned-host offload ----------------------------------------------------------------------------

class OffloadedValue:
    """A tensor copied to (pinned, on CUDA) host memory, the copy running asynchronously on a
    side stream; `fetch()` brings it back to its device (waiting for the copy to finish first)."""

    __slots__ = ("host", "device", "event")

    def __init__(self, host: Any, device: Any, event: Any) -> None:
        self.host = host
        self.device = device
        self.event = event

    def fetch(self, non_blocking: bool = True) -> Any:
        if self.event is not None:
            self.event.synchronize()
        if self.device.type == "cpu":
            return self.host
        return self.host.to(self.device, non_blocking=non_blocking)


_OFFLOAD_STREAMS: dict[Any, Any] = {}


def offload(tensor: Any) -> OffloadedValue:
    """Start copying `tensor` to host memory and return a handle (the `offload` memory policy
    for saved-value stacks of reverse-mode loops). On CUDA the copy goes to pinned memory on a
    side stream that waits for the producer's stream, so the computation goes on meanwhile; on
    the CPU the handle keeps a copy."""
    torch = _torch()
    if isinstance(tensor, Array):
        tensor = tensor.torch()
    if tensor.device.type != "cuda":
        return OffloadedValue(tensor.detach().clone(), tensor.device, None)
    stream = _OFFLOAD_STREAMS.get(tensor.device)
    if stream is None:
        stream = _OFFLOAD_STREAMS[tensor.device] = torch.cuda.Stream(tensor.device)
    host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
    stream.wait_stream(torch.cuda.current_stream(tensor.device))
    with torch.cuda.stream(stream):
        host.copy_(tensor.detach(), non_blocking=True)
        tensor.record_stream(stream)  # the caching allocator keeps the source alive until the copy ends
        event = torch.cuda.Event()
        event.record(stream)
    return OffloadedValue(host, tensor.device, event)


__all__ = ["HOST", "Array", "Device", "OffloadedValue", "committed_device", "device_of", "get_device", "device_put",
           "devices", "from_dlpack", "offload"]
