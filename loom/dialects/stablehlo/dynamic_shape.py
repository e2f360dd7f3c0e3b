"""The legacy `stablehlo.broadcast` and the ops whose shapes are run-time operands:
dynamic_broadcast_in_dim, dynamic_reshape, dynamic_iota."""

from __future__ import annotations

from loom.dialects.stablehlo.base import StableHLOOp
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
)
from loom.ir.opdef import Pure, opt_prop, prop, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import RankedTensorType

__all__ = ["BroadcastOp", "DynamicBroadcastInDimOp", "DynamicReshapeOp", "DynamicIotaOp"]


class BroadcastOp(StableHLOOp):
    """Legacy broadcast: prepends `broadcast_sizes` dimensions to the operand's shape."""

    name = "stablehlo.broadcast"
    assembly_format = "$operand `,` `sizes` `=` $broadcast_sizes attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    broadcast_sizes = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        if not isinstance(t, RankedTensorType):
            return [t]
        return [RankedTensorType(prop_ints(properties, "broadcast_sizes") + t.shape, t.element_type, None)]


class DynamicBroadcastInDimOp(StableHLOOp):
    """`broadcast_in_dim` to a shape given at run time by `output_dimensions`."""

    name = "stablehlo.dynamic_broadcast_in_dim"
    assembly_format = ("$operand `,` $output_dimensions `,` `dims` `=` $broadcast_dimensions attr-dict `:` "
                       "functional-type(operands, results)")
    operand = operand_def(AnyTensor)
    output_dimensions = operand_def(TensorOf("i", rank=1))
    broadcast_dimensions = prop(I64Array)
    known_expanding_dimensions = opt_prop(I64Array)
    known_nonexpanding_dimensions = opt_prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        check_same_element_type(src, dst)
        dims = prop_ints(self.properties, "broadcast_dimensions")
        if isinstance(src, RankedTensorType) and len(dims) != src.rank:
            raise ShapeError(f"broadcast_dimensions size ({len(dims)}) does not match operand rank ({src.rank})")
        if isinstance(dst, RankedTensorType):
            check_dims_in_range(dims, dst.rank, f"broadcast_dimensions {list(dims)} (result '{dst}')")
            shape = self.output_dimensions.type
            if isinstance(shape, RankedTensorType) and not dim_eq(shape.shape[0], dst.rank):
                raise ShapeError(f"output_dimensions '{shape}' must have one entry per dimension of the result '{dst}'")


class DynamicReshapeOp(StableHLOOp):
    """`reshape` to a shape given at run time by `output_shape`."""

    name = "stablehlo.dynamic_reshape"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    output_shape = operand_def(TensorOf("i", rank=1))
    result = result_def(AnyTensor)
    traits = (Pure,)

    def check_types(self) -> None:
        src, dst, shape = self.operand.type, self.results[0].type, self.output_shape.type
        check_same_element_type(src, dst)
        if isinstance(dst, RankedTensorType) and isinstance(shape, RankedTensorType) and \
                not dim_eq(shape.shape[0], dst.rank):
            raise ShapeError(f"output_shape '{shape}' must have one entry per dimension of the result '{dst}'")


class DynamicIotaOp(StableHLOOp):
    """`iota` of a shape given at run time by `output_shape`."""

    name = "stablehlo.dynamic_iota"
    assembly_format = "$output_shape `,` `dim` `=` $iota_dimension attr-dict `:` functional-type(operands, results)"
    output_shape = operand_def(TensorOf("i", rank=1))
    iota_dimension = prop(I64Attr)
    result = result_def(AnyTensor)
    traits = (Pure,)

    def check_types(self) -> None:
        dst = self.results[0].type
        d = prop_int(self.properties, "iota_dimension")
        if isinstance(dst, RankedTensorType) and not 0 <= d < dst.rank:
            raise ShapeError(f"iota_dimension {d} is out of range for the result '{dst}'")
