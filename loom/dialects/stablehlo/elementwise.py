"""The elementwise unary and binary ops (`stablehlo.abs` ... `stablehlo.xor`) and
`stablehlo.complex`: one class per op, made by `_unary` / `_binary` from a row of name, element
kinds, result rule, folder and neutral element."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import numpy as np

from loom.dialects.stablehlo.attributes import ResultAccuracy
from loom.dialects.stablehlo.base import Elementwise, HloCompatibleOperandsAndResultType, StableHLOOp
from loom.dialects.stablehlo.folding import (
    BINARY_FOLDS,
    FOLD_ABS,
    FOLD_NEGATE,
    by_kind,
    clz_int,
    float_op,
    fold_elementwise,
    ints_op,
    is_additive_identity,
    is_all_ones,
    is_one,
    is_zero_bits,
    is_zero_for_subtract,
    popcount_int,
    round_afz,
    splat_value,
)
from loom.dialects.stablehlo.types import (
    AnyTensor,
    ShapeError,
    TensorOf,
    attr_of,
    compatible,
    element_type,
    is_tensor,
    real_type,
    with_element_type,
)
from loom.ir.attributes import Attribute, Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import Constraint, Pure, opt_prop, result_def
from loom.ir.opdef import operand as operand_def
from loom.ir.types import ComplexType, Type, f32, f64, i1

__all__ = ["UnaryElementwiseOp", "BinaryElementwiseOp", "AbsOp", "CbrtOp", "CeilOp", "CountLeadingZerosOp",
           "CosineOp", "ExponentialOp", "ExponentialMinusOneOp", "FloorOp", "ImagOp", "IsFiniteOp", "LogOp",
           "LogPlusOneOp", "LogisticOp", "NotOp", "NegOp", "PopulationCountOp", "RealOp", "RoundOp",
           "RoundNearestEvenOp", "RsqrtOp", "SignOp", "SineOp", "SqrtOp", "TanOp", "TanhOp", "AddOp", "Atan2Op",
           "DivOp", "MaxOp", "MinOp", "MulOp", "PowOp", "RemOp", "ShiftLeftOp", "ShiftRightArithmeticOp",
           "ShiftRightLogicalOp", "SubtractOp", "AndOp", "OrOp", "XorOp", "Float32Or64Tensor", "ComplexOp"]



class UnaryElementwiseOp(StableHLOOp):
    """Base of the elementwise unary ops. `RESULT` says how the result type follows from the
    operand's: "same", "real" (complex to its real part, as abs/real/imag) or "pred" (i1 elements)."""

    assembly_format = "$operand attr-dict `:` custom<SameOperandsAndResultType>(type($operand), type($result))"
    operand = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure, Elementwise)
    RESULT: ClassVar[str] = "same"
    FOLD: ClassVar[Callable | None] = None

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        if cls.RESULT == "pred":
            return [with_element_type(t, i1)]
        return [real_type(t) if cls.RESULT == "real" else t]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], location=location)

    def fold(self, operands):
        return fold_elementwise(type(self).FOLD, operands, self.results[0].type)


class BinaryElementwiseOp(StableHLOOp):
    """Base of the elementwise binary ops: operands and result of one (compatible) type."""

    assembly_format = ("$lhs `,` $rhs attr-dict `:` "
                       "custom<SameOperandsAndResultType>(type($lhs), type($rhs), type($result))")
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure, Elementwise, HloCompatibleOperandsAndResultType)
    FOLD: ClassVar[Callable | None] = None

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        if not compatible(lhs, rhs):
            raise ShapeError(f"lhs and rhs must have compatible types, but got '{lhs}' and '{rhs}'")
        return [lhs]

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, location: Location | None = None) -> Operation:
        return cls.insert(builder, [lhs, rhs], location=location)

    def fold(self, operands):
        folded = fold_elementwise(type(self).FOLD, operands, self.results[0].type)
        if folded is not None:
            return folded
        return self.fold_identity(operands)

    def fold_identity(self, operands: Sequence[Attribute | None]) -> list[Value] | None:
        """`x op c` where c is the op's neutral element (operands of the result type only)."""
        return None


def _unary(mnemonic: str, class_name: str, kinds: str, doc: str, result: str = "same",
           accuracy: bool = False, fold: Callable | None = None, result_kinds: str | None = None) -> type:
    """Define an elementwise unary op class `class_name` named `stablehlo.<mnemonic>`."""
    ns: dict[str, Any] = {
        "__doc__": doc, "__module__": __name__, "__qualname__": class_name, "name": f"stablehlo.{mnemonic}",
        "operand": operand_def(TensorOf(kinds)), "result": result_def(TensorOf(result_kinds or kinds)),
        "RESULT": result, "FOLD": staticmethod(fold) if fold is not None else None,
    }
    if result == "same":
        ns["traits"] = (HloCompatibleOperandsAndResultType,)
    if accuracy:
        ns["result_accuracy"] = opt_prop(attr_of(ResultAccuracy))
    if result == "pred":
        ns["assembly_format"] = "operands attr-dict `:` functional-type(operands, results)"
    return type(class_name, (UnaryElementwiseOp,), ns)


def _binary(mnemonic: str, class_name: str, kinds: str, doc: str, commutative: bool = False,
            fold: Callable | None = None, identity: Callable | None = None) -> type:
    """Define an elementwise binary op class `class_name` named `stablehlo.<mnemonic>`."""
    ns: dict[str, Any] = {
        "__doc__": doc, "__module__": __name__, "__qualname__": class_name, "name": f"stablehlo.{mnemonic}",
        "lhs": operand_def(TensorOf(kinds)), "rhs": operand_def(TensorOf(kinds)), "result": result_def(TensorOf(kinds)),
        "FOLD": staticmethod(fold) if fold is not None else None,
    }
    # Semantically commutative, but StableHLO's ODS gives these ops no Commutative trait, so
    # upstream canonicalize/cse neither move constants right nor merge swapped operands: keep
    # the fact as a flag so loom's passes behave the same.
    ns["commutative"] = commutative
    if identity is not None:
        ns["fold_identity"] = identity
    return type(class_name, (BinaryElementwiseOp,), ns)


def _identity_if(pred: Callable[[Any, Type], bool]) -> Callable:
    def fold_identity(self: BinaryElementwiseOp, operands: Sequence[Attribute | None]) -> list[Value] | None:
        v = splat_value(operands[1])
        if v is not None and self.lhs.type is self.results[0].type and pred(v, element_type(self.lhs.type)):
            return [self.lhs]
        if type(self).commutative:  # the identity on the left (no trait moves it right)
            v = splat_value(operands[0])
            if v is not None and self.rhs.type is self.results[0].type and pred(v, element_type(self.rhs.type)):
                return [self.rhs]
        return None
    return fold_identity


AbsOp = _unary("abs", "AbsOp", "sfc", "Absolute value; complex operands give their modulus.", result="real",
               fold=FOLD_ABS, result_kinds="sf")
CbrtOp = _unary("cbrt", "CbrtOp", "fc", "Cube root.", accuracy=True)
CeilOp = _unary("ceil", "CeilOp", "f", "Rounds up to an integral value.", fold=np.ceil)
CountLeadingZerosOp = _unary("count_leading_zeros", "CountLeadingZerosOp", "i", "Leading zero bits.",
                             fold=ints_op(clz_int))
CosineOp = _unary("cosine", "CosineOp", "fc", "Cosine.", accuracy=True)
ExponentialOp = _unary("exponential", "ExponentialOp", "fc", "e to the power of the operand.", accuracy=True)
ExponentialMinusOneOp = _unary("exponential_minus_one", "ExponentialMinusOneOp", "fc", "exp(x) - 1.",
                               accuracy=True)
FloorOp = _unary("floor", "FloorOp", "f", "Rounds down to an integral value.", fold=np.floor)
ImagOp = _unary("imag", "ImagOp", "fc", "Imaginary part (zero for real operands).", result="real",
                result_kinds="f")
IsFiniteOp = _unary("is_finite", "IsFiniteOp", "f", "True where the operand is neither infinite nor NaN.",
                    result="pred", fold=np.isfinite, result_kinds="p")
LogOp = _unary("log", "LogOp", "fc", "Natural logarithm.", accuracy=True)
LogPlusOneOp = _unary("log_plus_one", "LogPlusOneOp", "fc", "log(1 + x).", accuracy=True)
LogisticOp = _unary("logistic", "LogisticOp", "fc", "1 / (1 + exp(-x)).", accuracy=True)
NotOp = _unary("not", "NotOp", "pi", "Logical (booleans) or bitwise (integers) NOT.", fold=np.invert)
NegOp = _unary("negate", "NegOp", "ifc", "Negation (integers wrap around).", fold=FOLD_NEGATE)
PopulationCountOp = _unary("popcnt", "PopulationCountOp", "i", "Number of set bits.", fold=ints_op(popcount_int))
RealOp = _unary("real", "RealOp", "fc", "Real part (the operand itself for real operands).", result="real",
                result_kinds="f")
RoundOp = _unary("round_nearest_afz", "RoundOp", "f", "Rounds to the nearest integer, ties away from zero.",
                 fold=round_afz)
RoundNearestEvenOp = _unary("round_nearest_even", "RoundNearestEvenOp", "f",
                            "Rounds to the nearest integer, ties to even.", fold=np.rint)
RsqrtOp = _unary("rsqrt", "RsqrtOp", "fc", "Reciprocal square root.", accuracy=True)
SignOp = _unary("sign", "SignOp", "sfc", "-1, 0 or 1 by the sign of the operand (NaN stays NaN).",
                fold=by_kind(np.sign, None))
SineOp = _unary("sine", "SineOp", "fc", "Sine.", accuracy=True)
SqrtOp = _unary("sqrt", "SqrtOp", "fc", "Square root (correctly rounded, so folded for floats).", accuracy=True,
                fold=by_kind(None, float_op(np.sqrt)))
TanOp = _unary("tan", "TanOp", "fc", "Tangent.", accuracy=True)
TanhOp = _unary("tanh", "TanhOp", "fc", "Hyperbolic tangent.", accuracy=True)

AddOp = _binary("add", "AddOp", "pifc", "Addition (logical OR on booleans).", commutative=True,
                fold=BINARY_FOLDS["add"], identity=_identity_if(is_additive_identity))
Atan2Op = _binary("atan2", "Atan2Op", "fc", "atan2(lhs, rhs).")
DivOp = _binary("divide", "DivOp", "ifc", "Division; integer division truncates toward zero.",
                fold=BINARY_FOLDS["divide"], identity=_identity_if(is_one))
MaxOp = _binary("maximum", "MaxOp", "pifc", "Elementwise maximum (NaN propagates).", commutative=True,
                fold=BINARY_FOLDS["maximum"])
MinOp = _binary("minimum", "MinOp", "pifc", "Elementwise minimum (NaN propagates).", commutative=True,
                fold=BINARY_FOLDS["minimum"])
MulOp = _binary("multiply", "MulOp", "pifc", "Multiplication (logical AND on booleans).", commutative=True,
                fold=BINARY_FOLDS["multiply"], identity=_identity_if(is_one))
PowOp = _binary("power", "PowOp", "ifc", "lhs to the power rhs.", fold=BINARY_FOLDS["power"])
RemOp = _binary("remainder", "RemOp", "ifc", "Remainder with the sign of the dividend (C's fmod / %).",
                fold=BINARY_FOLDS["remainder"])
ShiftLeftOp = _binary("shift_left", "ShiftLeftOp", "i", "Left shift; shifting by >= the bit width gives 0.",
                      fold=BINARY_FOLDS["shift_left"], identity=_identity_if(is_zero_bits))
ShiftRightArithmeticOp = _binary("shift_right_arithmetic", "ShiftRightArithmeticOp", "i",
                                 "Arithmetic right shift; by >= the bit width fills with the sign bit.",
                                 fold=BINARY_FOLDS["shift_right_arithmetic"], identity=_identity_if(is_zero_bits))
ShiftRightLogicalOp = _binary("shift_right_logical", "ShiftRightLogicalOp", "i",
                              "Logical right shift; shifting by >= the bit width gives 0.",
                              fold=BINARY_FOLDS["shift_right_logical"], identity=_identity_if(is_zero_bits))
SubtractOp = _binary("subtract", "SubtractOp", "ifc", "Subtraction.", fold=BINARY_FOLDS["subtract"],
                     identity=_identity_if(is_zero_for_subtract))
AndOp = _binary("and", "AndOp", "pi", "Logical (booleans) or bitwise (integers) AND.", commutative=True,
                fold=BINARY_FOLDS["and"], identity=_identity_if(is_all_ones))
OrOp = _binary("or", "OrOp", "pi", "Logical (booleans) or bitwise (integers) OR.", commutative=True,
               fold=BINARY_FOLDS["or"], identity=_identity_if(is_zero_bits))
XorOp = _binary("xor", "XorOp", "pi", "Logical (booleans) or bitwise (integers) XOR.", commutative=True,
                fold=BINARY_FOLDS["xor"], identity=_identity_if(is_zero_bits))


Float32Or64Tensor = Constraint(lambda t: is_tensor(t) and t.element_type in (f32, f64), "tensor of f32 or f64 values")


class ComplexOp(StableHLOOp):
    """Builds complex numbers from real and imaginary parts (f32 or f64)."""

    name = "stablehlo.complex"
    assembly_format = "operands attr-dict `:` custom<ComplexOpType>(type($lhs), type($rhs), type($result))"
    lhs = operand_def(Float32Or64Tensor)
    rhs = operand_def(Float32Or64Tensor)
    result = result_def(TensorOf("c"))
    traits = (Pure, Elementwise)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        if not compatible(lhs, rhs):
            raise ShapeError(f"lhs and rhs must have compatible types, but got '{lhs}' and '{rhs}'")
        return [with_element_type(lhs, ComplexType(lhs.element_type))]

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, location: Location | None = None) -> Operation:
        return cls.insert(builder, [lhs, rhs], location=location)

    def fold(self, operands):
        return fold_elementwise(_make_complex, operands, self.results[0].type)


def _make_complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.complex64 if re.dtype == np.float32 else np.complex128)
    out.real = re
    out.imag = im
    return out
