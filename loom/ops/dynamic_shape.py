"""The dynamic forms of static ops, run on static inputs (the sizes, paddings and bounds known when
the program runs): `dynamic_pad` (pad), `dynamic_gather` (gather), `dynamic_conv` (convolution),
`real_dynamic_slice` (a strided slice with run-time bounds) and `set_dimension_size` (a bounded
dimension cut to its run-time size).

Each kernel reads its run-time operands, then runs the static op's kernel, with its semantics:
gather clamps start indices so that each slice lies inside the operand, pad crops for negative
edge padding. What the spec leaves undefined (a negative interior padding, a slice outside the
operand, a size past the bound) or a result whose shape contradicts the result type is an
`ExecutionError` naming the op and its location. On the torch backend they run their numpy
kernels on the tensors' values: the sizes they read decide the shape of the result, on the host.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.backend import kernels as kn
from loom.backend.common import TORCH_KERNELS, ConvDims, ExecutionError, bools, integer, ints, padding_pairs
from loom.backend.kernels import KERNELS, Kernel, Operand
from loom.ir.core import Operation
from loom.ops.indexing import GatherDims, gather
from loom.ops.linalg import convolution
from loom.ops.registry import declare, register, unsupported


def _ints(x) -> list[int]:
    return [int(v) for v in np.asarray(x).reshape(-1)]


class _Where:
    """An op's name and location, for the errors of its kernel, and the static dims of its result."""

    def __init__(self, op: Operation) -> None:
        self.text = f"{op.name} (at {op.location})"
        self.shape = tuple(None if d is None or d < 0 else d for d in getattr(op.results[0].type, "shape", ()))

    def fail(self, why: str) -> ExecutionError:
        return ExecutionError(f"{self.text}: {why}")

    def checked(self, out: np.ndarray) -> np.ndarray:
        if len(out.shape) != len(self.shape) or any(s is not None and s != n for s, n in zip(self.shape, out.shape)):
            raise self.fail(f"the run-time operands give a result of shape {out.shape}, but the result type has "
                            f"shape {tuple('?' if s is None else s for s in self.shape)}")
        return out


def dynamic_pad(x, value, low, high, interior, where: _Where):
    low, high, interior = _ints(low), _ints(high), _ints(interior)
    if min(interior, default=0) < 0:
        raise where.fail(f"interior padding must not be negative, got {interior}")
    return where.checked(kn.pad(x, np.asarray(value).reshape(()), low, high, interior))


def dynamic_gather(operand, start_indices, slice_sizes, dims: GatherDims, where: _Where):
    sizes = _ints(slice_sizes)
    shape = np.shape(operand)
    if len(sizes) != len(shape) or any(not 0 <= s <= n for s, n in zip(sizes, shape)):
        raise where.fail(f"slice sizes {sizes} do not fit in the operand's shape {shape}")
    return where.checked(gather(operand, start_indices, dims, tuple(sizes)))


def dynamic_conv(lhs, rhs, padding, config: tuple, where: _Where):
    pairs = np.asarray(padding).reshape(-1, 2)
    dims, strides, _, *rest = config
    return where.checked(convolution(lhs, rhs, (dims, strides, tuple(map(tuple, pairs.tolist())), *rest)))


def real_dynamic_slice(x, start, limit, strides, where: _Where):
    start, limit, strides = _ints(start), _ints(limit), _ints(strides)
    shape = np.shape(x)
    for d, (lo, hi, step, n) in enumerate(zip(start, limit, strides, shape)):
        if not (0 <= lo <= hi <= n and step > 0):
            raise where.fail(f"dimension {d}: the slice [{lo}:{hi}:{step}] is not inside the operand's size {n} "
                             f"(0 <= start <= limit <= size, stride > 0)")
    return where.checked(np.asarray(x)[tuple(slice(lo, hi, step) for lo, hi, step in zip(start, limit, strides))])


def set_dimension_size(x, size, dimension: int, where: _Where):
    size = int(np.asarray(size))
    bound = np.shape(x)[dimension]
    if not 0 <= size <= bound:
        raise where.fail(f"size {size} of dimension {dimension} is outside [0, {bound}] (its bound)")
    index: list = [slice(None)] * np.ndim(x)
    index[dimension] = slice(0, size)
    return where.checked(np.asarray(x)[tuple(index)])


def _conv_config(op: Operation) -> tuple:
    """The static convolution's configuration, its padding (a placeholder) filled at run time."""
    dims = ConvDims(op.get_attr("dimension_numbers"))
    n = len(dims.input_spatial)
    out = kn.result_dtype(op)
    return (dims, ints(op.get_attr("window_strides"), [1] * n), padding_pairs(None, n),
            ints(op.get_attr("lhs_dilation"), [1] * n), ints(op.get_attr("rhs_dilation"), [1] * n),
            bools(op.get_attr("window_reversal"), n), integer(op.get_attr("feature_group_count"), 1),
            integer(op.get_attr("batch_group_count"), 1), kn._compute_dtype(out), out)


_KERNELS = {
    "stablehlo.dynamic_pad": lambda op: Kernel(dynamic_pad, kn.ALL, _Where(op)),
    "stablehlo.dynamic_gather": lambda op: Kernel(dynamic_gather, Operand(0), Operand(1), Operand(2),
                                                  GatherDims(op.get_attr("dimension_numbers")), _Where(op)),
    "stablehlo.dynamic_conv": lambda op: Kernel(dynamic_conv, Operand(0), Operand(1), Operand(2), _conv_config(op),
                                                _Where(op)),
    "stablehlo.real_dynamic_slice": lambda op: Kernel(real_dynamic_slice, kn.ALL, _Where(op)),
    "stablehlo.set_dimension_size": lambda op: Kernel(set_dimension_size, Operand(0), Operand(1),
                                                      integer(op.get_attr("dimension")), _Where(op)),
}


def _on_the_host(op: Operation) -> None:
    """The torch table's entry for an op that runs its numpy kernel on the tensors' values."""
    return None


NAMES: Sequence[str] = tuple(_KERNELS)
for _name, _maker in _KERNELS.items():
    register(KERNELS, _name, _maker)
    register(TORCH_KERNELS, _name, _on_the_host)
declare(NAMES, unsupported("dynamic shapes: run for programs other producers export, not traced, differentiated or "
                           "batched by loom"), tables=("jvp", "vjp", "batching"))
declare("stablehlo.dynamic_conv", unsupported("a form loom's front end does not emit: run replicated"),
        tables=("sharding",))
