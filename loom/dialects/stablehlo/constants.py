"""`stablehlo.constant` (with `materialize_constant`, which the canonicalizer uses for folded
values, and `constant_array`) and `stablehlo.iota`."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dialects.stablehlo.attributes import i64_attr
from loom.dialects.stablehlo.base import StableHLOOp
from loom.dialects.stablehlo.properties import prop_int
from loom.dialects.stablehlo.types import AnyTensor, I64Attr, ShapeError, TensorOf, as_ranked, element_type
from loom.ir.attributes import (
    Attribute,
    DenseElementsAttr,
    DenseResourceAttr,
    DenseStringElementsAttr,
    Location,
    OpaqueBuiltinAttr,
)
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import ConstantLike, Constraint, Pure, prop, result_def
from loom.ir.types import IntegerType, RankedTensorType, Type

__all__ = ["ElementsValue", "ConstantOp", "materialize_constant", "constant_array", "IotaOp"]


ElementsValue = Constraint(lambda a: isinstance(a, (DenseElementsAttr, DenseResourceAttr, DenseStringElementsAttr,
                                                     OpaqueBuiltinAttr)), "elements attribute")


class ConstantOp(StableHLOOp):
    """A constant tensor: its result type is the type of its `value` (dense elements)."""

    name = "stablehlo.constant"
    value = prop(ElementsValue)
    output = result_def(AnyTensor)
    traits = (Pure, ConstantLike)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        value = properties.get("value")
        t = getattr(value, "type", None)
        if t is None:
            raise ShapeError("'value' must be a typed elements attribute")
        return [t]

    @classmethod
    def build(cls, builder: Builder | None, value: Attribute | np.ndarray | float | int,
              type: RankedTensorType | None = None, location: Location | None = None) -> Operation:
        """From an elements attribute, or from a numpy value and a tensor type (a scalar makes a splat)."""
        if not isinstance(value, Attribute):
            if type is None:
                raise ShapeError("a tensor type is needed to make a constant from a numpy value")
            value = DenseElementsAttr.get(value, type)
        return cls.insert(builder, [], {"value": value}, location=location)

    def fold(self, operands):
        return [self.properties["value"]]

    def asm_result_name(self) -> str:
        return "c" if isinstance(element_type(self.results[0].type), IntegerType) else "cst"

    # `%cst = stablehlo.constant dense<1.0> : tensor<f32>`; the generic form without the quoted
    # name when the value's type is not the result type (AssemblyFormat.cpp's printConstantOp).
    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        if parser.accept("("):
            parser.expect(")")
            props = {}
            if parser.accept("<"):
                props = parser.parse_optional_attr_dict()
                parser.expect(">")
            attrs = parser.parse_optional_attr_dict()
            parser.expect(":")
            parser.expect("(")
            parser.expect(")")
            parser.expect("->")
            return Operation.create(cls.name, (), [parser.parse_type()], props, attrs)
        attrs = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        props = {"value": value, **{k: attrs.pop(k) for k in [k for k in attrs if k in cls.definition.prop_names]}}
        return Operation.create(cls.name, (), [value.type], props, attrs)

    def print_custom(self, p: Any) -> None:
        value = self.read_properties().get("value")
        p.write(p.op_name(self))
        if getattr(value, "type", None) is not self.results[0].type:
            start = len(p.out)
            p.generic_op(self)
            p.out[start] = "(" + p.out[start].split("(", 1)[1]
            return
        p.attr_dict(self.read_attributes())
        p.write(" ")
        p.attr(value)


def materialize_constant(builder: Builder, value: Attribute, type: Type, location: Location) -> Operation | None:
    """The dialect's constant materializer: a `stablehlo.constant` for dense elements of `type`."""
    if not isinstance(value, DenseElementsAttr) or value.type is not type:
        return None
    return builder.create(ConstantOp.name, (), [type], {"value": value}, location=location)


def constant_array(value: Value) -> np.ndarray | None:
    """The elements of a value defined by `stablehlo.constant` with dense elements, else None."""
    op = value.owner_op
    if isinstance(op, ConstantOp) and isinstance(op.read_properties().get("value"), DenseElementsAttr):
        return op.properties["value"].to_numpy()
    return None


class IotaOp(StableHLOOp):
    """0, 1, 2, ... along `iota_dimension` of a static-shaped result."""

    name = "stablehlo.iota"
    assembly_format = "`dim` `=` $iota_dimension attr-dict `:` type($output)"
    iota_dimension = prop(I64Attr)
    output = result_def(TensorOf("ifc"))
    traits = (Pure,)

    @classmethod
    def build(cls, builder: Builder | None, type: RankedTensorType, iota_dimension: int,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [], {"iota_dimension": i64_attr(iota_dimension)}, [type], location=location)

    def check_types(self) -> None:
        t = as_ranked(self.results[0].type, "result")
        d = prop_int(self.properties, "iota_dimension")
        if t.rank == 0 or not 0 <= d < t.rank:
            raise ShapeError(f"iota_dimension {d} is out of range for the result '{t}' of rank {t.rank}")
