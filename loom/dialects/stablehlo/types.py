"""StableHLO's types and the constraints of its op definitions: the token type, tensor and
element-kind predicates, `TensorOf` and the attribute constraints (with the syntax their custom
forms use), type compatibility, and the shape checks the ops' type inference shares (all raise
`ShapeError`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from loom.dialects.stablehlo.attributes import EnumAttr, PrecisionAttr, dims_text, i64_array
from loom.ir.attributes import ArrayAttr, Attribute, DenseArrayAttr, DenseElementsAttr, IntegerAttr
from loom.ir.opdef import AttrSyntax, Constraint
from loom.ir.types import (
    DYNAMIC,
    ComplexType,
    DialectType,
    FloatType,
    IntegerType,
    RankedTensorType,
    TupleType,
    Type,
    UnrankedTensorType,
    i1,
    i32,
    i64,
)

__all__ = ["TOKEN", "ShapeError", "is_tensor", "is_token", "element_type", "has_kind", "TensorOf", "integer_syntax",
           "I64_ARRAY_SYNTAX", "enum_syntax", "AnyTensor", "TensorOrToken", "TensorTokenOrTuple", "Token", "I64Array",
           "BoolArray", "I64Attr", "I32Attr", "BoolAttr_", "I64Elements", "PrecisionConfig", "attr_of", "compatible",
           "with_element_type"]


TOKEN = DialectType("!stablehlo.token")


# Types -----------------------------------------------------------------------------------------

class ShapeError(ValueError):
    """Operands, attributes or regions that break an op's shape or type rules. Raised by the
    `infer_result_types` helpers (and so by builders); the verifier reports it on the op."""


def is_tensor(t: Type) -> bool:
    return isinstance(t, (RankedTensorType, UnrankedTensorType))


def is_token(t: Type) -> bool:
    return t is TOKEN


def element_type(t: Type) -> Type:
    """The element type of a tensor type (any other type itself)."""
    return t.element_type if isinstance(t, (RankedTensorType, UnrankedTensorType)) else t


def _quantized(et: Type) -> bool:
    return isinstance(et, DialectType) and et.text.startswith("!quant.")


# Element kinds, by letter: p(red), i(nteger: signless or unsigned), s(igned = signless integer),
# f(loat), c(omplex). Quantized element types count as integers and as floats (the spec defines
# the float ops on them by dequantize, op, quantize).
_KINDS: dict[str, tuple[str, Callable[[Type], bool]]] = {
    "p": ("pred (AKA boolean or 1-bit integer)", lambda et: et is i1),
    "i": ("integer", lambda et: (isinstance(et, IntegerType) and et.width > 1 and et.signedness != "s")
          or _quantized(et)),
    "s": ("signed integer", lambda et: (isinstance(et, IntegerType) and et.width > 1 and et.is_signless)
          or _quantized(et)),
    "f": ("floating-point", lambda et: isinstance(et, FloatType) or _quantized(et)),
    "c": ("complex", lambda et: isinstance(et, ComplexType)),
}


def has_kind(et: Type, kinds: str) -> bool:
    """Whether element type `et` is one of the kinds (letters of `_KINDS`)."""
    return any(_KINDS[k][1](et) for k in kinds)


def _kind_text(kinds: str) -> str:
    names = [_KINDS[k][0] for k in kinds]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


class TensorConstraint(Constraint):
    """A tensor constraint that also says which element kinds it admits (letters of "pifc":
    predicate, integer, float, complex), for the front end's bindings to check dtypes."""

    __slots__ = ("kinds",)

    def __init__(self, check: Callable[[Any], bool], description: str, kinds: str) -> None:
        super().__init__(check, description)
        self.kinds = kinds


def TensorOf(kinds: str = "pifc", rank: int | None = None) -> Constraint:
    """Constraint: a tensor whose elements are of the given kinds (and of the given rank)."""
    def check(t: Type) -> bool:
        if not is_tensor(t) or not has_kind(t.element_type, kinds):
            return False
        return rank is None or (isinstance(t, RankedTensorType) and t.rank == rank)
    where = "" if rank is None else f"{rank}D "
    return TensorConstraint(check, f"{where}tensor of {_kind_text(kinds)} values", kinds)


# How attributes are written in custom forms (`$prop` of an assembly format).

def integer_syntax(t: Type) -> AttrSyntax:
    """`5` (`true`/`false` for i1) for an integer attribute of type `t`."""
    def parse(parser: Any) -> Attribute:
        if t is i1:
            for word in ("true", "false"):
                if parser.accept_keyword(word):
                    return IntegerAttr(i1, word == "true")
            raise parser.error("expected 'true' or 'false'")
        return IntegerAttr.get(parser.parse_int(), t)
    return AttrSyntax(lambda a: str(bool(a.value)).lower() if t is i1 else str(a.value), parse)


def parse_i64_list(parser: Any) -> list[int]:
    parser.expect("[")
    return parser.parse_list("]", parser.parse_int, "integer list")


I64_ARRAY_SYNTAX = AttrSyntax(lambda a: dims_text(a.values), lambda parser: i64_array(parse_i64_list(parser)))


def enum_syntax(cls: type[EnumAttr]) -> AttrSyntax:
    """The bare keyword of an enum attribute: `GT`."""
    def parse(parser: Any) -> Attribute:
        pos = parser.ws()
        word = parser.parse_bare_id(cls.KEYWORD)
        if word not in cls.ALLOWED:
            raise parser.error(f"unknown {cls.KEYWORD} '{word}'; expected one of: {', '.join(cls.ALLOWED)}", pos)
        return cls(word)
    return AttrSyntax(lambda a: a.value, parse)


AnyTensor = Constraint(is_tensor, "tensor")
TensorOrToken = Constraint(lambda t: is_tensor(t) or is_token(t), "tensor or token")
TensorTokenOrTuple = Constraint(lambda t: is_tensor(t) or is_token(t) or isinstance(t, TupleType),
                                "tensor, token or tuple")
Token = Constraint(is_token, "token")
I64Array = Constraint(lambda a: isinstance(a, DenseArrayAttr) and a.element_type is i64, "i64 dense array attribute",
                      syntax=I64_ARRAY_SYNTAX)
BoolArray = Constraint(lambda a: isinstance(a, DenseArrayAttr) and a.element_type is i1, "i1 dense array attribute")
I64Attr = Constraint(lambda a: isinstance(a, IntegerAttr) and a.type is i64, "64-bit signless integer attribute",
                     syntax=integer_syntax(i64))
I32Attr = Constraint(lambda a: isinstance(a, IntegerAttr) and a.type is i32, "32-bit signless integer attribute",
                     syntax=integer_syntax(i32))
BoolAttr_ = Constraint(lambda a: isinstance(a, IntegerAttr) and a.type is i1, "bool attribute",
                       syntax=integer_syntax(i1))
I64Elements = Constraint(lambda a: isinstance(a, DenseElementsAttr) and a.type.element_type is i64,
                         "64-bit signless integer elements attribute")
PrecisionConfig = Constraint(lambda a: isinstance(a, ArrayAttr) and all(isinstance(e, PrecisionAttr) for e in a),
                             "precision config attribute")


def attr_of(cls: type) -> Constraint:
    syntax = enum_syntax(cls) if issubclass(cls, EnumAttr) else None
    return Constraint(lambda a: isinstance(a, cls), f"{cls.__name__} attribute", syntax)


def compatible(a: Type, b: Type) -> bool:
    """StableHLO's type compatibility: equal, or equal up to dynamic (`?`) dimensions, unranked
    tensors and bounds encodings (`isCompatibleForHloTypeInference`)."""
    if a is b:
        return True
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.types) == len(b.types) and all(compatible(x, y) for x, y in zip(a.types, b.types))
    if not (is_tensor(a) and is_tensor(b)) or not _same_element_kind(a.element_type, b.element_type):
        return False
    if isinstance(a, UnrankedTensorType) or isinstance(b, UnrankedTensorType):
        return True
    return a.rank == b.rank and all(x == y or DYNAMIC in (x, y) for x, y in zip(a.shape, b.shape))


def _same_element_kind(x: Type, y: Type) -> bool:
    """Equal element types, or quantized ones that differ only in scales and zero points (their
    storage, its bounds and the expressed type equal), as StableHLO's type inference allows."""
    if x is y:
        return True
    key = ("storage_type", "storage_min", "storage_max", "expressed_type")
    return _quantized(x) and _quantized(y) and all(hasattr(t, k) for t in (x, y) for k in key) and \
        all(getattr(x, k) == getattr(y, k) for k in key)


def dim_eq(a: int, b: int) -> bool:
    return a == b or a == DYNAMIC or b == DYNAMIC


def as_ranked(t: Type, what: str) -> RankedTensorType:
    if not isinstance(t, RankedTensorType):
        raise ShapeError(f"{what} must be a ranked tensor, but got '{t}'")
    return t


def check_dims_in_range(dims: Sequence[int], rank: int, what: str, unique: bool = True) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise ShapeError(f"{what} contains {d}, which is out of range for rank {rank}")
    if unique and len(set(dims)) != len(dims):
        raise ShapeError(f"{what} must not contain duplicates, but got {list(dims)}")


def shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d == DYNAMIC else str(d) for d in shape) + "]"


def real_type(t: Type) -> Type:
    """The tensor type with complex elements replaced by their real part type."""
    et = element_type(t)
    if not isinstance(et, ComplexType):
        return t
    if isinstance(t, RankedTensorType):
        return RankedTensorType(t.shape, et.element_type, t.encoding)
    return UnrankedTensorType(et.element_type)


def with_element_type(t: Type, et: Type) -> Type:
    """A tensor type of the shape of `t` with element type `et`."""
    if isinstance(t, RankedTensorType):
        return RankedTensorType(t.shape, et, t.encoding)
    return UnrankedTensorType(et)


def check_same_element_type(a: Type, b: Type, what: str = "operand and result") -> None:
    if element_type(a) is not element_type(b):
        raise ShapeError(f"{what} must have the same element type, but got '{a}' and '{b}'")


def bit_width(et: Type) -> int | None:
    if isinstance(et, ComplexType):
        w = bit_width(et.element_type)
        return None if w is None else 2 * w
    return getattr(et, "width", None) if isinstance(et, (IntegerType, FloatType)) else None
