"""Top-k: `knn.approx_top_k` (approximate and fused top-k of loom's `knn` dialect) and `chlo.top_k`,
which shares its rules. Kernels in `loom.backend.knn_kernels`.

The rules of `knn.approx_top_k` and `chlo.top_k`:

- VJP: the values' cotangent is scattered (added) back to the selected positions of the operand;
  padding entries (index -1, only without `aggregate_to_topk`) receive nothing. The indices carry
  no cotangent.
- JVP: the values' tangent is the operand's tangent gathered at the selected positions (JAX's rule).
- vmap: the op applied to the batched operand with the reduction dimension renumbered (for
  `chlo.top_k`, whose dimension is the last, the batch dimension moves to the front). For a rank-1
  operand without `aggregate_to_topk` the batched op is rank 2, whose bin count XLA computes
  with the 128-lane tiling instead of the 1024-element chunk: as `jax.vmap` does.

Both gradients work on the reduction dimension moved last and the other dimensions flattened, so
one 1-D scatter or gather (with flat indices `row * N + index`) serves every rank.
"""

from __future__ import annotations

import numpy as np

from loom.dialects import chlo, knn, stablehlo
from loom.dialects.stablehlo import GatherDimensionNumbers, ScatterDimensionNumbers
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.types import IntegerType, RankedTensorType
from loom.ops.registry import declare, register, unsupported
from loom.transforms.autodiff import VJP_RULES, full, is_float
from loom.transforms.batching import BATCH_RULES, moveaxis
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.sharding_propagation import SHARDING_RULES, Factors, shape_of

_I32 = IntegerType(32)


def _dimension(op: Operation) -> int:
    rank = len(op.operands[0].type.shape)
    if op.name == "chlo.top_k":
        return rank - 1
    return int(op.properties["reduction_dimension"].value) % rank


def _to_rows(b: Builder, v: Value, dim: int) -> tuple[Value, list[int]]:
    """`v` with `dim` moved last and the other dimensions flattened: (rows, width), plus the
    permutation used."""
    shape = list(v.type.shape)
    perm = [i for i in range(len(shape)) if i != dim] + [dim]
    if perm != list(range(len(shape))):
        v = stablehlo.transpose(b, v, perm)
    rows = int(np.prod([shape[i] for i in perm[:-1]], dtype=np.int64))
    return stablehlo.reshape(b, v, (rows, shape[dim])), perm


def _from_rows(b: Builder, v: Value, shape: tuple[int, ...], perm: list[int]) -> Value:
    """The inverse of `_to_rows` for a (rows, width) value, to a result of `shape` (in the
    original dimension order)."""
    permuted = tuple(shape[i] for i in perm)
    v = stablehlo.reshape(b, v, permuted)
    if perm != list(range(len(shape))):
        inverse = [perm.index(i) for i in range(len(shape))]
        v = stablehlo.transpose(b, v, inverse)
    return v


def _flat_indices(b: Builder, indices: Value, n: int) -> tuple[Value, Value]:
    """(flat indices `row * n + max(index, 0)` as a (rows * width, 1) i32 tensor, the (rows, width)
    mask of valid entries)."""
    rows, width = indices.type.shape
    t = RankedTensorType((rows, width), _I32, None)
    zero = full(b, 0, t)
    valid = stablehlo.compare(b, indices, zero, "GE")
    clamped = stablehlo.select(b, valid, indices, zero)
    row = stablehlo.iota(b, t, 0)
    flat = stablehlo.add(b, clamped, stablehlo.multiply(b, row, full(b, n, t)))
    return stablehlo.reshape(b, flat, (rows * width, 1)), valid


def scatter_to_positions(b: Builder, values: Value, indices: Value, operand_type: RankedTensorType,
                         dim: int) -> Value:
    """A tensor of `operand_type`, zero except `values` added at `indices` along `dim` (the
    transpose of taking those positions)."""
    shape = tuple(operand_type.shape)
    n = shape[dim]
    v2, perm = _to_rows(b, values, dim)
    i2, _ = _to_rows(b, indices, dim)
    if i2.type.element_type != _I32:
        i2 = stablehlo.convert(b, i2, _I32)
    rows, width = v2.type.shape
    flat, valid = _flat_indices(b, i2, n)
    v2 = stablehlo.select(b, valid, v2, full(b, 0, v2.type))
    updates = stablehlo.reshape(b, v2, (rows * width,))
    et = operand_type.element_type
    zeros = full(b, 0, RankedTensorType((rows * n,), et, None))
    dn = ScatterDimensionNumbers.get(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    out = stablehlo.scatter(b, [zeros], flat, [updates], dn, lambda bb, args: [stablehlo.add(bb, args[0], args[1])])
    return _from_rows(b, stablehlo.reshape(b, out, (rows, n)), shape, perm)


def take_positions(b: Builder, x: Value, indices: Value, dim: int) -> Value:
    """`x` taken at `indices` along `dim` (`take_along_axis`; index -1 gives 0)."""
    n = x.type.shape[dim]
    x2, perm = _to_rows(b, x, dim)
    i2, _ = _to_rows(b, indices, dim)
    if i2.type.element_type != _I32:
        i2 = stablehlo.convert(b, i2, _I32)
    rows, width = i2.type.shape
    flat, valid = _flat_indices(b, i2, n)
    x1 = stablehlo.reshape(b, x2, (rows * n,))
    dn = GatherDimensionNumbers.get(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1)
    got = stablehlo.reshape(b, stablehlo.gather(b, x1, flat, dn, [1]), (rows, width))
    got = stablehlo.select(b, valid, got, full(b, 0, got.type))
    return _from_rows(b, got, tuple(indices.type.shape), perm)


def _vjp(b: Builder, op: Operation, cts: list[Value | None]) -> list[Value | None]:
    x = op.operands[0]
    if cts[0] is None or not is_float(x.type):
        return [None]
    return [scatter_to_positions(b, cts[0], op.results[1], x.type, _dimension(op))]


def _jvp(b: Builder, op: Operation, primals: list[Value], tangents: list[Value | None]) -> list[Value | None]:
    if tangents[0] is None:
        return [None, None]
    return [take_positions(b, tangents[0], op.results[1], _dimension(op)), None]


def _batch_approx_top_k(b: Builder, op: Operation, args: list[Value], dims: list[int | None]):
    (x,), (d,) = args, dims
    dim = _dimension(op)
    new_dim = dim + 1 if d <= dim else dim
    props = dict(op.properties)
    props["reduction_dimension"] = stablehlo.i64_attr(new_dim)
    new = knn.ApproxTopKOp.insert(b, [x], props)
    return list(new.results), [d, d]


def _batch_top_k(b: Builder, op: Operation, args: list[Value], dims: list[int | None]):
    (x,), (d,) = args, dims
    x = moveaxis(b, x, d, 0)
    values, indices = chlo.top_k(b, x, int(op.properties["k"].value))
    return [values, indices], [0, 0]


VJP_RULES["knn.approx_top_k"] = _vjp
JVP_RULES["knn.approx_top_k"] = _jvp
BATCH_RULES["knn.approx_top_k"] = _batch_approx_top_k
# chlo.top_k's rules are approx_top_k's (the same scatter / gather)
VJP_RULES["chlo.top_k"] = _vjp
JVP_RULES["chlo.top_k"] = _jvp
BATCH_RULES["chlo.top_k"] = _batch_top_k


declare("knn.approx_top_k", unsupported("runs its numpy kernel on the tensors' values"), tables=("torch",))
declare("knn.fused_score_top_k", unsupported("made by the knn fusion pass after differentiation and batching"),
        tables=("jvp", "vjp", "batching"))
declare("knn.fused_score_top_k", unsupported("its numpy kernel runs on the tensors' values, until the Triton kernel "
                                             "loads (on CUDA devices)", until_loaded="loom.backend.triton_knn"),
        tables=("torch",))


def _top_k_sharding(op):
    """Leading dimensions kept; the last (the one searched) needs replication."""
    f = Factors()
    shape = shape_of(op.operands[0])
    lead = [f.new(n) for n in shape[:-1]]
    last_in, last_out = f.new(shape[-1]), f.new(shape_of(op.results[0])[-1])
    return f.rule([lead + [last_in]], [lead + [last_out]] * len(op.results), need_replication={last_in, last_out})


register(SHARDING_RULES, "chlo.top_k", _top_k_sharding)


declare(["knn.approx_top_k", "knn.fused_score_top_k"], unsupported("search kernels: run replicated"),
        tables=("sharding",))
