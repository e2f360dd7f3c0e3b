"""Linear algebra: `stablehlo.triangular_solve` and `stablehlo.cholesky`."""

from __future__ import annotations

from loom.dialects.stablehlo.attributes import TransposeAttr
from loom.dialects.stablehlo.base import StableHLOOp
from loom.dialects.stablehlo.types import BoolAttr_, ShapeError, TensorOf, attr_of, check_same_element_type, dim_eq
from loom.ir.opdef import Pure, opt_prop, prop, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import RankedTensorType

__all__ = ["TriangularSolveOp", "CholeskyOp"]


class TriangularSolveOp(StableHLOOp):
    """Solves triangular systems `op(a) x = b` (or `x op(a) = b` when not `left_side`)."""

    name = "stablehlo.triangular_solve"
    a = operand_def(TensorOf("fc"))
    b = operand_def(TensorOf("fc"))
    left_side = prop(BoolAttr_)
    lower = prop(BoolAttr_)
    unit_diagonal = prop(BoolAttr_)
    transpose_a = prop(attr_of(TransposeAttr))
    result = result_def(TensorOf("fc"))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        a, b = operand_types
        check_same_element_type(a, b, "a and b")
        if isinstance(a, RankedTensorType) and (a.rank < 2 or not dim_eq(a.shape[-1], a.shape[-2])):
            raise ShapeError(f"a must be a batch of square matrices, but got '{a}'")
        return [b]


class CholeskyOp(StableHLOOp):
    """Cholesky factors of a batch of positive definite matrices."""

    name = "stablehlo.cholesky"
    assembly_format = ("$a (`,` `lower` `=` $lower^)? attr-dict `:` custom<SameOperandsAndResultType>(type($a), "
                       "type($result))")
    a = operand_def(TensorOf("fc"))
    lower = opt_prop(BoolAttr_)
    result = result_def(TensorOf("fc"))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return [operand_types[0]]
