"""StableHLO's attributes: the enumerations (`#stablehlo<comparison_direction LT>`, ...), the
structured attributes (`#stablehlo.dot<...>`, `#stablehlo.gather<...>`, `#stablehlo.conv<...>`, ...),
`parse_attribute` (the dialect's attribute parser) and the makers of the builtin attributes the ops
store (`i64_array`, `i64_attr`, `padding_attr`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

import numpy as np

from loom.ir.attributes import Attribute, DenseArrayAttr, DenseElementsAttr, IntegerAttr
from loom.ir.floats import bits_to_value, format_float, value_to_bits
from loom.ir.types import RankedTensorType, i64

__all__ = ["EnumAttr", "ComparisonDirectionAttr", "ComparisonTypeAttr", "PrecisionAttr", "RngAlgorithmAttr",
           "RngDistributionAttr", "TransposeAttr", "FftTypeAttr", "ResultAccuracyModeAttr", "ENUM_ATTRS", "enum_attr",
           "DotDimensionNumbers", "GatherDimensionNumbers", "ScatterDimensionNumbers", "OutputOperandAlias",
           "ConvDimensionNumbers", "ChannelHandle", "ResultAccuracy", "parse_attribute", "i64_array", "i64_attr",
           "padding_attr"]


def dims_text(values: tuple[int, ...]) -> str:
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
            parts.append(f"{name} = {dims_text(v) if isinstance(v, tuple) else v}")
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


class ChannelHandle(_StructAttr):
    """`#stablehlo.channel_handle<handle = 1, type = 1>`: the channel of a collective or send/recv
    (`type`: 0 invalid, 1 device to device, 2 device to host, 3 host to device)."""

    __slots__ = ("handle", "type")
    MNEMONIC = "channel_handle"
    FIELDS = (("handle", 0), ("type", 0))
    ALWAYS_PRINTED = frozenset(n for n, _ in FIELDS)


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

_TOKEN = re.compile(r"\s*(\[[^\]]*\]|#[A-Za-z_.]+<[^<>]*>|[-+]?0x[0-9a-fA-F]+|[-+]?[0-9][0-9.eE+-]*"
                    r"|[A-Za-z_][A-Za-z0-9_]*)\s*")
_INT_TEXT = re.compile(r"[-+]?[0-9]+\Z")
_FLOAT_TEXT = re.compile(r"[-+]?[0-9]+(\.[0-9]*)?([eE][-+]?[0-9]+)?\Z")
_HEX_TEXT = re.compile(r"0x[0-9a-fA-F]+\Z")
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


def _int(text: str, where: str) -> int:
    """An i64 field's value, with MLIR's messages (its digits are bounded before Python reads them)."""
    text = text.strip()
    if not _INT_TEXT.match(text):
        raise ValueError(f"expected integer value for {where}, but got '{text}'")
    if len(text.lstrip("+-").lstrip("0")) > 19 or not -(1 << 63) <= int(text) < 1 << 63:
        raise ValueError(f"integer value too large for {where}")
    return int(text)


def _f64_bits(text: str, where: str) -> int:
    """An f64 field's bit pattern: decimal text, or hexadecimal text that is the bit pattern (as MLIR)."""
    if _HEX_TEXT.match(text):
        bits = int(text, 16)
        if bits >> 64:
            raise ValueError(f"hexadecimal float constant out of range for {where}")
        return bits
    if not _FLOAT_TEXT.match(text):
        raise ValueError(f"expected floating point literal for {where}, but got '{text}'")
    return value_to_bits("f64", text)


def _int_list(text: str, where: str) -> tuple[int, ...]:
    inner = text.strip()[1:-1].strip()
    return tuple(_int(x, where) for x in inner.split(",")) if inner else ()


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
        where = f"'{k}' in #stablehlo.{cls.MNEMONIC}"
        values[k] = _int_list(text, where) if isinstance(known[k], tuple) else _int(text, where)
    return cls.get(**values)


def parse_conv_dimensions(body: str) -> ConvDimensionNumbers | None:
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
    def where(field: str) -> str:
        return f"'{field}' in #stablehlo.result_accuracy"

    return ResultAccuracy(_f64_bits(fields.get("atol", "0.0"), where("atol")),
                          _f64_bits(fields.get("rtol", "0.0"), where("rtol")),
                          _int(fields.get("ulps", "0"), where("ulps")), mode)


_STRUCTS: dict[str, Any] = {
    "dot": lambda body: _parse_struct(DotDimensionNumbers, body),
    "gather": lambda body: _parse_struct(GatherDimensionNumbers, body),
    "scatter": lambda body: _parse_struct(ScatterDimensionNumbers, body),
    "output_operand_alias": lambda body: _parse_struct(OutputOperandAlias, body),
    "channel_handle": lambda body: _parse_struct(ChannelHandle, body),
    "conv": parse_conv_dimensions,
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


def i64_array(values: Iterable[int]) -> DenseArrayAttr:
    """`array<i64: ...>`."""
    return DenseArrayAttr.get(i64, values)


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr.get(value, i64)


def padding_attr(pairs: Sequence[tuple[int, int]]) -> DenseElementsAttr:
    """`dense<[[lo, hi], ...]> : tensor<Nx2xi64>`."""
    arr = np.array(pairs, dtype=np.int64).reshape(len(pairs), 2)
    return DenseElementsAttr.get(arr, RankedTensorType((len(pairs), 2), i64, None))
