"""The arith dialect: integer and floating-point arithmetic, comparisons, select and casts on
scalars and, elementwise, on vectors and tensors of them, with MLIR's custom syntax, folders and
canonicalization patterns.

    %c42_i32 = arith.constant 42 : i32
    %0 = arith.addi %arg0, %c42_i32 overflow<nsw> : i32
    %1 = arith.cmpi slt, %0, %arg1 : i32
    %2 = arith.addf %x, %y fastmath<fast> : f32
    %3 = arith.extsi %0 : i32 to i64

Folders follow upstream `ArithOps.cpp`: integers wrap around at their width (two's complement),
division by zero and signed overflow are left unfolded, floats are computed in the precision of
their type with IEEE round-to-nearest-even. Values inside the folders are bit patterns: integers
as unsigned `int`s of the type's width (like APInt), floats as their raw bits.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable, Iterable, Sequence
from fractions import Fraction
from typing import ClassVar

from loom.ir.attributes import (
    UNIT,
    UNKNOWN_LOC,
    Attribute,
    DenseElementsAttr,
    DenseResourceAttr,
    DenseStringElementsAttr,
    DialectAttr,
    FloatAttr,
    IntegerAttr,
    Location,
    UnitAttr,
    _storage_bytes,
)
from loom.ir.core import Operation, OpResult, Value
from loom.ir.floats import bits_to_value, value_to_bits
from loom.ir.opdef import (
    Commutative,
    ConstantLike,
    Constraint,
    Dialect,
    OpBase,
    Pure,
    SameOperandsAndResultType,
    SameTypeOperands,
    operand,
    opt_prop,
    prop,
    register_dialect,
    result_def,
)
from loom.ir.types import (
    FloatType,
    IndexType,
    IntegerType,
    RankedTensorType,
    ShapedType,
    Type,
    UnrankedTensorType,
    VectorType,
    i1,
    i64,
)
from loom.rewrite.declarative import DeclarativePattern, Match, PatternBuilder
from loom.rewrite.pattern import FunctionPattern
from loom.rewrite.rewriter import PatternRewriter

# Types ---------------------------------------------------------------------------------------

_CONTAINERS = (RankedTensorType, UnrankedTensorType, VectorType)


def element_type(t: Type) -> Type:
    """The element type of a vector or tensor type; any other type itself."""
    return t.element_type if isinstance(t, _CONTAINERS) else t


def i1_same_shape(t: Type) -> Type:
    """`i1`, or a vector/tensor of `i1` with the shape of `t`."""
    if isinstance(t, RankedTensorType):
        return RankedTensorType(t.shape, i1, t.encoding)
    if isinstance(t, VectorType):
        return VectorType(t.shape, i1, t.scalable)
    if isinstance(t, UnrankedTensorType):
        return UnrankedTensorType(i1)
    return i1


def _is_signless_int(t: Type) -> bool:
    return isinstance(t, IntegerType) and t.is_signless


def _like(check: Callable[[Type], bool], description: str) -> Constraint:
    return Constraint(lambda t: check(element_type(t)), description)


SignlessIntegerLike = _like(lambda t: _is_signless_int(t) or isinstance(t, IndexType),
                            "signless-non-zero-bitwidth-integer-like")
SignlessFixedWidthIntegerLike = _like(_is_signless_int, "signless-fixed-width-integer-like")
FloatLike = _like(lambda t: isinstance(t, FloatType), "floating-point-like")
BoolLike = _like(lambda t: t is i1, "bool-like")
SignlessIntegerOrFloatLike = _like(lambda t: _is_signless_int(t) or isinstance(t, FloatType),
                                   "signless-integer-or-float-like")


def _width(t: Type) -> int:
    return element_type(t).width


# Flag attributes -----------------------------------------------------------------------------

OVERFLOW_FLAGS = ("nsw", "nuw")
FASTMATH_FLAGS = ("reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn")
ROUNDING_MODES = ("to_nearest_even", "downward", "upward", "toward_zero", "to_nearest_away")
CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt", "uge", "ult", "ule",
                   "une", "uno", "true")


def overflow_flags(flags: Iterable[str] = ()) -> DialectAttr:
    """`#arith.overflow<...>` with the given flags (`nsw`, `nuw`), printed as MLIR does."""
    names = set(flags)
    return DialectAttr(f"#arith.overflow<{', '.join(f for f in OVERFLOW_FLAGS if f in names) or 'none'}>")


def fastmath_flags(flags: Iterable[str] = ()) -> DialectAttr:
    """`#arith.fastmath<...>`; `fast` stands for all seven flags."""
    names = set(flags)
    if "fast" in names:
        names.update(FASTMATH_FLAGS)
    chosen = [f for f in FASTMATH_FLAGS if f in names]
    body = "fast" if len(chosen) == len(FASTMATH_FLAGS) else ",".join(chosen) or "none"
    return DialectAttr(f"#arith.fastmath<{body}>")


def flag_names(attr: Attribute | None) -> frozenset[str]:
    """The flags of an overflow or fastmath attribute (`fast` expanded)."""
    if not isinstance(attr, DialectAttr) or "<" not in attr.text:
        return frozenset()
    body = attr.text[attr.text.index("<") + 1:-1]
    names = {n.strip() for n in body.split(",")} - {"none", ""}
    return frozenset(FASTMATH_FLAGS) if "fast" in names else frozenset(names)


OVERFLOW_NONE = overflow_flags()
FASTMATH_NONE = fastmath_flags()
OverflowFlagsAttr = Constraint(lambda a: isinstance(a, DialectAttr) and a.text.startswith("#arith.overflow<"),
                               "integer overflow flags")
FastMathFlagsAttr = Constraint(lambda a: isinstance(a, DialectAttr) and a.text.startswith("#arith.fastmath<"),
                               "fastmath flags")
I64Attr = Constraint(lambda a: isinstance(a, IntegerAttr) and a.type is i64, "64-bit signless integer attribute")
I32Attr = Constraint(lambda a: isinstance(a, IntegerAttr) and a.type == IntegerType(32),
                     "32-bit signless integer attribute")

_FLAG_KINDS = {"#arith.overflow<": (overflow_flags, OVERFLOW_FLAGS + ("none",)),
               "#arith.fastmath<": (fastmath_flags, FASTMATH_FLAGS + ("none", "fast"))}


def parse_attribute(text: str) -> Attribute | None:
    """The dialect's attribute parser: normalises `#arith.overflow<..>` and `#arith.fastmath<..>`
    to MLIR's printed form; other arith attributes stay opaque."""
    for prefix, (make, allowed) in _FLAG_KINDS.items():
        if text.startswith(prefix) and text.endswith(">"):
            names = [n.strip() for n in text[len(prefix):-1].split(",")]
            bad = [n for n in names if n not in allowed]
            if bad:
                raise ValueError(f"unknown flag '{bad[0]}' in {text}; expected one of: {', '.join(allowed)}")
            return make(names)
    return None


# Bit patterns of constants -------------------------------------------------------------------

_IEEE_NAN_KINDS = frozenset({"f16", "bf16", "f32", "f64", "f8E5M2", "f8E4M3", "f8E3M4"})


def _signed(u: int, w: int) -> int:
    return u - (1 << w) if w and u >> (w - 1) else u


def _dense_values(attr: DenseElementsAttr) -> list[int]:
    """The elements as bit patterns (integers unsigned); a splat gives one element."""
    et = attr.type.element_type
    size = _storage_bytes(et)
    mask = (1 << et.width) - 1
    raw = attr.raw
    return [int.from_bytes(raw[i:i + size], "little") & mask for i in range(0, len(raw), size)]


def _dense_from(type: ShapedType, values: list[int]) -> DenseElementsAttr:
    """Dense elements from bit patterns, stored as loom's parser stores them."""
    et = type.element_type
    size = _storage_bytes(et)
    smask = (1 << (8 * size)) - 1
    if isinstance(et, (IntegerType, IndexType)):
        values = [et.normalize(v) & smask for v in values]
    raw = b"".join(v.to_bytes(size, "little") for v in values)
    if len(values) == 1 and type.num_elements != 1:
        return DenseElementsAttr(type, raw, True)
    return DenseElementsAttr.from_raw(type, raw)


def _scalar_attr(type: Type, bits: int) -> Attribute:
    return FloatAttr(type, bits) if isinstance(type, FloatType) else IntegerAttr(type, bits)


def _int_like(t: Type) -> bool:
    return isinstance(t, (IntegerType, IndexType))


def _bits(attr: Attribute) -> int:
    if isinstance(attr, FloatAttr):
        return attr.bits
    return attr.value & ((1 << attr.type.width) - 1)


def _splat(attr: Attribute | None, want: type) -> tuple[int, Type] | None:
    """MLIR's m_ConstantInt / m_ConstantFloat on an attribute: the bits and element type of a
    scalar or of a splat of one."""
    if isinstance(attr, (IntegerAttr, FloatAttr)):
        ok = _int_like(attr.type) if want is IntegerAttr else isinstance(attr.type, FloatType)
        return (_bits(attr), attr.type) if ok else None
    if isinstance(attr, DenseElementsAttr) and attr.splat:
        et = attr.type.element_type
        ok = _int_like(et) if want is IntegerAttr else isinstance(et, FloatType)
        return (_dense_values(attr)[0], et) if ok else None
    return None


def _int_is(attr: Attribute | None, pred: Callable[[int, int], bool]) -> bool:
    """`pred(unsigned value, width)` holds for an integer (or splat) constant."""
    if attr is None:  # most operands are not constants
        return False
    got = _splat(attr, IntegerAttr)
    return got is not None and pred(got[0], got[1].width)


def _is_zero(attr: Attribute | None) -> bool:
    return _int_is(attr, lambda u, w: u == 0)


def _is_one(attr: Attribute | None) -> bool:
    return _int_is(attr, lambda u, w: u == 1)


def _is_all_ones(attr: Attribute | None) -> bool:
    return _int_is(attr, lambda u, w: u == (1 << w) - 1)


def _float_is(attr: Attribute | None, pred: Callable[[float], bool]) -> bool:
    got = _splat(attr, FloatAttr)
    return got is not None and pred(bits_to_value(got[1].name, got[0]))


def _zero_attr(type: Type) -> Attribute | None:
    """Builder::getZeroAttr (None for dynamic shapes)."""
    et = element_type(type)
    if isinstance(type, _CONTAINERS):
        if not isinstance(type, ShapedType) or not type.has_static_shape:
            return None
        return _dense_from(type, [0])
    return _scalar_attr(et, 0)


def _bool_attr(type: Type, value: bool) -> Attribute | None:
    if isinstance(type, _CONTAINERS):
        if not isinstance(type, ShapedType) or not type.has_static_shape:
            return None
        return _dense_from(type, [int(value)])
    return IntegerAttr(i1, int(value))


def _elements_of_kind(attr: Attribute, want: type) -> bool:
    et = attr.type.element_type
    return _int_like(et) if want is IntegerAttr else isinstance(et, FloatType)


def const_fold_binary(operands: Sequence[Attribute | None], result_type: Type, want: type,
                      fn: Callable[[int, int], int | None]) -> Attribute | None:
    """constFoldBinaryOp: `fn` on the bit patterns of two scalars of the same type, or of each
    pair of elements of two dense attributes; `fn` returning None (for any element) stops it."""
    a, b = operands
    if a is None or b is None:
        return None
    if isinstance(a, want) and isinstance(b, want):
        if a.type is not b.type:
            return None
        r = fn(_bits(a), _bits(b))
        return None if r is None else _scalar_attr(element_type(result_type), r)
    if not (isinstance(a, DenseElementsAttr) and isinstance(b, DenseElementsAttr)):
        return None
    if a.type is not b.type or not _elements_of_kind(a, want):
        return None
    if not isinstance(result_type, ShapedType) or not result_type.has_static_shape:
        return None
    xs, ys = _dense_values(a), _dense_values(b)
    if a.splat and b.splat:
        r = fn(xs[0], ys[0])
        return None if r is None else _dense_from(result_type, [r])
    n = a.type.num_elements
    xs = xs * n if len(xs) == 1 else xs
    ys = ys * n if len(ys) == 1 else ys
    out = []
    for x, y in zip(xs, ys):
        r = fn(x, y)
        if r is None:
            return None
        out.append(r)
    return _dense_from(result_type, out)


def const_fold_unary(operand: Attribute | None, result_type: Type, want: type,
                     fn: Callable[[int], int | None]) -> Attribute | None:
    """constFoldUnaryOp / constFoldCastOp: `fn` on the bits of a scalar or of each element."""
    if operand is None:
        return None
    if isinstance(operand, want):
        r = fn(_bits(operand))
        return None if r is None else _scalar_attr(element_type(result_type), r)
    if not isinstance(operand, DenseElementsAttr) or not _elements_of_kind(operand, want):
        return None
    if not isinstance(result_type, ShapedType) or not result_type.has_static_shape:
        return None
    out = []
    for x in _dense_values(operand):
        r = fn(x)
        if r is None:
            return None
        out.append(r)
    return _dense_from(result_type, out)


# Float arithmetic in the precision of the type -----------------------------------------------

def _is_nan_bits(ft: FloatType, bits: int) -> bool:
    v = bits_to_value(ft.name, bits)
    return v != v


def _quiet(ft: FloatType, bits: int) -> int:
    return bits | (1 << (ft.precision - 2)) if ft.name in _IEEE_NAN_KINDS else bits


def _is_signaling(ft: FloatType, bits: int) -> bool:
    return ft.name in _IEEE_NAN_KINDS and _is_nan_bits(ft, bits) and not bits >> (ft.precision - 2) & 1


def _default_nan(ft: FloatType) -> int:
    return value_to_bits(ft.name, float("nan"))


def _round(ft: FloatType, x: float) -> int:
    """Round a float64 to `ft` (one rounding: float64 results of +-*/ on narrower formats are
    exact enough that double rounding is innocuous)."""
    return value_to_bits(ft.name, x)


def _float_arith(ft: FloatType, op: Callable[[float, float], float]) -> Callable[[int, int], int | None] | None:
    """An APFloat-like binary op: NaN operands propagate (quieted, left first), invalid
    operations give the default NaN. None for formats numpy cannot compute in."""
    if ft.dtype is None:
        return None

    def fn(a: int, b: int) -> int:
        if _is_nan_bits(ft, a):
            return _quiet(ft, a)
        if _is_nan_bits(ft, b):
            return _quiet(ft, b)
        x, y = bits_to_value(ft.name, a), bits_to_value(ft.name, b)
        try:
            r = op(x, y)
        except (ZeroDivisionError, ValueError, OverflowError):
            r = _ieee_special(op, x, y)
        if r != r:
            return _default_nan(ft)
        return _round(ft, r)

    return fn


def _div(x: float, y: float) -> float:
    return x / y


def _rem(x: float, y: float) -> float:
    return math.fmod(x, y)


def _ieee_special(op: Callable, x: float, y: float) -> float:
    """IEEE results where Python raises: x/0, fmod(x, 0), fmod(inf, y)."""
    if op is _div:
        if x == 0 or x != x:
            return float("nan")
        negative = math.copysign(1.0, x) * math.copysign(1.0, y) < 0
        return -math.inf if negative else math.inf
    return float("nan")


def _float_minmax(ft: FloatType, kind: str) -> Callable[[int, int], int] | None:
    """llvm::maximum / minimum (NaN-propagating) and maxnum / minnum (NaN-ignoring)."""
    if ft.dtype is None:
        return None
    want_max = kind in ("maximum", "maxnum")

    def fn(a: int, b: int) -> int:
        an, bn = _is_nan_bits(ft, a), _is_nan_bits(ft, b)
        if kind in ("maximum", "minimum"):
            if an:
                return _quiet(ft, a)
            if bn:
                return _quiet(ft, b)
        else:
            if an and _is_signaling(ft, a):
                return _quiet(ft, a)
            if bn and _is_signaling(ft, b):
                return _quiet(ft, b)
            if an:
                return b
            if bn:
                return a
        x, y = bits_to_value(ft.name, a), bits_to_value(ft.name, b)
        if x == 0 and y == 0 and math.copysign(1, x) != math.copysign(1, y):
            negative_a = math.copysign(1, x) < 0
            return (b if negative_a else a) if want_max else (a if negative_a else b)
        if want_max:
            return b if x < y else a
        return b if y < x else a

    return fn


def _round_int(n: int, precision: int) -> int:
    """Round an integer to `precision` significant bits, ties to even."""
    m = abs(n)
    excess = m.bit_length() - precision
    if excess <= 0:
        return n
    q, r = divmod(m, 1 << excess)
    half = 1 << (excess - 1)
    if r > half or (r == half and q & 1):
        q += 1
    return (q << excess) * (-1 if n < 0 else 1)


def int_to_float_bits(ft: FloatType, n: int) -> int:
    """APFloat::convertFromAPInt with round-to-nearest-even."""
    if ft.dtype is None:
        return value_to_bits(ft.name, Fraction(n))
    rounded = _round_int(n, ft.precision)
    try:
        x = float(rounded)
    except OverflowError:
        x = math.inf if rounded > 0 else -math.inf
    return value_to_bits(ft.name, x)


# Custom syntax -------------------------------------------------------------------------------

def _parse_flag_body(parser, keyword: str) -> DialectAttr:
    parser.expect("<", f"after '{keyword}'")
    names = [parser.parse_bare_id("flag")]
    while parser.accept(","):
        names.append(parser.parse_bare_id("flag"))
    parser.expect(">")
    prefix = "#arith.overflow<" if keyword == "overflow" else "#arith.fastmath<"
    try:
        return parse_attribute(prefix + ", ".join(names) + ">")
    except ValueError as e:
        raise parser.error(str(e)) from None


def _parse_flags(parser, flags: Sequence[tuple[str, str]]) -> dict[str, Attribute]:
    """Optional flag groups in format order: `overflow<..>`, `fastmath<..>`, unit keywords
    (`nneg`, `exact`) and a rounding mode keyword."""
    props: dict[str, Attribute] = {}
    for name, kind in flags:
        if kind in ("overflow", "fastmath"):
            if parser.accept_keyword(kind):
                props[name] = _parse_flag_body(parser, kind)
        elif kind == "rounding":
            for i, mode in enumerate(ROUNDING_MODES):
                if parser.accept_keyword(mode):
                    props[name] = IntegerAttr(IntegerType(32), i)
                    break
        elif parser.accept_keyword(kind):
            props[name] = UNIT
    return props


def _print_flags(p, op: Operation, flags: Sequence[tuple[str, str]]) -> None:
    for name, kind in flags:
        value = op.read_properties().get(name)
        if value is None or value is getattr(type(op), name).default:
            continue
        if kind in ("overflow", "fastmath") and isinstance(value, DialectAttr):
            p.write(f" {kind}{value.text[value.text.index('<'):]}")
        elif kind == "rounding" and isinstance(value, IntegerAttr) and 0 <= value.value < len(ROUNDING_MODES):
            p.write(" " + ROUNDING_MODES[value.value])
        elif kind not in ("overflow", "fastmath", "rounding"):
            p.write(" " + kind)


def _split_inherent(cls: type, attrs: dict[str, Attribute], props: dict[str, Attribute]) -> None:
    for key in [k for k in attrs if k in cls.definition.prop_names]:
        props[key] = attrs.pop(key)


def _parse_operand_refs(parser, n: int) -> list:
    refs = [parser.parse_operand_ref()]
    for _ in range(n - 1):
        parser.expect(",")
        refs.append(parser.parse_operand_ref())
    return refs


def _parse_keyword_or_string(parser, allowed: Sequence[str], what: str) -> int:
    parser.ws()
    pos = parser.pos
    word = parser.parse_string() if parser.peek('"') else parser.parse_bare_id(what)
    if word not in allowed:
        raise parser.error(f"invalid {what} '{word}'; expected one of: {', '.join(allowed)}", pos)
    return allowed.index(word)


def _defining(v: Value, cls: type) -> Operation | None:
    if type(v) is OpResult:
        op = v.op
        if isinstance(op, cls):
            return op
    return None


# Op bases ------------------------------------------------------------------------------------

class _ArithOp(OpBase):
    """Shared custom syntax: `$operands flags attr-dict : type` (`: type to type` for casts).

    `_arity` is the operand count, `_flags` the optional flag groups as (property, kind)."""

    _arity: ClassVar[int] = 2
    _cast: ClassVar[bool] = False
    _flags: ClassVar[tuple[tuple[str, str], ...]] = ()

    @classmethod
    def parse_custom(cls, parser, n_results: int) -> Operation:
        refs = _parse_operand_refs(parser, cls._arity)
        props = _parse_flags(parser, cls._flags)
        attrs = parser.parse_optional_attr_dict()
        _split_inherent(cls, attrs, props)
        parser.expect(":")
        in_type = parser.parse_type()
        out_type = in_type
        if cls._cast:
            parser.expect_keyword("to")
            out_type = parser.parse_type()
        return Operation.create(cls.name, [parser.resolve_operand(r, in_type) for r in refs], [out_type], props,
                                attrs)

    def print_custom(self, p) -> None:
        p.write(p.op_name(self) + " ")
        p.operands(self.operands)
        _print_flags(p, self, self._flags)
        p.attr_dict(self.read_attributes())
        p.write(" : ")
        if self._cast:
            p.type(self.operands[0].type)
            p.write(" to ")
        p.type(self.results[0].type)

    @classmethod
    def build(cls, *operands: Value, result_type: Type | None = None, location: Location = UNKNOWN_LOC,
              **properties: Attribute) -> Operation:
        """A detached op on `operands` (the result type defaults to the first operand's)."""
        t = result_type if result_type is not None else operands[0].type
        return Operation.create(cls.name, operands, [t], properties, {}, (), (), location)


class _IntBinaryOp(_ArithOp):
    lhs = operand(SignlessIntegerLike)
    rhs = operand(SignlessIntegerLike)
    result = result_def(SignlessIntegerLike)
    traits = (Pure, SameOperandsAndResultType)

    def _fold_ints(self, operands: Sequence[Attribute | None], fn: Callable[[int, int, int], int | None]) \
            -> list[Attribute] | None:
        if operands[0] is None or operands[1] is None:  # const_fold_binary needs both
            return None
        t = self.results[0].type
        w = _width(t)
        r = const_fold_binary(operands, t, IntegerAttr, lambda a, b: fn(a, b, w))
        return None if r is None else [r]


class _IntOverflowOp(_IntBinaryOp):
    overflowFlags = prop(OverflowFlagsAttr, default=OVERFLOW_NONE)
    _flags = (("overflowFlags", "overflow"),)


class _IntExactOp(_IntBinaryOp):
    """Integer ops with an `exact` flag. Upstream they are free of memory effects but not
    speculatable (division by zero); loom marks them Pure for DCE and CSE."""

    isExact = opt_prop(UnitAttr)
    _flags = (("isExact", "exact"),)


class _FloatBinaryOp(_ArithOp):
    lhs = operand(FloatLike)
    rhs = operand(FloatLike)
    result = result_def(FloatLike)
    fastmath = prop(FastMathFlagsAttr, default=FASTMATH_NONE)
    traits = (Pure, SameOperandsAndResultType)
    _flags = (("fastmath", "fastmath"),)

    def _fold_floats(self, operands: Sequence[Attribute | None],
                     make: Callable[[FloatType], Callable[[int, int], int | None] | None]) -> list[Attribute] | None:
        ft = element_type(self.result.type)
        if not isinstance(ft, FloatType):
            return None
        fn = make(ft)
        if fn is None:
            return None
        r = const_fold_binary(operands, self.result.type, FloatAttr, fn)
        return None if r is None else [r]


class _CastOp(_ArithOp):
    """Casts: same shape in and out, elementwise."""

    _arity = 1
    _cast = True
    traits = (Pure,)
    _wider: ClassVar[int] = 0  # +1: result must be wider, -1: narrower (ext / trunc)

    @classmethod
    def build(cls, value: Value, result_type: Type, location: Location = UNKNOWN_LOC,
              **properties: Attribute) -> Operation:
        return Operation.create(cls.name, [value], [result_type], properties, {}, (), (), location)

    def _compatible(self, src: Type, dst: Type) -> bool:
        if self._wider > 0:
            return _width(dst) > _width(src)
        if self._wider < 0:
            return _width(dst) < _width(src)
        return True

    def verify_(self) -> None:
        src, dst = self.operands[0].type, self.results[0].type
        if isinstance(src, _CONTAINERS) or isinstance(dst, _CONTAINERS):
            same_shape = type(src) is type(dst) and getattr(src, "shape", None) == getattr(dst, "shape", None)
        else:
            same_shape = True
        if not same_shape or not self._compatible(element_type(src), element_type(dst)):
            self.emit_error(f"operand type '{src}' and result type '{dst}' are cast incompatible")

    def _fold_cast(self, operands: Sequence[Attribute | None], want: type,
                   fn: Callable[[int], int | None]) -> list[Attribute] | None:
        r = const_fold_unary(operands[0], self.results[0].type, want, fn)
        return None if r is None else [r]


# Constant ------------------------------------------------------------------------------------

class ConstantOp(OpBase):
    """A constant integer, float or elements value; its result type is the value's type."""

    name = "arith.constant"
    value = prop()
    result = result_def()
    traits = (ConstantLike, Pure)

    @staticmethod
    def build(value: Attribute, location: Location = UNKNOWN_LOC) -> ConstantOp:
        return Operation.create(ConstantOp.name, (), [value.type], {"value": value}, {}, (), (), location)

    @staticmethod
    def is_buildable_with(value: Attribute, type: Type) -> bool:
        if getattr(value, "type", None) is not type:
            return False
        et = element_type(type)
        if isinstance(et, IntegerType) and not et.is_signless:
            return False
        return isinstance(value, (IntegerAttr, FloatAttr, DenseElementsAttr, DenseStringElementsAttr,
                                  DenseResourceAttr))

    def verify_(self) -> None:
        t = self.result.type
        if isinstance(t, IntegerType) and not t.is_signless:
            self.emit_error("integer return type must be signless")
        value = self.read_properties().get("value")
        if not isinstance(value, (IntegerAttr, FloatAttr, DenseElementsAttr, DenseStringElementsAttr,
                                  DenseResourceAttr)):
            self.emit_error("value must be an integer, float, or elements attribute")
        if value.type is not t:
            self.emit_error("failed to verify that all of {value, result} have same type")

    def asm_result_name(self) -> str:
        """MLIR's names: `c42_i32`, `c-1_i64`, `c0` (index), `true`/`false`, else `cst`."""
        value = self.read_properties().get("value")
        t = self.result.type
        if isinstance(value, IntegerAttr):
            if isinstance(t, IntegerType) and t.width == 1:
                return "true" if value.value else "false"
            return f"c{value.value}_{t}" if isinstance(t, IntegerType) else f"c{value.value}"
        return "cst"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute] | None:
        return [self.properties["value"]]

    @classmethod
    def parse_custom(cls, parser, n_results: int) -> Operation:
        attrs = parser.parse_optional_attr_dict()
        value = parser.parse_attribute()
        props = {"value": value}
        _split_inherent(cls, attrs, props)
        t = getattr(value, "type", None)
        if t is None:
            raise parser.error("expected a typed attribute for arith.constant")
        return Operation.create(cls.name, (), [t], props, attrs)

    def print_custom(self, p) -> None:
        p.write(p.op_name(self))
        p.attr_dict(self.read_attributes())
        p.write(" ")
        p.attr(self.properties["value"])


def materialize_constant(builder, value: Attribute, type: Type, location: Location) -> Operation | None:
    """The dialect's constant materializer: an `arith.constant` at the builder's insertion
    point, or None if `value` cannot be one of type `type`."""
    if not ConstantOp.is_buildable_with(value, type):
        return None
    return builder.create(ConstantOp.name, (), [type], {"value": value}, location=location)


# Integer binary ops --------------------------------------------------------------------------

class AddIOp(_IntOverflowOp):
    """Integer addition modulo 2^width."""

    name = "arith.addi"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        lhs, rhs = self._operands[0].value, self._operands[1].value  # (self.lhs / self.rhs, faster)
        if _is_zero(operands[1]):
            return [lhs]
        sub = _defining(lhs, SubIOp)
        if sub is not None and sub.rhs is rhs:
            return [sub.lhs]
        sub = _defining(rhs, SubIOp)
        if sub is not None and sub.rhs is lhs:
            return [sub.lhs]
        return self._fold_ints(operands, lambda a, b, w: (a + b) & ((1 << w) - 1))


class SubIOp(_IntOverflowOp):
    """Integer subtraction modulo 2^width."""

    name = "arith.subi"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if self.lhs is self.rhs:
            zero = _zero_attr(self.result.type)
            if zero is not None:
                return [zero]
        if _is_zero(operands[1]):
            return [self.lhs]
        add = _defining(self.lhs, AddIOp)
        if add is not None:
            if self.rhs is add.rhs:
                return [add.lhs]
            if self.rhs is add.lhs:
                return [add.rhs]
        sub = _defining(self.rhs, SubIOp)
        if sub is not None and sub.lhs is self.lhs:  # subi(a, subi(a, b)) -> b (jaxlib's MLIR)
            return [sub.rhs]
        return self._fold_ints(operands, lambda a, b, w: (a - b) & ((1 << w) - 1))


class MulIOp(_IntOverflowOp):
    """Integer multiplication modulo 2^width."""

    name = "arith.muli"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if operands[1] is not None:
            if _is_zero(operands[1]):
                return [self.rhs]
            if _is_one(operands[1]):
                return [self.lhs]
        return self._fold_ints(operands, lambda a, b, w: (a * b) & ((1 << w) - 1))


def _fold_div_mul(lhs: Value, rhs: Value, flag: str) -> Value | None:
    """`(a * b) / b -> a` when the multiplication cannot wrap (`flag` set on it)."""
    mul = _defining(lhs, MulIOp)
    if mul is None or flag not in flag_names(mul.read_properties().get("overflowFlags")):
        return None
    if mul.lhs is rhs:
        return mul.rhs
    if mul.rhs is rhs:
        return mul.lhs
    return None


def _sdiv(a: int, b: int) -> int:
    """Signed division truncating toward zero, on Python ints."""
    q = abs(a) // abs(b)
    return -q if (a < 0) != (b < 0) else q


class DivUIOp(_IntExactOp):
    """Unsigned integer division (rounds toward zero); x / 0 is undefined behaviour."""

    name = "arith.divui"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_one(operands[1]):
            return [self.lhs]
        v = _fold_div_mul(self.lhs, self.rhs, "nuw")
        if v is not None:
            return [v]
        return self._fold_ints(operands, lambda a, b, w: a // b if b else None)


class DivSIOp(_IntExactOp):
    """Signed integer division (rounds toward zero); x / 0 and INT_MIN / -1 are undefined."""

    name = "arith.divsi"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_one(operands[1]):
            return [self.lhs]
        v = _fold_div_mul(self.lhs, self.rhs, "nsw")
        if v is not None:
            return [v]

        def fn(a: int, b: int, w: int) -> int | None:
            if not b or (a == 1 << (w - 1) and b == (1 << w) - 1):
                return None
            return _sdiv(_signed(a, w), _signed(b, w)) & ((1 << w) - 1)

        return self._fold_ints(operands, fn)


class CeilDivUIOp(_IntBinaryOp):
    """Unsigned integer division rounding toward positive infinity."""

    name = "arith.ceildivui"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_one(operands[1]):
            return [self.lhs]
        return self._fold_ints(operands, lambda a, b, w: -(-a // b) if b else None)


class CeilDivSIOp(_IntBinaryOp):
    """Signed integer division rounding toward positive infinity."""

    name = "arith.ceildivsi"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_one(operands[1]):
            return [self.lhs]

        def fn(a: int, b: int, w: int) -> int | None:
            if not b:
                return None
            if not a:
                return 0
            sa, sb, lowest = _signed(a, w), _signed(b, w), -(1 << (w - 1))
            if not (sa > 0 and sb > 0) and (sa == lowest or sb == lowest):
                return None  # negating INT_MIN overflows: upstream gives up
            return -((-sa) // sb) & ((1 << w) - 1)

        return self._fold_ints(operands, fn)


class FloorDivSIOp(_IntBinaryOp):
    """Signed integer division rounding toward negative infinity."""

    name = "arith.floordivsi"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_one(operands[1]):
            return [self.lhs]
        # As upstream, the "don't fold" flag is reassigned per element: only the last element's
        # division by zero or overflow (INT_MIN / -1) stops the fold; earlier x / 0 give x.
        failed = False

        def fn(a: int, b: int, w: int) -> int:
            nonlocal failed
            if not b:
                failed = True
                return a
            failed = a == 1 << (w - 1) and b == (1 << w) - 1
            return a if failed else (_signed(a, w) // _signed(b, w)) & ((1 << w) - 1)

        r = self._fold_ints(operands, fn)
        return None if failed else r


class RemUIOp(_IntBinaryOp):
    """Unsigned integer remainder."""

    name = "arith.remui"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_one(operands[1]):
            zero = _zero_attr(self.result.type)
            return None if zero is None else [zero]
        return self._fold_ints(operands, lambda a, b, w: a % b if b else None)


class RemSIOp(_IntBinaryOp):
    """Signed integer remainder; the result has the sign of the dividend."""

    name = "arith.remsi"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_one(operands[1]):
            zero = _zero_attr(self.result.type)
            return None if zero is None else [zero]

        def fn(a: int, b: int, w: int) -> int | None:
            if not b:
                return None
            sa, sb = _signed(a, w), _signed(b, w)
            r = abs(sa) % abs(sb)
            return (-r if sa < 0 else r) & ((1 << w) - 1)

        return self._fold_ints(operands, fn)


def _is_not_of(v: Value, x: Value, operands_of: Callable) -> bool:
    """`v` is `xori(x, all-ones constant)`."""
    xor = _defining(v, XOrIOp)
    return xor is not None and xor.lhs is x and _is_all_ones(operands_of(xor.rhs))


def _constant_value(v: Value) -> Attribute | None:
    op = v.owner_op
    if isinstance(op, OpBase) and op.has_trait(ConstantLike):
        return op.read_properties().get("value")
    return None


class AndIOp(_IntBinaryOp):
    """Bitwise and."""

    name = "arith.andi"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_zero(operands[1]):
            return [self.rhs]
        if _is_all_ones(operands[1]):
            return [self.lhs]
        if _is_not_of(self.rhs, self.lhs, _constant_value) or _is_not_of(self.lhs, self.rhs, _constant_value):
            zero = _zero_attr(self.result.type)
            if zero is not None:
                return [zero]
        for prev_v, other in ((self.lhs, self.rhs), (self.rhs, self.lhs)):
            prev = _defining(prev_v, AndIOp)
            if prev is not None and other in (prev.lhs, prev.rhs):
                return [prev.result]
        r = self._fold_ints(operands, lambda a, b, w: a & b)
        if r is None and self.lhs is self.rhs:
            return [self.lhs]  # Idempotent
        return r


class OrIOp(_IntBinaryOp):
    """Bitwise or."""

    name = "arith.ori"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_zero(operands[1]):
            return [self.lhs]
        if _is_all_ones(operands[1]):
            return [operands[1]]
        if _is_not_of(self.rhs, self.lhs, _constant_value):
            return [_defining(self.rhs, XOrIOp).rhs]
        if _is_not_of(self.lhs, self.rhs, _constant_value):
            return [_defining(self.lhs, XOrIOp).rhs]
        r = self._fold_ints(operands, lambda a, b, w: a | b)
        if r is None and self.lhs is self.rhs:
            return [self.lhs]  # Idempotent
        return r


class XOrIOp(_IntBinaryOp):
    """Bitwise exclusive or."""

    name = "arith.xori"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_zero(operands[1]):
            return [self.lhs]
        if self.lhs is self.rhs:
            zero = _zero_attr(self.result.type)
            if zero is not None:
                return [zero]
        prev = _defining(self.lhs, XOrIOp)
        if prev is not None:
            if prev.rhs is self.rhs:
                return [prev.lhs]
            if prev.lhs is self.rhs:
                return [prev.rhs]
        prev = _defining(self.rhs, XOrIOp)
        if prev is not None:
            if prev.rhs is self.lhs:
                return [prev.lhs]
            if prev.lhs is self.lhs:
                return [prev.rhs]
        return self._fold_ints(operands, lambda a, b, w: a ^ b)


class _ShiftOp(_IntBinaryOp):
    """Shifts by `rhs` bits; shifting by the width or more is poison and is not folded (as
    upstream, only the last element's amount is checked for dense operands)."""

    def _shift(self, a: int, b: int, w: int) -> int:
        raise NotImplementedError

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _is_zero(operands[1]):
            return [self.lhs]
        bounded = False

        def fn(a: int, b: int, w: int) -> int:
            nonlocal bounded
            bounded = b < w
            return self._shift(a, b, w)

        r = self._fold_ints(operands, fn)
        return r if bounded else None


class ShLIOp(_ShiftOp):
    """Shift left."""

    name = "arith.shli"
    overflowFlags = prop(OverflowFlagsAttr, default=OVERFLOW_NONE)
    _flags = (("overflowFlags", "overflow"),)

    def _shift(self, a: int, b: int, w: int) -> int:
        return (a << b) & ((1 << w) - 1) if b < w else 0


class ShRUIOp(_ShiftOp):
    """Logical shift right."""

    name = "arith.shrui"
    isExact = opt_prop(UnitAttr)
    _flags = (("isExact", "exact"),)

    def _shift(self, a: int, b: int, w: int) -> int:
        return a >> b if b < w else 0


class ShRSIOp(_ShiftOp):
    """Arithmetic shift right."""

    name = "arith.shrsi"
    isExact = opt_prop(UnitAttr)
    _flags = (("isExact", "exact"),)

    def _shift(self, a: int, b: int, w: int) -> int:
        return (_signed(a, w) >> min(b, w)) & ((1 << w) - 1)


class _MinMaxIOp(_IntBinaryOp):
    traits = (Commutative,)
    _signed_cmp: ClassVar[bool] = True
    _max: ClassVar[bool] = True

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if self.lhs is self.rhs:
            return [self.rhs]
        got = _splat(operands[1], IntegerAttr)
        if got is not None:
            u, w = got[0], got[1].width
            top, bottom = ((1 << (w - 1)) - 1, 1 << (w - 1)) if self._signed_cmp else ((1 << w) - 1, 0)
            if u == (top if self._max else bottom):
                return [self.rhs]
            if u == (bottom if self._max else top):
                return [self.lhs]

        def fn(a: int, b: int, w: int) -> int:
            x, y = (_signed(a, w), _signed(b, w)) if self._signed_cmp else (a, b)
            pick_a = x >= y if self._max else x <= y
            return a if pick_a else b

        return self._fold_ints(operands, fn)


class MaxSIOp(_MinMaxIOp):
    """Signed integer maximum."""

    name = "arith.maxsi"


class MaxUIOp(_MinMaxIOp):
    """Unsigned integer maximum."""

    name = "arith.maxui"
    _signed_cmp = False


class MinSIOp(_MinMaxIOp):
    """Signed integer minimum."""

    name = "arith.minsi"
    _max = False


class MinUIOp(_MinMaxIOp):
    """Unsigned integer minimum."""

    name = "arith.minui"
    _signed_cmp = False
    _max = False


# Float ops -----------------------------------------------------------------------------------

class AddFOp(_FloatBinaryOp):
    """Floating-point addition."""

    name = "arith.addf"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _float_is(operands[1], lambda x: x == 0 and math.copysign(1, x) < 0):
            return [self.lhs]
        return self._fold_floats(operands, lambda ft: _float_arith(ft, lambda x, y: x + y))


class SubFOp(_FloatBinaryOp):
    """Floating-point subtraction."""

    name = "arith.subf"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _float_is(operands[1], lambda x: x == 0 and math.copysign(1, x) > 0):
            return [self.lhs]
        return self._fold_floats(operands, lambda ft: _float_arith(ft, lambda x, y: x - y))


class MulFOp(_FloatBinaryOp):
    """Floating-point multiplication."""

    name = "arith.mulf"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _float_is(operands[1], lambda x: x == 1):
            return [self.lhs]
        if {"nnan", "nsz"} <= flag_names(self.read_properties().get("fastmath")) and _float_is(operands[1],
                                                                                         lambda x: x == 0):
            return [self.rhs]
        return self._fold_floats(operands, lambda ft: _float_arith(ft, lambda x, y: x * y))


class DivFOp(_FloatBinaryOp):
    """Floating-point division."""

    name = "arith.divf"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if _float_is(operands[1], lambda x: x == 1):
            return [self.lhs]
        return self._fold_floats(operands, lambda ft: _float_arith(ft, _div))


class RemFOp(_FloatBinaryOp):
    """Floating-point remainder with the sign of the dividend (C `fmod`)."""

    name = "arith.remf"

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        return self._fold_floats(operands, lambda ft: _float_arith(ft, _rem))


class MaximumFOp(_FloatBinaryOp):
    """Floating-point maximum; NaN if either operand is NaN, and -0 < +0."""

    name = "arith.maximumf"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if self.lhs is self.rhs:
            return [self.rhs]
        if _float_is(operands[1], lambda x: x == -math.inf):
            return [self.lhs]
        return self._fold_floats(operands, lambda ft: _float_minmax(ft, "maximum"))


class MinimumFOp(_FloatBinaryOp):
    """Floating-point minimum; NaN if either operand is NaN, and -0 < +0."""

    name = "arith.minimumf"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if self.lhs is self.rhs:
            return [self.rhs]
        if _float_is(operands[1], lambda x: x == math.inf):
            return [self.lhs]
        return self._fold_floats(operands, lambda ft: _float_minmax(ft, "minimum"))


class MaxNumFOp(_FloatBinaryOp):
    """Floating-point maximum ignoring a NaN operand (IEEE maxNum)."""

    name = "arith.maxnumf"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if self.lhs is self.rhs:
            return [self.rhs]
        if _float_is(operands[1], lambda x: x != x):
            return [self.lhs]
        return self._fold_floats(operands, lambda ft: _float_minmax(ft, "maxnum"))


class MinNumFOp(_FloatBinaryOp):
    """Floating-point minimum ignoring a NaN operand (IEEE minNum)."""

    name = "arith.minnumf"
    traits = (Commutative,)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        if self.lhs is self.rhs:
            return [self.rhs]
        if _float_is(operands[1], lambda x: x != x):
            return [self.lhs]
        return self._fold_floats(operands, lambda ft: _float_minmax(ft, "minnum"))


class NegFOp(_ArithOp):
    """Floating-point negation (flips the sign bit)."""

    name = "arith.negf"
    operand = operand(FloatLike)
    result = result_def(FloatLike)
    fastmath = prop(FastMathFlagsAttr, default=FASTMATH_NONE)
    traits = (Pure, SameOperandsAndResultType)
    _arity = 1
    _flags = (("fastmath", "fastmath"),)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        inner = _defining(self.operands[0], NegFOp)
        if inner is not None:
            return [inner.operands[0]]
        ft = element_type(self.result.type)
        r = const_fold_unary(operands[0], self.result.type, FloatAttr, lambda a: a ^ (1 << (ft.width - 1)))
        return None if r is None else [r]


# Comparison and select -----------------------------------------------------------------------

_CMPI_EQUAL_TRUE = frozenset({"eq", "sle", "sge", "ule", "uge"})
_CMPI_SWAPPED = {"slt": "sgt", "sgt": "slt", "sle": "sge", "sge": "sle", "ult": "ugt", "ugt": "ult", "ule": "uge",
                 "uge": "ule", "eq": "eq", "ne": "ne"}
_CMPI_INVERTED = {"eq": "ne", "ne": "eq", "slt": "sge", "sle": "sgt", "sgt": "sle", "sge": "slt", "ult": "uge",
                  "ule": "ugt", "ugt": "ule", "uge": "ult"}


def cmpi_predicate(pred: str) -> IntegerAttr:
    """The `predicate` property value of `arith.cmpi` for a keyword (`slt`, ...)."""
    return IntegerAttr(i64, CMPI_PREDICATES.index(pred))


def cmpf_predicate(pred: str) -> IntegerAttr:
    """The `predicate` property value of `arith.cmpf` for a keyword (`olt`, ...)."""
    return IntegerAttr(i64, CMPF_PREDICATES.index(pred))


def apply_cmpi(pred: str, a: int, b: int, w: int) -> bool:
    """Compare the unsigned bit patterns `a`, `b` of width `w` under an integer predicate."""
    if pred[0] == "s":
        a, b = _signed(a, w), _signed(b, w)
    op = pred if pred in ("eq", "ne") else pred[1:]
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op]


def apply_cmpf(pred: str, x: float, y: float) -> bool:
    """Compare two floats under a float predicate (ordered `o*`, unordered `u*`)."""
    if pred in ("false", "true"):
        return pred == "true"
    if pred == "ord":
        return x == x and y == y
    if pred == "uno":
        return x != x or y != y
    unordered = x != x or y != y
    if unordered:
        return pred[0] == "u"
    rel = {"eq": x == y, "gt": x > y, "ge": x >= y, "lt": x < y, "le": x <= y, "ne": x != y}[pred[1:]]
    return rel


class _CmpOp(OpBase):
    """`$predicate, $lhs, $rhs [fastmath] attr-dict : type($lhs)`; the result is i1-like."""

    _predicates: ClassVar[tuple[str, ...]] = ()
    _flags: ClassVar[tuple[tuple[str, str], ...]] = ()

    @property
    def predicate_name(self) -> str:
        return self._predicates[self.properties["predicate"].value]

    def verify_(self) -> None:
        p = self.read_properties().get("predicate")
        if not 0 <= p.value < len(self._predicates):
            self.emit_error(f"predicate {p.value} is not one of the {len(self._predicates)} predicates")
        want = i1_same_shape(self.operands[0].type)
        if self.results[0].type is not want:
            self.emit_error(f"failed to verify that result type has i1 element type and same shape as operands "
                            f"(expected '{want}')")

    @classmethod
    def build(cls, predicate: str, lhs: Value, rhs: Value, location: Location = UNKNOWN_LOC) -> Operation:
        props = {"predicate": IntegerAttr(i64, cls._predicates.index(predicate))}
        return Operation.create(cls.name, [lhs, rhs], [i1_same_shape(lhs.type)], props, {}, (), (), location)

    @classmethod
    def parse_custom(cls, parser, n_results: int) -> Operation:
        props: dict[str, Attribute] = {"predicate": IntegerAttr(i64, _parse_keyword_or_string(
            parser, cls._predicates, "predicate"))}
        parser.expect(",")
        refs = _parse_operand_refs(parser, 2)
        props.update(_parse_flags(parser, cls._flags))
        attrs = parser.parse_optional_attr_dict()
        _split_inherent(cls, attrs, props)
        parser.expect(":")
        t = parser.parse_type()
        return Operation.create(cls.name, [parser.resolve_operand(r, t) for r in refs], [i1_same_shape(t)], props,
                                attrs)

    def print_custom(self, p) -> None:
        p.write(f"{p.op_name(self)} {self.predicate_name}, ")
        p.operands(self.operands)
        _print_flags(p, self, self._flags)
        p.attr_dict(self.read_attributes())
        p.write(" : ")
        p.type(self.operands[0].type)


class CmpIOp(_CmpOp):
    """Integer comparison (`eq ne slt sle sgt sge ult ule ugt uge`), elementwise on shapes."""

    name = "arith.cmpi"
    predicate = prop(I64Attr)
    lhs = operand(SignlessIntegerLike)
    rhs = operand(SignlessIntegerLike)
    result = result_def(BoolLike)
    traits = (Pure, SameTypeOperands)
    _predicates = CMPI_PREDICATES

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        pred = self.predicate_name
        if self.lhs is self.rhs:
            r = _bool_attr(self.result.type, pred in _CMPI_EQUAL_TRUE)
            return None if r is None else [r]
        is_i1 = element_type(self.lhs.type) is i1
        if _is_zero(operands[1]):
            for ext_cls in (ExtSIOp, ExtUIOp):
                ext = _defining(self.lhs, ext_cls)
                if ext is not None and pred == "ne" and _is_i1_integer(ext.operands[0].type):
                    return [ext.operands[0]]
            if is_i1 and pred == "ne":
                return [self.lhs]
        if _is_one(operands[1]) and is_i1 and pred == "eq":
            return [self.lhs]
        if operands[0] is not None and operands[1] is None:
            # Move the constant to the right, in place.
            self.properties["predicate"] = cmpi_predicate(_CMPI_SWAPPED[pred])
            lhs, rhs = self.lhs, self.rhs
            self.set_operand(0, rhs)
            self.set_operand(1, lhs)
            return [self.result]
        if operands[0] is None:
            return None
        w = _width(self.lhs.type)
        r = const_fold_binary(operands, self.result.type, IntegerAttr,
                              lambda a, b: int(apply_cmpi(pred, a, b, w)))
        return None if r is None else [r]


def _is_i1_integer(t: Type) -> bool:
    """Upstream getIntegerWidth: i1 scalars and vectors (not tensors)."""
    return t is i1 or (isinstance(t, VectorType) and t.element_type is i1)


class CmpFOp(_CmpOp):
    """Float comparison; ordered predicates are false and unordered ones true on NaN."""

    name = "arith.cmpf"
    predicate = prop(I64Attr)
    lhs = operand(FloatLike)
    rhs = operand(FloatLike)
    result = result_def(BoolLike)
    fastmath = prop(FastMathFlagsAttr, default=FASTMATH_NONE)
    traits = (Pure, SameTypeOperands)
    _predicates = CMPF_PREDICATES
    _flags = (("fastmath", "fastmath"),)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        lhs, rhs = operands
        lhs = lhs if isinstance(lhs, FloatAttr) else None
        rhs = rhs if isinstance(rhs, FloatAttr) else None
        if lhs is not None and lhs.value != lhs.value:
            rhs = lhs
        if rhs is not None and rhs.value != rhs.value:
            lhs = rhs
        if lhs is None or rhs is None:
            return None
        return [IntegerAttr(i1, int(apply_cmpf(self.predicate_name, lhs.value, rhs.value)))]


class SelectOp(OpBase):
    """`cond ? a : b`, elementwise when the condition is a vector/tensor of i1."""

    name = "arith.select"
    condition = operand(BoolLike)
    true_value = operand()
    false_value = operand()
    result = result_def()
    traits = (Pure,)

    @staticmethod
    def build(condition: Value, true_value: Value, false_value: Value,
              location: Location = UNKNOWN_LOC) -> SelectOp:
        return Operation.create(SelectOp.name, [condition, true_value, false_value], [true_value.type], {}, {}, (),
                                (), location)

    def verify_(self) -> None:
        t = self.result.type
        if self.true_value.type is not t or self.false_value.type is not t:
            self.emit_error("failed to verify that all of {true_value, false_value, result} have same type")
        cond = self.condition.type
        if cond is i1:
            return
        if not isinstance(t, _CONTAINERS):
            self.emit_error(f"expected condition to be a signless i1, but got {cond}")
        if cond is not i1_same_shape(t):
            self.emit_error(f"expected condition type to have the same shape as the result type, expected "
                            f"{i1_same_shape(t)}, but got {cond}")

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        cond_attr, true_attr, false_attr = operands
        tv, fv = self.true_value, self.false_value
        if tv is fv:
            return [tv]
        if _is_one(cond_attr):
            return [tv]
        if _is_zero(cond_attr):
            return [fv]
        if self.result.type is i1 and _is_one(true_attr) and _is_zero(false_attr):
            return [self.condition]
        cmp = _defining(self.condition, CmpIOp)
        if cmp is not None and cmp.predicate_name in ("eq", "ne"):
            if (cmp.lhs is tv and cmp.rhs is fv) or (cmp.rhs is tv and cmp.lhs is fv):
                return [tv if cmp.predicate_name == "ne" else fv]
        if all(isinstance(a, DenseElementsAttr) for a in operands):
            n = true_attr.type.num_elements
            conds, xs, ys = (_dense_values(a) for a in operands)
            conds, xs, ys = (v * n if len(v) == 1 else v for v in (conds, xs, ys))
            return [_dense_from(true_attr.type, [x if c else y for c, x, y in zip(conds, xs, ys)])]
        return None

    @classmethod
    def parse_custom(cls, parser, n_results: int) -> Operation:
        refs = _parse_operand_refs(parser, 3)
        attrs = parser.parse_optional_attr_dict()
        parser.expect(":")
        t = parser.parse_type()
        cond = i1
        if parser.accept(","):
            cond, t = t, parser.parse_type()
        operands = [parser.resolve_operand(r, ty) for r, ty in zip(refs, (cond, t, t))]
        return Operation.create(cls.name, operands, [t], {}, attrs)

    def print_custom(self, p) -> None:
        p.write(p.op_name(self) + " ")
        p.operands(self.operands)
        p.attr_dict(self.read_attributes())
        p.write(" : ")
        if isinstance(self.condition.type, _CONTAINERS):
            p.type(self.condition.type)
            p.write(", ")
        p.type(self.result.type)


# Casts ---------------------------------------------------------------------------------------

class ExtSIOp(_CastOp):
    """Sign-extends an integer to a wider type."""

    name = "arith.extsi"
    input = operand(SignlessFixedWidthIntegerLike)
    result = result_def(SignlessFixedWidthIntegerLike)
    _wider = 1

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        inner = _defining(self.operands[0], ExtSIOp)
        if inner is not None:
            self.set_operand(0, inner.operands[0])
            return [self.result]
        w = _width(self.operands[0].type)
        return self._fold_cast(operands, IntegerAttr, lambda a: _signed(a, w) & ((1 << _width(self.result.type)) - 1))


class ExtUIOp(_CastOp):
    """Zero-extends an integer to a wider type (`nneg`: the operand is known non-negative)."""

    name = "arith.extui"
    input = operand(SignlessFixedWidthIntegerLike)
    result = result_def(SignlessFixedWidthIntegerLike)
    nonNeg = opt_prop(UnitAttr)
    _wider = 1
    _flags = (("nonNeg", "nneg"),)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        inner = _defining(self.operands[0], ExtUIOp)
        if inner is not None:
            self.set_operand(0, inner.operands[0])
            return [self.result]
        return self._fold_cast(operands, IntegerAttr, lambda a: a)


class TruncIOp(_CastOp):
    """Truncates an integer to a narrower type (keeps the low bits)."""

    name = "arith.trunci"
    input = operand(SignlessFixedWidthIntegerLike)
    result = result_def(SignlessFixedWidthIntegerLike)
    overflowFlags = prop(OverflowFlagsAttr, default=OVERFLOW_NONE)
    _wider = -1
    _flags = (("overflowFlags", "overflow"),)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        src_v = self.operands[0]
        ext = _defining(src_v, ExtUIOp) or _defining(src_v, ExtSIOp)
        if ext is not None:
            src = ext.operands[0]
            if _width(src.type) > _width(self.result.type):
                self.set_operand(0, src)
                return [self.result]
            if element_type(src.type) is element_type(self.result.type):
                return [src]
        inner = _defining(src_v, TruncIOp)
        if inner is not None:
            self.set_operand(0, inner.operands[0])
            return [self.result]
        mask = (1 << _width(self.result.type)) - 1
        return self._fold_cast(operands, IntegerAttr, lambda a: a & mask)


class _IntToFloatOp(_CastOp):
    input = operand(SignlessFixedWidthIntegerLike)
    result = result_def(FloatLike)
    _signed_input: ClassVar[bool] = True

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        ft = element_type(self.result.type)
        w = _width(self.operands[0].type)
        return self._fold_cast(operands, IntegerAttr,
                               lambda a: int_to_float_bits(ft, _signed(a, w) if self._signed_input else a))


class SIToFPOp(_IntToFloatOp):
    """Converts a signed integer to the nearest float."""

    name = "arith.sitofp"


class UIToFPOp(_IntToFloatOp):
    """Converts an unsigned integer to the nearest float (`nneg`: known non-negative)."""

    name = "arith.uitofp"
    nonNeg = opt_prop(UnitAttr)
    _signed_input = False
    _flags = (("nonNeg", "nneg"),)


class _FloatToIntOp(_CastOp):
    input = operand(FloatLike)
    result = result_def(SignlessFixedWidthIntegerLike)
    _signed_output: ClassVar[bool] = True

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        ft = element_type(self.operands[0].type)
        w = _width(self.result.type)
        if not isinstance(ft, FloatType) or ft.dtype is None:
            return None
        lo, hi = (-(1 << (w - 1)), (1 << (w - 1)) - 1) if self._signed_output else (0, (1 << w) - 1)

        def fn(bits: int) -> int | None:
            x = bits_to_value(ft.name, bits)
            if x != x or x in (math.inf, -math.inf):
                return None
            n = math.trunc(x)
            return n & ((1 << w) - 1) if lo <= n <= hi else None

        return self._fold_cast(operands, FloatAttr, fn)


class FPToSIOp(_FloatToIntOp):
    """Converts a float to a signed integer, rounding toward zero (out of range: poison)."""

    name = "arith.fptosi"


class FPToUIOp(_FloatToIntOp):
    """Converts a float to an unsigned integer, rounding toward zero (out of range: poison)."""

    name = "arith.fptoui"
    _signed_output = False


def convert_float_exact(src: FloatType, dst: FloatType, bits: int) -> int | None:
    """APFloat::convert that must not lose information (the folders' rule); None otherwise."""
    if src.dtype is None or dst.dtype is None:
        return None
    x = bits_to_value(src.name, bits)
    if x != x:
        if _is_signaling(src, bits):
            return None  # converting a signalling NaN is an invalid operation
        out = _nan_convert(src, dst, bits)
        return out
    out = value_to_bits(dst.name, x)
    y = bits_to_value(dst.name, out)
    if y != x or (y != y) or (math.copysign(1, x) != math.copysign(1, y)):
        return None
    return out


def _nan_convert(src: FloatType, dst: FloatType, bits: int) -> int | None:
    """A quiet NaN converted keeping its sign and payload (shifted); None if payload bits are
    lost or the target has no NaN encoding with a payload."""
    if src.name not in _IEEE_NAN_KINDS or dst.name not in _IEEE_NAN_KINDS:
        return None
    sm, dm = src.precision - 1, dst.precision - 1
    payload = bits & ((1 << sm) - 1)
    shift = dm - sm
    if shift < 0 and payload & ((1 << -shift) - 1):
        return None
    payload = payload << shift if shift >= 0 else payload >> -shift
    sign = bits >> (src.width - 1) & 1
    exp = ((1 << (dst.width - 1 - dm)) - 1) << dm
    return (sign << (dst.width - 1)) | exp | payload


class ExtFOp(_CastOp):
    """Extends a float to a wider type (exact)."""

    name = "arith.extf"
    input = operand(FloatLike)
    result = result_def(FloatLike)
    fastmath = opt_prop(FastMathFlagsAttr)
    _wider = 1
    _flags = (("fastmath", "fastmath"),)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        trunc = _defining(self.operands[0], TruncFOp)
        if trunc is not None and trunc.operands[0].type is self.result.type:
            if "contract" in flag_names(trunc.read_properties().get("fastmath")) and "contract" in flag_names(
                    self.read_properties().get("fastmath")):
                return [trunc.operands[0]]
        src, dst = element_type(self.operands[0].type), element_type(self.result.type)
        return self._fold_cast(operands, FloatAttr, lambda a: convert_float_exact(src, dst, a))


class TruncFOp(_CastOp):
    """Truncates a float to a narrower type, with an optional rounding mode. Folds only when
    the value is exactly representable, as upstream."""

    name = "arith.truncf"
    input = operand(FloatLike)
    result = result_def(FloatLike)
    roundingmode = opt_prop(I32Attr)
    fastmath = opt_prop(FastMathFlagsAttr)
    _wider = -1
    _flags = (("roundingmode", "rounding"), ("fastmath", "fastmath"))

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        dst = element_type(self.result.type)
        ext = _defining(self.operands[0], ExtFOp)
        if ext is not None:
            src = element_type(ext.operands[0].type)
            if _float_representable_by(src, element_type(ext.result.type)):
                if src.width > dst.width:
                    self.set_operand(0, ext.operands[0])
                    return [self.result]
                if src is dst:
                    return [ext.operands[0]]
        src = element_type(self.operands[0].type)
        return self._fold_cast(operands, FloatAttr, lambda a: convert_float_exact(src, dst, a))


def _float_representable_by(a: FloatType, b: FloatType) -> bool:
    """APFloatBase::isRepresentableBy for the common IEEE-like formats: every value of `a` is
    one of `b` (enough precision and exponent range)."""
    if a is b:
        return True
    ranges = {"f16": (11, 15, -14), "bf16": (8, 127, -126), "f32": (24, 127, -126), "f64": (53, 1023, -1022),
              "tf32": (11, 127, -126), "f80": (64, 16383, -16382), "f128": (113, 16383, -16382)}
    if a.name not in ranges or b.name not in ranges:
        return False
    pa, emax_a, emin_a = ranges[a.name]
    pb, emax_b, emin_b = ranges[b.name]
    return pa <= pb and emax_a <= emax_b and emin_a >= emin_b


class _IndexCastBase(_CastOp):
    input = operand(SignlessIntegerLike)
    result = result_def(SignlessIntegerLike)
    _sign_extend: ClassVar[bool] = True

    def _compatible(self, src: Type, dst: Type) -> bool:
        return isinstance(src, IndexType) != isinstance(dst, IndexType)

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        w_in, w_out = _width(self.operands[0].type), _width(self.result.type)
        mask = (1 << w_out) - 1
        fn = (lambda a: _signed(a, w_in) & mask) if self._sign_extend else (lambda a: a & mask)
        r = self._fold_cast(operands, IntegerAttr, fn)
        if r is not None:
            return r
        inner = _defining(self.operands[0], type(self))
        if inner is not None:
            x = inner.operands[0]
            if x.type is self.result.type and _width(inner.result.type) >= _width(x.type):
                return [x]
        return None


class IndexCastOp(_IndexCastBase):
    """Casts between `index` and a signless integer, sign-extending or truncating."""

    name = "arith.index_cast"


class IndexCastUIOp(_IndexCastBase):
    """Casts between `index` and a signless integer, zero-extending or truncating (`nneg`: the
    operand is known non-negative)."""

    name = "arith.index_castui"
    nonNeg = opt_prop(UnitAttr)
    _sign_extend = False
    _flags = (("nonNeg", "nneg"),)


class BitcastOp(_CastOp):
    """Reinterprets the bits of an integer or float as another type of the same width."""

    name = "arith.bitcast"
    input = operand(SignlessIntegerOrFloatLike)
    result = result_def(SignlessIntegerOrFloatLike)

    def _compatible(self, src: Type, dst: Type) -> bool:
        return src.width == dst.width

    def fold(self, operands: list[Attribute | None]) -> list[Attribute | Value] | None:
        value = operands[0]
        t = self.result.type
        if isinstance(value, DenseElementsAttr):
            if not isinstance(t, ShapedType):
                return None
            return [_dense_from(t, _dense_values(value))]
        if not isinstance(t, _CONTAINERS) and isinstance(value, (IntegerAttr, FloatAttr)):
            return [_scalar_attr(t, _bits(value))]
        if self.operands[0].type is t:  # CastOpInterface: an identity cast folds to its input
            return [self.operands[0]]
        return None


# Canonicalization patterns -------------------------------------------------------------------
#
# Upstream's ArithCanonicalization.td (DRR) and the C++ patterns of ArithOps.cpp, in the order each
# op registers them, plus a few that jaxlib's MLIR applies (marked; their upstream names are guesses).
# `_pat(name, source, build, where)` is a DRR `Pat<source, result, constraints>`, written in
# loom.rewrite.declarative's pattern language.

def _result_type(cls: type, operands: Sequence[Value], root_type: Type) -> Type:
    """A new op's result type from its operands, except for casts, which replace the root and take its type."""
    if issubclass(cls, _CastOp):
        return root_type
    return i1_same_shape(operands[0].type) if cls is CmpIOp else operands[-1].type


def _pat(name: str, source: tuple, build: Callable[[Match, PatternBuilder], Value],
         where: Callable[[Match], bool] | None = None) -> DeclarativePattern:
    return DeclarativePattern(name, source, build, where, constant_op=ConstantOp.name, result_type=_result_type)


def _merged_overflow(m: Match) -> DialectAttr:
    """MergeOverflow: the overflow flags both the root and the inner op have."""
    return overflow_flags(flag_names(m.prop("overflowFlags")) & flag_names(m.prop("overflowFlags", 1)))


def _rule(name: str, root: type, fn: Callable[[Operation, PatternRewriter], bool]) -> FunctionPattern:
    """A pattern written as a function, named as upstream's."""
    p = FunctionPattern(fn, root.name)
    p.debug_name = name
    return p


def _same_type(m: Match) -> bool:
    return m.x.type == m.y.type


def _is_minus_one(m: Match) -> bool:
    return _is_all_ones(m.c)


def _nneg(m: Match, combine: Callable) -> UnitAttr | None:
    """`nonNeg` for an extension of an op on two extensions, set per `combine` (any, all) of theirs."""
    return UNIT if combine(m.prop("nonNeg", i) is not None for i in (1, 2)) else None


def _default_rounding(m: Match) -> bool:
    return m.prop("roundingmode") is None


def _select_p_x_y(m: Match, b: PatternBuilder) -> Value:
    return b(SelectOp, m.p, m.x, m.y)


def _select_to_extui(op: Operation, rewriter) -> bool:
    """select(c, 1, 0) -> extui(c); select(c, 0, 1) -> extui(xori(c, true)) for integers wider than i1."""
    t = op.results[0].type
    if not isinstance(t, IntegerType) or t.width == 1:
        return False
    a, b = (_constant_value(v) for v in op.operands[1:])
    cond = op.operands[0]
    if _is_one(a) and _is_zero(b):
        pass
    elif _is_zero(a) and _is_one(b):
        true = rewriter.create(ConstantOp.name, (), [cond.type], {"value": _TRUE}, location=op.location)
        cond = rewriter.create(XOrIOp.name, [cond, true.results[0]], [cond.type], location=op.location).results[0]
    else:
        return False
    new = rewriter.create(ExtUIOp.name, [cond], [t], location=op.location)
    rewriter.replace_op(op, new.results)
    return True


_CMPF_TO_CMPI = {"oeq": "eq", "ueq": "eq", "one": "ne", "une": "ne", "ogt": "gt", "ugt": "gt", "oge": "ge",
                 "uge": "ge", "olt": "lt", "ult": "lt", "ole": "le", "ule": "le"}
# For a comparison with a fraction (int is x truncated toward zero): (replacement predicate or a constant) when
# the fraction is negative, when it is positive. Upstream's table in CmpFIntToFPConst.
_CMPI_VS_FRACTION = {"ne": (True, True), "eq": (False, False), "ule": (False, "ule"), "sle": ("slt", "sle"),
                     "ult": (False, "ule"), "slt": ("slt", "sle"), "ugt": (True, "ugt"), "sgt": ("sge", "sgt"),
                     "uge": (True, "ugt"), "sge": ("sge", "sgt")}


def _ilogb(x: float) -> float:
    """APFloat's ilogb: the unbiased exponent; -inf for zero, inf for infinities."""
    if x == 0 or math.isinf(x):
        return -math.inf if x == 0 else math.inf
    return math.frexp(x)[1] - 1


def _cmpf_int_to_fp_const(op: Operation, rewriter) -> bool:
    """cmpf(sitofp(x) or uitofp(x), c) -> cmpi(x, int(c)) or a constant i1, when no rounding of x can change
    the outcome (upstream's CmpFIntToFPConst; only f16, bf16, f32 and f64 here)."""
    rhs = _constant_value(op.operands[1])
    conv = op.operands[0].owner_op
    if not isinstance(rhs, FloatAttr) or rhs.type.name not in ("f16", "bf16", "f32", "f64") or \
            not isinstance(conv, (SIToFPOp, UIToFPOp)) or op.predicate_name in ("false", "true"):
        return False
    ft, c = rhs.type, bits_to_value(rhs.type.name, rhs.bits)
    x = conv.operands[0]
    w, unsigned = x.type.width, isinstance(conv, UIToFPOp)
    value_bits = w if unsigned else w - 1
    if c != c:
        return False
    if w > ft.precision:  # x may round: give up if that can change the comparison
        e = _ilogb(c)
        if e == math.inf:  # could x round to infinity? (the exponent of the largest finite value)
            may_change = 2 ** (ft.width - ft.precision - 1) - 1 < value_bits
        else:
            may_change = ft.precision <= e <= value_bits
        if may_change:
            return False

    def as_float(n: int) -> float:
        return bits_to_value(ft.name, int_to_float_bits(ft, n))

    def replace_with(result: bool) -> bool:
        new = rewriter.create(ConstantOp.name, (), [i1], {"value": IntegerAttr(i1, int(result))}, location=op.location)
        rewriter.replace_op(op, new.results)
        return True

    if op.predicate_name in ("ord", "uno"):
        return replace_with(op.predicate_name == "ord")
    pred = _CMPF_TO_CMPI[op.predicate_name]
    if pred not in ("eq", "ne"):
        pred = ("u" if unsigned else "s") + pred
    lo, hi = (0, (1 << w) - 1) if unsigned else (-(1 << (w - 1)), (1 << (w - 1)) - 1)
    if as_float(hi) < c:
        return replace_with(pred in ("ne", "slt", "sle", "ult", "ule"))
    if as_float(lo) > c:
        return replace_with(pred in ("ne", "sgt", "sge", "ugt", "uge"))
    n = math.trunc(c)
    if not lo <= n <= hi:
        return False
    if c != 0 and as_float(n) != c:
        pred = _CMPI_VS_FRACTION[pred][c > 0]
        if isinstance(pred, bool):
            return replace_with(pred)
    k = rewriter.create(ConstantOp.name, (), [x.type], {"value": IntegerAttr(x.type, n)}, location=op.location)
    new = rewriter.create(CmpIOp.name, [x, k.results[0]], [i1], {"predicate": cmpi_predicate(pred)},
                          location=op.location)
    rewriter.replace_op(op, new.results)
    return True


_TRUE = IntegerAttr(i1, 1)
_FALSE = IntegerAttr(i1, 0)
# Per predicate: what select(cmpi(pred, x, y), x, y) and select(cmpi(pred, x, y), y, x) compute.
_MIN_MAX = {"slt": (MinSIOp, MaxSIOp), "sle": (MinSIOp, MaxSIOp), "sgt": (MaxSIOp, MinSIOp),
            "sge": (MaxSIOp, MinSIOp), "ult": (MinUIOp, MaxUIOp), "ule": (MinUIOp, MaxUIOp),
            "ugt": (MaxUIOp, MinUIOp), "uge": (MaxUIOp, MinUIOp)}

_RULES = [
    # addi(addi(x, c0), c1) -> addi(x, c0 + c1), and the like: constants gather on the right.
    _pat("AddIAddConstant", (AddIOp, (AddIOp, "x", "#c0"), "#c1"),
         lambda m, b: b(AddIOp, m.x, b.integer(m.c0.value + m.c1.value), overflowFlags=_merged_overflow(m))),
    _pat("AddISubConstantRHS", (AddIOp, (SubIOp, "x", "#c0"), "#c1"),
         lambda m, b: b(AddIOp, m.x, b.integer(m.c1.value - m.c0.value), overflowFlags=_merged_overflow(m))),
    _pat("AddISubConstantLHS", (AddIOp, (SubIOp, "#c0", "x"), "#c1"),
         lambda m, b: b(SubIOp, b.integer(m.c0.value + m.c1.value), m.x, overflowFlags=_merged_overflow(m))),
    _pat("AddIMulNegativeOneRhs", (AddIOp, "x", (MulIOp, "y", "$c")), lambda m, b: b(SubIOp, m.x, m.y), _is_minus_one),
    _pat("AddIMulNegativeOneLhs", (AddIOp, (MulIOp, "x", "$c"), "y"), lambda m, b: b(SubIOp, m.y, m.x), _is_minus_one),
    _pat("SubIRHSAddConstant", (SubIOp, (AddIOp, "x", "#c0"), "#c1"),
         lambda m, b: b(AddIOp, m.x, b.integer(m.c0.value - m.c1.value))),
    _pat("SubILHSAddConstant", (SubIOp, "#c1", (AddIOp, "x", "#c0")),
         lambda m, b: b(SubIOp, b.integer(m.c1.value - m.c0.value), m.x, overflowFlags=_merged_overflow(m))),
    _pat("SubIRHSSubConstantRHS", (SubIOp, (SubIOp, "x", "#c0"), "#c1"),
         lambda m, b: b(SubIOp, m.x, b.integer(m.c0.value + m.c1.value), overflowFlags=_merged_overflow(m))),
    _pat("SubIRHSSubConstantLHS", (SubIOp, (SubIOp, "#c0", "x"), "#c1"),
         lambda m, b: b(SubIOp, b.integer(m.c0.value - m.c1.value), m.x, overflowFlags=_merged_overflow(m))),
    _pat("SubILHSSubConstantRHS", (SubIOp, "#c1", (SubIOp, "x", "#c0")),
         lambda m, b: b(SubIOp, b.integer(m.c0.value + m.c1.value), m.x, overflowFlags=_merged_overflow(m))),
    _pat("SubILHSSubConstantLHS", (SubIOp, "#c1", (SubIOp, "#c0", "x")),
         lambda m, b: b(AddIOp, m.x, b.integer(m.c1.value - m.c0.value), overflowFlags=_merged_overflow(m))),
    _pat("SubISubILHSRHSLHS", (SubIOp, (SubIOp, "x", "y"), "x"),
         lambda m, b: b(SubIOp, b.const(_zero_attr(m.y.type)), m.y, overflowFlags=_merged_overflow(m)),
         lambda m: _zero_attr(m.y.type) is not None),
    _pat("MulIMulIConstant", (MulIOp, (MulIOp, "x", "#c0"), "#c1"),
         lambda m, b: b(MulIOp, m.x, b.integer(m.c0.value * m.c1.value), overflowFlags=_merged_overflow(m))),
    # Bitwise ops: the negation of a comparison, ops on two extensions, constant chains.
    _pat("XOrINotCmpI", (XOrIOp, (CmpIOp, "x", "y"), "$c"),
         lambda m, b: b(CmpIOp, m.x, m.y, predicate=cmpi_predicate(_CMPI_INVERTED[m.ops[1].predicate_name])),
         lambda m: m.c == _TRUE),
    # (`nneg` of the new extui: of either extension for andi, of both for ori and xori.)
    *(_pat(f"{name}Of{ext.__name__[:-2]}", (op, (ext, "x"), (ext, "y")),
           lambda m, b, op=op, ext=ext, nneg=nneg: b(ext, b(op, m.x, m.y), nonNeg=_nneg(m, nneg)), _same_type)
      for name, op, nneg in (("XOrI", XOrIOp, all), ("And", AndIOp, any), ("Or", OrIOp, all))
      for ext in (ExtUIOp, ExtSIOp)),
    *(_pat(f"CmpI{ext.__name__[:-2]}", (CmpIOp, (ext, "x"), (ext, "y")),
           lambda m, b: b(CmpIOp, m.x, m.y, predicate=m.prop("predicate")),
           lambda m: _same_type(m) and m.ops[0].predicate_name in ("eq", "ne"))
      for ext in (ExtSIOp, ExtUIOp)),
    # andi(andi(x, c0), c1) -> andi(x, c0 & c1), and for ori and xori (jaxlib's MLIR).
    *(_pat(f"{name}{name}Constant", (op, (op, "x", "#c0"), "#c1"),
           lambda m, b, op=op, fn=fn: b(op, m.x, b.integer(fn(m.c0.value, m.c1.value))))
      for name, op, fn in (("AndI", AndIOp, operator.and_), ("OrI", OrIOp, operator.or_),
                           ("XOrI", XOrIOp, operator.xor))),
    # select
    _pat("RedundantSelectFalse", (SelectOp, "p", "x", (SelectOp, "p", "_", "y")), _select_p_x_y),
    _pat("RedundantSelectTrue", (SelectOp, "p", (SelectOp, "p", "x", "_"), "y"), _select_p_x_y),
    _pat("SelectNotCond", (SelectOp, (XOrIOp, "p", "#c"), "x", "y"), lambda m, b: b(SelectOp, m.p, m.y, m.x),
         _is_minus_one),
    _pat("SelectI1ToNot", (SelectOp, "p", "$f", "$t"), lambda m, b: b(XOrIOp, m.p, b.const(_TRUE)),
         lambda m: m.f == _FALSE and m.t == _TRUE),
    _rule("SelectToExtUI", SelectOp, _select_to_extui),
    # select(cmpi(slt, x, y), x, y) -> minsi(x, y), and the like (jaxlib's MLIR).
    _pat("SelectCmpIToMinMax", (SelectOp, (CmpIOp, "x", "y"), "x", "y"),
         lambda m, b: b(_MIN_MAX[m.ops[1].predicate_name][0], m.x, m.y), lambda m: m.ops[1].predicate_name in _MIN_MAX),
    _pat("SelectCmpIToMinMaxSwapped", (SelectOp, (CmpIOp, "x", "y"), "y", "x"),
         lambda m, b: b(_MIN_MAX[m.ops[1].predicate_name][1], m.x, m.y), lambda m: m.ops[1].predicate_name in _MIN_MAX),
    _rule("CmpFIntToFPConst", CmpFOp, _cmpf_int_to_fp_const),
    # Casts of casts
    _pat("IndexCastOfExtSI", (IndexCastOp, (ExtSIOp, "x")), lambda m, b: b(IndexCastOp, m.x)),
    _pat("IndexCastUIOfExtUI", (IndexCastUIOp, (ExtUIOp, "x")),
         lambda m, b: b(IndexCastUIOp, m.x, nonNeg=m.prop("nonNeg", 1))),
    _pat("BitcastOfBitcast", (BitcastOp, (BitcastOp, "x")), lambda m, b: b(BitcastOp, m.x)),
    _pat("ExtSIOfExtUI", (ExtSIOp, (ExtUIOp, "x")), lambda m, b: b(ExtUIOp, m.x, nonNeg=m.prop("nonNeg", 1))),
    _pat("TruncIExtSIToExtSI", (TruncIOp, (ExtSIOp, "x")), lambda m, b: b(ExtSIOp, m.x),
         lambda m: _width(m.ops[1].results[0].type) > _width(m.type) > _width(m.x.type)),
    _pat("TruncIExtUIToExtUI", (TruncIOp, (ExtUIOp, "x")), lambda m, b: b(ExtUIOp, m.x, nonNeg=m.prop("nonNeg", 1)),
         lambda m: _width(m.ops[1].results[0].type) > _width(m.type) > _width(m.x.type)),
    _pat("TruncIShrSIToTrunciShrUI", (TruncIOp, (ShRSIOp, "x", "$c")),
         lambda m, b: b(TruncIOp, b(ShRUIOp, m.x, b.const(m.c), isExact=m.prop("isExact", 1)),
                        overflowFlags=m.prop("overflowFlags")),
         lambda m: _int_is(m.c, lambda u, w: u == _width(m.x.type) - _width(m.type))),
    _pat("TruncFSIToFPToSIToFP", (TruncFOp, (SIToFPOp, "x")), lambda m, b: b(SIToFPOp, m.x), _default_rounding),
    _pat("TruncFUIToFPToUIToFP", (TruncFOp, (UIToFPOp, "x")), lambda m, b: b(UIToFPOp, m.x, nonNeg=m.prop("nonNeg", 1)),
         _default_rounding),
    _pat("UIToFPOfExtUI", (UIToFPOp, (ExtUIOp, "x")), lambda m, b: b(UIToFPOp, m.x, nonNeg=m.prop("nonNeg", 1))),
    _pat("SIToFPOfExtSI", (SIToFPOp, (ExtSIOp, "x")), lambda m, b: b(SIToFPOp, m.x)),
    _pat("SIToFPOfExtUI", (SIToFPOp, (ExtUIOp, "x")), lambda m, b: b(UIToFPOp, m.x, nonNeg=m.prop("nonNeg", 1))),
    # Float ops of negations
    *(_pat(f"{op.__name__[:-2]}OfNegF", (op, (NegFOp, "x"), (NegFOp, "y")),
           lambda m, b, op=op: b(op, m.x, m.y, fastmath=m.prop("fastmath")), _same_type)
      for op in (MulFOp, DivFOp)),
]


def _canonicalization_patterns(cls: type) -> list[FunctionPattern]:
    """The op's patterns, named as upstream's."""
    return [p for p in _RULES if p.root == cls.name]


ARITH_OPS = [
    ConstantOp, AddIOp, SubIOp, MulIOp, DivUIOp, DivSIOp, CeilDivUIOp, CeilDivSIOp, FloorDivSIOp, RemUIOp, RemSIOp,
    AndIOp, OrIOp, XOrIOp, ShLIOp, ShRUIOp, ShRSIOp, MaxSIOp, MaxUIOp, MinSIOp, MinUIOp, AddFOp, SubFOp, MulFOp,
    DivFOp, RemFOp, MaximumFOp, MinimumFOp, MaxNumFOp, MinNumFOp, NegFOp, CmpIOp, CmpFOp, SelectOp, ExtSIOp,
    ExtUIOp, TruncIOp, SIToFPOp, UIToFPOp, FPToSIOp, FPToUIOp, ExtFOp, TruncFOp, IndexCastOp, IndexCastUIOp,
    BitcastOp,
]

for _op in ARITH_OPS:
    _op.canonicalization_patterns = classmethod(_canonicalization_patterns)

register_dialect(Dialect("arith", ARITH_OPS, attribute_parser=parse_attribute,
                         materialize_constant=materialize_constant))

__all__ = [op.__name__ for op in ARITH_OPS] + [
    "FASTMATH_NONE", "OVERFLOW_NONE", "apply_cmpf", "apply_cmpi", "cmpf_predicate", "cmpi_predicate",
    "const_fold_binary", "const_fold_unary", "element_type", "fastmath_flags", "flag_names", "i1_same_shape",
    "materialize_constant", "overflow_flags", "parse_attribute",
]
