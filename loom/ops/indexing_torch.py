"""The indexing ops' torch kernels (imported with torch: see `loom.ops.indexing`)."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import torch

from loom.backend import common
from loom.backend.common import TORCH_KERNELS, shape_of
from loom.backend.kernels import Kernel, Operand, Rest
from loom.backend.torch_kernels import SIGNED_OF, direct, flip_sign_bit, index_value, torch_kernel
from loom.ir.core import Operation
from loom.ops import indexing as kn


@torch_kernel("stablehlo.dynamic_slice")
def _dynamic_slice(op: Operation) -> Kernel:
    return Kernel(dynamic_slice, Operand(0), common.ints(op.get_attr("slice_sizes")), Rest(1))


def _clamped_starts(shape, sizes, starts) -> tuple:
    # int() reads each start index back to the host (one sync per index on a GPU).
    return tuple(slice(s, s + n) for s, n in
                 ((min(max(int(i), 0), d - n), n) for i, d, n in zip(starts, shape, sizes)))


def dynamic_slice(x, sizes, *starts):
    return x[_clamped_starts(x.shape, sizes, starts)]


def dynamic_update_slice(x, update, *starts):
    out = x.clone()
    out[_clamped_starts(x.shape, update.shape, starts)] = update
    return out


TORCH_KERNELS["stablehlo.dynamic_update_slice"] = direct(dynamic_update_slice)


# Gather and scatter ----------------------------------------------------------------------------

class FlatIndex:
    """Where each element of a gather's result or a scatter's updates lives in the flattened
    operand, for static shapes: the start indices' part computed per call (clamped for a gather;
    checked for a scatter, whose out-of-bounds windows XLA skips), the rest (window offsets,
    batching coordinates) once, when the kernel is built. `starts`: (operand stride, largest
    start in bounds) of each component of the index vector. `layout`: the shape of the start
    part (the index batch dims in place, ones elsewhere), broadcast with `static`."""

    __slots__ = ("ivd", "append", "strides", "limits", "layout", "static", "_on")

    def __init__(self, idx_shape: tuple[int, ...], ivd: int, starts: list[tuple[int, int]], static: np.ndarray,
                 layout: tuple[int, ...]) -> None:
        self.ivd, self.append = ivd, ivd == len(idx_shape)
        self.strides = [s for s, _ in starts]
        self.limits = [lim for _, lim in starts]
        self.layout = layout
        self.static = None if static.size == 1 and not static.any() else static
        self._on: dict = {}

    def _device(self, device) -> tuple:
        got = self._on.get(device)
        if got is None:
            def tensor(x):
                return torch.as_tensor(np.asarray(x, np.int64), device=device)
            got = self._on[device] = (None if self.static is None else tensor(self.static),
                                      tensor(self.strides), tensor(self.limits))
        return got

    def __call__(self, indices, clamp: bool) -> tuple:
        """(flat indices, the in-bounds mask of the start part or None when `clamp`)."""
        static, strides, limits = self._device(indices.device)
        valid = None
        if not self.strides:
            flat = torch.zeros(self.layout, dtype=torch.int64, device=indices.device)
        else:
            idx = indices.to(torch.int64)
            idx = idx.unsqueeze(-1) if self.append else torch.movedim(idx, self.ivd, -1)
            if len(self.strides) == 1:
                idx = idx[..., 0]
                if clamp:
                    idx = idx.clamp(0, self.limits[0])
                else:
                    valid = ((idx >= 0) & (idx <= self.limits[0])).reshape(self.layout)
                flat = idx if self.strides[0] == 1 else idx * self.strides[0]
            else:
                if clamp:
                    idx = torch.minimum(idx.clamp(min=0), limits)
                else:
                    valid = ((idx >= 0) & (idx <= limits)).all(-1).reshape(self.layout)
                flat = (idx * strides).sum(-1)
            flat = flat.reshape(self.layout)
        return (flat if static is None else flat + static), valid


def _placed(sizes: dict[int, int], rank: int) -> list[int]:
    """A shape of `rank` ones but for `sizes` (axis: size)."""
    return [sizes.get(a, 1) for a in range(rank)]


def _static_offsets(terms: list[tuple[int, int, int]], rank: int) -> np.ndarray:
    """sum of arange(size) * stride laid along axis, over the (axis, size, stride) terms."""
    out = np.zeros((1,) * rank, np.int64)
    for axis, size, stride in terms:
        out = out + (np.arange(size, dtype=np.int64) * stride).reshape(_placed({axis: size}, rank))
    return out


def _strides(shape: tuple[int, ...]) -> list[int]:
    return [math.prod(shape[d + 1:]) for d in range(len(shape))]


class Gather:
    """A gather over static shapes: one read (`torch.take`) of flat indices, the start indices
    clamped so every slice is in bounds, as StableHLO specifies."""

    __slots__ = ("index", "perm", "__name__")

    def __init__(self, operand_shape: tuple[int, ...], idx_shape: tuple[int, ...], dims: kn.GatherDims,
                 slice_sizes: tuple[int, ...]) -> None:
        ivd = dims.index_vector_dim
        batch = tuple(n for a, n in enumerate(idx_shape) if a != ivd)
        batch_axes = kn._batch_coordinates((*idx_shape, 1) if ivd == len(idx_shape) else idx_shape, ivd)
        nb = len(batch)
        kept = [d for d in range(len(operand_shape)) if d not in dims.collapsed_slice_dims and
                d not in dims.operand_batching_dims]
        stride = _strides(operand_shape)
        terms = [(nb + i, slice_sizes[d], stride[d]) for i, d in enumerate(kept)]
        for d, sd in zip(dims.operand_batching_dims, dims.start_indices_batching_dims):
            terms.append((batch_axes.index(sd), batch[batch_axes.index(sd)], stride[d]))
        rank = nb + len(kept)
        starts = [(stride[d], operand_shape[d] - slice_sizes[d]) for d in dims.start_index_map]
        self.index = FlatIndex(idx_shape, ivd, starts, _static_offsets(terms, rank),
                               (*batch, *(1,) * len(kept)))
        perm = kn.gather_permutation(dims, nb, rank)
        self.perm = None if perm == sorted(perm) else tuple(perm)
        self.__name__ = "gather"

    def __call__(self, operand, start_indices):
        out = torch.take(operand, self.index(start_indices, clamp=True)[0])
        return out if self.perm is None else out.permute(self.perm)


@torch_kernel("stablehlo.gather")
def _gather(op: Operation) -> Kernel | None:
    if not common.static_operands(op):
        return None
    dims = kn.GatherDims(op.get_attr("dimension_numbers"))
    sizes = tuple(common.ints(op.get_attr("slice_sizes")))
    plan = Gather(shape_of(op.operands[0].type), shape_of(op.operands[1].type), dims, sizes)
    return Kernel(plan, Operand(0), Operand(1))


_SCATTER_REDUCE = {"add": "sum", "mul": "prod", "max": "amax", "min": "amin"}


def scatter_flat_index(operand_shape: tuple[int, ...], idx_shape: tuple[int, ...], updates_shape: tuple[int, ...],
                       dims: kn.ScatterDims) -> FlatIndex:
    """The flat operand index of every update element of a scatter (its `FlatIndex` plan)."""
    ivd = dims.index_vector_dim
    rank = len(updates_shape)
    batch_axes = kn._batch_coordinates((*idx_shape, 1) if ivd == len(idx_shape) else idx_shape, ivd)
    scatter_axes = [a for a in range(rank) if a not in dims.update_window_dims]
    window_dims = [d for d in range(len(operand_shape)) if d not in dims.inserted_window_dims and
                   d not in dims.input_batching_dims]
    stride = _strides(operand_shape)
    sizes = {d: updates_shape[u] for d, u in zip(window_dims, dims.update_window_dims)}
    terms = [(u, updates_shape[u], stride[d]) for d, u in zip(window_dims, dims.update_window_dims)]
    for d, sd in zip(dims.input_batching_dims, dims.scatter_indices_batching_dims):
        axis = scatter_axes[batch_axes.index(sd)]
        terms.append((axis, updates_shape[axis], stride[d]))
    starts = [(stride[d], operand_shape[d] - sizes.get(d, 1)) for d in dims.scatter_dims_to_operand_dims]
    layout = tuple(_placed({a: updates_shape[a] for a in scatter_axes}, rank))
    return FlatIndex(idx_shape, ivd, starts, _static_offsets(terms, rank), layout)


class Scatter:
    """A scatter over static shapes whose update computation is overwrite (`kind` None) or add,
    mul, max, min: flat indices computed once per call, windows out of bounds (which XLA skips)
    sent to a scratch slot past the end, so nothing is read back to the host. `unsigned`: 16, 32
    and 64-bit unsigned operands, updated on their signed views (max and min with the sign bit
    flipped)."""

    __slots__ = ("index", "updates_shape", "kind", "unsigned", "__name__")

    def __init__(self, operand_shape: tuple[int, ...], idx_shape: tuple[int, ...], updates_shape: tuple[int, ...],
                 dims: kn.ScatterDims, kind: str | None, unsigned: bool = False) -> None:
        self.index = scatter_flat_index(operand_shape, idx_shape, updates_shape, dims)
        self.updates_shape, self.kind, self.unsigned = tuple(updates_shape), kind, unsigned
        self.__name__ = "scatter_unsigned" if unsigned else "scatter"

    def __call__(self, operand, indices, updates):
        if self.unsigned:
            indices = index_value(indices, False)
            signed = SIGNED_OF.get(operand.dtype)
            if signed is not None:
                x, u = operand.view(signed), updates.view(signed)
                if self.kind in ("max", "min"):
                    return flip_sign_bit(self.apply(flip_sign_bit(x), indices, flip_sign_bit(u))).view(operand.dtype)
                return self.apply(x, indices, u).view(operand.dtype)
        return self.apply(operand, indices, updates)

    def apply(self, operand, indices, updates):
        size = operand.numel()
        flat, valid = self.index(indices, clamp=False)
        if valid is not None:
            flat = torch.where(valid, flat, size)
        target = flat.expand(self.updates_shape).reshape(-1)
        out = torch.cat([operand.reshape(-1), operand.new_zeros(1)])
        values = updates.reshape(-1)
        kind = self.kind
        if kind is None:
            # XLA applies colliding updates in order, the last one staying; torch's index_put_
            # picks any of them on CUDA: keep only each target's last update
            position = torch.arange(target.numel(), device=target.device)
            last = torch.full((size + 1,), -1, dtype=position.dtype, device=target.device)
            last.scatter_reduce_(0, target, position, "amax")
            keep = last[target] == position
            out.index_put_((target[keep],), values[keep])
        elif kind == "add" and operand.dtype != torch.bool:
            out.index_put_((target,), values, accumulate=True)
        elif operand.dtype == torch.bool:
            reduce = {"add": "amax", "max": "amax", "mul": "amin", "min": "amin"}[kind]
            out = out.to(torch.uint8).scatter_reduce_(0, target, values.to(torch.uint8), reduce).to(torch.bool)
        else:
            out.scatter_reduce_(0, target, values, _SCATTER_REDUCE[kind])
        return out[:size].reshape(operand.shape)


class ScatterRounds:
    """A scatter over static shapes with any elementwise update computation `body` (and any
    number of operands), applied as XLA does, one update after the other in update order: the
    updates are grouped into rounds, round r holding each target's r-th update, so within a round
    every target is distinct and `body` runs on whole vectors. One host read (the number of
    rounds) per call; windows out of bounds are dropped."""

    __slots__ = ("index", "updates_shape", "__name__")

    def __init__(self, operand_shape: tuple[int, ...], idx_shape: tuple[int, ...], updates_shape: tuple[int, ...],
                 dims: kn.ScatterDims) -> None:
        self.index = scatter_flat_index(operand_shape, idx_shape, updates_shape, dims)
        self.updates_shape = tuple(updates_shape)
        self.__name__ = "scatter_rounds"

    def __call__(self, body: Callable, inputs: tuple, indices, updates: tuple) -> tuple:
        flat, valid = self.index(indices, clamp=False)
        target = flat.expand(self.updates_shape).reshape(-1)
        values = [u.reshape(-1) for u in updates]
        if valid is not None:
            keep = valid.expand(self.updates_shape).reshape(-1)
            target, values = target[keep], [v[keep] for v in values]
        outs = [x.reshape(-1).clone() for x in inputs]
        n = target.numel()
        if n == 0:
            return tuple(o.reshape(x.shape) for o, x in zip(outs, inputs))
        sorted_target, order = torch.sort(target, stable=True)
        position = torch.arange(n, device=target.device)
        first = torch.ones(n, dtype=torch.bool, device=target.device)
        first[1:] = sorted_target[1:] != sorted_target[:-1]
        rank = position - torch.cummax(torch.where(first, position, 0), 0).values
        for r in range(int(rank.max()) + 1):
            chosen = order[rank == r]
            where = target[chosen]
            new = body(*(o[where] for o in outs), *(v[chosen] for v in values))
            for o, v in zip(outs, new):
                o[where] = v
        return tuple(o.reshape(x.shape) for o, x in zip(outs, inputs))
