"""The shared directives of StableHLO's assembly formats (stablehlo/dialect/AssemblyFormat.cpp),
registered on import as `custom<Name>(...)` for the ops' `assembly_format`, plus the printing and
parsing helpers the ops with hand-written custom forms (reduce) use."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from loom.dialects.stablehlo.attributes import (
    ConvDimensionNumbers,
    DotDimensionNumbers,
    PrecisionAttr,
    dims_text,
    i64_array,
    padding_attr,
    parse_conv_dimensions,
)
from loom.dialects.stablehlo.types import enum_syntax, is_tensor, parse_i64_list, with_element_type
from loom.ir.attributes import (
    ArrayAttr,
    Attribute,
    DenseArrayAttr,
    DialectAttr,
    IntegerAttr,
    StringAttr,
    keyword_or_string,
)
from loom.ir.core import Operation
from loom.ir.opdef import register_directive
from loom.ir.printer import signature_text
from loom.ir.types import ComplexType, FunctionType, TupleType, Type, i1, i32


def print_functional_type(p: Any, op: Operation) -> None:
    """`(operand types) -> result types`, as `functional-type(operands, results)` prints."""
    p.write(signature_text(tuple(op.operand_types), tuple(op.result_types)))


def _assign_function_type(parser: Any, pos: int, n: int, t: FunctionType) -> tuple:
    if len(t.inputs) != n:
        raise parser.error(f"{n} operands present, but expected {len(t.inputs)}", pos)
    if len(t.results) != 1:
        raise parser.error("expected single output", pos)
    return (*t.inputs, t.results[0])


def _print_same_type(p: Any, op: Operation, *types: Any) -> None:
    *ins, result = types
    ins = [t for x in ins for t in (x if isinstance(x, list) else [x])]
    if all(t is result for t in ins):
        p.write(str(result))
    else:
        print_functional_type(p, op)


def _parse_same_type(n: int) -> Callable:
    def parse(parser: Any) -> tuple:
        pos = parser.ws()
        t = parser.parse_type()
        if isinstance(t, FunctionType):
            return _assign_function_type(parser, pos, n, t)
        return (t,) * (n + 1)
    return parse


def _parse_variadic_same_type(parser: Any, refs: list) -> tuple:
    *ins, result = _parse_same_type(len(refs))(parser)
    return list(ins), result


def _print_complex_type(p: Any, op: Operation, lhs: Type, rhs: Type, result: Type) -> None:
    real = with_element_type(result, result.element_type.element_type)
    if lhs is real and rhs is real:
        p.write(str(result))
    else:
        print_functional_type(p, op)


def _parse_complex_type(parser: Any) -> tuple:
    pos = parser.ws()
    t = parser.parse_type()
    if isinstance(t, FunctionType):
        return _assign_function_type(parser, pos, 2, t)
    if not is_tensor(t) or not isinstance(t.element_type, ComplexType):
        raise parser.error("expected a tensor of complex numbers or a function type", pos)
    real = with_element_type(t, t.element_type.element_type)
    return real, real, t


def _print_select_type(p: Any, op: Operation, pred: Type, on_true: Type, on_false: Type, result: Type) -> None:
    if on_true is not result or on_false is not result:
        print_functional_type(p, op)
    else:
        p.write(f"{pred}, {result}")


def _parse_select_type(parser: Any) -> tuple:
    pos = parser.ws()
    t = parser.parse_type()
    if isinstance(t, FunctionType):
        return _assign_function_type(parser, pos, 3, t)
    if not parser.accept(","):
        raise parser.error("expected functional type or list of two types", pos)
    u = parser.parse_type()
    return t, u, u, u


def _parse_tuple_type(parser: Any) -> tuple:
    pos = parser.ws()
    t = parser.parse_type()
    if not isinstance(t, TupleType):
        raise parser.error("expected tuple type", pos)
    return list(t.types), t


def _parse_pairwise_type(parser: Any) -> tuple:
    types = [parser.parse_type()]
    while parser.accept(","):
        types.append(parser.parse_type())
    return types, list(types)


def _parse_operands_with_commas(parser: Any) -> list:
    refs = []
    while parser.peek("%"):
        refs.append(parser.parse_operand_ref())
        parser.expect(",")
    return refs


def _print_slice_ranges(p: Any, op: Operation, start: Attribute, limit: Attribute, strides: Attribute) -> None:
    p.write("[" + ", ".join(f"{a}:{b}" + (f":{c}" if c != 1 else "")
                            for a, b, c in zip(start.values, limit.values, strides.values)) + "]")


def _parse_slice_ranges(parser: Any) -> tuple:
    parser.expect("[")
    start, limit, strides = [], [], []

    def dim() -> None:
        start.append(parser.parse_int())
        parser.expect(":")
        limit.append(parser.parse_int())
        strides.append(parser.parse_int() if parser.accept(":") else 1)
    parser.parse_list("]", dim, "slice ranges")
    return i64_array(start), i64_array(limit), i64_array(strides)


def _parse_exponent_mantissa(parser: Any) -> tuple:
    pos = parser.ws()
    word = parser.parse_bare_id("exponent mantissa")
    m = re.fullmatch(r"e([0-9]+)m([0-9]+)", word)
    if not m:
        raise parser.error(f"expected exponent mantissa in format e#m#, saw {word}", pos)
    return IntegerAttr.get(int(m.group(1)), i32), IntegerAttr.get(int(m.group(2)), i32)


def _print_precision(p: Any, op: Operation, precision: Attribute | None, algorithm: Attribute | None = None) -> None:
    if precision is not None:
        p.write(", precision = [" + ", ".join(e.value for e in precision.elements) + "]")
    if algorithm is not None:
        p.write(", algorithm = " + algorithm.text[len("#stablehlo.dot_algorithm"):])


def _parse_precision(parser: Any, with_algorithm: bool = False) -> Any:
    precision = algorithm = None
    if parser.accept(","):
        if parser.accept_keyword("precision"):
            parser.expect("=")
            parser.expect("[")
            syntax = enum_syntax(PrecisionAttr)
            precision = ArrayAttr(tuple(parser.parse_list("]", lambda: syntax.parse(parser), "precision config")))
            if with_algorithm and parser.accept(","):
                parser.expect_keyword("algorithm")
                algorithm = _parse_algorithm(parser)
        elif with_algorithm:
            parser.expect_keyword("algorithm")
            algorithm = _parse_algorithm(parser)
        else:
            raise parser.error("expected 'precision'")
    return (precision, algorithm) if with_algorithm else precision


def _parse_algorithm(parser: Any) -> Attribute:
    parser.expect("=")
    start = parser.ws()
    parser._skip_balanced()
    return DialectAttr("#stablehlo.dot_algorithm" + parser.src[start:parser.pos])


def _print_dot_dims(p: Any, op: Operation, d: DotDimensionNumbers) -> None:
    if d.lhs_batching_dimensions or d.rhs_batching_dimensions:
        p.write(f"batching_dims = {dims_text(d.lhs_batching_dimensions)} x {dims_text(d.rhs_batching_dimensions)}, ")
    p.write(f"contracting_dims = {dims_text(d.lhs_contracting_dimensions)} x {dims_text(d.rhs_contracting_dimensions)}")


def _parse_dot_dims(parser: Any) -> DotDimensionNumbers:
    def pair() -> tuple[list[int], list[int]]:
        parser.expect("=")
        lhs = parse_i64_list(parser)
        parser.expect_keyword("x")
        return lhs, parse_i64_list(parser)
    lb, rb = [], []
    if parser.accept_keyword("batching_dims"):
        lb, rb = pair()
        parser.expect(",")
    parser.expect_keyword("contracting_dims")
    lc, rc = pair()
    return DotDimensionNumbers.get(lhs_batching_dimensions=lb, rhs_batching_dimensions=rb,
                                   lhs_contracting_dimensions=lc, rhs_contracting_dimensions=rc)


_CONV_LAYOUT = re.compile(r"\[[^\]]*\]\s*x\s*\[[^\]]*\]\s*->\s*\[[^\]]*\]")


def _parse_conv_dims(parser: Any) -> ConvDimensionNumbers:
    pos = parser.ws()
    m = _CONV_LAYOUT.match(parser.src, pos)
    try:
        dims = parse_conv_dimensions(m.group()) if m else None
    except ValueError as e:
        raise parser.error(str(e), pos) from None
    if dims is None:
        raise parser.error("expected convolution dimension numbers like [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]")
    parser.pos = m.end()
    return dims


_WINDOW_KEYS = ("stride", "pad", "lhs_dilate", "rhs_dilate", "reverse")


def _print_window(p: Any, op: Operation, *attrs: Attribute | None) -> None:
    parts = []
    for key, a in zip(_WINDOW_KEYS, attrs):
        if a is None:
            continue
        if key == "pad":
            body = ", ".join(f"[{lo}, {hi}]" for lo, hi in a.to_numpy().reshape(-1, 2).tolist())
        elif key == "reverse":
            body = ", ".join("true" if v else "false" for v in a.values)
        else:
            body = ", ".join(map(str, a.values))
        parts.append(f"{key} = [{body}]")
    p.write(", ".join(parts))


def _parse_window(parser: Any) -> tuple:
    found: dict[str, Attribute] = {}

    def pair() -> tuple[int, int]:
        parser.expect("[")
        lo = parser.parse_int()
        parser.expect(",")
        hi = parser.parse_int()
        parser.expect("]")
        return lo, hi

    def boolean() -> bool:
        if parser.accept_keyword("true"):
            return True
        parser.expect_keyword("false")
        return False

    while not parser.peek("}"):
        pos = parser.ws()
        key = parser.parse_bare_id("window attribute")
        if key not in _WINDOW_KEYS or key in found:
            raise parser.error(f"unexpected or repeated window attribute '{key}'", pos)
        parser.expect("=")
        parser.expect("[")
        if key == "pad":
            found[key] = padding_attr(parser.parse_list("]", pair, "padding"))
        elif key == "reverse":
            found[key] = DenseArrayAttr.get(i1, parser.parse_list("]", boolean, "reversal"))
        else:
            found[key] = i64_array(parser.parse_list("]", parser.parse_int, key))
        if not parser.accept(","):
            break
    return tuple(found.get(k) for k in _WINDOW_KEYS)


def parse_region_argument(parser: Any) -> tuple:
    """`%name: type loc(...)?`, as `parse_region(entry_args=...)` takes it."""
    ref = parser.parse_operand_ref()
    parser.expect(":")
    t = parser.parse_type()
    return ref, t, parser.parse_optional_trailing_loc() or parser.loc_at(ref[2])


def _counted(parse: Callable) -> Callable:
    """A directive parser that does not need the count of values it returns."""
    return lambda parser, n, *refs: parse(parser, *refs)


for _name, _parse, _print in (
        ("SameOperandsAndResultType", lambda parser, n: _parse_same_type(n - 1)(parser), _print_same_type),
        ("VariadicSameOperandsAndResultType", _parse_variadic_same_type,
         lambda p, op, refs, types, result: _print_same_type(p, op, types, result)),
        ("ComplexOpType", _parse_complex_type, _print_complex_type),
        ("SelectOpType", _parse_select_type, _print_select_type),
        ("TupleOpType", _parse_tuple_type, lambda p, op, types, result: p.write(str(result))),
        ("PairwiseOpType", _parse_pairwise_type, lambda p, op, types, results: p.write(", ".join(map(str, types)))),
        ("VariadicOperandWithAttribute", _parse_operands_with_commas,
         lambda p, op, values: p.write(", ".join(map(p.value, values)) + ",")),
        ("SliceRanges", _parse_slice_ranges, _print_slice_ranges),
        ("ExponentMantissa", _parse_exponent_mantissa,
         lambda p, op, e, m: p.write(f"e{e.value}m{m.value}")),
        ("CustomCallTarget", lambda parser: StringAttr(parser.parse_symbol_name()),
         lambda p, op, target: p.write("@" + keyword_or_string(target.value))),
        ("PrecisionConfig", _parse_precision, _print_precision),
        ("PrecisionConfigAndAlgorithm", lambda parser: _parse_precision(parser, True), _print_precision),
        ("DotDimensionNumbers", _parse_dot_dims, _print_dot_dims),
        ("ConvolutionDimensions", _parse_conv_dims, lambda p, op, d: p.write(str(d)[len("#stablehlo.conv<"):-1])),
        ("WindowAttributes", _parse_window, _print_window)):
    register_directive(_name, _parse if _name == "SameOperandsAndResultType" else _counted(_parse), _print)
