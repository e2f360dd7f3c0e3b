"""`stablehlo.compare`, `stablehlo.select` and `stablehlo.clamp`."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from loom.dialects.stablehlo.attributes import ComparisonDirectionAttr, ComparisonTypeAttr
from loom.dialects.stablehlo.base import Elementwise, StableHLOOp
from loom.dialects.stablehlo.folding import dtype_kind, fold_elementwise, splat_value
from loom.dialects.stablehlo.types import (
    AnyTensor,
    ShapeError,
    TensorOf,
    attr_of,
    compatible,
    element_type,
    with_element_type,
)
from loom.ir.attributes import Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Pure, opt_prop, prop, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import FloatType, IntegerType, RankedTensorType, Type, i1

__all__ = ["default_compare_type", "CompareOp", "SelectOp", "ClampOp"]


_COMPARE_TYPES = {"p": ("UNSIGNED",), "s": ("SIGNED",), "u": ("UNSIGNED",), "f": ("FLOAT", "TOTALORDER"),
                  "c": ("FLOAT",)}
_COMPARE_FNS: dict[str, Callable] = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
                                     "GT": np.greater, "GE": np.greater_equal}


def default_compare_type(et: Type) -> str:
    """The `compare_type` the spec prescribes for element type `et` (FLOAT for floats)."""
    if et is i1 or (isinstance(et, IntegerType) and et.is_unsigned):
        return "UNSIGNED"
    if isinstance(et, IntegerType):
        return "SIGNED"
    return "FLOAT"


class CompareOp(StableHLOOp):
    """Elementwise comparison by `comparison_direction`, ordered as `compare_type` says."""

    name = "stablehlo.compare"
    assembly_format = ("$comparison_direction `,` $lhs `,` $rhs (`,` $compare_type^)? attr-dict `:` "
                       "functional-type(operands, results)")
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    comparison_direction = prop(attr_of(ComparisonDirectionAttr))
    compare_type = opt_prop(attr_of(ComparisonTypeAttr))
    result = result_def(TensorOf("p"))
    traits = (Pure, Elementwise)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        if not compatible(lhs, rhs):
            raise ShapeError(f"lhs and rhs must have compatible types, but got '{lhs}' and '{rhs}'")
        ct = properties.get("compare_type")
        if isinstance(ct, ComparisonTypeAttr) and ct.value != "NOTYPE":
            et = lhs.element_type
            kind = "p" if et is i1 else "u" if isinstance(et, IntegerType) and et.is_unsigned else \
                "s" if isinstance(et, IntegerType) else "f" if isinstance(et, FloatType) else "c"
            allowed = _COMPARE_TYPES[kind]
            if ct.value not in allowed:
                raise ShapeError(f"compare_type {ct.value} is invalid for operands of element type {et}; expected "
                                 f"{' or '.join(allowed)}")
        return [with_element_type(lhs, i1)]

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, direction: str, compare_type: str | None = None,
              location: Location | None = None) -> Operation:
        """`compare_type` defaults to the one the spec prescribes for the operands' element type."""
        ct = compare_type or default_compare_type(element_type(lhs.type))
        props = {"comparison_direction": ComparisonDirectionAttr(direction), "compare_type": ComparisonTypeAttr(ct)}
        return cls.insert(builder, [lhs, rhs], props, location=location)

    def fold(self, operands):
        direction = self.properties["comparison_direction"].value
        ct = self.read_properties().get("compare_type")
        total = isinstance(ct, ComparisonTypeAttr) and ct.value == "TOTALORDER"

        def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
            kind = dtype_kind(a.dtype)
            if kind == "c" and direction not in ("EQ", "NE"):
                return None
            if total and kind == "f" and (np.any(np.isnan(a)) or np.any(np.isnan(b))
                                          or np.any((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b)))):
                return None  # total order differs from IEEE comparison only on NaN and signed zeros
            return _COMPARE_FNS[direction](a, b)
        return fold_elementwise(fn, operands, self.results[0].type)


class SelectOp(StableHLOOp):
    """`pred ? on_true : on_false` elementwise; `pred` is a boolean scalar or of the operands' shape."""

    name = "stablehlo.select"
    assembly_format = ("operands attr-dict `:` custom<SelectOpType>(type($pred), type($on_true), type($on_false), "
                       "type($result))")
    pred = operand_def(TensorOf("p"))
    on_true = operand_def(AnyTensor)
    on_false = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure, Elementwise)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        pred, on_true, on_false = operand_types
        if not compatible(on_true, on_false):
            raise ShapeError(f"on_true and on_false must have compatible types, but got '{on_true}' and "
                             f"'{on_false}'")
        if isinstance(pred, RankedTensorType) and pred.rank != 0 and \
                not compatible(pred, with_element_type(on_true, i1)):
            raise ShapeError(f"pred must be a scalar or have the shape of on_true, but got '{pred}' and "
                             f"'{on_true}'")
        return [on_true]

    @classmethod
    def build(cls, builder: Builder | None, pred: Value, on_true: Value, on_false: Value,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [pred, on_true, on_false], location=location)

    def fold(self, operands):
        if self.on_true is self.on_false:
            return [self.on_true]
        v = splat_value(operands[0])
        if v is not None and self.on_true.type is self.results[0].type and self.on_false.type is self.results[0].type:
            return [self.on_true if bool(v) else self.on_false]
        return fold_elementwise(lambda p, t, f: np.where(p, t, f), operands, self.results[0].type)


class ClampOp(StableHLOOp):
    """Clamps `operand` between `min` and `max` (each a scalar or of the operand's shape)."""

    name = "stablehlo.clamp"
    assembly_format = ("$min `,` $operand `,` $max attr-dict `:` custom<SameOperandsAndResultType>(type($min), "
                       "type($operand), type($max), type($result))")
    min = operand_def(AnyTensor)
    operand = operand_def(AnyTensor)
    max = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure, Elementwise)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lo, x, hi = operand_types
        for what, t in (("min", lo), ("max", hi)):
            if element_type(t) is not element_type(x):
                raise ShapeError(f"{what} must have the element type of operand, but got '{t}' and '{x}'")
            if isinstance(t, RankedTensorType) and t.rank != 0 and not compatible(t, x):
                raise ShapeError(f"{what} must be a scalar or have the shape of operand, but got '{t}' and '{x}'")
        return [x]

    @classmethod
    def build(cls, builder: Builder | None, min: Value, operand: Value, max: Value,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [min, operand, max], location=location)

    def fold(self, operands):
        def fn(lo: np.ndarray, x: np.ndarray, hi: np.ndarray) -> np.ndarray | None:
            if dtype_kind(x.dtype) == "f":
                return None  # NaN and signed-zero corner cases
            return np.minimum(np.maximum(x, lo), hi)
        return fold_elementwise(fn, operands, self.results[0].type)
