"""Tuples and tokens: tuple, get_tuple_element, optimization_barrier, after_all,
create_token."""

from __future__ import annotations

from collections.abc import Sequence

from loom.dialects.stablehlo.base import StableHLOOp
from loom.dialects.stablehlo.properties import prop_int
from loom.dialects.stablehlo.types import TOKEN, I32Attr, ShapeError, TensorOrToken, TensorTokenOrTuple, Token
from loom.ir.attributes import IntegerAttr, Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Pure, prop, result_def, var_operand, var_result
from loom.ir.opdef import operand as operand_def
from loom.ir.types import TupleType, i32

__all__ = ["TupleOp", "GetTupleElementOp", "OptimizationBarrierOp", "AfterAllOp", "CreateTokenOp"]


class TupleOp(StableHLOOp):
    """Packs values into a tuple."""

    name = "stablehlo.tuple"
    assembly_format = "$val attr-dict `:` custom<TupleOpType>(type($val), type($result))"
    val = var_operand(TensorTokenOrTuple)
    result = result_def(TupleType)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return [TupleType(tuple(operand_types))]

    @classmethod
    def build(cls, builder: Builder | None, values: Sequence[Value], location: Location | None = None) -> Operation:
        return cls.insert(builder, list(values), location=location)


class GetTupleElementOp(StableHLOOp):
    """Element `index` of a tuple."""

    name = "stablehlo.get_tuple_element"
    assembly_format = "$operand `[` $index `]` attr-dict `:` functional-type(operands, results)"
    operand = operand_def(TupleType)
    index = prop(I32Attr)
    result = result_def(TensorTokenOrTuple)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        i = prop_int(properties, "index")
        if not isinstance(t, TupleType) or not 0 <= i < len(t.types):
            raise ShapeError(f"index {i} is out of range for '{t}'")
        return [t.types[i]]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, index: int, location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"index": IntegerAttr.get(index, i32)}, location=location)

    def fold(self, operands):
        producer = self.operand.owner_op
        if isinstance(producer, TupleOp):
            return [producer.operands[prop_int(self.properties, "index")]]
        return None


class OptimizationBarrierOp(StableHLOOp):
    """Identity that transformations may not move computations across."""

    name = "stablehlo.optimization_barrier"
    assembly_format = "attr-dict ($operand^ `:` custom<PairwiseOpType>(type($operand), type($result))):(`(` `)`)?"
    operand = var_operand(TensorOrToken)
    result = var_result(TensorOrToken)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return list(operand_types)

    @classmethod
    def build(cls, builder: Builder | None, values: Sequence[Value], location: Location | None = None) -> Operation:
        return cls.insert(builder, list(values), location=location)


class AfterAllOp(StableHLOOp):
    """A token ordered after all input tokens."""

    name = "stablehlo.after_all"
    assembly_format = ("$inputs attr-dict `:` custom<VariadicSameOperandsAndResultType>(ref($inputs), type($inputs), "
                       "type($result))")
    inputs = var_operand(Token)
    result = result_def(Token)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return [TOKEN]


class CreateTokenOp(StableHLOOp):
    """A fresh token (legacy form of `after_all` with no inputs)."""

    name = "stablehlo.create_token"
    assembly_format = "attr-dict `:` type(results)"
    output = result_def(Token)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return [TOKEN]
