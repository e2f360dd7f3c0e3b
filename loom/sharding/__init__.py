"""Meshes and shardings, with JAX's names and behaviour.

    mesh = loom.make_mesh((2, 4), ("data", "model"))
    s = NamedSharding(mesh, P("data", None))          # rows split over "data", replicated over "model"
    x = loom.device_put(np.ones((8, 6), np.float32), s)

A `Mesh` is an n-dimensional array of devices with one name per axis. A `PartitionSpec` says, per
array dimension, which mesh axes split it (None: not split; a tuple: several axes, major to
minor); mesh axes it does not name replicate the array. `NamedSharding` pairs the two, and is
what `sdy.sharding` attributes in the IR say (`to_sdy` / `from_sdy`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.dialects.sdy import MeshAttr, TensorShardingAttr


class PartitionSpec(tuple):
    """Per array dimension: None (not split), a mesh axis name, or a tuple of names (split over
    their product, major to minor). Trailing dimensions not listed are not split."""

    def __new__(cls, *parts: Any) -> PartitionSpec:
        norm = []
        for i, p in enumerate(parts):
            if p is None or isinstance(p, str):
                norm.append(p)
            elif isinstance(p, (tuple, list)) and all(isinstance(a, str) for a in p):
                norm.append(tuple(p) if len(p) != 1 else p[0]) if p else norm.append(None)
            else:
                raise TypeError(f"PartitionSpec entry {i} is {p!r}; expected None, a mesh axis name "
                                "or a tuple of names")
        return super().__new__(cls, norm)

    def axes_of(self, dim: int) -> tuple[str, ...]:
        """The mesh axes splitting dimension `dim` (() when not split)."""
        if dim >= len(self) or self[dim] is None:
            return ()
        p = self[dim]
        return (p,) if isinstance(p, str) else tuple(p)

    def __repr__(self) -> str:
        return "PartitionSpec(" + ", ".join(repr(p) for p in self) + ")"


P = PartitionSpec


class Mesh:
    """Devices laid out in an n-dimensional array with named axes (as `jax.sharding.Mesh`)."""

    def __init__(self, devices: Any, axis_names: Sequence[str]) -> None:
        arr = np.empty(np.shape(devices), dtype=object)
        arr[...] = devices if isinstance(devices, np.ndarray) else _nested(devices, arr.shape)
        names = tuple(axis_names)
        if arr.ndim != len(names):
            raise ValueError(f"mesh of {arr.ndim} dimensions {arr.shape} given {len(names)} axis names {names}")
        if len(set(names)) != len(names):
            raise ValueError(f"mesh axis names {names} repeat a name")
        flat = list(arr.flat)
        if len(set(flat)) != len(flat):
            raise ValueError("a device appears twice in the mesh")
        self.devices = arr
        self.axis_names = names

    @property
    def shape(self) -> dict[str, int]:
        """Axis name -> size, in mesh order."""
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        return int(self.devices.size)

    @property
    def device_list(self) -> list[Any]:
        """The devices in mesh order (row major): position i is partition i."""
        return list(self.devices.flat)

    def to_sdy(self) -> MeshAttr:
        """`#sdy.mesh<["x"=2, ...]>` (device ids implied: partitions in mesh order)."""
        return MeshAttr(tuple(self.shape.items()))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and self.axis_names == other.axis_names and \
            self.devices.shape == other.devices.shape and list(self.devices.flat) == list(other.devices.flat)

    def __hash__(self) -> int:
        return hash((self.axis_names, self.devices.shape, tuple(self.devices.flat)))

    def __repr__(self) -> str:
        return f"Mesh({', '.join(f'{n!r}: {s}' for n, s in self.shape.items())})"


def _nested(devices: Any, shape: tuple[int, ...]) -> np.ndarray:
    out = np.empty(shape, dtype=object)
    for idx in np.ndindex(*shape):
        d = devices
        for i in idx:
            d = d[i]
        out[idx] = d
    return out


class NamedSharding:
    """An array split over `mesh` as `spec` says (as `jax.sharding.NamedSharding`). Errors name
    the spec entry: unknown axes, an axis used twice."""

    def __init__(self, mesh: Mesh, spec: PartitionSpec | None = None) -> None:
        spec = PartitionSpec() if spec is None else spec
        if not isinstance(spec, PartitionSpec):
            spec = PartitionSpec(*spec)
        seen: dict[str, int] = {}
        for i in range(len(spec)):
            for a in spec.axes_of(i):
                if a not in mesh.shape:
                    raise ValueError(f"PartitionSpec entry {i} ({spec[i]!r}) names axis {a!r}, which is not an axis "
                                     f"of the mesh {mesh.axis_names}")
                if a in seen:
                    raise ValueError(f"mesh axis {a!r} is used twice in {spec!r} (entries {seen[a]} and {i})")
                seen[a] = i
        self.mesh = mesh
        self.spec = spec

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, tuple[slice, ...]]:
        """Device -> the index (a tuple of slices) of its shard of an array of `global_shape`
        (as JAX's; uneven dimensions give the last pieces fewer, possibly no, elements)."""
        dims = [[(a, None, None) for a in self.spec.axes_of(d)] for d in range(len(global_shape))]
        self.check_rank(len(global_shape))
        return dict(zip(self.mesh.device_list, shard_slices(self.mesh.shape, dims, global_shape)))

    @property
    def device_set(self) -> set[Any]:
        return set(self.mesh.device_list)

    @property
    def num_devices(self) -> int:
        return self.mesh.size

    def check_rank(self, ndim: int, where: str = "array") -> None:
        """Raise unless the spec fits an array of rank `ndim`."""
        if len(self.spec) > ndim:
            raise ValueError(f"{where}: {self.spec!r} has {len(self.spec)} entries for an array of rank {ndim}")

    def shard_counts(self, ndim: int) -> tuple[int, ...]:
        """How many pieces each dimension is split into."""
        return tuple(math.prod(self.mesh.shape[a] for a in self.spec.axes_of(d)) for d in range(ndim))

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of one shard (uneven dimensions round up, as XLA pads them)."""
        counts = self.shard_counts(len(global_shape))
        return tuple(-(-n // c) for n, c in zip(global_shape, counts))

    @property
    def is_fully_replicated(self) -> bool:
        return all(not self.spec.axes_of(d) for d in range(len(self.spec)))

    def to_sdy(self, ndim: int, mesh_name: str = "mesh") -> TensorShardingAttr:
        """The `#sdy.sharding<@mesh_name, [...]>` of an array of rank `ndim`."""
        self.check_rank(ndim)
        return TensorShardingAttr.get(mesh_name, [self.spec.axes_of(d) for d in range(ndim)])

    @classmethod
    def from_sdy(cls, mesh: Mesh, attr: TensorShardingAttr) -> NamedSharding:
        """The NamedSharding an `sdy.sharding` attribute describes over `mesh` (sub-axes are not
        representable as a PartitionSpec: ValueError)."""
        parts: list[Any] = []
        for d in attr.dims:
            if any(a.size is not None for a in d.axes):
                raise ValueError(f"{attr}: sub-axes have no PartitionSpec")
            names = tuple(a.name for a in d.axes)
            parts.append(None if not names else names[0] if len(names) == 1 else names)
        while parts and parts[-1] is None:
            parts.pop()
        return cls(mesh, PartitionSpec(*parts))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NamedSharding) or other.mesh != self.mesh:
            return False
        n = max(len(self.spec), len(other.spec))
        return all(self.spec.axes_of(d) == other.spec.axes_of(d) for d in range(n))

    def __hash__(self) -> int:
        return hash((self.mesh, tuple(s for s in self.spec if s is not None)))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"


def shard_slices(mesh_shape: dict[str, int], dim_axes: Sequence[Sequence[tuple[str, int | None, int | None]]],
                 global_shape: Sequence[int]) -> list[tuple[slice, ...]]:
    """The index of each partition's shard (partitions in row-major mesh order), clipped to
    `global_shape` (`slice(None)` for a dimension not split, as JAX). `dim_axes[d]` lists the
    (sub-)axes splitting dimension d, major to minor, as (name, pre_size, size) (pre_size and
    size None for a whole axis). A dimension split into k pieces gets pieces of ceil(n / k) (as
    XLA pads), the last ones shorter or empty."""
    names, sizes = list(mesh_shape), list(mesh_shape.values())
    out = []
    for p in range(math.prod(sizes)):
        coords = dict(zip(names, np.unravel_index(p, sizes))) if sizes else {}
        index = []
        for n, axes in zip(global_shape, list(dim_axes) + [[]] * (len(global_shape) - len(dim_axes))):
            pos, count = 0, 1
            for name, pre_size, sub_size in axes:
                whole = mesh_shape[name]
                if sub_size is None:
                    c, size = int(coords[name]), whole
                else:  # the axis as (pre_size, size, rest), major to minor: the middle factor
                    c, size = int(coords[name]) // (whole // ((pre_size or 1) * sub_size)) % sub_size, sub_size
                pos, count = pos * size + c, count * size
            piece = -(-n // count)
            index.append(slice(None) if count == 1 else slice(min(pos * piece, n), min((pos + 1) * piece, n)))
        out.append(tuple(index))
    return out


def make_mesh(axis_shapes: Sequence[int], axis_names: Sequence[str], devices: Sequence[Any] | None = None) -> Mesh:
    """A mesh of the first prod(axis_shapes) `devices` (by default loom's CPU devices,
    `loom.devices("numpy")`: as many as LOOM_NUM_CPU_DEVICES says), in row-major order, as
    `jax.make_mesh`."""
    from loom.runtime.devices import devices as all_devices
    shape = tuple(int(s) for s in axis_shapes)
    if len(shape) != len(tuple(axis_names)):
        raise ValueError(f"make_mesh: {len(shape)} axis sizes {shape} but {len(tuple(axis_names))} axis names "
                         f"{tuple(axis_names)}")
    available = list(all_devices("numpy") if devices is None else devices)
    needed = math.prod(shape)
    if needed > len(available):
        hint = " (set LOOM_NUM_CPU_DEVICES before importing loom for more CPU devices)" if devices is None else ""
        raise ValueError(f"make_mesh: a mesh of shape {shape} needs {needed} devices, but {len(available)} "
                         f"{'is' if len(available) == 1 else 'are'} available{hint}")
    grid = np.empty(needed, dtype=object)
    grid[:] = available[:needed]
    return Mesh(grid.reshape(shape), axis_names)


__all__ = ["Mesh", "NamedSharding", "P", "PartitionSpec", "make_mesh", "shard_slices"]
from loom.sharding.partitioning import partition  # noqa: E402, F401  (the partitioner, as loom.sharding.partition)
