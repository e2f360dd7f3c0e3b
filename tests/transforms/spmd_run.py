"""Run a partitioned program on a mesh of threads from global values: split each argument by its
`sdy.sharding` (padding uneven dimensions as XLA does), run every partition with
`loom.runtime.local.run_spmd`, and assemble each result from the shards its `sdy.sharding` names
(unpadded to its `loom.global_type`). Also counts the bytes a partitioned program's collectives
move per device, the way the XLA side counts them (tests/transforms/spmd_corpus/generate.py)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from loom.ir.core import Operation
from loom.ir.types import RankedTensorType
from loom.runtime.devices import host_array
from loom.runtime.local import run_spmd
from loom.transforms.sharding_propagation import find_mesh
from loom.transforms.spmd_partition import byte_width


def _main(module: Operation) -> Operation:
    return next(op for op in module.regions[0].entry.ops if op.name == "func.func"
                and op.properties["sym_name"].value == "main")


def _coords(mesh: dict[str, int], p: int) -> dict[str, int]:
    out, rest = {}, p
    for name in reversed(list(mesh)):
        out[name] = rest % mesh[name]
        rest //= mesh[name]
    return out


def _index(mesh: dict[str, int], coords: dict[str, int], axes: Sequence[str]) -> int:
    i = 0
    for a in axes:
        i = i * mesh[a] + coords[a]
    return i


def _dims(attr) -> list[tuple[str, ...]]:
    return [tuple(a.name for a in d.axes) for d in attr.dims]


def split(mesh: dict[str, int], x: np.ndarray, dims: list[tuple[str, ...]], p: int) -> np.ndarray:
    """Partition p's shard of global `x` split as `dims` says (padded with zeros)."""
    if x.ndim == 0:
        return x
    coords = _coords(mesh, p)
    index = []
    pad = []
    for n, axes in zip(x.shape, dims):
        k = math.prod(mesh[a] for a in axes)
        local = -(-n // k)
        start = _index(mesh, coords, axes) * local
        index.append(slice(min(start, n), min(start + local, n)))
        pad.append((0, local - (min(start + local, n) - min(start, n))))
    return np.pad(x[tuple(index)], pad)


def assemble(mesh: dict[str, int], shards: list[np.ndarray], dims: list[tuple[str, ...]],
             shape: tuple[int, ...]) -> np.ndarray:
    """The global value from every partition's shard (checking that copies agree)."""
    out = np.zeros(shape, shards[0].dtype)
    seen = np.zeros(shape, bool)
    for p, shard in enumerate(shards):
        coords = _coords(mesh, p)
        index = []
        for n, axes, local in zip(shape, dims, shard.shape):
            start = _index(mesh, coords, axes) * local
            index.append(slice(min(start, n), min(start + local, n)))
        piece = shard[tuple(slice(0, s.stop - s.start) for s in index)]
        region = tuple(index)
        if seen[region].any():
            np.testing.assert_allclose(out[region], piece, rtol=1e-5, atol=1e-5,
                                       err_msg=f"partition {p} holds a different copy")
        out[region] = piece
        seen[region] = True
    assert seen.all(), "some elements are on no partition"
    return out


def run_global(partitioned: Operation, *args: np.ndarray, devices: Sequence | None = None) -> list[np.ndarray]:
    """Run the partitioned module on global arguments; global results. `devices`: torch devices
    to run on (loom.runtime.device_mesh), by default the host's threads."""
    _, mesh = find_mesh(partitioned)
    fn = _main(partitioned)
    n = math.prod(mesh.values())
    arg_dims = [_dims(d.get_value("sdy.sharding")) for d in fn.properties["arg_attrs"]]
    per_device = [[split(mesh, np.asarray(x), dims, p) for x, dims in zip(args, arg_dims)] for p in range(n)]
    outs = run_spmd(partitioned, per_device, devices=None if devices is None else devices[:n])
    results = []
    for j, d in enumerate(fn.properties["res_attrs"]):
        global_type = d.get_value("loom.global_type").value
        results.append(assemble(mesh, [host_array(o[j]) for o in outs], _dims(d.get_value("sdy.sharding")),
                                tuple(global_type.shape)))
    return results


_COST = {"stablehlo.all_reduce": lambda n, v, r: 2 * (n - 1) / n * v,
         "stablehlo.all_gather": lambda n, v, r: (n - 1) / n * r,
         "stablehlo.reduce_scatter": lambda n, v, r: (n - 1) * r,
         "stablehlo.all_to_all": lambda n, v, r: (n - 1) / n * v,
         "stablehlo.collective_permute": lambda n, v, r: v,
         "stablehlo.collective_broadcast": lambda n, v, r: v}


def collective_bytes(module: Operation) -> float:
    """Bytes per device moved by the collectives of a partitioned program, each counted once."""
    total = 0.0
    for op in module.walk():
        if op.name not in _COST:
            continue
        groups = op.properties.get("replica_groups")
        n = groups.type.shape[1] if groups is not None and groups.type.shape[0] else 2
        def nbytes(t: RankedTensorType) -> int:
            return math.prod(t.shape) * byte_width(t.element_type)
        total += _COST[op.name](n, nbytes(op.operands[0].type), nbytes(op.results[0].type))
    return total


__all__ = ["assemble", "collective_bytes", "run_global", "split"]
