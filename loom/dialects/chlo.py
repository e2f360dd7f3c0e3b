"""The CHLO dialect ("client HLO"): the ops JAX emits next to StableHLO for functions that XLA
expands later (`chlo.erf`, `chlo.lgamma`, `chlo.top_k`, ...), and the implicitly broadcasting
binary ops (`chlo.broadcast_add`, ...). Elementwise ops keep the operand type; `top_k` returns the
`k` largest entries of the last dimension and their `i32` indices.

Attributes: `ComparisonDirectionAttr` (`#chlo<comparison_direction LT>`) and `ComparisonTypeAttr`
(`#chlo<comparison_type FLOAT>`), with `.value` as their StableHLO counterparts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from loom.dialects import stablehlo as shlo
from loom.dialects.stablehlo import (
    AnyTensor,
    BoolAttr_,
    I64Array,
    I64Attr,
    ShapeError,
    StableHLOOp,
    TensorOf,
    compatible,
    element_type,
    with_element_type,
)
from loom.ir.attributes import Attribute, DenseArrayAttr, IntegerAttr, Location
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.opdef import (
    ConstantLike,
    Dialect,
    Pure,
    opt_prop,
    prop,
    region_def,
    register_dialect,
    result_def,
    var_operand,
    var_result,
)
from loom.ir.opdef import operand as operand_def
from loom.ir.printer import signature_text
from loom.ir.types import DYNAMIC, ComplexType, RankedTensorType, Type, UnrankedTensorType, i1, i32, i64


class ComparisonDirectionAttr(shlo.EnumAttr):
    """`#chlo<comparison_direction LT>`."""

    __slots__ = ()
    DIALECT = "chlo"
    KEYWORD = "comparison_direction"
    ALLOWED = shlo.ComparisonDirectionAttr.ALLOWED


class ComparisonTypeAttr(shlo.EnumAttr):
    """`#chlo<comparison_type FLOAT>`."""

    __slots__ = ()
    DIALECT = "chlo"
    KEYWORD = "comparison_type"
    ALLOWED = shlo.ComparisonTypeAttr.ALLOWED


_ENUMS = {c.KEYWORD: c for c in (ComparisonDirectionAttr, ComparisonTypeAttr)}
_ENUM_TEXT = re.compile(r"#chlo<\s*([a-z_]+)\s+([A-Z_0-9]+)\s*>\Z")


def parse_attribute(text: str) -> Attribute | None:
    """The dialect's attribute parser: CHLO's enums structured, anything else opaque."""
    m = _ENUM_TEXT.match(text)
    if m and m.group(1) in _ENUMS:
        return _ENUMS[m.group(1)](m.group(2))
    return None


# Elementwise ops -------------------------------------------------------------------------------

class UnaryOp(StableHLOOp):
    """Base of CHLO's elementwise unary ops (result of the operand's type, or `i1` for predicates)."""

    assembly_format = "$operand attr-dict `:` type($operand) `->` type($result)"
    operand = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure, shlo.Elementwise)
    PREDICATE = False

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        return [with_element_type(t, i1) if cls.PREDICATE else t]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], location=location)


class BinaryOp(StableHLOOp):
    """Base of CHLO's elementwise binary ops on operands of one type."""

    assembly_format = "$lhs `,` $rhs attr-dict `:` type($lhs) `,` type($rhs) `->` type(results)"
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure, shlo.Elementwise)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        if not compatible(lhs, rhs):
            raise ShapeError(f"lhs and rhs must have compatible types, but got '{lhs}' and '{rhs}'")
        return [lhs]

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, location: Location | None = None) -> Operation:
        return cls.insert(builder, [lhs, rhs], location=location)


def _define(base: type, mnemonic: str, class_name: str, doc: str, kinds: str, **extra: Any) -> type:
    ns: dict[str, Any] = {"__doc__": doc, "__module__": __name__, "__qualname__": class_name,
                          "name": f"chlo.{mnemonic}", **extra}
    if base is UnaryOp:
        ns["operand"] = operand_def(TensorOf(kinds))
    else:
        ns["lhs"] = operand_def(TensorOf(kinds))
        ns["rhs"] = operand_def(TensorOf(kinds))
    return type(class_name, (base,), ns)


AcosOp = _define(UnaryOp, "acos", "AcosOp", "Inverse cosine.", "fc")
AcoshOp = _define(UnaryOp, "acosh", "AcoshOp", "Inverse hyperbolic cosine.", "fc")
AsinAcosKernelOp = _define(UnaryOp, "_asin_acos_kernel", "AsinAcosKernelOp", "Helper kernel of asin/acos.", "c")
AsinOp = _define(UnaryOp, "asin", "AsinOp", "Inverse sine.", "fc")
AsinhOp = _define(UnaryOp, "asinh", "AsinhOp", "Inverse hyperbolic sine.", "fc")
AtanOp = _define(UnaryOp, "atan", "AtanOp", "Inverse tangent.", "fc")
AtanhOp = _define(UnaryOp, "atanh", "AtanhOp", "Inverse hyperbolic tangent.", "fc")
BesselI1eOp = _define(UnaryOp, "bessel_i1e", "BesselI1eOp", "Exponentially scaled modified Bessel I1.", "f")
ConjOp = _define(UnaryOp, "conj", "ConjOp", "Complex conjugate.", "fc")
CoshOp = _define(UnaryOp, "cosh", "CoshOp", "Hyperbolic cosine.", "fc")
DigammaOp = _define(UnaryOp, "digamma", "DigammaOp", "Logarithmic derivative of the gamma function.", "f")
ErfInvOp = _define(UnaryOp, "erf_inv", "ErfInvOp", "Inverse error function.", "f")
ErfOp = _define(UnaryOp, "erf", "ErfOp", "Error function.", "f")
ErfcOp = _define(UnaryOp, "erfc", "ErfcOp", "Complementary error function.", "f")
IsInfOp = _define(UnaryOp, "is_inf", "IsInfOp", "True where the operand is infinite.", "f", PREDICATE=True,
                  result=result_def(TensorOf("p")))
IsNegInfOp = _define(UnaryOp, "is_neg_inf", "IsNegInfOp", "True where the operand is -inf.", "f", PREDICATE=True,
                     result=result_def(TensorOf("p")))
IsPosInfOp = _define(UnaryOp, "is_pos_inf", "IsPosInfOp", "True where the operand is +inf.", "f", PREDICATE=True,
                     result=result_def(TensorOf("p")))
LgammaOp = _define(UnaryOp, "lgamma", "LgammaOp", "Log of the absolute value of the gamma function.", "f")
SinhOp = _define(UnaryOp, "sinh", "SinhOp", "Hyperbolic sine.", "fc")
SquareOp = _define(UnaryOp, "square", "SquareOp", "x * x.", "ifc")
TanOp = _define(UnaryOp, "tan", "TanOp", "Tangent.", "fc")
MulhiOp = _define(BinaryOp, "mulhi", "MulhiOp", "High half of the double-width integer product.", "i")
NextAfterOp = _define(BinaryOp, "next_after", "NextAfterOp", "The next float after x towards y.", "f")
PolygammaOp = _define(BinaryOp, "polygamma", "PolygammaOp", "Polygamma function of order n at x.", "f")
ZetaOp = _define(BinaryOp, "zeta", "ZetaOp", "Hurwitz zeta function.", "f")


# Implicitly broadcasting ops -------------------------------------------------------------------

def broadcast_shapes(lhs: RankedTensorType, rhs: RankedTensorType) -> tuple[int, ...]:
    """numpy-style broadcasting of two shapes (trailing dimensions aligned)."""
    rank = max(lhs.rank, rhs.rank)
    a = (1,) * (rank - lhs.rank) + lhs.shape
    b = (1,) * (rank - rhs.rank) + rhs.shape
    out = []
    for i, (x, y) in enumerate(zip(a, b)):
        if x == 1 or x == y:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif DYNAMIC in (x, y):
            out.append(DYNAMIC)
        else:
            raise ShapeError(f"shapes of '{lhs}' and '{rhs}' are not broadcastable (dimension {i}: {x} vs {y})")
    return tuple(out)


class BroadcastBinaryOp(StableHLOOp):
    """Base of `chlo.broadcast_*`: a binary op whose operands broadcast numpy-style (or along the
    given `broadcast_dimensions`)."""

    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type(results)"
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    broadcast_dimensions = opt_prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)
    RESULT_ELEMENT: Any = None  # None: the operands' element type

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types[-2:]
        if element_type(lhs) is not element_type(rhs):
            raise ShapeError(f"lhs and rhs must have the same element type, but got '{lhs}' and '{rhs}'")
        et = cls.result_element(element_type(lhs))
        if not isinstance(lhs, RankedTensorType) or not isinstance(rhs, RankedTensorType) or \
                "broadcast_dimensions" in properties:
            return None
        return [RankedTensorType(broadcast_shapes(lhs, rhs), et, None)]

    @classmethod
    def result_element(cls, et: Type) -> Type:
        return et

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, location: Location | None = None) -> Operation:
        return cls.insert(builder, [lhs, rhs], location=location)


def _broadcast(mnemonic: str, class_name: str, doc: str, **extra: Any) -> type:
    ns = {"__doc__": doc, "__module__": __name__, "__qualname__": class_name, "name": f"chlo.broadcast_{mnemonic}",
          **extra}
    return type(class_name, (BroadcastBinaryOp,), ns)


BroadcastAddOp = _broadcast("add", "BroadcastAddOp", "Broadcasting addition.")
BroadcastAndOp = _broadcast("and", "BroadcastAndOp", "Broadcasting AND.")
BroadcastAtan2Op = _broadcast("atan2", "BroadcastAtan2Op", "Broadcasting atan2.")
BroadcastComplexOp = _broadcast("complex", "BroadcastComplexOp", "Broadcasting construction of complex numbers.",
                                result_element=classmethod(lambda cls, et: ComplexType(et)))
BroadcastDivOp = _broadcast("divide", "BroadcastDivOp", "Broadcasting division.")
BroadcastMaxOp = _broadcast("maximum", "BroadcastMaxOp", "Broadcasting maximum.")
BroadcastMinOp = _broadcast("minimum", "BroadcastMinOp", "Broadcasting minimum.")
BroadcastMulOp = _broadcast("multiply", "BroadcastMulOp", "Broadcasting multiplication.")
BroadcastNextAfterOp = _broadcast("next_after", "BroadcastNextAfterOp", "Broadcasting next_after.")
BroadcastOrOp = _broadcast("or", "BroadcastOrOp", "Broadcasting OR.")
BroadcastPolygammaOp = _broadcast("polygamma", "BroadcastPolygammaOp", "Broadcasting polygamma.")
BroadcastPowOp = _broadcast("power", "BroadcastPowOp", "Broadcasting power.")
BroadcastRemOp = _broadcast("remainder", "BroadcastRemOp", "Broadcasting remainder.")
BroadcastShiftLeftOp = _broadcast("shift_left", "BroadcastShiftLeftOp", "Broadcasting left shift.")
BroadcastShiftRightArithmeticOp = _broadcast("shift_right_arithmetic", "BroadcastShiftRightArithmeticOp",
                                             "Broadcasting arithmetic right shift.")
BroadcastShiftRightLogicalOp = _broadcast("shift_right_logical", "BroadcastShiftRightLogicalOp",
                                          "Broadcasting logical right shift.")
BroadcastSubOp = _broadcast("subtract", "BroadcastSubOp", "Broadcasting subtraction.")
BroadcastXorOp = _broadcast("xor", "BroadcastXorOp", "Broadcasting XOR.")
BroadcastZetaOp = _broadcast("zeta", "BroadcastZetaOp", "Broadcasting Hurwitz zeta.")
BroadcastCompareOp = _broadcast("compare", "BroadcastCompareOp", "Broadcasting comparison.",
                                comparison_direction=prop(shlo.attr_of(ComparisonDirectionAttr)),
                                compare_type=opt_prop(shlo.attr_of(ComparisonTypeAttr)),
                                result_element=classmethod(lambda cls, et: i1))


class BroadcastSelectOp(StableHLOOp):
    """Broadcasting `pred ? on_true : on_false`."""

    name = "chlo.broadcast_select"
    assembly_format = ("$pred `,` $on_true `,` $on_false attr-dict `:` "
                       "`(` type($pred) `,` type($on_true) `,` type($on_false) `)` `->` type(results)")
    pred = operand_def(TensorOf("p"))
    on_true = operand_def(AnyTensor)
    on_false = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure,)


# Other ops ---------------------------------------------------------------------------------------

class TopKOp(StableHLOOp):
    """The `k` largest entries along the last dimension (sorted, descending) and their indices.
    `is_stable` (newer JAX sets it) asks for the smaller index first among equal values, which
    loom's kernels always give."""

    name = "chlo.top_k"
    assembly_format = ("`(`$operand `,` `k` `=` $k (`,` `is_stable` `=` $is_stable^)? `)` attr-dict `:` "
                       "type($operand) `->` `(`type($values)`,` type($indices)`)`")
    operand = operand_def(AnyTensor)
    k = prop(I64Attr)
    is_stable = opt_prop(BoolAttr_)
    values = result_def(AnyTensor)
    indices = result_def(TensorOf("i"))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        k = shlo.prop_int(properties, "k")
        if not isinstance(t, RankedTensorType):
            return [t, UnrankedTensorType(i32)]
        if t.rank < 1:
            raise ShapeError(f"operand must have rank >= 1, but got '{t}'")
        last = t.shape[-1]
        if k < 0 or (last != DYNAMIC and k > last):
            raise ShapeError(f"k ({k}) must be between 0 and the size of the last dimension of operand '{t}'")
        shape = t.shape[:-1] + (k,)
        return [RankedTensorType(shape, t.element_type, None), RankedTensorType(shape, i32, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, k: int, location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"k": IntegerAttr.get(k, i64)}, location=location)


class ConstantOp(StableHLOOp):
    """A constant (CHLO's own, for values StableHLO cannot hold)."""

    name = "chlo.constant"
    assembly_format = "attr-dict $value"
    value = prop()
    output = result_def()
    traits = (Pure, ConstantLike)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = getattr(properties.get("value"), "type", None)
        return [t] if t is not None else None

    def fold(self, operands: Sequence[Attribute | None]):
        return [self.properties["value"]]


class ConstantLikeOp(StableHLOOp):
    """A splat constant of the operand's shape."""

    name = "chlo.constant_like"
    operand = operand_def(AnyTensor)
    value = prop()
    result = result_def(AnyTensor)
    traits = (Pure,)


class RaggedDotOp(StableHLOOp):
    """Matrix product over ragged groups (kept, not modelled)."""

    name = "chlo.ragged_dot"
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    group_sizes = operand_def(AnyTensor)
    ragged_dot_dimension_numbers = prop()
    precision_config = opt_prop()
    result = result_def(AnyTensor)
    traits = (Pure,)


_SCAN_ELIDED = ("dimension", "operandSegmentSizes", "resultSegmentSizes")  # not in scan's attribute dict


class ScanOp(StableHLOOp):
    """A scan over `dimension` (kept, not modelled): `inputs` and `inits` operands, `outputs` and
    `carries` results, each pair of groups sized by `operandSegmentSizes`/`resultSegmentSizes`.

        %0:2 = chlo.scan(%x) inits (%c) dimension=0 {
        ^bb0(%input: tensor<f32>, %carry: tensor<f32>):
          ...
        } : (tensor<4xf32>, tensor<f32>) -> (tensor<4xf32>, tensor<f32>)
    """

    name = "chlo.scan"
    inputs = var_operand()
    inits = var_operand()
    dimension = opt_prop()
    scan_dim_size = opt_prop()
    is_reverse = opt_prop(BoolAttr_)
    is_associative = opt_prop(BoolAttr_)
    operandSegmentSizes = opt_prop()  # noqa: N815 - MLIR's name
    resultSegmentSizes = opt_prop()  # noqa: N815 - MLIR's name
    outputs = var_result()
    carries = var_result()
    body = region_def()
    traits = (Pure,)

    def asm_block_arg_names(self, region_index: int) -> list[str]:
        return ["input"] * len(self.inputs) + ["carry"] * len(self.inits)

    def print_custom(self, p: Any) -> None:  # ChloOps.cpp's ScanOp::print
        dimension = self.read_properties().get("dimension")
        p.write(f"{p.op_name(self)}({', '.join(map(p.value, self.inputs))}) inits "
                f"({', '.join(map(p.value, self.inits))}) dimension={getattr(dimension, 'value', 0)} ")
        shown = {**self.read_properties(), **self.read_attributes()}
        p.attr_dict({k: v for k, v in shown.items() if k not in _SCAN_ELIDED}, keyword=True)
        p.write(" ")
        p.region(self.regions[0])
        p.write(" : " + signature_text(tuple(self.operand_types), tuple(self.result_types)))

    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        groups = []
        for keyword in ("", "inits"):
            if keyword:
                parser.expect_keyword(keyword)
            parser.expect("(")
            groups.append(parser.parse_list(")", parser.parse_operand_ref, "operand list"))
        parser.expect_keyword("dimension")
        parser.expect("=")
        props: dict[str, Attribute] = {"dimension": IntegerAttr.get(parser.parse_int(), i64)}
        attrs = parser.parse_optional_attr_dict() if parser.accept_keyword("attributes") else {}
        for k in [k for k in attrs if k in cls.definition.prop_names]:
            props[k] = attrs.pop(k)
        region = parser.parse_region()
        parser.expect(":")
        ins, outs = parser.parse_signature()
        refs = groups[0] + groups[1]
        if len(ins) != len(refs):
            raise parser.error(f"expected {len(refs)} operand types but had {len(ins)}")
        n_in, n_init = len(groups[0]), len(groups[1])
        props["operandSegmentSizes"] = DenseArrayAttr.get(i32, [n_in, n_init])
        props["resultSegmentSizes"] = DenseArrayAttr.get(i32, [len(outs) - n_init, n_init])
        return Operation.create(cls.name, [parser.resolve_operand(r, t) for r, t in zip(refs, ins)], list(outs),
                                props, attrs, [region])


def top_k(builder: Builder, operand: Value, k: int) -> tuple[Value, Value]:
    """Insert `chlo.top_k` and return (values, indices)."""
    op = TopKOp.build(builder, operand, k)
    return op.results[0], op.results[1]


DIALECT = register_dialect(Dialect("chlo", attribute_parser=parse_attribute))
