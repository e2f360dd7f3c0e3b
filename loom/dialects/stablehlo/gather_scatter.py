"""`stablehlo.gather` and `stablehlo.scatter`, with their shape rules (`gather_shape`,
`check_scatter`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from loom.dialects.stablehlo.attributes import GatherDimensionNumbers, ScatterDimensionNumbers, i64_array
from loom.dialects.stablehlo.base import StableHLOOp, build_region, reducer_types, scalar_tensor
from loom.dialects.stablehlo.properties import prop_ints
from loom.dialects.stablehlo.types import (
    AnyTensor,
    BoolAttr_,
    I64Array,
    ShapeError,
    TensorOf,
    attr_of,
    check_dims_in_range,
    check_same_element_type,
    compatible,
    dim_eq,
    element_type,
    with_element_type,
)
from loom.ir.attributes import BoolAttr, Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Pure, opt_prop, prop, region_def, result_def, var_operand, var_result
from loom.ir.opdef import operand as operand_def
from loom.ir.types import DYNAMIC, RankedTensorType, UnrankedTensorType, i1

__all__ = ["gather_shape", "GatherOp", "check_scatter", "ScatterOp"]


def _sorted_unique(dims: Sequence[int], what: str) -> None:
    if list(dims) != sorted(set(dims)):
        raise ShapeError(f"{what} {list(dims)} must be sorted and unique")


def _index_batch_dims(indices: RankedTensorType, index_vector_dim: int) -> tuple[list[int], int]:
    """The batch dimensions of the indices (all but `index_vector_dim`) and the index vector size."""
    if not 0 <= index_vector_dim <= indices.rank:
        raise ShapeError(f"index_vector_dim {index_vector_dim} is out of range for indices '{indices}'")
    if index_vector_dim == indices.rank:
        return list(range(indices.rank)), 1
    return [d for d in range(indices.rank) if d != index_vector_dim], indices.shape[index_vector_dim]


def gather_shape(operand: RankedTensorType, indices: RankedTensorType, dn: GatherDimensionNumbers,
                 slice_sizes: Sequence[int]) -> tuple[int, ...]:
    """The result shape of `gather`, checking the dimension numbers (the spec's constraints)."""
    r = operand.rank
    if len(slice_sizes) != r:
        raise ShapeError(f"slice_sizes {list(slice_sizes)} must have one entry per dimension of operand '{operand}'")
    batch, vector = _index_batch_dims(indices, dn.index_vector_dim)
    _sorted_unique(dn.offset_dims, "offset_dims")
    _sorted_unique(dn.collapsed_slice_dims, "collapsed_slice_dims")
    _sorted_unique(dn.operand_batching_dims, "operand_batching_dims")
    check_dims_in_range(dn.collapsed_slice_dims, r, "collapsed_slice_dims")
    check_dims_in_range(dn.operand_batching_dims, r, "operand_batching_dims")
    check_dims_in_range(dn.start_index_map, r, "start_index_map")
    check_dims_in_range(dn.start_indices_batching_dims, indices.rank, "start_indices_batching_dims")
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims):
        raise ShapeError("collapsed_slice_dims and operand_batching_dims must be disjoint")
    if set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise ShapeError("start_index_map and operand_batching_dims must be disjoint")
    if dn.index_vector_dim in dn.start_indices_batching_dims:
        raise ShapeError("start_indices_batching_dims must not contain index_vector_dim")
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims):
        raise ShapeError("operand_batching_dims and start_indices_batching_dims must have the same size")
    if vector != DYNAMIC and len(dn.start_index_map) != vector:
        raise ShapeError(f"start_index_map {list(dn.start_index_map)} must have as many entries as the index vector "
                         f"dimension of start_indices '{indices}' ({vector})")
    for d, s in enumerate(slice_sizes):
        size = operand.shape[d]
        if s < 0 or (size != DYNAMIC and s > size):
            raise ShapeError(f"slice size {s} of dimension {d} is out of range for operand '{operand}'")
        if (d in dn.collapsed_slice_dims or d in dn.operand_batching_dims) and s > 1:
            raise ShapeError(f"slice size of collapsed or batching dimension {d} must be at most 1, but is {s}")
    offset_sizes = [s for d, s in enumerate(slice_sizes)
                    if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    rank = len(batch) + len(offset_sizes)
    if len(dn.offset_dims) != len(offset_sizes):
        raise ShapeError(f"offset_dims {list(dn.offset_dims)} must have one entry per slice dimension that is neither "
                         f"collapsed nor batching ({len(offset_sizes)})")
    check_dims_in_range(dn.offset_dims, rank, "offset_dims")
    offsets, batches = iter(offset_sizes), iter(indices.shape[d] for d in batch)
    return tuple(next(offsets) if d in dn.offset_dims else next(batches) for d in range(rank))


class GatherOp(StableHLOOp):
    """Gathers slices of `operand` at the positions in `start_indices` (full dimension-number
    semantics, including batching dimensions)."""

    name = "stablehlo.gather"
    operand = operand_def(AnyTensor)
    start_indices = operand_def(TensorOf("i"))
    dimension_numbers = prop(attr_of(GatherDimensionNumbers))
    slice_sizes = prop(I64Array)
    indices_are_sorted = opt_prop(BoolAttr_)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t, indices = operand_types
        dn = properties.get("dimension_numbers")
        if not isinstance(t, RankedTensorType) or not isinstance(indices, RankedTensorType) or \
                not isinstance(dn, GatherDimensionNumbers):
            return [UnrankedTensorType(element_type(t))]
        shape = gather_shape(t, indices, dn, prop_ints(properties, "slice_sizes"))
        return [RankedTensorType(shape, t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, start_indices: Value,
              dimension_numbers: GatherDimensionNumbers, slice_sizes: Sequence[int],
              indices_are_sorted: bool = False, location: Location | None = None) -> Operation:
        props = {"dimension_numbers": dimension_numbers, "slice_sizes": i64_array(slice_sizes),
                 "indices_are_sorted": BoolAttr(indices_are_sorted)}
        return cls.insert(builder, [operand, start_indices], props, location=location)


def check_scatter(inputs: Sequence[RankedTensorType], indices: RankedTensorType,
                  updates: Sequence[RankedTensorType], dn: ScatterDimensionNumbers) -> None:
    """The spec's constraints between the shapes of `scatter`'s operands and its dimension numbers."""
    t, u = inputs[0], updates[0]
    for x in inputs[1:]:
        if not compatible(with_element_type(x, i1), with_element_type(t, i1)):
            raise ShapeError(f"all inputs must have the same shape, but got '{t}' and '{x}'")
    for x in updates[1:]:
        if not compatible(with_element_type(x, i1), with_element_type(u, i1)):
            raise ShapeError(f"all updates must have the same shape, but got '{u}' and '{x}'")
    batch, vector = _index_batch_dims(indices, dn.index_vector_dim)
    _sorted_unique(dn.update_window_dims, "update_window_dims")
    _sorted_unique(dn.inserted_window_dims, "inserted_window_dims")
    _sorted_unique(dn.input_batching_dims, "input_batching_dims")
    check_dims_in_range(dn.update_window_dims, u.rank, "update_window_dims")
    check_dims_in_range(dn.inserted_window_dims, t.rank, "inserted_window_dims")
    check_dims_in_range(dn.input_batching_dims, t.rank, "input_batching_dims")
    check_dims_in_range(dn.scatter_dims_to_operand_dims, t.rank, "scatter_dims_to_operand_dims")
    check_dims_in_range(dn.scatter_indices_batching_dims, indices.rank, "scatter_indices_batching_dims")
    if set(dn.inserted_window_dims) & set(dn.input_batching_dims):
        raise ShapeError("inserted_window_dims and input_batching_dims must be disjoint")
    if set(dn.scatter_dims_to_operand_dims) & set(dn.input_batching_dims):
        raise ShapeError("scatter_dims_to_operand_dims and input_batching_dims must be disjoint")
    if len(dn.input_batching_dims) != len(dn.scatter_indices_batching_dims):
        raise ShapeError("input_batching_dims and scatter_indices_batching_dims must have the same size")
    if vector != DYNAMIC and len(dn.scatter_dims_to_operand_dims) != vector:
        raise ShapeError(f"scatter_dims_to_operand_dims {list(dn.scatter_dims_to_operand_dims)} must have as many "
                         f"entries as the index vector dimension of scatter_indices '{indices}' ({vector})")
    if u.rank != len(dn.update_window_dims) + len(batch):
        raise ShapeError(f"updates '{u}' must have rank {len(dn.update_window_dims) + len(batch)} (update window "
                         f"dimensions plus the batch dimensions of scatter_indices '{indices}')")
    scatter_dims = [d for d in range(u.rank) if d not in dn.update_window_dims]
    for ud, idx in zip(scatter_dims, batch):
        if not dim_eq(u.shape[ud], indices.shape[idx]):
            raise ShapeError(f"updates dimension {ud} ({u.shape[ud]}) must match scatter_indices dimension {idx} "
                             f"({indices.shape[idx]}); updates '{u}', scatter_indices '{indices}'")
    window_operand_dims = [d for d in range(t.rank) if d not in dn.inserted_window_dims
                           and d not in dn.input_batching_dims]
    if len(window_operand_dims) != len(dn.update_window_dims):
        raise ShapeError(f"update_window_dims {list(dn.update_window_dims)} must have one entry per input dimension "
                         f"that is neither inserted nor batching ({len(window_operand_dims)})")
    for ud, od in zip(dn.update_window_dims, window_operand_dims):
        a, b = u.shape[ud], t.shape[od]
        if a != DYNAMIC and b != DYNAMIC and a > b:
            raise ShapeError(f"updates window dimension {ud} ({a}) is larger than input dimension {od} ({b})")


class ScatterOp(StableHLOOp):
    """`inputs` with the windows at `scatter_indices` combined with `updates` by the
    `update_computation` region."""

    name = "stablehlo.scatter"
    inputs = var_operand(AnyTensor)
    scatter_indices = operand_def(TensorOf("i"))
    updates = var_operand(AnyTensor)
    scatter_dimension_numbers = prop(attr_of(ScatterDimensionNumbers))
    indices_are_sorted = opt_prop(BoolAttr_)
    unique_indices = opt_prop(BoolAttr_)
    results_ = var_result(AnyTensor)
    update_computation = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        n = (len(operand_types) - 1) // 2
        if n < 1 or len(operand_types) != 2 * n + 1:
            raise ShapeError("expects N inputs, scatter_indices and N updates")
        inputs, indices, updates = operand_types[:n], operand_types[n], operand_types[n + 1:]
        dn = properties.get("scatter_dimension_numbers")
        for i, (x, u) in enumerate(zip(inputs, updates)):
            check_same_element_type(x, u, f"inputs #{i} and updates #{i}")
        if isinstance(dn, ScatterDimensionNumbers) and all(isinstance(x, RankedTensorType) for x in operand_types):
            check_scatter(inputs, indices, updates, dn)
        if regions:
            ets = reducer_types(regions[0], "update_computation", [element_type(x) for x in inputs])
            return [with_element_type(x, et) for x, et in zip(inputs, ets)]
        return list(inputs)

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], scatter_indices: Value,
              updates: Sequence[Value], dimension_numbers: ScatterDimensionNumbers,
              update_computation: Callable[[Builder, list[Value]], Sequence[Value]],
              indices_are_sorted: bool = False, unique_indices: bool = False,
              location: Location | None = None) -> Operation:
        """`update_computation(builder, [current..., update...])` returns the new values."""
        arg_types = [scalar_tensor(element_type(v.type)) for v in inputs] * 2
        props = {"scatter_dimension_numbers": dimension_numbers, "indices_are_sorted": BoolAttr(indices_are_sorted),
                 "unique_indices": BoolAttr(unique_indices)}
        return cls.insert(builder, [*inputs, scatter_indices, *updates], props,
                          regions=[build_region(arg_types, update_computation)], location=location)
