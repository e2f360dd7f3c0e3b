"""The StableHLO dialect: loom's tensor op set, with the op names, attributes and semantics of the
StableHLO spec (https://github.com/openxla/stablehlo/blob/main/docs/spec.md), so that programs
exported by JAX parse, verify and print back byte for byte.

Structured attributes (interned, immutable; each prints exactly as MLIR prints it; fields are
plain Python values, dimension lists are tuples of ints):

- `DotDimensionNumbers` `#stablehlo.dot<...>`: `lhs_batching_dimensions`,
  `rhs_batching_dimensions`, `lhs_contracting_dimensions`, `rhs_contracting_dimensions`.
- `GatherDimensionNumbers` `#stablehlo.gather<...>`: `offset_dims`, `collapsed_slice_dims`,
  `operand_batching_dims`, `start_indices_batching_dims`, `start_index_map`, `index_vector_dim`
  (an int).
- `ScatterDimensionNumbers` `#stablehlo.scatter<...>`: `update_window_dims`,
  `inserted_window_dims`, `input_batching_dims`, `scatter_indices_batching_dims`,
  `scatter_dims_to_operand_dims`, `index_vector_dim` (an int).
- `ConvDimensionNumbers` `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`:
  `input_batch_dimension`, `input_feature_dimension`, `input_spatial_dimensions`,
  `kernel_input_feature_dimension`, `kernel_output_feature_dimension`, `kernel_spatial_dimensions`,
  `output_batch_dimension`, `output_feature_dimension`, `output_spatial_dimensions`.
- `OutputOperandAlias` `#stablehlo.output_operand_alias<...>`: `output_tuple_indices`,
  `operand_index`, `operand_tuple_indices`.
- `ResultAccuracy` `#stablehlo.result_accuracy<...>`: `atol`, `rtol` (floats), `ulps` (int),
  `mode` (a `ResultAccuracyModeAttr`).
- Enumerations, each with `.value` (the keyword, a str) and `ALLOWED` (the legal keywords):
  `ComparisonDirectionAttr` `#stablehlo<comparison_direction LT>` (EQ NE GE GT LE LT),
  `ComparisonTypeAttr` `#stablehlo<comparison_type FLOAT>` (NOTYPE FLOAT TOTALORDER SIGNED UNSIGNED),
  `PrecisionAttr` `#stablehlo<precision DEFAULT>` (DEFAULT HIGH HIGHEST),
  `RngAlgorithmAttr` `#stablehlo<rng_algorithm THREE_FRY>` (DEFAULT THREE_FRY PHILOX),
  `RngDistributionAttr` `#stablehlo<rng_distribution UNIFORM>` (UNIFORM NORMAL),
  `TransposeAttr` `#stablehlo<transpose NO_TRANSPOSE>` (TRANSPOSE_INVALID NO_TRANSPOSE TRANSPOSE ADJOINT),
  `FftTypeAttr` `#stablehlo<fft_type FFT>` (FFT IFFT RFFT IRFFT),
  `ResultAccuracyModeAttr` `#stablehlo.result_accuracy_mode<DEFAULT>` (DEFAULT HIGHEST TOLERANCE).
  Build them with `ComparisonDirectionAttr("LT")`, or `enum_attr("comparison_direction", "LT")`.

Any other `#stablehlo...` attribute (`#stablehlo.bounds<...>`, channel handles, dot algorithms)
stays an opaque `DialectAttr`. `TOKEN` is the `!stablehlo.token` type.

Ops are `StableHLOOp` subclasses named as in StableHLO (`AddOp` is `stablehlo.add`), with MLIR's
operand and property names (`comparison_direction`, `broadcast_dimensions` as `array<i64: ...>`,
...). Each family has `infer_result_types(operand_types, properties, regions)`, which checks the
spec's constraints (raising `ShapeError`) and returns the result types; the verifier runs it and
compares, builders use it. `Op.build(builder, ...)` creates and inserts an op; module functions
(`add(builder, lhs, rhs)`, `reduce(builder, inputs, inits, dims, body)`, ...) return its values
(names clashing with Python get a trailing underscore: `abs_`, `and_`, `slice_`, `while_`, ...).
Folders constant-fold small tensors (at most `FOLD_LIMIT` elements, or splats) where the spec's
result is unambiguous, and remove no-op reshapes, transposes, broadcasts, converts and slices,
`x + 0`, `x * 1`, ...; `materialize_constant` makes the `stablehlo.constant` ops they need.
Ops loom parses and prints but does not model (collectives, infeed/outfeed, batch norm, ...) are
registered with loose definitions (`_loose`).

Each op's custom (pretty) form, the text `jax.jit(f).lower(x).as_text()` shows, is its
`assembly_format` (with the shared directives of StableHLO's AssemblyFormat.cpp, registered
below as `custom<...>`), or `parse_custom`/`print_custom` where the syntax is not declarative
(constant, reduce, while). Ops that MLIR prints in the generic form (gather, scatter, sort, case,
...) have neither.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from loom.ir.attributes import (
    UNKNOWN_LOC,
    ArrayAttr,
    Attribute,
    BoolAttr,
    DenseArrayAttr,
    DenseElementsAttr,
    DenseResourceAttr,
    DenseStringElementsAttr,
    DialectAttr,
    DictionaryAttr,
    IntegerAttr,
    Location,
    OpaqueBuiltinAttr,
    StringAttr,
    SymbolRefAttr,
    keyword_or_string,
    numpy_dtype,
)
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Operation, Region, Value
from loom.ir.floats import bits_to_value, format_float, value_to_bits
from loom.ir.opdef import (
    VARIADIC,
    AttrSyntax,
    ConstantLike,
    Constraint,
    Dialect,
    OpBase,
    Pure,
    ReturnLike,
    Terminator,
    Trait,
    lookup_op,
    opt_prop,
    prop,
    region_def,
    register_dialect,
    register_directive,
    result_def,
    var_operand,
    var_result,
)
from loom.ir.opdef import operand as operand_def
from loom.ir.printer import signature_text
from loom.ir.types import (
    DYNAMIC,
    ComplexType,
    DialectType,
    FloatType,
    FunctionType,
    IntegerType,
    RankedTensorType,
    TupleType,
    Type,
    UnrankedTensorType,
    f32,
    f64,
    i1,
    i32,
    i64,
)

TOKEN = DialectType("!stablehlo.token")


def _dims(values: tuple[int, ...]) -> str:
    return "[" + ", ".join(map(str, values)) + "]"


# Enumerations --------------------------------------------------------------------------------

class EnumAttr(Attribute):
    """Base of StableHLO's enum attributes: `#<dialect><<keyword> VALUE>`."""

    __slots__ = ("value",)
    _canonical_args = True
    DIALECT: ClassVar[str] = "stablehlo"
    KEYWORD: ClassVar[str] = ""
    ALLOWED: ClassVar[tuple[str, ...]] = ()

    def __init__(self, value: str) -> None:
        if value not in self.ALLOWED:
            raise ValueError(f"unknown {self.KEYWORD} '{value}'; expected one of: {', '.join(self.ALLOWED)}")
        self.value = value

    def _render(self, elide_type: bool) -> str:
        return f"#{self.DIALECT}<{self.KEYWORD} {self.value}>"


class ComparisonDirectionAttr(EnumAttr):
    """`#stablehlo<comparison_direction LT>`: the direction of `stablehlo.compare`."""

    __slots__ = ()
    KEYWORD = "comparison_direction"
    ALLOWED = ("EQ", "NE", "GE", "GT", "LE", "LT")


class ComparisonTypeAttr(EnumAttr):
    """`#stablehlo<comparison_type FLOAT>`: how `stablehlo.compare` orders its operands."""

    __slots__ = ()
    KEYWORD = "comparison_type"
    ALLOWED = ("NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED")


class PrecisionAttr(EnumAttr):
    """`#stablehlo<precision DEFAULT>`: one operand's entry of a `precision_config`."""

    __slots__ = ()
    KEYWORD = "precision"
    ALLOWED = ("DEFAULT", "HIGH", "HIGHEST")


class RngAlgorithmAttr(EnumAttr):
    """`#stablehlo<rng_algorithm THREE_FRY>`: the generator of `stablehlo.rng_bit_generator`."""

    __slots__ = ()
    KEYWORD = "rng_algorithm"
    ALLOWED = ("DEFAULT", "THREE_FRY", "PHILOX")


class RngDistributionAttr(EnumAttr):
    """`#stablehlo<rng_distribution UNIFORM>`: the distribution of `stablehlo.rng`."""

    __slots__ = ()
    KEYWORD = "rng_distribution"
    ALLOWED = ("UNIFORM", "NORMAL")


class TransposeAttr(EnumAttr):
    """`#stablehlo<transpose NO_TRANSPOSE>`: `transpose_a` of `stablehlo.triangular_solve`."""

    __slots__ = ()
    KEYWORD = "transpose"
    ALLOWED = ("TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT")


class FftTypeAttr(EnumAttr):
    """`#stablehlo<fft_type FFT>`: the kind of transform of `stablehlo.fft`."""

    __slots__ = ()
    KEYWORD = "fft_type"
    ALLOWED = ("FFT", "IFFT", "RFFT", "IRFFT")


class ResultAccuracyModeAttr(EnumAttr):
    """`#stablehlo.result_accuracy_mode<DEFAULT>`: the mode of a `ResultAccuracy`."""

    __slots__ = ()
    KEYWORD = "result_accuracy_mode"
    ALLOWED = ("DEFAULT", "HIGHEST", "TOLERANCE")

    def _render(self, elide_type: bool) -> str:
        return f"#{self.DIALECT}.{self.KEYWORD}<{self.value}>"


ENUM_ATTRS: dict[str, type[EnumAttr]] = {c.KEYWORD: c for c in (
    ComparisonDirectionAttr, ComparisonTypeAttr, PrecisionAttr, RngAlgorithmAttr, RngDistributionAttr,
    TransposeAttr, FftTypeAttr)}


def enum_attr(keyword: str, value: str) -> EnumAttr:
    """`enum_attr("comparison_direction", "LT")` is `#stablehlo<comparison_direction LT>`."""
    return ENUM_ATTRS[keyword](value)


# Structured attributes -----------------------------------------------------------------------

class _StructAttr(Attribute):
    """A `#stablehlo.<mnemonic><key = value, ...>` attribute whose fields are int tuples or ints.
    `FIELDS` lists (name, default) in printing order; fields equal to their default are omitted
    when printed, as MLIR does."""

    __slots__ = ()
    _canonical_args = True
    MNEMONIC: ClassVar[str] = ""
    FIELDS: ClassVar[tuple[tuple[str, Any], ...]] = ()
    ALWAYS_PRINTED: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, *values: Any) -> None:
        """Positional field values in `FIELDS` order (use `get` for keywords and defaults)."""
        if len(values) != len(self.FIELDS):
            raise TypeError(f"{type(self).__name__} takes {len(self.FIELDS)} fields, got {len(values)}")
        for (name, _), value in zip(self.FIELDS, values):
            setattr(self, name, value)

    @classmethod
    def get(cls, **fields: Any) -> Any:
        """Build from keyword fields (omitted ones take their defaults; lists become tuples)."""
        unknown = set(fields) - {n for n, _ in cls.FIELDS}
        if unknown:
            raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
        values = []
        for name, default in cls.FIELDS:
            v = fields.get(name, default)
            values.append(tuple(int(x) for x in v) if isinstance(default, tuple) else int(v))
        return cls(*values)

    def replace(self, **fields: Any) -> Any:
        """A copy with some fields changed."""
        current = {n: getattr(self, n) for n, _ in self.FIELDS}
        current.update(fields)
        return self.get(**current)

    def _render(self, elide_type: bool) -> str:
        parts = []
        for name, default in self.FIELDS:
            v = getattr(self, name)
            if v == default and name not in self.ALWAYS_PRINTED:
                continue
            parts.append(f"{name} = {_dims(v) if isinstance(v, tuple) else v}")
        return f"#stablehlo.{self.MNEMONIC}<{', '.join(parts)}>"


class DotDimensionNumbers(_StructAttr):
    """`#stablehlo.dot<...>`: batching and contracting dimensions of `stablehlo.dot_general`."""

    __slots__ = ("lhs_batching_dimensions", "rhs_batching_dimensions", "lhs_contracting_dimensions",
                 "rhs_contracting_dimensions")
    MNEMONIC = "dot"
    FIELDS = (("lhs_batching_dimensions", ()), ("rhs_batching_dimensions", ()),
              ("lhs_contracting_dimensions", ()), ("rhs_contracting_dimensions", ()))


class GatherDimensionNumbers(_StructAttr):
    """`#stablehlo.gather<...>`: how `stablehlo.gather` maps indices to operand slices."""

    __slots__ = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims", "start_indices_batching_dims",
                 "start_index_map", "index_vector_dim")
    MNEMONIC = "gather"
    FIELDS = (("offset_dims", ()), ("collapsed_slice_dims", ()), ("operand_batching_dims", ()),
              ("start_indices_batching_dims", ()), ("start_index_map", ()), ("index_vector_dim", 0))


class ScatterDimensionNumbers(_StructAttr):
    """`#stablehlo.scatter<...>`: how `stablehlo.scatter` maps indices to operand windows."""

    __slots__ = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                 "scatter_indices_batching_dims", "scatter_dims_to_operand_dims", "index_vector_dim")
    MNEMONIC = "scatter"
    FIELDS = (("update_window_dims", ()), ("inserted_window_dims", ()), ("input_batching_dims", ()),
              ("scatter_indices_batching_dims", ()), ("scatter_dims_to_operand_dims", ()), ("index_vector_dim", 0))


class OutputOperandAlias(_StructAttr):
    """`#stablehlo.output_operand_alias<...>`: a result of `stablehlo.custom_call` that aliases an
    operand (all three fields always print)."""

    __slots__ = ("output_tuple_indices", "operand_index", "operand_tuple_indices")
    MNEMONIC = "output_operand_alias"
    FIELDS = (("output_tuple_indices", ()), ("operand_index", 0), ("operand_tuple_indices", ()))
    ALWAYS_PRINTED = frozenset(n for n, _ in FIELDS)


class ConvDimensionNumbers(_StructAttr):
    """`#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`: the layout of the input, kernel
    and output of `stablehlo.convolution` (`b`/`f` batch and feature, `i`/`o` kernel input and output
    feature, numbers the spatial dimensions in order)."""

    __slots__ = ("input_batch_dimension", "input_feature_dimension", "input_spatial_dimensions",
                 "kernel_input_feature_dimension", "kernel_output_feature_dimension", "kernel_spatial_dimensions",
                 "output_batch_dimension", "output_feature_dimension", "output_spatial_dimensions")
    MNEMONIC = "conv"
    FIELDS = (("input_batch_dimension", 0), ("input_feature_dimension", 0), ("input_spatial_dimensions", ()),
              ("kernel_input_feature_dimension", 0), ("kernel_output_feature_dimension", 0),
              ("kernel_spatial_dimensions", ()), ("output_batch_dimension", 0), ("output_feature_dimension", 0),
              ("output_spatial_dimensions", ()))
    ALWAYS_PRINTED = frozenset(n for n, _ in FIELDS)


    @staticmethod
    def _layout(first: tuple[int, str], second: tuple[int, str], spatial: tuple[int, ...]) -> str | None:
        rank = 2 + len(spatial)
        slots = ["0"] * rank  # MLIR leaves unnamed slots as spatial dimension 0
        for d, letter in (first, second):
            if not 0 <= d < rank:
                return None
            slots[d] = letter
        for i, d in enumerate(spatial):
            if not 0 <= d < rank:
                return None
            slots[d] = str(i)
        return "[" + ", ".join(slots) + "]"

    def _render(self, elide_type: bool) -> str:
        lhs = self._layout((self.input_batch_dimension, "b"), (self.input_feature_dimension, "f"),
                           self.input_spatial_dimensions)
        rhs = self._layout((self.kernel_input_feature_dimension, "i"), (self.kernel_output_feature_dimension, "o"),
                           self.kernel_spatial_dimensions)
        out = self._layout((self.output_batch_dimension, "b"), (self.output_feature_dimension, "f"),
                           self.output_spatial_dimensions)
        if lhs is None or rhs is None or out is None:  # not printable as a layout: MLIR's raw form
            return "#stablehlo.conv<raw " + super()._render(elide_type)[len("#stablehlo.conv<"):]
        return f"#stablehlo.conv<{lhs}x{rhs}->{out}>"


class ResultAccuracy(Attribute):
    """`#stablehlo.result_accuracy<atol = .., rtol = .., ulps = .., mode = ..>`: the requested
    accuracy of a transcendental op. Zero tolerances are omitted when printed, as MLIR does."""

    __slots__ = ("atol_bits", "rtol_bits", "ulps", "mode")
    _canonical_args = True

    def __init__(self, atol_bits: int, rtol_bits: int, ulps: int, mode: ResultAccuracyModeAttr) -> None:
        self.atol_bits = atol_bits
        self.rtol_bits = rtol_bits
        self.ulps = ulps
        self.mode = mode

    @staticmethod
    def get(atol: float = 0.0, rtol: float = 0.0, ulps: int = 0, mode: str = "DEFAULT") -> ResultAccuracy:
        return ResultAccuracy(value_to_bits("f64", atol), value_to_bits("f64", rtol), int(ulps),
                              ResultAccuracyModeAttr(mode))

    @property
    def atol(self) -> float:
        return bits_to_value("f64", self.atol_bits)

    @property
    def rtol(self) -> float:
        return bits_to_value("f64", self.rtol_bits)

    def _render(self, elide_type: bool) -> str:
        parts = []
        if self.atol_bits:
            parts.append(f"atol = {format_float('f64', self.atol_bits)[0]}")
        if self.rtol_bits:
            parts.append(f"rtol = {format_float('f64', self.rtol_bits)[0]}")
        if self.ulps:
            parts.append(f"ulps = {self.ulps}")
        parts.append(f"mode = {self.mode}")
        return f"#stablehlo.result_accuracy<{', '.join(parts)}>"


# Parsing -------------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(\[[^\]]*\]|#[A-Za-z_.]+<[^<>]*>|[-+]?[0-9][0-9.eE+-]*|[A-Za-z_][A-Za-z0-9_]*)\s*")
_KEY_VALUE = re.compile(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*=")


def _parse_fields(body: str) -> dict[str, str] | None:
    """`key = value, ...` (values: int lists, numbers, or one nested attribute) into texts."""
    fields: dict[str, str] = {}
    pos = 0
    body = body.strip()
    while pos < len(body):
        m = _KEY_VALUE.match(body, pos)
        if not m:
            return None
        v = _TOKEN.match(body, m.end())
        if not v:
            return None
        fields[m.group(1)] = v.group(1)
        pos = v.end()
        if pos < len(body):
            if body[pos] != ",":
                return None
            pos += 1
    return fields


def _int_list(text: str) -> tuple[int, ...]:
    inner = text.strip()[1:-1].strip()
    return tuple(int(x) for x in inner.split(",")) if inner else ()


def _parse_struct(cls: type[_StructAttr], body: str) -> _StructAttr | None:
    fields = _parse_fields(body)
    if fields is None:
        return None
    known = {n: d for n, d in cls.FIELDS}
    values: dict[str, Any] = {}
    for k, text in fields.items():
        if k not in known:
            raise ValueError(f"unknown field '{k}' in #stablehlo.{cls.MNEMONIC}; expected one of: "
                             f"{', '.join(known)}")
        values[k] = _int_list(text) if isinstance(known[k], tuple) else int(text)
    return cls.get(**values)


def _parse_conv(body: str) -> ConvDimensionNumbers | None:
    body = body.strip()
    if body.startswith("raw "):
        return _parse_struct(ConvDimensionNumbers, body[4:])
    m = re.fullmatch(r"\[([^\]]*)\]\s*x\s*\[([^\]]*)\]\s*->\s*\[([^\]]*)\]", body)
    if not m:
        return None

    def layout(text: str, letters: str) -> tuple[int, int, tuple[int, ...]]:
        items = [s.strip() for s in text.split(",")]
        if sorted(x for x in items if not x.isdigit()) != sorted(letters) or len(items) < 2:
            raise ValueError(f"malformed convolution layout [{text}]: expected '{letters[0]}', '{letters[1]}' "
                             "and spatial dimensions")
        spatial = sorted((int(x), i) for i, x in enumerate(items) if x.isdigit())
        if [s for s, _ in spatial] != list(range(len(spatial))):
            raise ValueError(f"malformed convolution layout [{text}]: spatial dimensions must be 0..n-1")
        return items.index(letters[0]), items.index(letters[1]), tuple(i for _, i in spatial)

    ib, if_, isp = layout(m.group(1), "bf")
    ki, ko, ksp = layout(m.group(2), "io")
    ob, of, osp = layout(m.group(3), "bf")
    return ConvDimensionNumbers(ib, if_, isp, ki, ko, ksp, ob, of, osp)


def _parse_result_accuracy(body: str) -> ResultAccuracy | None:
    fields = _parse_fields(body)
    if fields is None or "mode" not in fields:
        return None
    mode = parse_attribute(fields["mode"])
    if not isinstance(mode, ResultAccuracyModeAttr):
        return None
    return ResultAccuracy(value_to_bits("f64", fields.get("atol", "0.0")),
                          value_to_bits("f64", fields.get("rtol", "0.0")), int(fields.get("ulps", "0")), mode)


_STRUCTS: dict[str, Any] = {
    "dot": lambda body: _parse_struct(DotDimensionNumbers, body),
    "gather": lambda body: _parse_struct(GatherDimensionNumbers, body),
    "scatter": lambda body: _parse_struct(ScatterDimensionNumbers, body),
    "output_operand_alias": lambda body: _parse_struct(OutputOperandAlias, body),
    "conv": _parse_conv,
    "result_accuracy": _parse_result_accuracy,
    "result_accuracy_mode": lambda body: ResultAccuracyModeAttr(body.strip()),
}

_ENUM_TEXT = re.compile(r"#(stablehlo|chlo)<\s*([a-z_]+)\s+([A-Z_0-9]+)\s*>\Z")
_STRUCT_TEXT = re.compile(r"#stablehlo\.([a-z_]+)<(.*)>\Z", re.S)


def parse_attribute(text: str) -> Attribute | None:
    """The dialect's attribute parser: the full text `#stablehlo...` to a structured attribute, or
    None for attributes loom keeps opaque."""
    m = _ENUM_TEXT.match(text)
    if m:
        if m.group(1) != "stablehlo":
            return None
        cls = ENUM_ATTRS.get(m.group(2))
        return cls(m.group(3)) if cls is not None else None
    m = _STRUCT_TEXT.match(text)
    if m:
        parse = _STRUCTS.get(m.group(1))
        if parse is not None:
            return parse(m.group(2))
    return None



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
# f(loat), c(omplex). Quantized element types count as integers.
_KINDS: dict[str, tuple[str, Callable[[Type], bool]]] = {
    "p": ("pred (AKA boolean or 1-bit integer)", lambda et: et is i1),
    "i": ("integer", lambda et: (isinstance(et, IntegerType) and et.width > 1 and et.signedness != "s")
          or _quantized(et)),
    "s": ("signed integer", lambda et: (isinstance(et, IntegerType) and et.width > 1 and et.is_signless)
          or _quantized(et)),
    "f": ("floating-point", lambda et: isinstance(et, FloatType)),
    "c": ("complex", lambda et: isinstance(et, ComplexType)),
}


def has_kind(et: Type, kinds: str) -> bool:
    """Whether element type `et` is one of the kinds (letters of `_KINDS`)."""
    return any(_KINDS[k][1](et) for k in kinds)


def _kind_text(kinds: str) -> str:
    names = [_KINDS[k][0] for k in kinds]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def TensorOf(kinds: str = "pifc", rank: int | None = None) -> Constraint:
    """Constraint: a tensor whose elements are of the given kinds (and of the given rank)."""
    def check(t: Type) -> bool:
        if not is_tensor(t) or not has_kind(t.element_type, kinds):
            return False
        return rank is None or (isinstance(t, RankedTensorType) and t.rank == rank)
    where = "" if rank is None else f"{rank}D "
    return Constraint(check, f"{where}tensor of {_kind_text(kinds)} values")


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


def _parse_i64_list(parser: Any) -> list[int]:
    parser.expect("[")
    return parser.parse_list("]", parser.parse_int, "integer list")


I64_ARRAY_SYNTAX = AttrSyntax(lambda a: _dims(a.values), lambda parser: i64_array(_parse_i64_list(parser)))


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


def _of(cls: type) -> Constraint:
    syntax = enum_syntax(cls) if issubclass(cls, EnumAttr) else None
    return Constraint(lambda a: isinstance(a, cls), f"{cls.__name__} attribute", syntax)


def compatible(a: Type, b: Type) -> bool:
    """StableHLO's type compatibility: equal, or equal up to dynamic (`?`) dimensions, unranked
    tensors and bounds encodings (`isCompatibleForHloTypeInference`)."""
    if a is b:
        return True
    if isinstance(a, TupleType) and isinstance(b, TupleType):
        return len(a.types) == len(b.types) and all(compatible(x, y) for x, y in zip(a.types, b.types))
    if not (is_tensor(a) and is_tensor(b)) or a.element_type is not b.element_type:
        return False
    if isinstance(a, UnrankedTensorType) or isinstance(b, UnrankedTensorType):
        return True
    return a.rank == b.rank and all(x == y or DYNAMIC in (x, y) for x, y in zip(a.shape, b.shape))


def _dim_eq(a: int, b: int) -> bool:
    return a == b or a == DYNAMIC or b == DYNAMIC


def _ranked(t: Type, what: str) -> RankedTensorType:
    if not isinstance(t, RankedTensorType):
        raise ShapeError(f"{what} must be a ranked tensor, but got '{t}'")
    return t


def _dims_in_range(dims: Sequence[int], rank: int, what: str, unique: bool = True) -> None:
    for d in dims:
        if not 0 <= d < rank:
            raise ShapeError(f"{what} contains {d}, which is out of range for rank {rank}")
    if unique and len(set(dims)) != len(dims):
        raise ShapeError(f"{what} must not contain duplicates, but got {list(dims)}")


# Property helpers ------------------------------------------------------------------------------

def _ints(props: dict[str, Attribute], name: str, default: Sequence[int] | None = None) -> tuple[int, ...]:
    """The integers of an `array<i64: ...>` (or integer elements) property."""
    a = props.get(name)
    if a is None:
        if default is None:
            raise ShapeError(f"requires attribute '{name}'")
        return tuple(default)
    if isinstance(a, DenseArrayAttr):
        return tuple(int(v) for v in a.values)
    if isinstance(a, DenseElementsAttr):
        return tuple(int(v) for v in a.to_numpy().reshape(-1))
    raise ShapeError(f"attribute '{name}' must be an array of integers, but got {a}")


def _int(props: dict[str, Attribute], name: str, default: int | None = None) -> int:
    a = props.get(name)
    if a is None:
        if default is None:
            raise ShapeError(f"requires attribute '{name}'")
        return default
    if not isinstance(a, IntegerAttr):
        raise ShapeError(f"attribute '{name}' must be an integer, but got {a}")
    return a.value


def _flag(props: dict[str, Attribute], name: str) -> bool:
    a = props.get(name)
    return isinstance(a, IntegerAttr) and bool(a.value)


def _padding(props: dict[str, Attribute], name: str, n: int) -> list[tuple[int, int]]:
    a = props.get(name)
    if a is None:
        return [(0, 0)] * n
    if not isinstance(a, DenseElementsAttr) or a.type.shape != (n, 2):
        shape = "x".join(map(str, a.type.shape)) if isinstance(a, DenseElementsAttr) else str(a)
        raise ShapeError(f"attribute '{name}' must have shape [{n}, 2], but got {shape}")
    return [(int(lo), int(hi)) for lo, hi in a.to_numpy()]


def i64_array(values: Iterable[int]) -> DenseArrayAttr:
    """`array<i64: ...>`."""
    return DenseArrayAttr.get(i64, values)


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr.get(value, i64)


def padding_attr(pairs: Sequence[tuple[int, int]]) -> DenseElementsAttr:
    """`dense<[[lo, hi], ...]> : tensor<Nx2xi64>`."""
    arr = np.array(pairs, dtype=np.int64).reshape(len(pairs), 2)
    return DenseElementsAttr.get(arr, RankedTensorType((len(pairs), 2), i64, None))


def _shape_text(shape: Sequence[int]) -> str:
    return "[" + ", ".join("?" if d == DYNAMIC else str(d) for d in shape) + "]"


# Ops: base -------------------------------------------------------------------------------------

class HloCompatibleOperandsAndResultType(Trait):
    """All operands and results have compatible types (equal up to dynamic dimensions): StableHLO's
    `HLO_CompatibleOperandsAndResultType`, its form of `SameOperandsAndResultType`."""

    @classmethod
    def verify(cls, op: Operation) -> str | None:
        types = [v.type for v in op.operands] + [r.type for r in op.results]
        for t in types[1:]:
            if not compatible(types[0], t):
                return f"requires compatible types for all operands and results, but got '{types[0]}' and '{t}'"
        return None


class Elementwise(Trait):
    """Applies elementwise to operands of one shape (a mapping of scalar functions)."""


# Custom syntax -----------------------------------------------------------------------------------
#
# The shared directives of StableHLO's assembly formats (stablehlo/dialect/AssemblyFormat.cpp),
# used as `custom<Name>(...)` in the ops' `assembly_format`.

def _functional(p: Any, op: Operation) -> None:
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
        _functional(p, op)


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
        _functional(p, op)


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
        _functional(p, op)
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
        p.write(f"batching_dims = {_dims(d.lhs_batching_dimensions)} x {_dims(d.rhs_batching_dimensions)}, ")
    p.write(f"contracting_dims = {_dims(d.lhs_contracting_dimensions)} x {_dims(d.rhs_contracting_dimensions)}")


def _parse_dot_dims(parser: Any) -> DotDimensionNumbers:
    def pair() -> tuple[list[int], list[int]]:
        parser.expect("=")
        lhs = _parse_i64_list(parser)
        parser.expect_keyword("x")
        return lhs, _parse_i64_list(parser)
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
        dims = _parse_conv(m.group()) if m else None
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


def _parse_region_argument(parser: Any) -> tuple:
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



class StableHLOOp(OpBase):
    """Base of StableHLO ops.

    `infer_result_types(operand_types, properties, regions)` checks the operands and attributes
    against the spec and returns the result types (raising `ShapeError` on a violation); the
    verifier runs it and compares with the op's result types, builders use it to type new ops. Ops
    whose result type is not determined by their inputs return None and check in `check_types`."""

    @classmethod
    def infer_result_types(cls, operand_types: Sequence[Type], properties: dict[str, Attribute],
                           regions: Sequence[Region] = ()) -> list[Type] | None:
        return None

    def asm_result_names(self) -> list[str] | None:
        """Ops with several results, none variadic, name them after their fields in the custom
        form: `%values, %indices = chlo.top_k(...)`."""
        d = self.definition
        if len(d.results) > 1 and d._result_variadics == 0:
            return [f.name for f in d.results]
        return None

    def check_types(self) -> None:
        """Extra checks that need the result types; raise ShapeError."""

    def verify_(self) -> None:
        try:
            inferred = type(self).infer_result_types(self.operand_types, self.properties, self.regions)
            if inferred is not None:
                self._check_inferred(inferred)
            self.check_types()
        except ShapeError as e:
            self.emit_error(str(e))

    def _check_inferred(self, inferred: Sequence[Type]) -> None:
        actual = self.result_types
        if len(inferred) != len(actual) or not all(compatible(a, b) for a, b in zip(inferred, actual)):
            raise ShapeError(f"inferred type(s) '{', '.join(map(str, inferred))}' are incompatible with return "
                             f"type(s) of operation '{', '.join(map(str, actual))}'")

    @classmethod
    def create(cls, operands: Sequence[Value] = (), properties: dict[str, Attribute] | None = None,
               result_types: Sequence[Type] | None = None, regions: Sequence[Region] = (),
               attributes: dict[str, Attribute] | None = None, location: Location = UNKNOWN_LOC) -> Operation:
        """A new (detached) op; result types are inferred when not given."""
        props = {k: v for k, v in (properties or {}).items() if v is not None}
        if result_types is None:
            result_types = cls.infer_result_types([v.type for v in operands], props, regions)
            if result_types is None:
                raise ShapeError(f"'{cls.name}' needs explicit result types")
        return Operation.create(cls.name, operands, result_types, props, attributes or {}, list(regions), (),
                                location)

    @classmethod
    def insert(cls, builder: Builder | None, operands: Sequence[Value] = (),
               properties: dict[str, Attribute] | None = None, result_types: Sequence[Type] | None = None,
               regions: Sequence[Region] = (), location: Location | None = None) -> Operation:
        """`create` then insert at the builder's insertion point (with its location by default)."""
        if location is None:
            location = builder.location if builder is not None else UNKNOWN_LOC
        op = cls.create(operands, properties, result_types, regions, None, location)
        if builder is not None:
            builder.insert(op)
        return op


def _build_region(arg_types: Sequence[Type], body: Callable[[Builder, list[Value]], Sequence[Value]],
                  location: Location = UNKNOWN_LOC) -> Region:
    """A one-block region with arguments of `arg_types`; `body(builder, args)` builds its ops and
    returns the values the block returns with `stablehlo.return`."""
    region = Region()
    block = region.add_block(Block(arg_types))
    b = Builder(InsertionPoint.at_end(block), location)
    results = body(b, list(block.args))
    ReturnOp.insert(b, list(results))
    return region


def scalar_tensor(et: Type) -> RankedTensorType:
    return RankedTensorType((), et, None)


def _return_types(region: Region) -> list[Type] | None:
    """Operand types of the `stablehlo.return` ending the region's block, or None."""
    if not region.blocks or region.blocks[0].last_op is None:
        return None
    term = region.blocks[0].last_op
    if term.name != "stablehlo.return":
        return None
    return list(term.operand_types)


def _check_body(region: Region, what: str, arg_types: Sequence[Type], result_count: int | None = None,
                result_types: Sequence[Type] | None = None) -> list[Type]:
    """A single-block region with these argument types, returning `result_count` values (or values
    compatible with `result_types`); returns its return types."""
    if len(region.blocks) != 1:
        raise ShapeError(f"{what} must have exactly one block")
    args = [a.type for a in region.blocks[0].args]
    if len(args) != len(arg_types) or not all(compatible(a, b) for a, b in zip(args, arg_types)):
        raise ShapeError(f"{what} has argument types ({', '.join(map(str, args))}) but expects "
                         f"({', '.join(map(str, arg_types))})")
    rets = _return_types(region)
    if rets is None:
        raise ShapeError(f"{what} must end with 'stablehlo.return'")
    if result_types is not None:
        if len(rets) != len(result_types) or not all(compatible(a, b) for a, b in zip(rets, result_types)):
            raise ShapeError(f"{what} returns ({', '.join(map(str, rets))}) but must return "
                             f"({', '.join(map(str, result_types))})")
    elif result_count is not None and len(rets) != result_count:
        raise ShapeError(f"{what} returns {len(rets)} values but must return {result_count}")
    return rets


def _reducer_types(region: Region, what: str, element_types: Sequence[Type]) -> list[Type]:
    """A reduction body `(acc..., x...) -> acc...` over rank-0 tensors; its return element types."""
    n = len(element_types)
    if len(region.blocks) != 1:
        raise ShapeError(f"{what} must have exactly one block")
    args = [a.type for a in region.blocks[0].args]
    if len(args) != 2 * n:
        raise ShapeError(f"{what} must take {2 * n} arguments, but takes {len(args)}")
    for i, t in enumerate(args):
        if not isinstance(t, RankedTensorType) or t.rank != 0:
            raise ShapeError(f"{what} argument #{i} must be a rank-0 tensor, but got '{t}'")
    rets = _return_types(region)
    if rets is None:
        raise ShapeError(f"{what} must end with 'stablehlo.return'")
    if len(rets) != n:
        raise ShapeError(f"{what} returns {len(rets)} values but must return {n}")
    for i, t in enumerate(rets):
        if not isinstance(t, RankedTensorType) or t.rank != 0:
            raise ShapeError(f"{what} result #{i} must be a rank-0 tensor, but got '{t}'")
        if args[i] is not t or args[n + i] is not t:
            raise ShapeError(f"{what} result #{i} has type '{t}' but its accumulator and input arguments have "
                             f"types '{args[i]}' and '{args[n + i]}'")
    return [t.element_type for t in rets]


# Constant folding helpers ----------------------------------------------------------------------

FOLD_LIMIT = 64
"""Constants with more elements than this (other than splats) are not folded."""


def _foldable(attrs: Sequence[Attribute | None]) -> list[DenseElementsAttr] | None:
    if not attrs or not all(isinstance(a, DenseElementsAttr) for a in attrs):
        return None
    if all(a.splat for a in attrs) or all(a.type.num_elements <= FOLD_LIMIT for a in attrs):
        return list(attrs)
    return None


def _arrays(attrs: list[DenseElementsAttr]) -> list[np.ndarray]:
    """The elements (a single 0-d element each when every operand is a splat)."""
    if all(a.splat for a in attrs):
        return [a.to_numpy().reshape(-1)[:1].reshape(()) for a in attrs]
    return [np.asarray(a.to_numpy()) for a in attrs]


def _result_attr(value: np.ndarray | None, type: Type) -> DenseElementsAttr | None:
    if value is None or not isinstance(type, RankedTensorType) or not type.has_static_shape:
        return None
    return DenseElementsAttr.get(np.asarray(value), type)


def _fold_elementwise(fn: Callable[..., np.ndarray | None] | None, operands: Sequence[Attribute | None],
                      result_type: Type) -> list[Attribute] | None:
    if fn is None:
        return None
    attrs = _foldable(operands)
    if attrs is None:
        return None
    with np.errstate(all="ignore"):
        value = fn(*_arrays(attrs))
    r = _result_attr(value, result_type)
    return None if r is None else [r]


_WIDE = {"f16", "bf16", "f32"}


def _float_op(np_fn: Callable) -> Callable[[np.ndarray, np.ndarray], np.ndarray | None]:
    """A correctly rounded float op: narrow floats are computed in f64 and rounded once (double
    rounding is innocuous for +, -, *, / and sqrt when the wide format has >= 2p+2 bits)."""
    def fn(a: np.ndarray, b: np.ndarray | None = None) -> np.ndarray | None:
        dtype = a.dtype
        wide = dtype.itemsize < 8
        args = (a,) if b is None else (a, b)
        if wide:
            args = tuple(x.astype(np.float64) for x in args)
        return np_fn(*args).astype(dtype)
    return fn


def _ints_op(py_fn: Callable[..., int | None]) -> Callable[..., np.ndarray | None]:
    """An integer op computed on Python ints per element; None from any element cancels the fold."""
    def fn(*arrays: np.ndarray) -> np.ndarray | None:
        dtype = arrays[0].dtype
        width = 1 if dtype == np.bool_ else dtype.itemsize * 8
        unsigned = dtype.kind in "ub"
        flat = [a.reshape(-1) for a in np.broadcast_arrays(*arrays)]
        out = []
        for values in zip(*flat):
            v = py_fn(*[int(x) for x in values], width=width, unsigned=unsigned)
            if v is None:
                return None
            out.append(IntegerType(width, "u" if unsigned else "").normalize(v))
        return np.array(out, dtype=np.int64 if not unsigned else np.uint64).astype(dtype).reshape(arrays[0].shape)
    return fn


def _div_int(x: int, y: int, width: int, unsigned: bool) -> int | None:
    if y == 0 or (not unsigned and x == -(1 << (width - 1)) and y == -1):
        return None
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


def _rem_int(x: int, y: int, width: int, unsigned: bool) -> int | None:
    q = _div_int(x, y, width, unsigned)
    return None if q is None else x - y * q


def _shift_amount(s: int, width: int) -> int:
    return s & ((1 << width) - 1)  # the shift operand is read as unsigned


def _shl(x: int, s: int, width: int, unsigned: bool) -> int:
    s = _shift_amount(s, width)
    return 0 if s >= width else x << s


def _shr_logical(x: int, s: int, width: int, unsigned: bool) -> int:
    s = _shift_amount(s, width)
    return 0 if s >= width else (x & ((1 << width) - 1)) >> s


def _shr_arithmetic(x: int, s: int, width: int, unsigned: bool) -> int:
    s = min(_shift_amount(s, width), width - 1)
    return IntegerType(width).normalize(x) >> s


def _power_int(x: int, y: int, width: int, unsigned: bool) -> int | None:
    if y < 0:
        return None
    return pow(x, y, 1 << width)


def _popcnt(x: int, width: int, unsigned: bool) -> int:
    return bin(x & ((1 << width) - 1)).count("1")


def _clz(x: int, width: int, unsigned: bool) -> int:
    return width - (x & ((1 << width) - 1)).bit_length()


def _dtype_kind(dtype: np.dtype) -> str:
    """b(ool), i(nteger), c(omplex) or f(loat, including ml_dtypes' narrow floats)."""
    return "b" if dtype == np.bool_ else "i" if dtype.kind in "iu" else "c" if dtype.kind == "c" else "f"


def _by_kind(ints: Callable | None, floats: Callable | None, bools: Callable | None = None,
             complexes: Callable | None = None) -> Callable[..., np.ndarray | None]:
    """Dispatch a folder on the element dtype of the first operand."""
    def fn(*arrays: np.ndarray) -> np.ndarray | None:
        f = {"b": bools, "i": ints, "f": floats, "c": complexes}[_dtype_kind(arrays[0].dtype)]
        return None if f is None else f(*arrays)
    return fn


def _minmax(np_fn: Callable) -> Callable[[np.ndarray, np.ndarray], np.ndarray | None]:
    def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        if _dtype_kind(a.dtype) == "f":
            both_zero = (a == 0) & (b == 0)
            if np.any(both_zero & (np.signbit(a) != np.signbit(b))):
                return None  # the sign of max(-0, +0) is not pinned down
        return np_fn(a, b)
    return fn


def _round_afz(a: np.ndarray) -> np.ndarray:
    t = np.trunc(a)
    return np.where(np.abs(a - t) >= 0.5, t + np.sign(a), t).astype(a.dtype)


_FOLD_NEGATE = _by_kind(lambda a: -a, lambda a: -a, complexes=lambda a: -a)
_FOLD_ABS = _by_kind(np.abs, np.abs)


# Elementwise ops -------------------------------------------------------------------------------

def _real_type(t: Type) -> Type:
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
        return [_real_type(t) if cls.RESULT == "real" else t]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], location=location)

    def fold(self, operands):
        return _fold_elementwise(type(self).FOLD, operands, self.results[0].type)


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
        folded = _fold_elementwise(type(self).FOLD, operands, self.results[0].type)
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
        ns["result_accuracy"] = opt_prop(_of(ResultAccuracy))
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


def _splat_value(attr: Attribute | None) -> Any:
    """The single value of a constant whose elements are all equal, else None."""
    if not isinstance(attr, DenseElementsAttr):
        return None
    arr = attr.to_numpy()
    if arr.size == 0:
        return None
    first = arr.reshape(-1)[0]
    if not attr.splat and (arr.size > FOLD_LIMIT or not np.all(arr == first)):
        return None
    return first


def _identity_if(pred: Callable[[Any, Type], bool]) -> Callable:
    def fold_identity(self: BinaryElementwiseOp, operands: Sequence[Attribute | None]) -> list[Value] | None:
        v = _splat_value(operands[1])
        if v is not None and self.lhs.type is self.results[0].type and pred(v, element_type(self.lhs.type)):
            return [self.lhs]
        if type(self).commutative:  # the identity on the left (no trait moves it right)
            v = _splat_value(operands[0])
            if v is not None and self.rhs.type is self.results[0].type and pred(v, element_type(self.rhs.type)):
                return [self.rhs]
        return None
    return fold_identity


def _is_additive_identity(v: Any, et: Type) -> bool:
    """0 for integers; only -0.0 for floats (x + 0.0 is +0.0 when x is -0.0)."""
    if isinstance(et, FloatType):
        return bool(v == 0) and bool(np.signbit(v))
    return isinstance(et, IntegerType) and et.width > 1 and v == 0


def _is_zero_for_subtract(v: Any, et: Type) -> bool:
    """x - 0 is x for integers and for floats (x - +0.0 keeps -0.0)."""
    if isinstance(et, FloatType):
        return bool(v == 0) and not bool(np.signbit(v))
    return isinstance(et, IntegerType) and et.width > 1 and v == 0


def _is_one(v: Any, et: Type) -> bool:
    return isinstance(et, (IntegerType, FloatType)) and bool(v == 1)


def _is_all_ones(v: Any, et: Type) -> bool:
    if not isinstance(et, IntegerType):
        return False
    return IntegerType(et.width).normalize(int(v)) == -1 if et.width > 1 else bool(v)


def _is_zero_bits(v: Any, et: Type) -> bool:
    return isinstance(et, IntegerType) and int(v) == 0


_FOLDS: dict[str, Callable] = {
    "add": _by_kind(np.add, _float_op(np.add), bools=np.logical_or),
    "subtract": _by_kind(np.subtract, _float_op(np.subtract)),
    "multiply": _by_kind(np.multiply, _float_op(np.multiply), bools=np.logical_and),
    "divide": _by_kind(_ints_op(_div_int), _float_op(np.divide)),
    "remainder": _by_kind(_ints_op(_rem_int), np.fmod),
    "maximum": _by_kind(np.maximum, _minmax(np.maximum), bools=np.logical_or),
    "minimum": _by_kind(np.minimum, _minmax(np.minimum), bools=np.logical_and),
    "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor,
    "shift_left": _ints_op(_shl),
    "shift_right_logical": _ints_op(_shr_logical),
    "shift_right_arithmetic": _ints_op(_shr_arithmetic),
    "power": _by_kind(_ints_op(_power_int), None),
}

AbsOp = _unary("abs", "AbsOp", "sfc", "Absolute value; complex operands give their modulus.", result="real",
               fold=_FOLD_ABS, result_kinds="sf")
CbrtOp = _unary("cbrt", "CbrtOp", "fc", "Cube root.", accuracy=True)
CeilOp = _unary("ceil", "CeilOp", "f", "Rounds up to an integral value.", fold=np.ceil)
CountLeadingZerosOp = _unary("count_leading_zeros", "CountLeadingZerosOp", "i", "Leading zero bits.",
                             fold=_ints_op(_clz))
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
NegOp = _unary("negate", "NegOp", "ifc", "Negation (integers wrap around).", fold=_FOLD_NEGATE)
PopulationCountOp = _unary("popcnt", "PopulationCountOp", "i", "Number of set bits.", fold=_ints_op(_popcnt))
RealOp = _unary("real", "RealOp", "fc", "Real part (the operand itself for real operands).", result="real",
                result_kinds="f")
RoundOp = _unary("round_nearest_afz", "RoundOp", "f", "Rounds to the nearest integer, ties away from zero.",
                 fold=_round_afz)
RoundNearestEvenOp = _unary("round_nearest_even", "RoundNearestEvenOp", "f",
                            "Rounds to the nearest integer, ties to even.", fold=np.rint)
RsqrtOp = _unary("rsqrt", "RsqrtOp", "fc", "Reciprocal square root.", accuracy=True)
SignOp = _unary("sign", "SignOp", "sfc", "-1, 0 or 1 by the sign of the operand (NaN stays NaN).",
                fold=_by_kind(np.sign, None))
SineOp = _unary("sine", "SineOp", "fc", "Sine.", accuracy=True)
SqrtOp = _unary("sqrt", "SqrtOp", "fc", "Square root (correctly rounded, so folded for floats).", accuracy=True,
                fold=_by_kind(None, _float_op(np.sqrt)))
TanOp = _unary("tan", "TanOp", "fc", "Tangent.", accuracy=True)
TanhOp = _unary("tanh", "TanhOp", "fc", "Hyperbolic tangent.", accuracy=True)

AddOp = _binary("add", "AddOp", "pifc", "Addition (logical OR on booleans).", commutative=True,
                fold=_FOLDS["add"], identity=_identity_if(_is_additive_identity))
Atan2Op = _binary("atan2", "Atan2Op", "fc", "atan2(lhs, rhs).")
DivOp = _binary("divide", "DivOp", "ifc", "Division; integer division truncates toward zero.",
                fold=_FOLDS["divide"], identity=_identity_if(_is_one))
MaxOp = _binary("maximum", "MaxOp", "pifc", "Elementwise maximum (NaN propagates).", commutative=True,
                fold=_FOLDS["maximum"])
MinOp = _binary("minimum", "MinOp", "pifc", "Elementwise minimum (NaN propagates).", commutative=True,
                fold=_FOLDS["minimum"])
MulOp = _binary("multiply", "MulOp", "pifc", "Multiplication (logical AND on booleans).", commutative=True,
                fold=_FOLDS["multiply"], identity=_identity_if(_is_one))
PowOp = _binary("power", "PowOp", "ifc", "lhs to the power rhs.", fold=_FOLDS["power"])
RemOp = _binary("remainder", "RemOp", "ifc", "Remainder with the sign of the dividend (C's fmod / %).",
                fold=_FOLDS["remainder"])
ShiftLeftOp = _binary("shift_left", "ShiftLeftOp", "i", "Left shift; shifting by >= the bit width gives 0.",
                      fold=_FOLDS["shift_left"], identity=_identity_if(_is_zero_bits))
ShiftRightArithmeticOp = _binary("shift_right_arithmetic", "ShiftRightArithmeticOp", "i",
                                 "Arithmetic right shift; by >= the bit width fills with the sign bit.",
                                 fold=_FOLDS["shift_right_arithmetic"], identity=_identity_if(_is_zero_bits))
ShiftRightLogicalOp = _binary("shift_right_logical", "ShiftRightLogicalOp", "i",
                              "Logical right shift; shifting by >= the bit width gives 0.",
                              fold=_FOLDS["shift_right_logical"], identity=_identity_if(_is_zero_bits))
SubtractOp = _binary("subtract", "SubtractOp", "ifc", "Subtraction.", fold=_FOLDS["subtract"],
                     identity=_identity_if(_is_zero_for_subtract))
AndOp = _binary("and", "AndOp", "pi", "Logical (booleans) or bitwise (integers) AND.", commutative=True,
                fold=_FOLDS["and"], identity=_identity_if(_is_all_ones))
OrOp = _binary("or", "OrOp", "pi", "Logical (booleans) or bitwise (integers) OR.", commutative=True,
               fold=_FOLDS["or"], identity=_identity_if(_is_zero_bits))
XorOp = _binary("xor", "XorOp", "pi", "Logical (booleans) or bitwise (integers) XOR.", commutative=True,
                fold=_FOLDS["xor"], identity=_identity_if(_is_zero_bits))


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
        return _fold_elementwise(_make_complex, operands, self.results[0].type)


def _make_complex(re: np.ndarray, im: np.ndarray) -> np.ndarray:
    out = np.empty(np.broadcast_shapes(re.shape, im.shape), np.complex64 if re.dtype == np.float32 else np.complex128)
    out.real = re
    out.imag = im
    return out


# Constants, compare, select, convert -------------------------------------------------------------

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
        value = self.properties.get("value")
        p.write(p.op_name(self))
        if getattr(value, "type", None) is not self.results[0].type:
            start = len(p.out)
            p.generic_op(self)
            p.out[start] = "(" + p.out[start].split("(", 1)[1]
            return
        p.attr_dict(self.attributes)
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
    if isinstance(op, ConstantOp) and isinstance(op.properties.get("value"), DenseElementsAttr):
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
        t = _ranked(self.results[0].type, "result")
        d = _int(self.properties, "iota_dimension")
        if t.rank == 0 or not 0 <= d < t.rank:
            raise ShapeError(f"iota_dimension {d} is out of range for the result '{t}' of rank {t.rank}")


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
    comparison_direction = prop(_of(ComparisonDirectionAttr))
    compare_type = opt_prop(_of(ComparisonTypeAttr))
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
        ct = self.properties.get("compare_type")
        total = isinstance(ct, ComparisonTypeAttr) and ct.value == "TOTALORDER"

        def fn(a: np.ndarray, b: np.ndarray) -> np.ndarray | None:
            kind = _dtype_kind(a.dtype)
            if kind == "c" and direction not in ("EQ", "NE"):
                return None
            if total and kind == "f" and (np.any(np.isnan(a)) or np.any(np.isnan(b))
                                          or np.any((a == 0) & (b == 0) & (np.signbit(a) != np.signbit(b)))):
                return None  # total order differs from IEEE comparison only on NaN and signed zeros
            return _COMPARE_FNS[direction](a, b)
        return _fold_elementwise(fn, operands, self.results[0].type)


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
        v = _splat_value(operands[0])
        if v is not None and self.on_true.type is self.results[0].type and self.on_false.type is self.results[0].type:
            return [self.on_true if bool(v) else self.on_false]
        return _fold_elementwise(lambda p, t, f: np.where(p, t, f), operands, self.results[0].type)


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
            if _dtype_kind(x.dtype) == "f":
                return None  # NaN and signed-zero corner cases
            return np.minimum(np.maximum(x, lo), hi)
        return _fold_elementwise(fn, operands, self.results[0].type)


def _convert_array(a: np.ndarray, src: Type, dst: Type) -> np.ndarray | None:
    """numpy conversion where the spec's answer is unambiguous: exact conversions, integer
    wrap-around, float to integer in range (truncating), anything to boolean (`x != 0`)."""
    dtype = numpy_dtype(dst)
    sk, dk = _dtype_kind(a.dtype), _dtype_kind(dtype)
    if sk == "c":
        return a.astype(dtype) if dk == "c" and dtype.itemsize >= a.dtype.itemsize else None
    if dk == "c":
        part = _convert_array(a, src, dst.element_type)
        return None if part is None else part.astype(dtype)
    if dk == "b":
        return a.astype(np.float64) != 0 if sk == "f" else a != 0
    if dk == "f":
        out = a.astype(dtype)
        back = out.astype(a.dtype)
        same = back == a
        if sk == "f":
            same |= np.isnan(back.astype(np.float64)) & np.isnan(a.astype(np.float64))
        return out if np.all(same) else None  # only exactly representable values
    if sk == "f":
        wide = a.astype(np.float64)
        if not np.all(np.isfinite(wide)):
            return None
        t = np.trunc(wide)
        info = np.iinfo(dtype)
        if np.any(t < info.min) or np.any(t > info.max):
            return None
        return np.array([int(v) for v in t.reshape(-1)], dtype=object).astype(dtype).reshape(a.shape)
    vals = [dst.normalize(int(v)) for v in a.reshape(-1)]
    return np.array(vals, dtype=object).astype(dtype).reshape(a.shape)


class ConvertOp(StableHLOOp):
    """Elementwise conversion to the result's element type (same shape)."""

    name = "stablehlo.convert"
    assembly_format = "$operand attr-dict `:` custom<SameOperandsAndResultType>(type($operand), type($result))"
    operand = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure, Elementwise)

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, element_type: Type,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], result_types=[with_element_type(operand.type, element_type)],
                          location=location)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        if not compatible(with_element_type(src, i1), with_element_type(dst, i1)):
            raise ShapeError(f"operand and result must have the same shape, but got '{src}' and '{dst}'")

    def fold(self, operands):
        src, dst = self.operand.type, self.results[0].type
        if src is dst:
            return [self.operand]
        attrs = _foldable(operands)
        if attrs is None:
            return None
        try:
            with np.errstate(all="ignore"):
                value = _convert_array(_arrays(attrs)[0], element_type(src), element_type(dst))
        except (ValueError, TypeError):
            return None
        r = _result_attr(value, dst)
        return None if r is None else [r]


def _bit_width(et: Type) -> int | None:
    if isinstance(et, ComplexType):
        w = _bit_width(et.element_type)
        return None if w is None else 2 * w
    return getattr(et, "width", None) if isinstance(et, (IntegerType, FloatType)) else None


class BitcastConvertOp(StableHLOOp):
    """Reinterprets the bits of the operand as the result type; a narrower element type adds a
    trailing dimension, a wider one consumes it."""

    name = "stablehlo.bitcast_convert"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, result_type: Type,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], result_types=[result_type], location=location)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        if not (isinstance(src, RankedTensorType) and isinstance(dst, RankedTensorType)):
            return
        a, b = _bit_width(src.element_type), _bit_width(dst.element_type)
        if a is None or b is None:
            return
        if a == b:
            expected = src.shape
            ok = len(dst.shape) == len(expected) and all(map(_dim_eq, dst.shape, expected))
        elif a > b:
            ok = len(dst.shape) == src.rank + 1 and all(map(_dim_eq, dst.shape[:-1], src.shape)) and \
                _dim_eq(dst.shape[-1], a // b) and a % b == 0
        else:
            ok = src.rank == dst.rank + 1 and all(map(_dim_eq, src.shape[:-1], dst.shape)) and \
                _dim_eq(src.shape[-1], b // a) and b % a == 0
        if not ok:
            raise ShapeError(f"cannot bitcast '{src}' ({a}-bit elements) to '{dst}' ({b}-bit elements)")

    def fold(self, operands):
        if self.operand.type is self.results[0].type:
            return [self.operand]
        return None


# Shape ops ---------------------------------------------------------------------------------------

def _same_element_type(a: Type, b: Type, what: str = "operand and result") -> None:
    if element_type(a) is not element_type(b):
        raise ShapeError(f"{what} must have the same element type, but got '{a}' and '{b}'")


class BroadcastInDimOp(StableHLOOp):
    """Broadcasts `operand` to the result shape; operand dimension i becomes result dimension
    `broadcast_dimensions[i]` (its size 1 or the result's)."""

    name = "stablehlo.broadcast_in_dim"
    assembly_format = "$operand `,` `dims` `=` $broadcast_dimensions attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    broadcast_dimensions = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, shape: Sequence[int], broadcast_dimensions: Sequence[int],
              location: Location | None = None) -> Operation:
        t = RankedTensorType(tuple(shape), element_type(operand.type), None)
        return cls.insert(builder, [operand], {"broadcast_dimensions": i64_array(broadcast_dimensions)}, [t],
                          location=location)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        _same_element_type(src, dst)
        if not isinstance(src, RankedTensorType) or not isinstance(dst, RankedTensorType):
            return
        dims = _ints(self.properties, "broadcast_dimensions")
        if len(dims) != src.rank:
            raise ShapeError(f"broadcast_dimensions size ({len(dims)}) does not match operand rank ({src.rank}); "
                             f"operand '{src}', result '{dst}'")
        _dims_in_range(dims, dst.rank, f"broadcast_dimensions {list(dims)} (result '{dst}')")
        for i, d in enumerate(dims):
            a, b = src.shape[i], dst.shape[d]
            if a != 1 and not _dim_eq(a, b):
                raise ShapeError(f"size of operand dimension {i} ({a}) is not equal to 1 or the size of result "
                                 f"dimension {d} ({b}); operand '{src}', result '{dst}'")

    def fold(self, operands):
        src, dst = self.operand.type, self.results[0].type
        dims = _ints(self.properties, "broadcast_dimensions", ())
        if src is dst and list(dims) == list(range(len(dims))):
            return [self.operand]
        if list(dims) == sorted(dims) and _reshaped_from(self.operand).type is dst and \
                getattr(src, "num_elements", None) == getattr(dst, "num_elements", -1):
            return [_reshaped_from(self.operand)]  # a reshape back to the shape a reshape came from
        a = operands[0]
        if isinstance(a, DenseElementsAttr) and a.splat and isinstance(dst, RankedTensorType) and \
                dst.has_static_shape:
            return [DenseElementsAttr(dst, a.raw, True)]
        return None


def _reshaped_from(value: Value) -> Value:
    """The value `value` is a reshape of, through chains of reshapes and of broadcasts that only
    insert unit dimensions (itself when it is neither)."""
    while True:
        op = value.owner_op
        if isinstance(op, BroadcastInDimOp):
            src, dst = op.operand.type, value.type
            dims = _ints(op.properties, "broadcast_dimensions", ())
            if list(dims) != sorted(dims) or not isinstance(src, RankedTensorType) or \
                    not isinstance(dst, RankedTensorType) or not src.has_static_shape or \
                    src.num_elements != getattr(dst, "num_elements", -1):
                return value
        elif not isinstance(op, ReshapeOp):
            return value
        value = op.operand


class ReshapeOp(StableHLOOp):
    """Reshapes to the result type (same elements in row-major order)."""

    name = "stablehlo.reshape"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, shape: Sequence[int],
              location: Location | None = None) -> Operation:
        t = RankedTensorType(tuple(shape), element_type(operand.type), None)
        return cls.insert(builder, [operand], result_types=[t], location=location)

    def check_types(self) -> None:
        src, dst = self.operand.type, self.results[0].type
        _same_element_type(src, dst)
        if isinstance(src, RankedTensorType) and isinstance(dst, RankedTensorType) and src.has_static_shape \
                and dst.has_static_shape and src.num_elements != dst.num_elements:
            raise ShapeError(f"number of output elements ({dst.num_elements}) doesn't match expected number of "
                             f"elements ({src.num_elements}); operand '{src}', result '{dst}'")

    def fold(self, operands):
        dst = self.results[0].type
        if self.operand.type is dst:
            return [self.operand]
        if _reshaped_from(self.operand).type is dst:
            return [_reshaped_from(self.operand)]
        a = operands[0]
        if isinstance(a, DenseElementsAttr) and isinstance(dst, RankedTensorType) and dst.has_static_shape and \
                (a.splat or a.type.num_elements <= FOLD_LIMIT):
            return [DenseElementsAttr.from_raw(dst, a.raw) if not a.splat else DenseElementsAttr(dst, a.raw, True)]
        return None


class TransposeOp(StableHLOOp):
    """Permutes dimensions: result dimension i is operand dimension `permutation[i]`."""

    name = "stablehlo.transpose"
    assembly_format = "$operand `,` `dims` `=` $permutation attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    permutation = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        perm = _ints(properties, "permutation")
        if not isinstance(t, RankedTensorType):
            return [t]
        if sorted(perm) != list(range(t.rank)):
            raise ShapeError(f"permutation {list(perm)} is not a permutation of the {t.rank} dimensions of operand "
                             f"'{t}'")
        return [RankedTensorType(tuple(t.shape[p] for p in perm), t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, permutation: Sequence[int],
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"permutation": i64_array(permutation)}, location=location)

    def fold(self, operands):
        perm = _ints(self.properties, "permutation", ())
        if list(perm) == list(range(len(perm))) and self.operand.type is self.results[0].type:
            return [self.operand]
        attrs = _foldable(operands)
        if attrs is not None and not attrs[0].splat:
            r = _result_attr(np.transpose(attrs[0].to_numpy(), perm), self.results[0].type)
            return None if r is None else [r]
        if attrs is not None:
            r = self.results[0].type
            return [DenseElementsAttr(r, attrs[0].raw, True)] if isinstance(r, RankedTensorType) else None
        return None


def _check_slice_bounds(t: RankedTensorType, start: Sequence[int], limit: Sequence[int],
                        strides: Sequence[int]) -> list[int]:
    if not len(start) == len(limit) == len(strides) == t.rank:
        raise ShapeError(f"start_indices ({len(start)}), limit_indices ({len(limit)}) and strides ({len(strides)}) "
                         f"must all have the rank of operand '{t}' ({t.rank})")
    shape = []
    for i, (s, e, k, d) in enumerate(zip(start, limit, strides, t.shape)):
        if s < 0 or k <= 0 or e < s or (d != DYNAMIC and e > d):
            raise ShapeError(f"invalid slice of dimension {i}: start {s}, limit {e}, stride {k} for size "
                             f"{'?' if d == DYNAMIC else d} (operand '{t}')")
        shape.append(-(-(e - s) // k))
    return shape


class SliceOp(StableHLOOp):
    """A static strided slice: `operand[start:limit:stride]` per dimension."""

    name = "stablehlo.slice"
    assembly_format = ("$operand custom<SliceRanges>($start_indices, $limit_indices, $strides) attr-dict `:` "
                       "functional-type(operands, results)")
    operand = operand_def(AnyTensor)
    start_indices = prop(I64Array)
    limit_indices = prop(I64Array)
    strides = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        if not isinstance(t, RankedTensorType):
            return [t]
        shape = _check_slice_bounds(t, _ints(properties, "start_indices"), _ints(properties, "limit_indices"),
                                    _ints(properties, "strides"))
        return [RankedTensorType(tuple(shape), t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, start_indices: Sequence[int],
              limit_indices: Sequence[int], strides: Sequence[int] | None = None,
              location: Location | None = None) -> Operation:
        strides = strides if strides is not None else [1] * len(start_indices)
        props = {"start_indices": i64_array(start_indices), "limit_indices": i64_array(limit_indices),
                 "strides": i64_array(strides)}
        return cls.insert(builder, [operand], props, location=location)

    def fold(self, operands):
        dst = self.results[0].type
        if self.operand.type is dst:
            return [self.operand]
        if _reshaped_from(self.operand).type is dst:
            return [_reshaped_from(self.operand)]
        a = operands[0]
        if not isinstance(a, DenseElementsAttr) or not isinstance(dst, RankedTensorType):
            return None
        if a.splat:
            return [DenseElementsAttr(dst, a.raw, True)]
        if a.type.num_elements > FOLD_LIMIT * 16 or dst.num_elements > FOLD_LIMIT:
            return None
        index = tuple(slice(s, e, k) for s, e, k in zip(_ints(self.properties, "start_indices"),
                                                          _ints(self.properties, "limit_indices"),
                                                          _ints(self.properties, "strides")))
        r = _result_attr(a.to_numpy()[index], dst)
        return None if r is None else [r]


ScalarInt = Constraint(lambda t: isinstance(t, RankedTensorType) and t.rank == 0 and has_kind(t.element_type, "i"),
                       "0D tensor of integer values")


def _check_start_indices(t: RankedTensorType, index_types: Sequence[Type]) -> None:
    if len(index_types) != t.rank:
        raise ShapeError(f"has {len(index_types)} start indices but operand '{t}' has rank {t.rank}")
    if len({element_type(x) for x in index_types}) > 1:
        raise ShapeError("start indices must all have the same type, but got "
                         + ", ".join(f"'{x}'" for x in index_types))


class DynamicSliceOp(StableHLOOp):
    """A slice of `slice_sizes` at run-time start indices (one scalar per dimension, clamped)."""

    name = "stablehlo.dynamic_slice"
    assembly_format = ("$operand `,` custom<VariadicOperandWithAttribute>($start_indices) `sizes` `=` $slice_sizes "
                       "attr-dict `:` functional-type(operands, results)")
    operand = operand_def(AnyTensor)
    start_indices = var_operand(ScalarInt)
    slice_sizes = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        sizes = _ints(properties, "slice_sizes")
        if not isinstance(t, RankedTensorType):
            return [RankedTensorType(tuple(sizes), element_type(t), None)]
        _check_start_indices(t, operand_types[1:])
        if len(sizes) != t.rank:
            raise ShapeError(f"slice_sizes {list(sizes)} must have one entry per dimension of operand '{t}'")
        for i, (s, d) in enumerate(zip(sizes, t.shape)):
            if s < 0 or (d != DYNAMIC and s > d):
                raise ShapeError(f"slice size {s} of dimension {i} is out of range for operand '{t}'")
        return [RankedTensorType(tuple(sizes), t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, start_indices: Sequence[Value],
              slice_sizes: Sequence[int], location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand, *start_indices], {"slice_sizes": i64_array(slice_sizes)},
                          location=location)

    def fold(self, operands):
        if self.operand.type is self.results[0].type:
            return [self.operand]
        return None


class DynamicUpdateSliceOp(StableHLOOp):
    """`operand` with the block `update` written at run-time start indices (clamped)."""

    name = "stablehlo.dynamic_update_slice"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    update = operand_def(AnyTensor)
    start_indices = var_operand(ScalarInt)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t, u = operand_types[0], operand_types[1]
        _same_element_type(t, u, "operand and update")
        if isinstance(t, RankedTensorType) and isinstance(u, RankedTensorType):
            _check_start_indices(t, operand_types[2:])
            if u.rank != t.rank or any(a != DYNAMIC and b != DYNAMIC and a > b for a, b in zip(u.shape, t.shape)):
                raise ShapeError(f"update '{u}' must have the rank of operand '{t}' and fit inside it")
        return [t]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, update: Value, start_indices: Sequence[Value],
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand, update, *start_indices], location=location)

    def fold(self, operands):
        if self.update.type is self.results[0].type and self.operand.type is self.results[0].type:
            return [self.update]  # the update covers the whole operand
        return None


class ConcatenateOp(StableHLOOp):
    """Concatenates `inputs` along `dimension`."""

    name = "stablehlo.concatenate"
    assembly_format = ("custom<VariadicOperandWithAttribute>($inputs) `dim` `=` $dimension attr-dict `:` "
                       "functional-type(operands, results)")
    inputs = var_operand(AnyTensor)
    dimension = prop(I64Attr)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if not operand_types:
            raise ShapeError("expects at least one input")
        d = _int(properties, "dimension")
        first = operand_types[0]
        ranked = [t for t in operand_types if isinstance(t, RankedTensorType)]
        for t in operand_types[1:]:
            _same_element_type(first, t, "inputs")
        if not ranked:
            return [first]
        rank = ranked[0].rank
        if not 0 <= d < rank:
            raise ShapeError(f"dimension {d} is out of range for inputs of rank {rank}")
        shape = list(ranked[0].shape)
        total = 0
        for i, t in enumerate(operand_types):
            if not isinstance(t, RankedTensorType):
                total = DYNAMIC
                continue
            if t.rank != rank:
                raise ShapeError(f"all inputs must have the same rank, but input #{i} is '{t}' and input #0 is "
                                 f"'{ranked[0]}'")
            for k in range(rank):
                if k != d and not _dim_eq(t.shape[k], shape[k]):
                    raise ShapeError(f"input #{i} '{t}' does not match '{ranked[0]}' in dimension {k} (only "
                                     f"dimension {d} may differ)")
                if k != d and shape[k] == DYNAMIC:
                    shape[k] = t.shape[k]
            total = DYNAMIC if DYNAMIC in (total, t.shape[d]) else total + t.shape[d]
        shape[d] = total
        return [RankedTensorType(tuple(shape), first.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], dimension: int,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, list(inputs), {"dimension": i64_attr(dimension)}, location=location)

    def fold(self, operands):
        if len(self.operands) == 1 and self.operands[0].type is self.results[0].type:
            return [self.operands[0]]
        attrs = _foldable(operands)
        if attrs is not None and self.results[0].type.num_elements <= FOLD_LIMIT:
            arrays = [a.to_numpy() for a in attrs]
            r = _result_attr(np.concatenate(arrays, axis=_int(self.properties, "dimension")), self.results[0].type)
            return None if r is None else [r]
        return None


class PadOp(StableHLOOp):
    """Pads with `padding_value`: `edge_padding_low`/`high` per dimension (negative values crop) and
    `interior_padding` between elements."""

    name = "stablehlo.pad"
    assembly_format = ("$operand `,` $padding_value `,` `low` `=` $edge_padding_low `,` `high` `=` $edge_padding_high "
                       "`,` `interior` `=` $interior_padding attr-dict `:` functional-type(operands, results)")
    operand = operand_def(AnyTensor)
    padding_value = operand_def(AnyTensor)
    edge_padding_low = prop(I64Array)
    edge_padding_high = prop(I64Array)
    interior_padding = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t, pv = operand_types
        _same_element_type(t, pv, "operand and padding_value")
        if isinstance(pv, RankedTensorType) and pv.rank != 0:
            raise ShapeError(f"padding_value must be a rank-0 tensor, but got '{pv}'")
        if not isinstance(t, RankedTensorType):
            return [t]
        low, high, interior = (_ints(properties, n) for n in ("edge_padding_low", "edge_padding_high",
                                                                "interior_padding"))
        if not len(low) == len(high) == len(interior) == t.rank:
            raise ShapeError(f"edge_padding_low ({len(low)}), edge_padding_high ({len(high)}) and interior_padding "
                             f"({len(interior)}) must all have the rank of operand '{t}' ({t.rank})")
        shape = []
        for i, (lo, hi, k, d) in enumerate(zip(low, high, interior, t.shape)):
            if k < 0:
                raise ShapeError(f"interior_padding {k} of dimension {i} must be non-negative")
            if d == DYNAMIC:
                shape.append(DYNAMIC)
                continue
            size = lo + hi + d + max(d - 1, 0) * k
            if size < 0:
                raise ShapeError(f"padding {lo}, {hi}, {k} of dimension {i} makes a negative size {size} for "
                                 f"operand '{t}'")
            shape.append(size)
        return [RankedTensorType(tuple(shape), t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, padding_value: Value, low: Sequence[int],
              high: Sequence[int], interior: Sequence[int] | None = None,
              location: Location | None = None) -> Operation:
        interior = interior if interior is not None else [0] * len(low)
        props = {"edge_padding_low": i64_array(low), "edge_padding_high": i64_array(high),
                 "interior_padding": i64_array(interior)}
        return cls.insert(builder, [operand, padding_value], props, location=location)

    def fold(self, operands):
        if self.operand.type is self.results[0].type and not any(
                any(_ints(self.properties, n, ())) for n in ("edge_padding_low", "edge_padding_high",
                                                            "interior_padding")):
            return [self.operand]
        return None


class ReverseOp(StableHLOOp):
    """Reverses the order of elements along `dimensions`."""

    name = "stablehlo.reverse"
    assembly_format = ("$operand `,` `dims` `=` $dimensions attr-dict `:` "
                       "custom<SameOperandsAndResultType>(type($operand), type($result))")
    operand = operand_def(AnyTensor)
    dimensions = prop(I64Array)
    result = result_def(AnyTensor)
    traits = (Pure, HloCompatibleOperandsAndResultType)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        if isinstance(t, RankedTensorType):
            _dims_in_range(_ints(properties, "dimensions"), t.rank, f"dimensions (operand '{t}')")
        return [t]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, dimensions: Sequence[int],
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"dimensions": i64_array(dimensions)}, location=location)

    def fold(self, operands):
        if not _ints(self.properties, "dimensions", ()):
            return [self.operand]
        a = operands[0]
        if isinstance(a, DenseElementsAttr) and a.splat:
            return [a]
        return None


class GetDimensionSizeOp(StableHLOOp):
    """The size of `dimension` of the operand, as a `tensor<i32>`."""

    name = "stablehlo.get_dimension_size"
    assembly_format = "$operand `,` `dim` `=` $dimension attr-dict `:` functional-type(operands, results)"
    operand = operand_def(AnyTensor)
    dimension = prop(I64Attr)
    result = result_def(TensorOf("i", rank=0))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        d = _int(properties, "dimension")
        if isinstance(t, RankedTensorType) and not 0 <= d < t.rank:
            raise ShapeError(f"dimension {d} is out of range for operand '{t}'")
        return [scalar_tensor(i32)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, dimension: int,
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"dimension": i64_attr(dimension)}, location=location)

    def fold(self, operands):
        t = self.operand.type
        d = _int(self.properties, "dimension", 0)
        if isinstance(t, RankedTensorType) and 0 <= d < t.rank and t.shape[d] != DYNAMIC:
            return [DenseElementsAttr.get(np.int32(t.shape[d]), scalar_tensor(i32))]
        return None


# Contractions ------------------------------------------------------------------------------------

def _check_precision_config(props: dict[str, Attribute]) -> None:
    pc = props.get("precision_config")
    if isinstance(pc, ArrayAttr) and len(pc) not in (0, 2):
        raise ShapeError(f"precision_config must have 0 or 2 elements, but has {len(pc)}")


def dot_general_shape(lhs: RankedTensorType, rhs: RankedTensorType, dn: DotDimensionNumbers) -> tuple[int, ...]:
    """The result shape of `dot_general` (batch, lhs free, rhs free dimensions), checking the
    dimension numbers against both operand shapes."""
    lb, rb = dn.lhs_batching_dimensions, dn.rhs_batching_dimensions
    lc, rc = dn.lhs_contracting_dimensions, dn.rhs_contracting_dimensions
    if len(lb) != len(rb):
        raise ShapeError(f"lhs and rhs should have the same number of batching dimensions ({list(lb)} vs "
                         f"{list(rb)})")
    if len(lc) != len(rc):
        raise ShapeError(f"lhs and rhs should have the same number of contracting dimensions ({list(lc)} vs "
                         f"{list(rc)})")
    _dims_in_range((*lb, *lc), lhs.rank, f"lhs batching and contracting dimensions {list(lb)}, {list(lc)} "
                                         f"(lhs '{lhs}')")
    _dims_in_range((*rb, *rc), rhs.rank, f"rhs batching and contracting dimensions {list(rb)}, {list(rc)} "
                                         f"(rhs '{rhs}')")
    for kind, ls, rs in (("batching", lb, rb), ("contracting", lc, rc)):
        for a, b in zip(ls, rs):
            if not _dim_eq(lhs.shape[a], rhs.shape[b]):
                raise ShapeError(f"{kind} dimension sizes must match: lhs dimension {a} has size {lhs.shape[a]} "
                                 f"but rhs dimension {b} has size {rhs.shape[b]} (lhs '{lhs}', rhs '{rhs}')")
    lhs_free = [d for d in range(lhs.rank) if d not in lb and d not in lc]
    rhs_free = [d for d in range(rhs.rank) if d not in rb and d not in rc]
    return tuple([lhs.shape[d] for d in lb] + [lhs.shape[d] for d in lhs_free] + [rhs.shape[d] for d in rhs_free])


class DotGeneralOp(StableHLOOp):
    """Generalised matrix product over batching and contracting dimensions. The result element type
    may differ from the operands' (the preferred element type)."""

    name = "stablehlo.dot_general"
    assembly_format = ("$lhs `,` $rhs `,` custom<DotDimensionNumbers>($dot_dimension_numbers) `` "
                       "custom<PrecisionConfigAndAlgorithm>($precision_config, $algorithm) attr-dict `:` "
                       "functional-type(operands, results)")
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    dot_dimension_numbers = prop(_of(DotDimensionNumbers))
    precision_config = opt_prop(PrecisionConfig)
    algorithm = opt_prop()
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        dn = properties.get("dot_dimension_numbers")
        _check_precision_config(properties)
        if not isinstance(dn, DotDimensionNumbers) or not isinstance(lhs, RankedTensorType) or \
                not isinstance(rhs, RankedTensorType):
            return None
        return [RankedTensorType(dot_general_shape(lhs, rhs, dn), lhs.element_type, None)]

    def _check_inferred(self, inferred):
        t = self.results[0].type
        expected = inferred[0]
        if isinstance(t, RankedTensorType) and (t.rank != expected.rank or
                                                not all(map(_dim_eq, t.shape, expected.shape))):
            raise ShapeError(f"inferred shape '{_shape_text(expected.shape)}' is incompatible with return type of "
                             f"operation '{t}' (lhs '{self.lhs.type}', rhs '{self.rhs.type}')")

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, dimension_numbers: DotDimensionNumbers,
              precision_config: Sequence[str] | None = None, preferred_element_type: Type | None = None,
              location: Location | None = None) -> Operation:
        props: dict[str, Attribute] = {"dot_dimension_numbers": dimension_numbers}
        if precision_config is not None:
            props["precision_config"] = ArrayAttr(tuple(PrecisionAttr(p) for p in precision_config))
        (t,) = cls.infer_result_types([lhs.type, rhs.type], props)
        if preferred_element_type is not None:
            t = with_element_type(t, preferred_element_type)
        return cls.insert(builder, [lhs, rhs], props, [t], location=location)


class DotOp(StableHLOOp):
    """Legacy matrix/vector product (`dot_general` with the usual contraction)."""

    name = "stablehlo.dot"
    assembly_format = ("$lhs `,` $rhs `` custom<PrecisionConfig>($precision_config) attr-dict `:` "
                       "functional-type(operands, results)")
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    precision_config = opt_prop(PrecisionConfig)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        if not isinstance(lhs, RankedTensorType) or not isinstance(rhs, RankedTensorType):
            return None
        if lhs.rank not in (1, 2) or rhs.rank not in (1, 2):
            raise ShapeError(f"expects rank-1 or rank-2 operands, but got '{lhs}' and '{rhs}'")
        dn = DotDimensionNumbers((), (), (lhs.rank - 1,), (0,))
        return [RankedTensorType(dot_general_shape(lhs, rhs, dn), lhs.element_type, None)]

    _check_inferred = DotGeneralOp._check_inferred


def _conv_window(props: dict[str, Attribute], n: int) -> tuple[list[int], list[tuple[int, int]], list[int], list[int]]:
    strides = _ints(props, "window_strides", [1] * n)
    lhs_dil = _ints(props, "lhs_dilation", [1] * n)
    rhs_dil = _ints(props, "rhs_dilation", [1] * n)
    for name, values in (("window_strides", strides), ("lhs_dilation", lhs_dil), ("rhs_dilation", rhs_dil)):
        if len(values) != n:
            raise ShapeError(f"{name} must have {n} elements (one per spatial dimension), but has {len(values)}")
        if any(v <= 0 for v in values):
            raise ShapeError(f"{name} must be positive, but got {list(values)}")
    return list(strides), _padding(props, "padding", n), list(lhs_dil), list(rhs_dil)


def window_output_size(size: int, window: int, stride: int, padding: tuple[int, int], base_dilation: int = 1,
                       window_dilation: int = 1) -> int:
    """The number of window positions along one dimension (StableHLO's shape formula)."""
    if size == DYNAMIC:
        return DYNAMIC
    dilated = 0 if size == 0 else (size - 1) * base_dilation + 1
    padded = padding[0] + dilated + padding[1]
    dilated_window = 0 if window == 0 else (window - 1) * window_dilation + 1
    if padded <= 0 or dilated_window > padded:
        return 0
    return (padded - dilated_window) // stride + 1


def convolution_shape(lhs: RankedTensorType, rhs: RankedTensorType, props: dict[str, Attribute]) -> tuple[int, ...]:
    """The result shape of `convolution`, checking its attributes against the operand shapes."""
    dn = props.get("dimension_numbers")
    if not isinstance(dn, ConvDimensionNumbers):
        raise ShapeError("requires attribute 'dimension_numbers'")
    n = len(dn.input_spatial_dimensions)
    if lhs.rank != n + 2 or rhs.rank != n + 2:
        raise ShapeError(f"lhs '{lhs}' and rhs '{rhs}' must have rank {n + 2} ({n} spatial dimensions)")
    if len(dn.kernel_spatial_dimensions) != n or len(dn.output_spatial_dimensions) != n:
        raise ShapeError("dimension_numbers must have the same number of input, kernel and output spatial "
                         "dimensions")
    _dims_in_range((dn.input_batch_dimension, dn.input_feature_dimension, *dn.input_spatial_dimensions), n + 2,
                   "input dimension numbers")
    _dims_in_range((dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
                    *dn.kernel_spatial_dimensions), n + 2, "kernel dimension numbers")
    _dims_in_range((dn.output_batch_dimension, dn.output_feature_dimension, *dn.output_spatial_dimensions), n + 2,
                   "output dimension numbers")
    fgc, bgc = _int(props, "feature_group_count", 1), _int(props, "batch_group_count", 1)
    if fgc <= 0 or bgc <= 0 or (fgc > 1 and bgc > 1):
        raise ShapeError(f"feature_group_count ({fgc}) and batch_group_count ({bgc}) must be positive and not both "
                         "greater than 1")
    _check_precision_config(props)
    strides, padding, lhs_dil, rhs_dil = _conv_window(props, n)
    reversal = props.get("window_reversal")
    if isinstance(reversal, DenseArrayAttr) and len(reversal) != n:
        raise ShapeError(f"window_reversal must have {n} elements, but has {len(reversal)}")
    batch = lhs.shape[dn.input_batch_dimension]
    in_features = lhs.shape[dn.input_feature_dimension]
    k_in = rhs.shape[dn.kernel_input_feature_dimension]
    k_out = rhs.shape[dn.kernel_output_feature_dimension]
    if DYNAMIC not in (in_features, k_in):
        if in_features % fgc != 0 or in_features // fgc != k_in:
            raise ShapeError(f"input feature dimension size ({in_features}) divided by feature_group_count ({fgc}) "
                             f"must equal the kernel input feature dimension size ({k_in}); lhs '{lhs}', "
                             f"rhs '{rhs}'")
    if batch != DYNAMIC and batch % bgc != 0:
        raise ShapeError(f"input batch dimension size ({batch}) must be divisible by batch_group_count ({bgc})")
    if k_out != DYNAMIC and (k_out % bgc != 0 or k_out % fgc != 0):
        raise ShapeError(f"kernel output feature dimension size ({k_out}) must be divisible by "
                         f"feature_group_count ({fgc}) and batch_group_count ({bgc})")
    out = [0] * (n + 2)
    out[dn.output_batch_dimension] = DYNAMIC if batch == DYNAMIC else batch // bgc
    out[dn.output_feature_dimension] = k_out
    for i in range(n):
        size = lhs.shape[dn.input_spatial_dimensions[i]]
        window = rhs.shape[dn.kernel_spatial_dimensions[i]]
        out[dn.output_spatial_dimensions[i]] = DYNAMIC if window == DYNAMIC else \
            window_output_size(size, window, strides[i], padding[i], lhs_dil[i], rhs_dil[i])
    return tuple(out)


_CONV_PROPS: dict[str, Any] = {
    "window_strides": opt_prop(I64Array), "padding": opt_prop(I64Elements), "lhs_dilation": opt_prop(I64Array),
    "rhs_dilation": opt_prop(I64Array), "window_reversal": opt_prop(BoolArray),
    "dimension_numbers": prop(_of(ConvDimensionNumbers)), "feature_group_count": prop(I64Attr),
    "batch_group_count": prop(I64Attr), "precision_config": opt_prop(PrecisionConfig),
}


class ConvolutionOp(StableHLOOp):
    """Convolution of `lhs` (input) with `rhs` (kernel): windows, padding, dilations, feature and
    batch groups, layouts given by `dimension_numbers`."""

    name = "stablehlo.convolution"
    assembly_format = ("`(`operands`)` `dim_numbers` `=` custom<ConvolutionDimensions>($dimension_numbers) `,` "
                       "`window` `=` `{` custom<WindowAttributes>($window_strides, $padding, $lhs_dilation, "
                       "$rhs_dilation, $window_reversal) `}` attr-dict `:` functional-type(operands, results)")
    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    window_strides = _CONV_PROPS["window_strides"]
    padding = _CONV_PROPS["padding"]
    lhs_dilation = _CONV_PROPS["lhs_dilation"]
    rhs_dilation = _CONV_PROPS["rhs_dilation"]
    window_reversal = _CONV_PROPS["window_reversal"]
    dimension_numbers = _CONV_PROPS["dimension_numbers"]
    feature_group_count = _CONV_PROPS["feature_group_count"]
    batch_group_count = _CONV_PROPS["batch_group_count"]
    precision_config = _CONV_PROPS["precision_config"]
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        lhs, rhs = operand_types
        if not isinstance(lhs, RankedTensorType) or not isinstance(rhs, RankedTensorType):
            return None
        return [RankedTensorType(convolution_shape(lhs, rhs, properties), lhs.element_type, None)]

    _check_inferred = DotGeneralOp._check_inferred

    @classmethod
    def build(cls, builder: Builder | None, lhs: Value, rhs: Value, dimension_numbers: ConvDimensionNumbers,
              window_strides: Sequence[int] | None = None, padding: Sequence[tuple[int, int]] | None = None,
              lhs_dilation: Sequence[int] | None = None, rhs_dilation: Sequence[int] | None = None,
              feature_group_count: int = 1, batch_group_count: int = 1,
              precision_config: Sequence[str] | None = None, preferred_element_type: Type | None = None,
              location: Location | None = None) -> Operation:
        props: dict[str, Attribute | None] = {
            "dimension_numbers": dimension_numbers, "feature_group_count": i64_attr(feature_group_count),
            "batch_group_count": i64_attr(batch_group_count),
            "window_strides": None if window_strides is None else i64_array(window_strides),
            "padding": None if padding is None else padding_attr(padding),
            "lhs_dilation": None if lhs_dilation is None else i64_array(lhs_dilation),
            "rhs_dilation": None if rhs_dilation is None else i64_array(rhs_dilation),
            "precision_config": None if precision_config is None else
            ArrayAttr(tuple(PrecisionAttr(p) for p in precision_config)),
        }
        props = {k: v for k, v in props.items() if v is not None}
        (t,) = cls.infer_result_types([lhs.type, rhs.type], props)
        if preferred_element_type is not None:
            t = with_element_type(t, preferred_element_type)
        return cls.insert(builder, [lhs, rhs], props, [t], location=location)


# Ops with regions --------------------------------------------------------------------------------

def _promotable(src: Type, dst: Type) -> bool:
    """Whether reduction inputs of element type `src` may accumulate in `dst` (same or wider, same kind)."""
    if src is dst:
        return True
    if isinstance(src, FloatType) and isinstance(dst, FloatType):
        return dst.width >= src.width and dst.precision >= src.precision
    if isinstance(src, IntegerType) and isinstance(dst, IntegerType):
        return src.signedness == dst.signedness and dst.width >= src.width
    return False


def _split_variadic(types: Sequence[Type], what: str) -> tuple[Sequence[Type], Sequence[Type]]:
    if len(types) % 2:
        raise ShapeError(f"expects as many {what} as inputs, but got {len(types)} operands in all")
    n = len(types) // 2
    return types[:n], types[n:]


def _reduction_element_types(inputs: Sequence[Type], inits: Sequence[Type], regions: Sequence[Region],
                             what: str = "body") -> list[Type]:
    """Check init values (rank-0, the inputs' element types) and the body; the result element types."""
    for i, (x, init) in enumerate(zip(inputs, inits)):
        if isinstance(init, RankedTensorType) and init.rank != 0:
            raise ShapeError(f"init_values #{i} must be a rank-0 tensor, but got '{init}'")
        _same_element_type(x, init, f"inputs #{i} and init_values #{i}")
    if not regions:
        return [element_type(t) for t in inits]
    body = _reducer_types(regions[0], what, [element_type(t) for t in inits])
    for i, (x, et) in enumerate(zip(inputs, body)):
        if not _promotable(element_type(x), et):
            raise ShapeError(f"{what} accumulates in '{et}', which input #{i} '{x}' cannot be promoted to")
    return body


class ReduceOp(StableHLOOp):
    """Reduces `inputs` along `dimensions` with the `body` region, starting from `init_values`."""

    name = "stablehlo.reduce"
    inputs = var_operand(AnyTensor)
    init_values = var_operand(AnyTensor)
    dimensions = prop(I64Array)
    results_ = var_result(AnyTensor)
    body = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        inputs, inits = _split_variadic(operand_types, "init_values")
        if not inputs:
            raise ShapeError("expects at least one input")
        dims = _ints(properties, "dimensions")
        ranked = [t for t in inputs if isinstance(t, RankedTensorType)]
        for t in ranked[1:]:
            if not compatible(with_element_type(t, i1), with_element_type(ranked[0], i1)):
                raise ShapeError(f"all inputs must have the same shape, but got '{ranked[0]}' and '{t}'")
        ets = _reduction_element_types(inputs, inits, regions)
        if not ranked:
            return [UnrankedTensorType(et) for et in ets]
        shape = ranked[0].shape
        _dims_in_range(dims, len(shape), f"dimensions {list(dims)} (inputs '{ranked[0]}')")
        kept = tuple(d for i, d in enumerate(shape) if i not in dims)
        return [RankedTensorType(kept, et, None) for et in ets]

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], init_values: Sequence[Value],
              dimensions: Sequence[int], body: Callable[[Builder, list[Value]], Sequence[Value]],
              location: Location | None = None) -> Operation:
        """`body(builder, [acc..., x...])` returns the combined values (rank-0 tensors)."""
        arg_types = [scalar_tensor(element_type(v.type)) for v in init_values] * 2
        region = _build_region(arg_types, body)
        return cls.insert(builder, [*inputs, *init_values], {"dimensions": i64_array(dimensions)},
                          regions=[region], location=location)

    # `stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (...) -> ...`
    # when the body is one commutative binary op of the dialect; else the body follows as
    # ` reducer(%a: t, %b: t) {...}` (AssemblyFormat.cpp's printReduceOp / parseReduceOp).
    def _compact_op(self) -> Operation | None:
        block = self.regions[0].blocks[0] if self.regions[0].blocks else None
        inputs = self.inputs
        if block is None or not inputs:
            return None
        ops = list(block.ops)
        if len(ops) != 2:
            return None
        inner, ret = ops
        t = inner.results[0].type if len(inner.results) == 1 else None
        if (inner.name.split(".")[0] != "stablehlo" or not getattr(type(inner), "commutative", False)
                or len(inner.operands) != 2 or inner.regions or t is None
                or any(v.type is not t for v in inner.operands)
                or t is not scalar_tensor(element_type(inputs[0].type))
                or list(inner.operands) != list(block.args) or ret.name != "stablehlo.return"
                or list(ret.operands) != list(inner.results)):
            return None
        return inner

    def asm_printed_regions(self) -> list:
        if self._compact_op() is not None:
            return ["none"]
        n = len(self.operands) // 2
        return [[i + k * n for i in range(n) for k in (0, 1)]]  # printed in (input, init) pairs

    def print_custom(self, p: Any) -> None:
        n = len(self.operands) // 2
        ops = self.operands
        p.write(p.op_name(self) + ", ".join(f"({p.value(ops[i])} init: {p.value(ops[i + n])})" for i in range(n)))
        inner = self._compact_op()
        if inner is not None:
            p.write(" applies " + keyword_or_string(inner.name))
        p.write(" across dimensions = " + _dims(self.properties["dimensions"].values))
        p.attr_dict({k: v for k, v in {**self.properties, **self.attributes}.items() if k != "dimensions"})
        p.write(" : ")
        _functional(p, self)
        if inner is None:
            p.newline()
            p.write(" reducer")
            args = self.regions[0].blocks[0].args
            for i in range(n):
                p.write("(" + p.region_argument(args[i]) + ", " + p.region_argument(args[i + n]) + ") ")
            p.write(" ")
            p.region(self.regions[0], print_entry_args=False)

    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        loc = parser.loc_at(parser.ws())
        inputs, inits = [], []

        def pair() -> None:
            inputs.append(parser.parse_operand_ref())
            parser.expect_keyword("init")
            parser.expect(":")
            inits.append(parser.parse_operand_ref())
            parser.expect(")")
        parser.expect("(")
        pair()
        while parser.accept(","):
            parser.expect("(")
            pair()
        inner_name = None
        if parser.accept_keyword("applies"):
            pos = parser.ws()
            inner_name = parser.parse_string() if parser.peek('"') else parser.parse_bare_id("op name")
            inner_cls = lookup_op(inner_name)
            if inner_cls is None or not inner_name.startswith("stablehlo.") or not getattr(inner_cls, "commutative",
                                                                                          False):
                raise parser.error("expected the inner-op to be a commutative binary-op from the stablehlo dialect, "
                                   "with zero region, producing single result", pos)
        parser.expect_keyword("across")
        parser.expect_keyword("dimensions")
        parser.expect("=")
        props: dict[str, Attribute] = {"dimensions": i64_array(_parse_i64_list(parser))}
        attrs = parser.parse_optional_attr_dict()
        for k in [k for k in attrs if k in cls.definition.prop_names]:
            props[k] = attrs.pop(k)
        parser.expect(":")
        ins, outs = parser.parse_signature()
        refs = inputs + inits
        if len(ins) != len(refs):
            raise parser.error(f"expected {len(refs)} operand types but had {len(ins)}")
        operands = [parser.resolve_operand(r, t) for r, t in zip(refs, ins)]
        if inner_name is not None:
            t = scalar_tensor(element_type(ins[0]))
            block = Block()
            a, b = block.add_argument(t, loc), block.add_argument(t, loc)
            inner = Operation.create(inner_name, [a, b], [t], location=loc)
            block.append(inner)
            block.append(Operation.create(ReturnOp.name, list(inner.results), [], location=loc))
            region = Region([block])
        else:
            parser.expect_keyword("reducer")
            firsts, seconds = [], []
            while parser.accept("("):
                firsts.append(_parse_region_argument(parser))
                parser.expect(",")
                seconds.append(_parse_region_argument(parser))
                parser.expect(")")
            region = parser.parse_region(entry_args=firsts + seconds)
        # MLIR's parseReduceOp locates the op where its operands begin.
        return Operation.create(cls.name, operands, list(outs), props, attrs, [region], location=loc)


def _window_attrs(props: dict[str, Attribute], rank: int, names: Sequence[str]) -> list[list[int]]:
    out = []
    for name in names:
        values = list(_ints(props, name, [1] * rank))
        if len(values) != rank:
            raise ShapeError(f"{name} must have {rank} elements (one per operand dimension), but has {len(values)}")
        if any(v <= 0 for v in values):
            raise ShapeError(f"{name} must be positive, but got {values}")
        out.append(values)
    return out


class ReduceWindowOp(StableHLOOp):
    """Reduces each window of `inputs` (sizes, strides, dilations, padding) with the `body`."""

    name = "stablehlo.reduce_window"
    inputs = var_operand(AnyTensor)
    init_values = var_operand(AnyTensor)
    window_dimensions = prop(I64Array)
    window_strides = opt_prop(I64Array)
    base_dilations = opt_prop(I64Array)
    window_dilations = opt_prop(I64Array)
    padding = opt_prop(I64Elements)
    results_ = var_result(AnyTensor)
    body = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        inputs, inits = _split_variadic(operand_types, "init_values")
        if not inputs:
            raise ShapeError("expects at least one input")
        ets = _reduction_element_types(inputs, inits, regions)
        t = inputs[0]
        if not isinstance(t, RankedTensorType):
            return [UnrankedTensorType(et) for et in ets]
        for x in inputs[1:]:
            if not compatible(with_element_type(x, i1), with_element_type(t, i1)):
                raise ShapeError(f"all inputs must have the same shape, but got '{t}' and '{x}'")
        window, strides, base, wdil = _window_attrs(properties, t.rank, ("window_dimensions", "window_strides",
                                                                        "base_dilations", "window_dilations"))
        padding = _padding(properties, "padding", t.rank)
        shape = tuple(window_output_size(*args) for args in zip(t.shape, window, strides, padding, base, wdil))
        return [RankedTensorType(shape, et, None) for et in ets]

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], init_values: Sequence[Value],
              window_dimensions: Sequence[int], body: Callable[[Builder, list[Value]], Sequence[Value]],
              window_strides: Sequence[int] | None = None, base_dilations: Sequence[int] | None = None,
              window_dilations: Sequence[int] | None = None, padding: Sequence[tuple[int, int]] | None = None,
              location: Location | None = None) -> Operation:
        props: dict[str, Attribute | None] = {
            "window_dimensions": i64_array(window_dimensions),
            "window_strides": None if window_strides is None else i64_array(window_strides),
            "base_dilations": None if base_dilations is None else i64_array(base_dilations),
            "window_dilations": None if window_dilations is None else i64_array(window_dilations),
            "padding": None if padding is None else padding_attr(padding)}
        arg_types = [scalar_tensor(element_type(v.type)) for v in init_values] * 2
        return cls.insert(builder, [*inputs, *init_values], props, regions=[_build_region(arg_types, body)],
                          location=location)


class SelectAndScatterOp(StableHLOOp):
    """Picks one element per window of `operand` with `select`, and scatters `source` there,
    combining with `scatter` starting from `init_value`."""

    name = "stablehlo.select_and_scatter"
    operand = operand_def(AnyTensor)
    source = operand_def(AnyTensor)
    init_value = operand_def(AnyTensor)
    window_dimensions = opt_prop(I64Array)
    window_strides = opt_prop(I64Array)
    padding = opt_prop(I64Elements)
    result = result_def(AnyTensor)
    select = region_def()
    scatter = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t, source, init = operand_types
        _same_element_type(t, init, "operand and init_value")
        if isinstance(t, RankedTensorType):
            window, strides = _window_attrs(properties, t.rank, ("window_dimensions", "window_strides"))
            padding = _padding(properties, "padding", t.rank)
            shape = tuple(window_output_size(d, w, s, p) for d, w, s, p in zip(t.shape, window, strides, padding))
            if isinstance(source, RankedTensorType) and (source.rank != len(shape) or
                                                         not all(map(_dim_eq, source.shape, shape))):
                raise ShapeError(f"source '{source}' must have the shape of the windows of operand '{t}', "
                                 f"{_shape_text(shape)}")
        if len(regions) == 2:
            scalar = scalar_tensor(element_type(t))
            _check_body(regions[0], "select", [scalar, scalar], result_types=[scalar_tensor(i1)])
            _reducer_types(regions[1], "scatter", [element_type(source)])
        return [t]


class SortOp(StableHLOOp):
    """Sorts `inputs` together along `dimension` by the `comparator` region (`is_stable` keeps the
    order of equal elements)."""

    name = "stablehlo.sort"
    inputs = var_operand(AnyTensor)
    dimension = opt_prop(I64Attr)
    is_stable = opt_prop(BoolAttr_)
    results_ = var_result(AnyTensor)
    comparator = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if not operand_types:
            raise ShapeError("expects at least one input")
        first = operand_types[0]
        for t in operand_types[1:]:
            if not compatible(with_element_type(t, i1), with_element_type(first, i1)):
                raise ShapeError(f"all inputs must have the same shape, but got '{first}' and '{t}'")
        d = _int(properties, "dimension", -1)
        if isinstance(first, RankedTensorType) and not -first.rank <= d < max(first.rank, 1):
            raise ShapeError(f"dimension {d} is out of range for inputs '{first}'")
        if regions:
            args = [scalar_tensor(element_type(t)) for t in operand_types for _ in (0, 1)]
            _check_body(regions[0], "comparator", args, result_types=[scalar_tensor(i1)])
        return list(operand_types)

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], dimension: int,
              comparator: Callable[[Builder, list[Value]], Sequence[Value]], is_stable: bool = False,
              location: Location | None = None) -> Operation:
        """`comparator(builder, [lhs0, rhs0, lhs1, rhs1, ...])` returns one `tensor<i1>`."""
        args = [scalar_tensor(element_type(v.type)) for v in inputs for _ in (0, 1)]
        props = {"dimension": i64_attr(dimension), "is_stable": BoolAttr(is_stable)}
        return cls.insert(builder, list(inputs), props, regions=[_build_region(args, comparator)],
                          location=location)


class MapOp(StableHLOOp):
    """Applies the scalar `computation` elementwise over `inputs` (all `dimensions`)."""

    name = "stablehlo.map"
    inputs = var_operand(AnyTensor)
    dimensions = prop(I64Array)
    result = result_def(AnyTensor)
    computation = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if not operand_types:
            raise ShapeError("expects at least one input")
        first = operand_types[0]
        et = element_type(first)
        if regions:
            rets = _check_body(regions[0], "computation", [scalar_tensor(element_type(t)) for t in operand_types], 1)
            et = element_type(rets[0])
        return [with_element_type(first, et)]


class ReturnOp(StableHLOOp):
    """Terminates the regions of StableHLO ops, yielding their values."""

    name = "stablehlo.return"
    assembly_format = "$results_ attr-dict (`:` type($results_)^)?"
    results_ = var_operand(TensorTokenOrTuple)
    traits = (Pure, Terminator, ReturnLike)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        return []

    @classmethod
    def build(cls, builder: Builder | None, values: Sequence[Value], location: Location | None = None) -> Operation:
        return cls.insert(builder, list(values), result_types=[], location=location)


def _check_no_args(region: Region, what: str) -> None:
    if region.blocks and region.blocks[0].args:
        raise ShapeError(f"{what} must not have arguments")


class WhileOp(StableHLOOp):
    """Runs `body` on the loop-carried values while `cond` (returning `tensor<i1>`) holds."""

    name = "stablehlo.while"
    operand = var_operand(TensorTokenOrTuple)
    results_ = var_result(TensorTokenOrTuple)
    cond = region_def()
    body = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if len(regions) == 2:
            _check_body(regions[0], "cond", operand_types, result_types=[scalar_tensor(i1)])
            _check_body(regions[1], "body", operand_types, result_types=operand_types)
        return list(operand_types)

    @classmethod
    def build(cls, builder: Builder | None, init: Sequence[Value],
              cond: Callable[[Builder, list[Value]], Sequence[Value]],
              body: Callable[[Builder, list[Value]], Sequence[Value]], location: Location | None = None) -> Operation:
        types = [v.type for v in init]
        return cls.insert(builder, list(init), regions=[_build_region(types, cond), _build_region(types, body)],
                          location=location)

    # `stablehlo.while(%iterArg = %x, ...) : types attributes {...}` then `cond {...} do {...}`
    # (AssemblyFormat.cpp's printWhileOp / parseWhileOp).
    def asm_block_arg_names(self, region_index: int) -> list[str]:
        return ["iterArg"] * len(self.operands)

    def asm_printed_regions(self) -> list[str]:
        return ["body", "body"]

    def print_custom(self, p: Any) -> None:
        args = self.regions[1].blocks[0].args if self.regions[1].blocks else ()
        p.write(p.op_name(self) + "(" + ", ".join(f"{p.value(a)} = {p.value(v)}" for a, v in zip(args, self.operands))
                + ")")
        if self.operands:
            p.write(" : " + ", ".join(str(v.type) for v in self.operands))
        p.attr_dict(self.attributes, keyword=True)
        p.newline()
        p.write("cond ")
        p.region(self.regions[0], print_entry_args=False)
        p.write(" do ")
        p.region(self.regions[1], print_entry_args=False)

    @classmethod
    def parse_custom(cls, parser: Any, n_results: int) -> Operation:
        parser.expect("(")
        names, refs = [], []
        if not parser.accept(")"):
            while True:
                names.append(parser.parse_operand_ref())
                parser.expect("=")
                refs.append(parser.parse_operand_ref())
                if parser.accept(")"):
                    break
                parser.expect(",")
        types: list[Type] = []
        if refs:
            parser.expect(":")
            types = [parser.parse_type()]
            while parser.accept(","):
                types.append(parser.parse_type())
            if len(types) != len(refs):
                raise parser.error(f"expected {len(refs)} types but had {len(types)}")
        operands = [parser.resolve_operand(r, t) for r, t in zip(refs, types)]
        attrs = parser.parse_optional_attr_dict() if parser.accept_keyword("attributes") else {}
        regions = []
        for keyword in ("cond", "do"):
            parser.expect_keyword(keyword)
            regions.append(parser.parse_region(entry_args=[(n, t, parser.loc_at(n[2])) for n, t in zip(names, types)]))
        return Operation.create(cls.name, operands, types, {}, attrs, regions)


class IfOp(StableHLOOp):
    """Runs `true_branch` or `false_branch` by the boolean scalar `pred`; both return the results."""

    name = "stablehlo.if"
    pred = operand_def(TensorOf("p", rank=0))
    results_ = var_result(TensorTokenOrTuple)
    true_branch = region_def()
    false_branch = region_def()
    traits = (Pure,)

    def check_types(self) -> None:
        for what, region in (("true_branch", self.regions[0]), ("false_branch", self.regions[1])):
            _check_no_args(region, what)
            _check_body(region, what, [], result_types=self.result_types)

    @classmethod
    def build(cls, builder: Builder | None, pred: Value, result_types: Sequence[Type],
              true_branch: Callable[[Builder, list[Value]], Sequence[Value]],
              false_branch: Callable[[Builder, list[Value]], Sequence[Value]],
              location: Location | None = None) -> Operation:
        regions = [_build_region([], true_branch), _build_region([], false_branch)]
        return cls.insert(builder, [pred], result_types=list(result_types), regions=regions, location=location)


class CaseOp(StableHLOOp):
    """Runs branch `index` (the last one when out of range); every branch returns the results."""

    name = "stablehlo.case"
    index = operand_def(Constraint(lambda t: isinstance(t, RankedTensorType) and t.rank == 0 and t.element_type is i32,
                               "0D tensor of 32-bit signless integer values"))
    results_ = var_result(TensorTokenOrTuple)
    branches = region_def(kind=VARIADIC)
    traits = (Pure,)

    def check_types(self) -> None:
        if not self.regions:
            raise ShapeError("expects at least one branch")
        for i, region in enumerate(self.regions):
            _check_no_args(region, f"branch #{i}")
            _check_body(region, f"branch #{i}", [], result_types=self.result_types)

    @classmethod
    def build(cls, builder: Builder | None, index: Value, result_types: Sequence[Type],
              branches: Sequence[Callable[[Builder, list[Value]], Sequence[Value]]],
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [index], result_types=list(result_types),
                          regions=[_build_region([], b) for b in branches], location=location)


# Gather and scatter ------------------------------------------------------------------------------

def _sorted_unique(dims: Sequence[int], what: str) -> None:
    if list(dims) != sorted(set(dims)):
        raise ShapeError(f"{what} {list(dims)} must be sorted and unique")


def _index_batch_dims(indices: RankedTensorType, index_vector_dim: int) -> tuple[list[int], int]:
    """The batch dimensions of the indices (all but `index_vector_dim`) and the index vector size."""
    if not 0 <= index_vector_dim <= indices.rank:
        raise ShapeError(f"index_vector_dim {index_vector_dim} is out of range for indices '{indices}'")
    if index_vector_dim == indices.rank:
        return list(range(indices.rank)), 1
    return [d for d in range(indices.rank) if d != index_vector_dim], indices.shape[index_vector_dim]


def gather_shape(operand: RankedTensorType, indices: RankedTensorType, dn: GatherDimensionNumbers,
                 slice_sizes: Sequence[int]) -> tuple[int, ...]:
    """The result shape of `gather`, checking the dimension numbers (the spec's constraints)."""
    r = operand.rank
    if len(slice_sizes) != r:
        raise ShapeError(f"slice_sizes {list(slice_sizes)} must have one entry per dimension of operand '{operand}'")
    batch, vector = _index_batch_dims(indices, dn.index_vector_dim)
    _sorted_unique(dn.offset_dims, "offset_dims")
    _sorted_unique(dn.collapsed_slice_dims, "collapsed_slice_dims")
    _sorted_unique(dn.operand_batching_dims, "operand_batching_dims")
    _dims_in_range(dn.collapsed_slice_dims, r, "collapsed_slice_dims")
    _dims_in_range(dn.operand_batching_dims, r, "operand_batching_dims")
    _dims_in_range(dn.start_index_map, r, "start_index_map")
    _dims_in_range(dn.start_indices_batching_dims, indices.rank, "start_indices_batching_dims")
    if set(dn.collapsed_slice_dims) & set(dn.operand_batching_dims):
        raise ShapeError("collapsed_slice_dims and operand_batching_dims must be disjoint")
    if set(dn.start_index_map) & set(dn.operand_batching_dims):
        raise ShapeError("start_index_map and operand_batching_dims must be disjoint")
    if dn.index_vector_dim in dn.start_indices_batching_dims:
        raise ShapeError("start_indices_batching_dims must not contain index_vector_dim")
    if len(dn.operand_batching_dims) != len(dn.start_indices_batching_dims):
        raise ShapeError("operand_batching_dims and start_indices_batching_dims must have the same size")
    if vector != DYNAMIC and len(dn.start_index_map) != vector:
        raise ShapeError(f"start_index_map {list(dn.start_index_map)} must have as many entries as the index vector "
                         f"dimension of start_indices '{indices}' ({vector})")
    for d, s in enumerate(slice_sizes):
        size = operand.shape[d]
        if s < 0 or (size != DYNAMIC and s > size):
            raise ShapeError(f"slice size {s} of dimension {d} is out of range for operand '{operand}'")
        if (d in dn.collapsed_slice_dims or d in dn.operand_batching_dims) and s > 1:
            raise ShapeError(f"slice size of collapsed or batching dimension {d} must be at most 1, but is {s}")
    offset_sizes = [s for d, s in enumerate(slice_sizes)
                    if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    rank = len(batch) + len(offset_sizes)
    if len(dn.offset_dims) != len(offset_sizes):
        raise ShapeError(f"offset_dims {list(dn.offset_dims)} must have one entry per slice dimension that is neither "
                         f"collapsed nor batching ({len(offset_sizes)})")
    _dims_in_range(dn.offset_dims, rank, "offset_dims")
    offsets, batches = iter(offset_sizes), iter(indices.shape[d] for d in batch)
    return tuple(next(offsets) if d in dn.offset_dims else next(batches) for d in range(rank))


class GatherOp(StableHLOOp):
    """Gathers slices of `operand` at the positions in `start_indices` (full dimension-number
    semantics, including batching dimensions)."""

    name = "stablehlo.gather"
    operand = operand_def(AnyTensor)
    start_indices = operand_def(TensorOf("i"))
    dimension_numbers = prop(_of(GatherDimensionNumbers))
    slice_sizes = prop(I64Array)
    indices_are_sorted = opt_prop(BoolAttr_)
    result = result_def(AnyTensor)
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t, indices = operand_types
        dn = properties.get("dimension_numbers")
        if not isinstance(t, RankedTensorType) or not isinstance(indices, RankedTensorType) or \
                not isinstance(dn, GatherDimensionNumbers):
            return [UnrankedTensorType(element_type(t))]
        shape = gather_shape(t, indices, dn, _ints(properties, "slice_sizes"))
        return [RankedTensorType(shape, t.element_type, None)]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, start_indices: Value,
              dimension_numbers: GatherDimensionNumbers, slice_sizes: Sequence[int],
              indices_are_sorted: bool = False, location: Location | None = None) -> Operation:
        props = {"dimension_numbers": dimension_numbers, "slice_sizes": i64_array(slice_sizes),
                 "indices_are_sorted": BoolAttr(indices_are_sorted)}
        return cls.insert(builder, [operand, start_indices], props, location=location)


def check_scatter(inputs: Sequence[RankedTensorType], indices: RankedTensorType,
                  updates: Sequence[RankedTensorType], dn: ScatterDimensionNumbers) -> None:
    """The spec's constraints between the shapes of `scatter`'s operands and its dimension numbers."""
    t, u = inputs[0], updates[0]
    for x in inputs[1:]:
        if not compatible(with_element_type(x, i1), with_element_type(t, i1)):
            raise ShapeError(f"all inputs must have the same shape, but got '{t}' and '{x}'")
    for x in updates[1:]:
        if not compatible(with_element_type(x, i1), with_element_type(u, i1)):
            raise ShapeError(f"all updates must have the same shape, but got '{u}' and '{x}'")
    batch, vector = _index_batch_dims(indices, dn.index_vector_dim)
    _sorted_unique(dn.update_window_dims, "update_window_dims")
    _sorted_unique(dn.inserted_window_dims, "inserted_window_dims")
    _sorted_unique(dn.input_batching_dims, "input_batching_dims")
    _dims_in_range(dn.update_window_dims, u.rank, "update_window_dims")
    _dims_in_range(dn.inserted_window_dims, t.rank, "inserted_window_dims")
    _dims_in_range(dn.input_batching_dims, t.rank, "input_batching_dims")
    _dims_in_range(dn.scatter_dims_to_operand_dims, t.rank, "scatter_dims_to_operand_dims")
    _dims_in_range(dn.scatter_indices_batching_dims, indices.rank, "scatter_indices_batching_dims")
    if set(dn.inserted_window_dims) & set(dn.input_batching_dims):
        raise ShapeError("inserted_window_dims and input_batching_dims must be disjoint")
    if set(dn.scatter_dims_to_operand_dims) & set(dn.input_batching_dims):
        raise ShapeError("scatter_dims_to_operand_dims and input_batching_dims must be disjoint")
    if len(dn.input_batching_dims) != len(dn.scatter_indices_batching_dims):
        raise ShapeError("input_batching_dims and scatter_indices_batching_dims must have the same size")
    if vector != DYNAMIC and len(dn.scatter_dims_to_operand_dims) != vector:
        raise ShapeError(f"scatter_dims_to_operand_dims {list(dn.scatter_dims_to_operand_dims)} must have as many "
                         f"entries as the index vector dimension of scatter_indices '{indices}' ({vector})")
    if u.rank != len(dn.update_window_dims) + len(batch):
        raise ShapeError(f"updates '{u}' must have rank {len(dn.update_window_dims) + len(batch)} (update window "
                         f"dimensions plus the batch dimensions of scatter_indices '{indices}')")
    scatter_dims = [d for d in range(u.rank) if d not in dn.update_window_dims]
    for ud, idx in zip(scatter_dims, batch):
        if not _dim_eq(u.shape[ud], indices.shape[idx]):
            raise ShapeError(f"updates dimension {ud} ({u.shape[ud]}) must match scatter_indices dimension {idx} "
                             f"({indices.shape[idx]}); updates '{u}', scatter_indices '{indices}'")
    window_operand_dims = [d for d in range(t.rank) if d not in dn.inserted_window_dims
                           and d not in dn.input_batching_dims]
    if len(window_operand_dims) != len(dn.update_window_dims):
        raise ShapeError(f"update_window_dims {list(dn.update_window_dims)} must have one entry per input dimension "
                         f"that is neither inserted nor batching ({len(window_operand_dims)})")
    for ud, od in zip(dn.update_window_dims, window_operand_dims):
        a, b = u.shape[ud], t.shape[od]
        if a != DYNAMIC and b != DYNAMIC and a > b:
            raise ShapeError(f"updates window dimension {ud} ({a}) is larger than input dimension {od} ({b})")


class ScatterOp(StableHLOOp):
    """`inputs` with the windows at `scatter_indices` combined with `updates` by the
    `update_computation` region."""

    name = "stablehlo.scatter"
    inputs = var_operand(AnyTensor)
    scatter_indices = operand_def(TensorOf("i"))
    updates = var_operand(AnyTensor)
    scatter_dimension_numbers = prop(_of(ScatterDimensionNumbers))
    indices_are_sorted = opt_prop(BoolAttr_)
    unique_indices = opt_prop(BoolAttr_)
    results_ = var_result(AnyTensor)
    update_computation = region_def()
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        n = (len(operand_types) - 1) // 2
        if n < 1 or len(operand_types) != 2 * n + 1:
            raise ShapeError("expects N inputs, scatter_indices and N updates")
        inputs, indices, updates = operand_types[:n], operand_types[n], operand_types[n + 1:]
        dn = properties.get("scatter_dimension_numbers")
        for i, (x, u) in enumerate(zip(inputs, updates)):
            _same_element_type(x, u, f"inputs #{i} and updates #{i}")
        if isinstance(dn, ScatterDimensionNumbers) and all(isinstance(x, RankedTensorType) for x in operand_types):
            check_scatter(inputs, indices, updates, dn)
        if regions:
            ets = _reducer_types(regions[0], "update_computation", [element_type(x) for x in inputs])
            return [with_element_type(x, et) for x, et in zip(inputs, ets)]
        return list(inputs)

    @classmethod
    def build(cls, builder: Builder | None, inputs: Sequence[Value], scatter_indices: Value,
              updates: Sequence[Value], dimension_numbers: ScatterDimensionNumbers,
              update_computation: Callable[[Builder, list[Value]], Sequence[Value]],
              indices_are_sorted: bool = False, unique_indices: bool = False,
              location: Location | None = None) -> Operation:
        """`update_computation(builder, [current..., update...])` returns the new values."""
        arg_types = [scalar_tensor(element_type(v.type)) for v in inputs] * 2
        props = {"scatter_dimension_numbers": dimension_numbers, "indices_are_sorted": BoolAttr(indices_are_sorted),
                 "unique_indices": BoolAttr(unique_indices)}
        return cls.insert(builder, [*inputs, scatter_indices, *updates], props,
                          regions=[_build_region(arg_types, update_computation)], location=location)


# Tuples, tokens, random numbers, custom calls ----------------------------------------------------

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
        i = _int(properties, "index")
        if not isinstance(t, TupleType) or not 0 <= i < len(t.types):
            raise ShapeError(f"index {i} is out of range for '{t}'")
        return [t.types[i]]

    @classmethod
    def build(cls, builder: Builder | None, operand: Value, index: int, location: Location | None = None) -> Operation:
        return cls.insert(builder, [operand], {"index": IntegerAttr.get(index, i32)}, location=location)

    def fold(self, operands):
        producer = self.operand.owner_op
        if isinstance(producer, TupleOp):
            return [producer.operands[_int(self.properties, "index")]]
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


class RngBitGeneratorOp(StableHLOOp):
    """Random bits from `initial_state` by `rng_algorithm`: the new state and the output."""

    name = "stablehlo.rng_bit_generator"
    assembly_format = ("$initial_state `,` `algorithm` `=` $rng_algorithm attr-dict `:` functional-type(operands, "
                       "results)")
    rng_algorithm = prop(_of(RngAlgorithmAttr))
    initial_state = operand_def(TensorOf("if"))
    output_state = result_def(TensorOf("if"))
    output = result_def(TensorOf("if"))
    traits = (Pure,)

    def check_types(self) -> None:
        state, new_state = self.initial_state.type, self.results[0].type
        if not compatible(state, new_state):
            raise ShapeError(f"output_state '{new_state}' must have the type of initial_state '{state}'")
        algorithm = self.properties["rng_algorithm"].value
        if isinstance(state, RankedTensorType) and state.has_static_shape:
            bits = state.num_elements * (_bit_width(state.element_type) or 0)
            need = {"THREE_FRY": (128,), "PHILOX": (128, 192)}.get(algorithm)
            if need is not None and bits not in need:
                raise ShapeError(f"initial_state '{state}' must hold {' or '.join(map(str, need))} bits for "
                                 f"{algorithm}")

    @classmethod
    def build(cls, builder: Builder | None, initial_state: Value, output_type: Type, algorithm: str = "DEFAULT",
              location: Location | None = None) -> Operation:
        return cls.insert(builder, [initial_state], {"rng_algorithm": RngAlgorithmAttr(algorithm)},
                          [initial_state.type, output_type], location=location)


class RngOp(StableHLOOp):
    """Random numbers between `a` and `b` (uniform) or with mean `a` and deviation `b` (normal)."""

    name = "stablehlo.rng"
    assembly_format = ("$a `,` $b `,` $shape `,` `distribution` `=` $rng_distribution attr-dict `:` "
                       "functional-type(operands, results)")
    a = operand_def(TensorOf("pif", rank=0))
    b = operand_def(TensorOf("pif", rank=0))
    shape = operand_def(TensorOf("i", rank=1))
    rng_distribution = prop(_of(RngDistributionAttr))
    result = result_def(TensorOf("pif"))

    def check_types(self) -> None:
        _same_element_type(self.a.type, self.results[0].type, "a and result")
        _same_element_type(self.b.type, self.results[0].type, "b and result")


class CustomCallOp(StableHLOOp):
    """A call to an implementation-defined target `call_target_name` (kept as is; executed where a
    kernel is registered for the target)."""

    name = "stablehlo.custom_call"
    assembly_format = ("custom<CustomCallTarget>($call_target_name) `(` $inputs `)` attr-dict `:` "
                       "functional-type(operands, results)")
    inputs = var_operand(TensorTokenOrTuple)
    call_target_name = prop(StringAttr)
    has_side_effect = opt_prop(BoolAttr_)
    backend_config = opt_prop()
    api_version = opt_prop(IntegerAttr)
    called_computations = opt_prop(ArrayAttr)
    operand_layouts = opt_prop(ArrayAttr)
    result_layouts = opt_prop(ArrayAttr)
    output_operand_aliases = opt_prop(ArrayAttr)
    results_ = var_result(TensorTokenOrTuple)

    def check_types(self) -> None:
        for name, values in (("operand_layouts", self.operands), ("result_layouts", self.results)):
            layouts = self.properties.get(name)
            if isinstance(layouts, ArrayAttr) and len(layouts) != len(values):
                raise ShapeError(f"{name} has {len(layouts)} entries for {len(values)} "
                                 f"{'operands' if name == 'operand_layouts' else 'results'}")
        aliases = self.properties.get("output_operand_aliases")
        for alias in aliases if isinstance(aliases, ArrayAttr) else ():
            if isinstance(alias, OutputOperandAlias) and not 0 <= alias.operand_index < len(self.operands):
                raise ShapeError(f"output_operand_aliases refers to operand {alias.operand_index}, but there are "
                                 f"{len(self.operands)} operands")

    @classmethod
    def build(cls, builder: Builder | None, call_target_name: str, inputs: Sequence[Value],
              result_types: Sequence[Type], backend_config: str = "", has_side_effect: bool = False,
              location: Location | None = None) -> Operation:
        props = {"call_target_name": StringAttr(call_target_name), "backend_config": StringAttr(backend_config),
                 "has_side_effect": BoolAttr(has_side_effect)}
        return cls.insert(builder, list(inputs), props, list(result_types), location=location)


class _keyed_prop(prop):
    """A property stored under `key` but read through another accessor name (for a property
    called `name`, which is the op class's own name attribute)."""

    def __init__(self, key: str, constr: Any = None, optional: bool = False) -> None:
        super().__init__(constr, optional=optional)
        self.key = key

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = self.key


class CompositeOp(StableHLOOp):
    """A named composite of other ops: `decomposition` names the function that implements it."""

    name = "stablehlo.composite"
    assembly_format = "$name operands attr-dict `:` functional-type(operands, results)"
    inputs = var_operand()
    composite_name = _keyed_prop("name", StringAttr)
    composite_attributes = opt_prop(DictionaryAttr)
    decomposition = prop(SymbolRefAttr)
    version = opt_prop(IntegerAttr)
    results_ = var_result()


class FftOp(StableHLOOp):
    """Fourier transforms over the trailing `fft_length` dimensions (FFT, IFFT, RFFT, IRFFT)."""

    name = "stablehlo.fft"
    assembly_format = ("$operand `,` `type` `=` $fft_type `,` `length` `=` $fft_length attr-dict `:` "
                       "functional-type(operands, results)")
    operand = operand_def(TensorOf("fc"))
    fft_type = prop(_of(FftTypeAttr))
    fft_length = prop(I64Array)
    result = result_def(TensorOf("fc"))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        t = operand_types[0]
        kind = properties["fft_type"].value if isinstance(properties.get("fft_type"), FftTypeAttr) else "FFT"
        lengths = _ints(properties, "fft_length")
        et = t.element_type
        if kind in ("FFT", "IFFT", "IRFFT") and not isinstance(et, ComplexType):
            raise ShapeError(f"{kind} takes complex operands, but got '{t}'")
        if kind == "RFFT" and not isinstance(et, FloatType):
            raise ShapeError(f"RFFT takes real operands, but got '{t}'")
        if not 1 <= len(lengths) <= 3:
            raise ShapeError(f"fft_length must have 1 to 3 elements, but has {len(lengths)}")
        out_et = ComplexType(et) if kind == "RFFT" else et.element_type if kind == "IRFFT" else et
        if not isinstance(t, RankedTensorType):
            return [UnrankedTensorType(out_et)]
        if t.rank < len(lengths):
            raise ShapeError(f"operand '{t}' has fewer dimensions than fft_length {list(lengths)}")
        shape = list(t.shape)
        n = len(lengths)
        expected = list(lengths)
        if kind == "IRFFT":
            expected[-1] = lengths[-1] // 2 + 1
        trailing = shape[-n:]
        if not all(map(_dim_eq, trailing, expected)):
            raise ShapeError(f"trailing dimensions {_shape_text(trailing)} of operand '{t}' must be "
                             f"{_shape_text(expected)} for {kind} with fft_length {list(lengths)}")
        if kind == "RFFT":
            shape[-1] = lengths[-1] // 2 + 1
        elif kind == "IRFFT":
            shape[-1] = lengths[-1]
        return [RankedTensorType(tuple(shape), out_et, None)]


class ReducePrecisionOp(StableHLOOp):
    """Rounds to a float format with `exponent_bits` and `mantissa_bits`, keeping the type."""

    name = "stablehlo.reduce_precision"
    assembly_format = ("$operand `,` `format` `=` custom<ExponentMantissa>($exponent_bits, $mantissa_bits) attr-dict "
                       "`:` custom<SameOperandsAndResultType>(type($operand), type($output))")
    operand = operand_def(TensorOf("f"))
    exponent_bits = prop(I32Attr)
    mantissa_bits = prop(I32Attr)
    output = result_def(TensorOf("f"))
    traits = (Pure, Elementwise, HloCompatibleOperandsAndResultType)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        if _int(properties, "exponent_bits") < 1 or _int(properties, "mantissa_bits") < 0:
            raise ShapeError("exponent_bits must be at least 1 and mantissa_bits non-negative")
        return [operand_types[0]]


# Legacy and dynamic-shape ops ----------------------------------------------------------------------

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
        return [RankedTensorType(_ints(properties, "broadcast_sizes") + t.shape, t.element_type, None)]


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
        _same_element_type(src, dst)
        dims = _ints(self.properties, "broadcast_dimensions")
        if isinstance(src, RankedTensorType) and len(dims) != src.rank:
            raise ShapeError(f"broadcast_dimensions size ({len(dims)}) does not match operand rank ({src.rank})")
        if isinstance(dst, RankedTensorType):
            _dims_in_range(dims, dst.rank, f"broadcast_dimensions {list(dims)} (result '{dst}')")
            shape = self.output_dimensions.type
            if isinstance(shape, RankedTensorType) and not _dim_eq(shape.shape[0], dst.rank):
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
        _same_element_type(src, dst)
        if isinstance(dst, RankedTensorType) and isinstance(shape, RankedTensorType) and \
                not _dim_eq(shape.shape[0], dst.rank):
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
        d = _int(self.properties, "iota_dimension")
        if isinstance(dst, RankedTensorType) and not 0 <= d < dst.rank:
            raise ShapeError(f"iota_dimension {d} is out of range for the result '{dst}'")


class TriangularSolveOp(StableHLOOp):
    """Solves triangular systems `op(a) x = b` (or `x op(a) = b` when not `left_side`)."""

    name = "stablehlo.triangular_solve"
    a = operand_def(TensorOf("fc"))
    b = operand_def(TensorOf("fc"))
    left_side = prop(BoolAttr_)
    lower = prop(BoolAttr_)
    unit_diagonal = prop(BoolAttr_)
    transpose_a = prop(_of(TransposeAttr))
    result = result_def(TensorOf("fc"))
    traits = (Pure,)

    @classmethod
    def infer_result_types(cls, operand_types, properties, regions=()):
        a, b = operand_types
        _same_element_type(a, b, "a and b")
        if isinstance(a, RankedTensorType) and (a.rank < 2 or not _dim_eq(a.shape[-1], a.shape[-2])):
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


# The custom forms of the loose ops MLIR prints in one (the others print in the generic form):
# mnemonic -> (assembly format, result names, i64 properties the format writes bare).
_FUNCTIONAL = "attr-dict `:` functional-type(operands, results)"
_LOOSE_FORMS: dict[str, tuple[str | None, tuple[str, ...], tuple[str, ...]]] = {
    "batch_norm_grad": (None, ("grad_operand", "grad_scale", "grad_offset"), ()),
    "batch_norm_training": (None, ("output", "batch_mean", "batch_var"), ()),
    "dynamic_pad": ("operands " + _FUNCTIONAL, (), ()),
    "einsum": ("operands `,` `config` `=` $einsum_config " + _FUNCTIONAL, (), ()),
    "partition_id": ("attr-dict `:` type(results)", (), ()),
    "real_dynamic_slice": ("operands " + _FUNCTIONAL, (), ()),
    "replica_id": ("attr-dict `:` type(results)", (), ()),
    "set_dimension_size": ("operands `,` `dim` `=` $dimension " + _FUNCTIONAL, (), ("dimension",)),
    "unary_einsum": ("operands `,` `config` `=` $einsum_config " + _FUNCTIONAL, (), ()),
}


def _loose(mnemonic: str, class_name: str, props: str, doc: str, regions: int = 0, pure: bool = False) -> type:
    """An op loom parses, verifies structurally and prints, without modelling its semantics:
    any operands and results, its properties (all optional, unchecked) and regions. Its custom
    form, where MLIR prints one, is in `_LOOSE_FORMS`."""
    ns: dict[str, Any] = {"__doc__": doc, "__module__": __name__, "__qualname__": class_name,
                          "name": f"stablehlo.{mnemonic}", "operands_": var_operand(), "results_": var_result(),
                          "traits": (Pure,) if pure else ()}
    for p in props.split():
        ns[p] = opt_prop()
    for i in range(regions):
        ns[f"region{i}"] = region_def()
    form, result_names, integer_props = _LOOSE_FORMS.get(mnemonic, (None, (), ()))
    ns["assembly_format"] = form
    for p in integer_props:  # written bare (`dim = 0`) in the custom form
        ns[p] = opt_prop(Constraint(lambda a: True, "attribute", integer_syntax(i64)))
    if result_names:
        ns["asm_result_names"] = lambda self: list(result_names) if len(self.results) == len(result_names) else None
    return type(class_name, (StableHLOOp,), ns)


AllGatherOp = _loose("all_gather", "AllGatherOp", "all_gather_dim replica_groups channel_handle use_global_device_ids",
                     "Concatenates the operands of every process in a group (collective).")
AllReduceOp = _loose("all_reduce", "AllReduceOp", "replica_groups channel_handle use_global_device_ids",
                     "Reduces the operands of every process in a group (collective).", regions=1)
AllToAllOp = _loose("all_to_all", "AllToAllOp",
                    "split_dimension concat_dimension split_count replica_groups channel_handle",
                    "Splits, exchanges and concatenates between processes (collective).")
AsyncStartOp = _loose("async_start", "AsyncStartOp", "", "Starts an asynchronous computation.", regions=1)
AsyncDoneOp = _loose("async_done", "AsyncDoneOp", "", "Waits for an asynchronous computation.")
BatchNormGradOp = _loose("batch_norm_grad", "BatchNormGradOp", "epsilon feature_index",
                         "Gradients of batch normalisation.", pure=True)
BatchNormInferenceOp = _loose("batch_norm_inference", "BatchNormInferenceOp", "epsilon feature_index",
                              "Batch normalisation with given statistics.", pure=True)
BatchNormTrainingOp = _loose("batch_norm_training", "BatchNormTrainingOp", "epsilon feature_index",
                             "Batch normalisation computing the batch statistics.", pure=True)
CollectiveBroadcastOp = _loose("collective_broadcast", "CollectiveBroadcastOp", "replica_groups channel_handle",
                               "Broadcasts from one process of each group (collective).")
CollectivePermuteOp = _loose("collective_permute", "CollectivePermuteOp", "source_target_pairs channel_handle",
                             "Sends each process's operand to another process (collective).")
CrossReplicaSumOp = _loose("cross-replica-sum", "CrossReplicaSumOp", "replica_groups",
                           "Legacy sum across replicas (collective).")
DynamicConvOp = _loose("dynamic_conv", "DynamicConvOp",
                       "window_strides lhs_dilation rhs_dilation window_reversal dimension_numbers "
                       "feature_group_count batch_group_count precision_config",
                       "Convolution with run-time padding.", pure=True)
DynamicGatherOp = _loose("dynamic_gather", "DynamicGatherOp", "dimension_numbers indices_are_sorted",
                         "Gather with run-time slice sizes.", pure=True)
DynamicPadOp = _loose("dynamic_pad", "DynamicPadOp", "", "Pad with run-time paddings.", pure=True)
EinsumOp = _loose("einsum", "EinsumOp", "einsum_config", "Legacy two-operand einsum.", pure=True)
InfeedOp = _loose("infeed", "InfeedOp", "infeed_config layout", "Reads from the infeed.")
OutfeedOp = _loose("outfeed", "OutfeedOp", "outfeed_config", "Writes to the outfeed.")
PartitionIdOp = _loose("partition_id", "PartitionIdOp", "", "The partition id of the current process.", pure=True)
RealDynamicSliceOp = _loose("real_dynamic_slice", "RealDynamicSliceOp", "", "Slice with run-time bounds.", pure=True)
RecvOp = _loose("recv", "RecvOp", "channel_handle is_host_transfer source_target_pairs", "Receives from a channel.")
ReduceScatterOp = _loose("reduce_scatter", "ReduceScatterOp",
                         "scatter_dimension replica_groups channel_handle use_global_device_ids",
                         "Reduces across processes and scatters the parts (collective).", regions=1)
ReplicaIdOp = _loose("replica_id", "ReplicaIdOp", "", "The replica id of the current process.", pure=True)
SendOp = _loose("send", "SendOp", "channel_handle is_host_transfer source_target_pairs", "Sends to a channel.")
SetDimensionSizeOp = _loose("set_dimension_size", "SetDimensionSizeOp", "dimension",
                            "Sets the run-time size of a bounded dimension.", pure=True)
TorchIndexSelectOp = _loose("torch_index_select", "TorchIndexSelectOp", "dim batch_dims",
                            "Legacy PyTorch-style index_select.", pure=True)
UnaryEinsumOp = _loose("unary_einsum", "UnaryEinsumOp", "einsum_config", "Legacy one-operand einsum.", pure=True)
UniformDequantizeOp = _loose("uniform_dequantize", "UniformDequantizeOp", "",
                             "Converts quantized values to floats.", pure=True)
UniformQuantizeOp = _loose("uniform_quantize", "UniformQuantizeOp", "", "Quantizes values.", pure=True)


# Canonicalization patterns -----------------------------------------------------------------------

def single_op_body(region: Any) -> Operation | None:
    """The one op of a reduction body `{ %r = op(%a, %b); return %r }` over its two arguments
    (in either order), else None: how reduce, reduce_window and scatter bodies are recognised."""
    block = region.blocks[0]
    ops = list(block.ops)
    if len(ops) != 2 or len(block.args) != 2:
        return None
    op, ret = ops
    if len(op.results) != 1 or tuple(ret.operands) != (op.results[0],):
        return None
    if len(op.operands) != 2 or set(op.operands) != set(block.args):
        return None
    return op


def reduction_body(op: Operation) -> str | None:
    """The name of the one binary op of a one-input reduction's body (reduce, reduce_window), else
    None."""
    body = single_op_body(op.regions[0]) if len(op.operands) == 2 else None
    return None if body is None else body.name


def _is_identity(body: str, v: Any) -> bool:
    """Whether `v` (a numpy scalar) is the identity of the reduction `body`."""
    dtype = np.asarray(v).dtype
    if body == "stablehlo.add" or body == "stablehlo.or":
        return bool(v == 0)
    if body == "stablehlo.multiply":
        return bool(v == 1)
    if body == "stablehlo.and":
        return bool(v == np.invert(np.zeros((), dtype))) if dtype.kind in "biu" else False
    if body in ("stablehlo.maximum", "stablehlo.minimum"):
        low = body == "stablehlo.maximum"
        if dtype.kind == "f" or dtype.kind == "V":  # bf16 and the small floats are numpy 'V'
            return bool(np.isinf(np.float64(v)) and (np.float64(v) < 0) == low)
        if dtype.kind == "b":
            return bool(v) != low
        if dtype.kind in "iu":
            info = np.iinfo(dtype)
            return bool(v == (info.min if low else info.max))
    return False


def _reduce_over_unit_dims(op: Operation, rewriter: Any) -> bool:
    """`reduce(x, init)` over dimensions that all have size 1, with a one-op body and `init` that
    op's identity, is `reshape(x)` (XLA's simplifier does the same; a sum then keeps the sign of a
    zero where `0 + -0` would not). JAX emits such reduces in the gradients of broadcasts."""
    if len(op.operands) != 2:
        return False
    x, init = op.operands
    t = x.type
    if not isinstance(t, RankedTensorType) or not t.has_static_shape or \
            any(t.shape[d] != 1 for d in _ints(op.properties, "dimensions", ())):
        return False
    body = reduction_body(op)
    owner = init.owner_op
    if body is None or not isinstance(owner, ConstantOp):
        return False
    v = _splat_value(owner.properties.get("value"))
    if v is None or not _is_identity(body, v):
        return False
    rewriter.set_insertion_point_before(op)
    rewriter.replace_op(op, ReshapeOp.insert(rewriter, [x], result_types=[op.results[0].type], location=op.location))
    return True


def _transpose_of_matmul(op: Operation, rewriter: Any) -> bool:
    """`transpose(dot_general(a, b), [1, 0])` of a plain matrix product (no batching) used only
    there is `dot_general(b, a)` with the contracting dimensions swapped: one product, no
    transpose. JAX emits it in the gradients of `x @ w`."""
    dot = op.operands[0].owner_op
    if list(_ints(op.properties, "permutation", ())) != [1, 0] or not isinstance(dot, DotGeneralOp) or \
            len(dot.results[0].uses) != 1 or "algorithm" in dot.properties:
        return False
    dn = dot.properties["dot_dimension_numbers"]
    lhs, rhs = dot.operands
    if dn.lhs_batching_dimensions or dn.rhs_batching_dimensions or \
            not all(isinstance(v.type, RankedTensorType) and v.type.rank == 2 for v in (lhs, rhs)):
        return False
    props: dict[str, Attribute] = {"dot_dimension_numbers": dn.replace(
        lhs_contracting_dimensions=dn.rhs_contracting_dimensions,
        rhs_contracting_dimensions=dn.lhs_contracting_dimensions)}
    precision = dot.properties.get("precision_config")
    if precision is not None:
        props["precision_config"] = ArrayAttr(tuple(reversed(precision.elements)))
    rewriter.set_insertion_point_before(op)
    rewriter.replace_op(op, DotGeneralOp.insert(rewriter, [rhs, lhs], props, [op.results[0].type],
                                                location=op.location))
    return True


def _patterns(fn: Callable) -> classmethod:
    def canonicalization_patterns(cls: type) -> list:
        from loom.rewrite import FunctionPattern
        return [FunctionPattern(fn, cls.name)]
    return classmethod(canonicalization_patterns)


ReduceOp.canonicalization_patterns = _patterns(_reduce_over_unit_dims)
TransposeOp.canonicalization_patterns = _patterns(_transpose_of_matmul)


# Registration and value builders -------------------------------------------------------------------

DIALECT = register_dialect(Dialect("stablehlo", attribute_parser=parse_attribute,
                                   materialize_constant=materialize_constant))


def _value_builder(cls: type, fn_name: str) -> Callable[..., Any]:
    def build(builder: Builder | None, *args: Any, **kwargs: Any) -> Any:
        op = cls.build(builder, *args, **kwargs)
        return op.results[0] if len(op.results) == 1 else op.results
    build.__name__ = build.__qualname__ = fn_name
    build.__doc__ = f"Insert `{cls.name}` (see `{cls.__name__}.build`) and return its result (a tuple if several)."
    return build


# `stablehlo.add(builder, lhs, rhs)` and friends: insert the op, return its result value(s).
abs_ = _value_builder(AbsOp, "abs_")
cbrt = _value_builder(CbrtOp, "cbrt")
ceil = _value_builder(CeilOp, "ceil")
count_leading_zeros = _value_builder(CountLeadingZerosOp, "count_leading_zeros")
cosine = _value_builder(CosineOp, "cosine")
exponential = _value_builder(ExponentialOp, "exponential")
exponential_minus_one = _value_builder(ExponentialMinusOneOp, "exponential_minus_one")
floor = _value_builder(FloorOp, "floor")
imag = _value_builder(ImagOp, "imag")
is_finite = _value_builder(IsFiniteOp, "is_finite")
log = _value_builder(LogOp, "log")
log_plus_one = _value_builder(LogPlusOneOp, "log_plus_one")
logistic = _value_builder(LogisticOp, "logistic")
not_ = _value_builder(NotOp, "not_")
negate = _value_builder(NegOp, "negate")
popcnt = _value_builder(PopulationCountOp, "popcnt")
real = _value_builder(RealOp, "real")
round_nearest_afz = _value_builder(RoundOp, "round_nearest_afz")
round_nearest_even = _value_builder(RoundNearestEvenOp, "round_nearest_even")
rsqrt = _value_builder(RsqrtOp, "rsqrt")
sign = _value_builder(SignOp, "sign")
sine = _value_builder(SineOp, "sine")
sqrt = _value_builder(SqrtOp, "sqrt")
tan = _value_builder(TanOp, "tan")
tanh = _value_builder(TanhOp, "tanh")
add = _value_builder(AddOp, "add")
atan2 = _value_builder(Atan2Op, "atan2")
divide = _value_builder(DivOp, "divide")
maximum = _value_builder(MaxOp, "maximum")
minimum = _value_builder(MinOp, "minimum")
multiply = _value_builder(MulOp, "multiply")
power = _value_builder(PowOp, "power")
remainder = _value_builder(RemOp, "remainder")
shift_left = _value_builder(ShiftLeftOp, "shift_left")
shift_right_arithmetic = _value_builder(ShiftRightArithmeticOp, "shift_right_arithmetic")
shift_right_logical = _value_builder(ShiftRightLogicalOp, "shift_right_logical")
subtract = _value_builder(SubtractOp, "subtract")
and_ = _value_builder(AndOp, "and_")
or_ = _value_builder(OrOp, "or_")
xor = _value_builder(XorOp, "xor")
complex_ = _value_builder(ComplexOp, "complex_")
constant = _value_builder(ConstantOp, "constant")
iota = _value_builder(IotaOp, "iota")
compare = _value_builder(CompareOp, "compare")
select = _value_builder(SelectOp, "select")
clamp = _value_builder(ClampOp, "clamp")
convert = _value_builder(ConvertOp, "convert")
bitcast_convert = _value_builder(BitcastConvertOp, "bitcast_convert")
broadcast_in_dim = _value_builder(BroadcastInDimOp, "broadcast_in_dim")
reshape = _value_builder(ReshapeOp, "reshape")
transpose = _value_builder(TransposeOp, "transpose")
slice_ = _value_builder(SliceOp, "slice_")
dynamic_slice = _value_builder(DynamicSliceOp, "dynamic_slice")
dynamic_update_slice = _value_builder(DynamicUpdateSliceOp, "dynamic_update_slice")
concatenate = _value_builder(ConcatenateOp, "concatenate")
pad = _value_builder(PadOp, "pad")
reverse = _value_builder(ReverseOp, "reverse")
get_dimension_size = _value_builder(GetDimensionSizeOp, "get_dimension_size")
dot_general = _value_builder(DotGeneralOp, "dot_general")
convolution = _value_builder(ConvolutionOp, "convolution")
reduce = _value_builder(ReduceOp, "reduce")
reduce_window = _value_builder(ReduceWindowOp, "reduce_window")
sort = _value_builder(SortOp, "sort")
while_ = _value_builder(WhileOp, "while_")
if_ = _value_builder(IfOp, "if_")
case = _value_builder(CaseOp, "case")
gather = _value_builder(GatherOp, "gather")
scatter = _value_builder(ScatterOp, "scatter")
tuple_ = _value_builder(TupleOp, "tuple_")
get_tuple_element = _value_builder(GetTupleElementOp, "get_tuple_element")
optimization_barrier = _value_builder(OptimizationBarrierOp, "optimization_barrier")
rng_bit_generator = _value_builder(RngBitGeneratorOp, "rng_bit_generator")
custom_call = _value_builder(CustomCallOp, "custom_call")


def return_(builder: Builder, values: Sequence[Value], location: Location | None = None) -> Operation:
    """Insert `stablehlo.return` of `values` (a terminator: returns the op)."""
    return ReturnOp.build(builder, values, location)
