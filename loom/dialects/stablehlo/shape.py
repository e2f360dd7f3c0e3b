"""Ops that move, select or pad elements without computing on them: broadcast_in_dim, reshape,
transpose, slice, dynamic_slice, dynamic_update_slice, concatenate, pad, reverse, and
get_dimension_size."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loom.dialects.stablehlo.attributes import i64_array, i64_attr
from loom.dialects.stablehlo.base import HloCompatibleOperandsAndResultType, StableHLOOp, scalar_tensor
from loom.dialects.stablehlo.folding import FOLD_LIMIT, foldable, result_attr
from loom.dialects.stablehlo.properties import prop_int, prop_ints
from loom.dialects.stablehlo.types import (
    AnyTensor,
    I64Array,
    I64Attr,
    ShapeError,
    TensorOf,
    check_dims_in_range,
    check_same_element_type,
    dim_eq,
    element_type,
    has_kind,
)
from loom.ir.attributes import DenseElementsAttr, Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Constraint, Pure, prop, result_def, var_operand
from loom.ir.opdef import operand as operand_def
from loom.ir.types import DYNAMIC, RankedTensorType, Type, i32

__all__ = ["BroadcastInDimOp", "ReshapeOp", "TransposeOp", "SliceOp", "ScalarInt", "DynamicSliceOp",
           "DynamicUpdateSliceOp", "ConcatenateOp", "PadOp", "ReverseOp", "GetDimensionSizeOp"]



class BroadcastInDimOp(StableHLOOp):
    """Broadcasts `operand` to the result shape; operand dimension i becomes result dimension
    `broadcast_dimensions[i]` (its size 1 or the result's)."""

    name = "stablehlo.broadcast_in_dim"
    assembly_format = "$operand `,` `dims` `=` $broadcast_dimensions attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    broadcast_dimensions = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, shape: Sequence[int], broadcast_dimensions: Sequence[int],
              location: Location | None = None) -> Operation:
        t = RankedTensorType(tuple(shape), element_type(operand.type), None)
        return cls.insert(builder, [operand], {"broadcast_dimensions": i64_array(broadcast_dimensions)}, [t],
                          location=location)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        check_same_element_type(src, dst)
        if not isinstance(src, RankedTensorType) or not isinstance(dst, RankedTensorType):
            return
        dims = prop_ints(self.properties, "broadcast_dimensions")
        if len(dims) != src.rank:
            raise ShapeError(f"broadcast_dimensions size ({len(dims)}) does not match operand rank ({src.rank}); "
                             f"operand '{src}', result '{dst}'")
        check_dims_in_range(dims, dst.rank, f"broadcast_dimensions {list(dims)} (result '{dst}')")
        for i, d in enumerate(dims):
            a, b = src.shape[i], dst.shape[d]
            if a != 1 and not dim_eq(a, b):
                raise ShapeError(f"size of operand dimension {i} ({a}) is not equal to 1 or the size of result "
                                 f"dimension {d} ({b}); operand '{src}', result '{dst}'")

    def fold(self, operands):
        src, dst = self.operand.type, self.results[0].type
        dims = prop_ints(self.properties, "broadcast_dimensions", ())
        if src is dst and list(dims) == list(range(len(dims))):
            return [self.operand]
        if list(dims) == sorted(dims) and _reshaped_from(self.operand).type is dst and \
                getattr(src, "num_elements", None) == getattr(dst, "num_elements", -1):
            return [_reshaped_from(self.operand)]  # a reshape back to the shape a reshape came from
        a = operands[0]
        if isinstance(a, DenseElementsAttr) and a.splat and isinstance(dst, RankedTensorType) and \
                dst.has_static_shape:
            return [DenseElementsAttr(dst, a.raw, True)]
        return None


def _reshaped_from(value: Value) -> Value:
    """The value `value` is a reshape of, through chains of reshapes and of broadcasts that only
    insert unit dimensions (itself when it is neither)."""
    while True:
        op = value.owner_op
        if isinstance(op, BroadcastInDimOp):
            src, dst = op.operand.type, value.type
            dims = prop_ints(op.properties, "broadcast_dimensions", ())
            if list(dims) != sorted(dims) or not isinstance(src, RankedTensorType) or \
                    not isinstance(dst, RankedTensorType) or not src.has_static_shape or \
                    src.num_elements != getattr(dst, "num_elements", -1):
                return value
        elif not isinstance(op, ReshapeOp):
            return value
        value = op.operand


class ReshapeOp(StableHLOOp):
    """Reshapes to the result type (same elements in row-major order)."""

    name = "stablehlo.reshape"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, shape: Sequence[int],
              location: Location | None = None) -> Operation:
        t = RankedTensorType(tuple(shape), element_type(operand.type), None)
        return cls.insert(builder, [operand], result_types=[t], location=location)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        check_same_element_type(src, dst)
        if isinstance(src, RankedTensorType) and isinstance(dst, RankedTensorType) and src.has_static_shape \
                and dst.has_static_shape and src.num_elements != dst.num_elements:
            raise ShapeError(f"number of output elements ({dst.num_elements}) doesn't match expected number of "
                             f"elements ({src.num_elements}); operand '{src}', result '{dst}'")

    def fold(self, operands):
        dst = self.results[0].type
        if self.operand.type is dst:
            return [self.operand]
        if _reshaped_from(self.operand).type is dst:
            return [_reshaped_from(self.operand)]
        a = operands[0]
        if isinstance(a, DenseElementsAttr) and isinstance(dst, RankedTensorType) and dst.has_static_shape and \
                (a.splat or a.type.num_elements <= FOLD_LIMIT):
            return [DenseElementsAttr.from_raw(dst, a.raw) if not a.splat else DenseElementsAttr(dst, a.raw, True)]
        return None


class TransposeOp(StableHLOOp):
    """Permutes dimensions: result dimension i is operand dimension `permutation[i]`."""

    name = "stablehlo.transpose"
    assembly_format = "$operand `,` `dims` `=` $permutation attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    permutation = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        perm = prop_ints(properties, "permutation")
        if not isinstance(t, RankedTensorType):
            return [t]
        if sorted(perm) != list(range(t.rank)):
            raise ShapeError(f"permutation {list(perm)} is not a permutation of the {t.rank} dimensions of operand "
                             f"'{t}'")
        return [RankedTensorType(tuple(t.shape[p] for p in perm), t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, permutation: Sequence[int],
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"permutation": i64_array(permutation)}, location=location)

    def fold(self, operands):
        perm = prop_ints(self.properties, "permutation", ())
        if list(perm) == list(range(len(perm))) and self.operand.type is self.results[0].type:
            return [self.operand]
        attrs = foldable(operands)
        if attrs is not None and not attrs[0].splat:
            r = result_attr(np.transpose(attrs[0].to_numpy(), perm), self.results[0].type)
            return None if r is None else [r]
        if attrs is not None:
            r = self.results[0].type
            return [DenseElementsAttr(r, attrs[0].raw, True)] if isinstance(r, RankedTensorType) else None
        return None


def _check_slice_bounds(t: RankedTensorType, start: Sequence[int], limit: Sequence[int],
                        strides: Sequence[int]) -> list[int]:
    if not len(start) == len(limit) == len(strides) == t.rank:
        raise ShapeError(f"start_indices ({len(start)}), limit_indices ({len(limit)}) and strides ({len(strides)}) "
                         f"must all have the rank of operand '{t}' ({t.rank})")
    shape = []
    for i, (s, e, k, d) in enumerate(zip(start, limit, strides, t.shape)):
        if s < 0 or k <= 0 or e < s or (d != DYNAMIC and e > d):
            raise ShapeError(f"invalid slice of dimension {i}: start {s}, limit {e}, stride {k} for size "
                             f"{'?' if d == DYNAMIC else d} (operand '{t}')")
        shape.append(-(-(e - s) // k))
    return shape


class SliceOp(StableHLOOp):
    """A static strided slice: `operand[start:limit:stride]` per dimension."""

    name = "stablehlo.slice"
    assembly_format = ("$operand custom<SliceRanges>($start_indices, $limit_indices, $strides) attr-dict `:` "
                       "functional-type(operands, results)")
    operand = operand_def(AnyTensor)
    start_indices = prop(I64Array)
    limit_indices = prop(I64Array)
    strides = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        if not isinstance(t, RankedTensorType):
            return [t]
        shape = _check_slice_bounds(t, prop_ints(properties, "start_indices"), prop_ints(properties, "limit_indices"),
                                    prop_ints(properties, "strides"))
        return [RankedTensorType(tuple(shape), t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, start_indices: Sequence[int],
              limit_indices: Sequence[int], strides: Sequence[int] | None = None,
              location: Location | None = None) -> Operation:
        strides = strides if strides is not None else [1] * len(start_indices)
        props = {"start_indices": i64_array(start_indices), "limit_indices": i64_array(limit_indices),
                 "strides": i64_array(strides)}
        return cls.insert(builder, [operand], props, location=location)

    def fold(self, operands):
        dst = self.results[0].type
        if self.operand.type is dst:
            return [self.operand]
        if _reshaped_from(self.operand).type is dst:
            return [_reshaped_from(self.operand)]
        a = operands[0]
        if not isinstance(a, DenseElementsAttr) or not isinstance(dst, RankedTensorType):
            return None
        if a.splat:
            return [DenseElementsAttr(dst, a.raw, True)]
        if a.type.num_elements > FOLD_LIMIT * 16 or dst.num_elements > FOLD_LIMIT:
            return None
        index = tuple(slice(s, e, k) for s, e, k in zip(prop_ints(self.properties, "start_indices"),
                                                        prop_ints(self.properties, "limit_indices"),
                                                        prop_ints(self.properties, "strides")))
        r = result_attr(a.to_numpy()[index], dst)
        return None if r is None else [r]


ScalarInt = Constraint(lambda t: isinstance(t, RankedTensorType) and t.rank == 0 and has_kind(t.element_type, "i"),
                       "0D tensor of integer values")


def _check_start_indices(t: RankedTensorType, index_types: Sequence[Type]) -> None:
    if len(index_types) != t.rank:
        raise ShapeError(f"has {len(index_types)} start indices but operand '{t}' has rank {t.rank}")
    if len({element_type(x) for x in index_types}) > 1:
        raise ShapeError("start indices must all have the same type, but got "
                         + ", ".join(f"'{x}'" for x in index_types))


class DynamicSliceOp(StableHLOOp):
    """A slice of `slice_sizes` at run-time start indices (one scalar per dimension, clamped)."""

    name = "stablehlo.dynamic_slice"
    assembly_format = ("$operand `,` custom<VariadicOperandWithAttribute>($start_indices) `sizes` `=` $slice_sizes "
                       "attr-dict `:` functional-type(operands, results)")
    operand = operand_def(AnyTensor)
    start_indices = var_operand(ScalarInt)
    slice_sizes = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        sizes = prop_ints(properties, "slice_sizes")
        if not isinstance(t, RankedTensorType):
            return [RankedTensorType(tuple(sizes), element_type(t), None)]
        _check_start_indices(t, operand_types[1:])
        if len(sizes) != t.rank:
            raise ShapeError(f"slice_sizes {list(sizes)} must have one entry per dimension of operand '{t}'")
        for i, (s, d) in enumerate(zip(sizes, t.shape)):
            if s < 0 or (d != DYNAMIC and s > d):
                raise ShapeError(f"slice size {s} of dimension {i} is out of range for operand '{t}'")
        return [RankedTensorType(tuple(sizes), t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, start_indices: Sequence[Value],
              slice_sizes: Sequence[int], location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand, *start_indices], {"slice_sizes": i64_array(slice_sizes)},
                          location=location)

    def fold(self, operands):
        if self.operand.type is self.results[0].type:
            return [self.operand]
        return None


class DynamicUpdateSliceOp(StableHLOOp):
    """`operand` with the block `update` written at run-time start indices (clamped)."""

    name = "stablehlo.dynamic_update_slice"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    update = operand_def(AnyTensor)
    start_indices = var_operand(ScalarInt)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t, u = operand_types[0], operand_types[1]
        check_same_element_type(t, u, "operand and update")
        if isinstance(t, RankedTensorType) and isinstance(u, RankedTensorType):
            _check_start_indices(t, operand_types[2:])
            if u.rank != t.rank or any(a != DYNAMIC and b != DYNAMIC and a > b for a, b in zip(u.shape, t.shape)):
                raise ShapeError(f"update '{u}' must have the rank of operand '{t}' and fit inside it")
        return [t]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, update: Value, start_indices: Sequence[Value],
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand, update, *start_indices], location=location)

    def fold(self, operands):
        if self.update.type is self.results[0].type and self.operand.type is self.results[0].type:
            return [self.update]  # the update covers the whole operand
        return None


class ConcatenateOp(StableHLOOp):
    """Concatenates `inputs` along `dimension`."""

    name = "stablehlo.concatenate"
    assembly_format = ("custom<VariadicOperandWithAttribute>($inputs) `dim` `=` $dimension attr-dict `:` "
                       "functional-type(operands, results)")
    inputs = var_operand(AnyTensor)
    dimension = prop(I64Attr)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if not operand_types:
            raise ShapeError("expects at least one input")
        d = prop_int(properties, "dimension")
        first = operand_types[0]
        ranked = [t for t in operand_types if isinstance(t, RankedTensorType)]
        for t in operand_types[1:]:
            check_same_element_type(first, t, "inputs")
        if not ranked:
            return [first]
        rank = ranked[0].rank
        if not 0 <= d < rank:
            raise ShapeError(f"dimension {d} is out of range for inputs of rank {rank}")
        shape = list(ranked[0].shape)
        total = 0
        for i, t in enumerate(operand_types):
            if not isinstance(t, RankedTensorType):
                total = DYNAMIC
                continue
            if t.rank != rank:
                raise ShapeError(f"all inputs must have the same rank, but input #{i} is '{t}' and input #0 is "
                                 f"'{ranked[0]}'")
            for k in range(rank):
                if k != d and not dim_eq(t.shape[k], shape[k]):
                    raise ShapeError(f"input #{i} '{t}' does not match '{ranked[0]}' in dimension {k} (only "
                                     f"dimension {d} may differ)")
                if k != d and shape[k] == DYNAMIC:
                    shape[k] = t.shape[k]
            total = DYNAMIC if DYNAMIC in (total, t.shape[d]) else total + t.shape[d]
        shape[d] = total
        return [RankedTensorType(tuple(shape), first.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], dimension: int,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, list(inputs), {"dimension": i64_attr(dimension)}, location=location)

    def fold(self, operands):
        if len(self.operands) == 1 and self.operands[0].type is self.results[0].type:
            return [self.operands[0]]
        attrs = foldable(operands)
        if attrs is not None and self.results[0].type.num_elements <= FOLD_LIMIT:
            arrays = [a.to_numpy() for a in attrs]
            r = result_attr(np.concatenate(arrays, axis=prop_int(self.properties, "dimension")), self.results[0].type)
            return None if r is None else [r]
        return None


class PadOp(StableHLOOp):
    """Pads with `padding_value`: `edge_padding_low`/`high` per dimension (negative values crop) and
    `interior_padding` between elements."""

    name = "stablehlo.pad"
    assembly_format = ("$operand `,` $padding_value `,` `low` `=` $edge_padding_low `,` `high` `=` $edge_padding_high "
                       "`,` `interior` `=` $interior_padding attr-dict `:` functional-type(operands, results)")
    operand = operand_def(AnyTensor)
    padding_value = operand_def(AnyTensor)
    edge_padding_low = prop(I64Array)
    edge_padding_high = prop(I64Array)
    interior_padding = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t, pv = operand_types
        check_same_element_type(t, pv, "operand and padding_value")
        if isinstance(pv, RankedTensorType) and pv.rank != 0:
            raise ShapeError(f"padding_value must be a rank-0 tensor, but got '{pv}'")
        if not isinstance(t, RankedTensorType):
            return [t]
        low, high, interior = (prop_ints(properties, n) for n in ("edge_padding_low", "edge_padding_high",
                                                                  "interior_padding"))
        if not len(low) == len(high) == len(interior) == t.rank:
            raise ShapeError(f"edge_padding_low ({len(low)}), edge_padding_high ({len(high)}) and interior_padding "
                             f"({len(interior)}) must all have the rank of operand '{t}' ({t.rank})")
        shape = []
        for i, (lo, hi, k, d) in enumerate(zip(low, high, interior, t.shape)):
            if k < 0:
                raise ShapeError(f"interior_padding {k} of dimension {i} must be non-negative")
            if d == DYNAMIC:
                shape.append(DYNAMIC)
                continue
            size = lo + hi + d + max(d - 1, 0) * k
            if size < 0:
                raise ShapeError(f"padding {lo}, {hi}, {k} of dimension {i} makes a negative size {size} for "
                                 f"operand '{t}'")
            shape.append(size)
        return [RankedTensorType(tuple(shape), t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, padding_value: Value, low: Sequence[int],
              high: Sequence[int], interior: Sequence[int] | None = None,
              location: Location | None = None) -> Operation:
        interior = interior if interior is not None else [0] * len(low)
        props = {"edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
                 "interior_padding": i64_array(interior)}
        return cls.insert(builder, [operand, padding_value], props, location=location)

    def fold(self, operands):
        if self.operand.type is self.results[0].type and not any(
                any(prop_ints(self.properties, n, ())) for n in ("edge_padding_low", "edge_padding_high",
                                                                 "interior_padding")):
            return [self.operand]
        return None


class ReverseOp(StableHLOOp):
    """Reverses the order of elements along `dimensions`."""

    name = "stablehlo.reverse"
    assembly_format = ("$operand `,` `dims` `=` $dimensions attr-dict `:` "
                       "custom<SameOperandsAndResultType>(type($operand), type($result))")
    operand = operand_def(AnyTensor)
    dimensions = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure, HloCompatibleOperandsAndResultType)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        if isinstance(t, RankedTensorType):
            check_dims_in_range(prop_ints(properties, "dimensions"), t.rank, f"dimensions (operand '{t}')")
        return [t]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, dimensions: Sequence[int],
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"dimensions": i64_array(dimensions)}, location=location)

    def fold(self, operands):
        if not prop_ints(self.properties, "dimensions", ()):
            return [self.operand]
        a = operands[0]
        if isinstance(a, DenseElementsAttr) and a.splat:
            return [a]
        return None


class GetDimensionSizeOp(StableHLOOp):
    """The size of `dimension` of the operand, as a `tensor<i32>`."""

    name = "stablehlo.get_dimension_size"
    assembly_format = "$operand `,` `dim` `=` $dimension attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    dimension = prop(I64Attr)
    result = result_def(TensorOf("i", rank=0))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        d = prop_int(properties, "dimension")
        if isinstance(t, RankedTensorType) and not 0 <= d < t.rank:
            raise ShapeError(f"dimension {d} is out of range for operand '{t}'")
        return [scalar_tensor(i32)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, dimension: int,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"dimension": i64_attr(dimension)}, location=location)

    def fold(self, operands):
        t = self.operand.type
        d = prop_int(self.properties, "dimension", 0)
        if isinstance(t, RankedTensorType) and 0 <= d < t.rank and t.shape[d] != DYNAMIC:
            return [DenseElementsAttr.get(np.int32(t.shape[d]), scalar_tensor(i32))]
        return None
