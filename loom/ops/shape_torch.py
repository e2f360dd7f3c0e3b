"""The shape ops' torch kernels (imported with torch: see `loom.ops.shape`)."""

from __future__ import annotations

import torch

from loom.backend import common
from loom.backend.kernels import (
    KERNELS,
    PACKED,
    Kernel,
    Operand,
    identity,
    operand_dtype,
    result_dtype,
    result_shape,
)
from loom.backend.torch_kernels import NARROW_FLOATS, pad, torch_dtype, torch_kernel
from loom.ir.core import Operation
from loom.ops import shape


@torch_kernel("stablehlo.reshape")
def _reshape(op: Operation) -> Kernel:
    return Kernel(torch.reshape, Operand(0), result_shape(op))


@torch_kernel("stablehlo.transpose")
def _transpose(op: Operation) -> Kernel:
    return Kernel(torch.permute, Operand(0), common.ints(op.get_attr("permutation")))


@torch_kernel("stablehlo.broadcast_in_dim")
def _broadcast_in_dim(op: Operation) -> Kernel:
    k = KERNELS["stablehlo.broadcast_in_dim"](op)
    if k.fn is identity:
        return k
    if k.fn is shape.broadcast_transposed:
        return Kernel(broadcast_transposed, *k.template)
    return Kernel(broadcast_in_dim, *k.template)


def broadcast_in_dim(x, expanded, shape):
    return x.reshape(expanded).expand(shape)


def broadcast_transposed(x, perm, expanded, shape):
    return x.permute(perm).reshape(expanded).expand(shape)


@torch_kernel("stablehlo.slice")
def _slice(op: Operation) -> Kernel:
    return KERNELS["stablehlo.slice"](op)  # getitem with positive-step slices works on tensors



@torch_kernel("stablehlo.concatenate")
def _concatenate(op: Operation) -> Kernel:
    return Kernel(torch.cat, PACKED, common.integer(op.get_attr("dimension")))


@torch_kernel("stablehlo.reverse")
def _reverse(op: Operation) -> Kernel:
    return Kernel(torch.flip, Operand(0), common.ints(op.get_attr("dimensions")))


@torch_kernel("stablehlo.pad")
def _pad(op: Operation) -> Kernel:
    return Kernel(pad, Operand(0), Operand(1), common.ints(op.get_attr("edge_padding_low")),
                  common.ints(op.get_attr("edge_padding_high")), common.ints(op.get_attr("interior_padding")))


@torch_kernel("stablehlo.bitcast_convert")
def _bitcast_convert(op: Operation) -> Kernel | None:
    in_dtype, dtype = operand_dtype(op), result_dtype(op)
    if in_dtype in NARROW_FLOATS or dtype in NARROW_FLOATS or \
            common.element_bits(op.operands[0].type) != in_dtype.itemsize * 8 or \
            common.element_bits(op.results[0].type) != dtype.itemsize * 8:
        return None  # bits that do not fill their storage: the numpy kernel regroups them
    return Kernel(bitcast_convert, Operand(0), torch_dtype(dtype), result_shape(op))


def bitcast_convert(x, dtype, shape):
    return x.contiguous().reshape(-1).view(dtype).reshape(shape)
