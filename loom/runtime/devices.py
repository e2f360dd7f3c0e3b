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

Many CPU devices: `LOOM_NUM_CPU_DEVICES=N` in the environment (read when loom is imported, as
XLA's --xla_force_host_platform_device_count) makes the host N numpy CPU devices, ids 0..N-1
(`loom.devices("numpy")`; device 0 is the host device above; default 1). Meshes of them run
partitioned programs (loom.runtime.local), and sharded arrays live on them:

    mesh = loom.make_mesh((2, 4), ("data", "model"))
    x = loom.device_put(np.ones((8, 6)), NamedSharding(mesh, P("data")))   # a ShardedArray
    x.addressable_shards[5].index, x.addressable_shards[5].data             # (slice(4, 8), slice(None)), ...

A `ShardedArray` is a `loom.Array` (one array type, as jax.Array), whose shards are numpy
arrays, one per device of its sharding's mesh; `np.asarray(x)` assembles the global value.
`device_put` requires each sharded dimension to be a multiple of its piece count, as JAX does;
arrays that a partitioned program returns may have uneven dimensions (the last shards shorter or
empty, as XLA pads). Its operators and indexing act on the assembled value and give numpy arrays;
for placement it counts as a host value (it goes where the computation goes).
"""

from __future__ import annotations

import functools
import os
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
            return "cpu" if self.id == 0 else f"cpu:{self.id}"
        if self.platform == "cpu":  # torch's CPU; more than one only as the devices of a test mesh
            return "torch:cpu" if self.id == 0 else f"torch:cpu:{self.id}"
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


def _num_cpu_devices() -> int:
    text = os.environ.get("LOOM_NUM_CPU_DEVICES", "1")
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise ValueError(f"LOOM_NUM_CPU_DEVICES={text!r}: expected a positive number of CPU devices")
    return n


# The host's numpy CPU devices: LOOM_NUM_CPU_DEVICES of them, read once at import.
CPU_DEVICES = (HOST,) + tuple(Device("cpu", i, "numpy") for i in range(1, _num_cpu_devices()))


def _torch() -> Any:
    try:
        import torch
    except ImportError:  # pragma: no cover - torch is a test extra
        return None
    return torch


def devices(backend: str | None = None) -> list[Device]:
    """The devices loom can run on: the host ("cpu", numpy), torch's CPU ("torch:cpu") when torch
    is installed, and each CUDA device. `backend` ("numpy", "torch", "cpu" or "cuda") filters.
    With LOOM_NUM_CPU_DEVICES=N the host is N numpy devices, cpu (id 0) to cpu:N-1."""
    if backend == "numpy":  # without importing torch
        return list(CPU_DEVICES)
    out = list(CPU_DEVICES)
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
        if spec.startswith("torch:cpu:") and spec[10:].isdigit():  # the devices of a mesh on torch's CPU
            return Device("cpu", int(spec[10:]), "torch")
        if spec == "cuda":
            return Device("cuda", 0)
        if spec.startswith("cuda:") and spec[5:].isdigit():
            return Device("cuda", int(spec[5:]))
        if spec.startswith("cpu:") and spec[4:].isdigit():
            if int(spec[4:]) >= len(CPU_DEVICES):
                raise ValueError(f"device {spec!r} is not available: there are {len(CPU_DEVICES)} CPU devices "
                                 "(set LOOM_NUM_CPU_DEVICES before importing loom for more)")
            return CPU_DEVICES[int(spec[4:])]
    return _unknown(spec)


def _unknown(spec: Any) -> Device:
    raise ValueError(f"unknown device {spec!r}; expected 'cpu', 'torch:cpu', 'cuda', 'cuda:N', a torch.device "
                     "or a loom Device (see loom.devices())")


def device_of(x: Any) -> Device | None:
    """The device a value is committed to: a loom.Array's or a torch tensor's; None for numpy
    arrays, sharded arrays (numpy shards), Python scalars and other host values (they go where
    the computation goes)."""
    if isinstance(x, ShardedArray):
        return None
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
        from loom.backend.torch_kernels import numpy_dtype_of
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
        from loom.backend.torch_kernels import to_numpy
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


def is_tensor(x: Any) -> bool:
    """Whether `x` is a torch tensor (told without importing torch)."""
    return type(x).__module__.startswith("torch")


def host_array(x: Any) -> np.ndarray:
    """`x` as a numpy array: a tensor's values copied from its device, anything else as it is."""
    if is_tensor(x):
        from loom.backend.torch_kernels import to_numpy
        return to_numpy(x)
    return np.asarray(x)


class Shard:
    """One device's piece of a ShardedArray (as jax.Shard): `device`, `index` (a tuple of slices
    of the global array), `replica_id` (0 for the first device holding this index) and `data`
    (a numpy array; on a torch device, a tensor there)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device: Device, index: tuple[slice, ...], replica_id: int, data: np.ndarray) -> None:
        self.device = device
        self.index = index
        self.replica_id = replica_id
        self.data = data

    def __repr__(self) -> str:
        return f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, data={self.data!r})"


class ShardedArray(Array):
    """A global array split over the devices of a sharding's mesh (see the module docstring):
    `shape` (global), `dtype`, `ndim`, `size`, `sharding`, `addressable_shards` (one `Shard` per
    device, in mesh order), `np.asarray(a)` (the assembled global value)."""

    __slots__ = ("_shape", "_dtype", "_sharding", "_shards")

    def __init__(self, shape: Sequence[int], dtype: Any, sharding: Any, shards: Sequence[Shard]) -> None:
        super().__init__(None)
        self._shape = tuple(int(n) for n in shape)
        self._dtype = np.dtype(dtype)
        self._sharding = sharding
        self._shards: list[Shard] | None = list(shards)

    @classmethod
    def from_shard_data(cls, shape: Sequence[int], sharding: Any, indices: Sequence[tuple[slice, ...]],
                        datas: Sequence[np.ndarray], dtype: Any = None,
                        devices: Sequence[Device] | None = None) -> ShardedArray:
        """The array whose device i (of `devices`, by default the sharding's mesh in order)
        holds `datas[i]` at `indices[i]`."""
        seen: dict[tuple, int] = {}
        shards = []
        for device, index, data in zip(sharding.mesh.device_list if devices is None else devices, indices, datas):
            key = tuple((s.start, s.stop) for s in index)
            shards.append(Shard(device, index, seen.get(key, 0), data))
            seen[key] = seen.get(key, 0) + 1
        return cls(shape, datas[0].dtype if dtype is None else dtype, sharding, shards)

    @classmethod
    def put(cls, x: Any, sharding: Any, where: str = "array") -> ShardedArray:
        """`x` split by `sharding` (each shard a copy). Each sharded dimension must be a multiple of
        its piece count, as in JAX; errors name `where`."""
        value = np.asarray(x)
        spec = sharding.spec
        if len(spec) > value.ndim:
            raise ValueError(f"{where}: the sharding {spec!r} has {len(spec)} entries, but the array has rank "
                             f"{value.ndim} (shape {value.shape})")
        for d, (n, count) in enumerate(zip(value.shape, sharding.shard_counts(value.ndim))):
            if n % count:
                raise ValueError(f"{where}: {spec!r} splits dimension {d} of shape {value.shape} into {count} pieces, "
                                 f"which do not divide its size {n} evenly (as in JAX)")
        indices = list(sharding.devices_indices_map(value.shape).values())
        datas = [np.array(value[i]) for i in indices]
        if any(getattr(d, "backend", None) == "torch" for d in sharding.mesh.device_list):  # torch devices: tensors
            from loom.backend.torch_kernels import to_torch
            datas = [to_torch(a, d.torch_device) for a, d in zip(datas, sharding.mesh.device_list)]
        return cls.from_shard_data(value.shape, sharding, indices, datas, value.dtype)

    def _live_shards(self) -> list[Shard]:
        if self._shards is None:
            raise RuntimeError("this sharded array was deleted")
        return self._shards

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return int(np.prod(self._shape))

    @property
    def sharding(self) -> Any:
        return self._sharding

    @property
    def addressable_shards(self) -> list[Shard]:
        return list(self._live_shards())

    @property
    def device(self) -> Any:
        """The one device of a single-device array, else its sharding (as jax.Array.device)."""
        shards = self._live_shards()
        return shards[0].device if len(shards) == 1 else self._sharding

    def devices(self) -> set[Device]:
        return {s.device for s in self._live_shards()}

    def is_deleted(self) -> bool:
        return self._shards is None

    def delete(self) -> None:
        self._shards = None

    def block_until_ready(self) -> ShardedArray:
        return self

    def torch(self) -> Any:
        """The assembled global value as a torch CPU tensor (a copy)."""
        import torch
        return torch.from_numpy(np.asarray(self))

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        out = np.empty(self._shape, self._dtype)
        for s in reversed(self._live_shards()):  # a block several devices hold: the first one's, as JAX
            out[s.index] = host_array(s.data)
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        if self._shards is None:
            return "ShardedArray(<deleted>)"
        body = np.array2string(np.asarray(self), separator=", ")
        return f"ShardedArray({body}, dtype={self.dtype.name}, sharding={self._sharding!r})"

    # Operators and indexing act on the assembled global value, with numpy.
    def __getitem__(self, index: Any) -> Any:
        return np.asarray(self)[index]

    def _binary(self, other: Any, fn: Any, reverse: bool = False) -> Any:
        a = np.asarray(self)
        b = np.asarray(other) if isinstance(other, Array) else other
        return fn(b, a) if reverse else fn(a, b)

    def __neg__(self) -> Any:
        return -np.asarray(self)


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
    from loom.backend.torch_kernels import to_torch
    return to_torch(np.asarray(x), like.device)


# Moving values ----------------------------------------------------------------------------------

def device_put(x: Any, device: Any = None) -> Any:
    """`x` (a pytree of arrays) on `device`: numpy arrays for the host device ("cpu", the
    default), loom.Arrays for torch devices. Values already there are not copied. `device` may
    be a `loom.sharding.NamedSharding`: each leaf becomes a `ShardedArray` split over its mesh
    (errors name the leaf)."""
    from loom.frontend.pytree import keystr, tree_flatten_with_path, tree_map, tree_unflatten
    if _is_sharding(device):
        pairs, treedef = tree_flatten_with_path(x)
        return tree_unflatten(treedef, [ShardedArray.put(leaf, device, f"device_put argument x{keystr(path)}")
                                        for path, leaf in pairs])
    target = get_device(device)
    return tree_map(lambda leaf: _put(leaf, target), x)


def _is_sharding(x: Any) -> bool:
    return hasattr(x, "mesh") and hasattr(x, "spec") and hasattr(x, "devices_indices_map")


def _put(x: Any, target: Device) -> Any:
    if target.backend == "numpy":
        if isinstance(x, np.ndarray):
            return x
        return np.asarray(x)
    from loom.backend.torch_kernels import to_torch
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


__all__ = ["CPU_DEVICES", "HOST", "Array", "Device", "OffloadedValue", "Shard", "ShardedArray", "committed_device",
           "device_of", "device_put", "devices", "from_dlpack", "get_device", "offload"]
