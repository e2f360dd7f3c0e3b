"""The quant dialect's uniform quantized type, `!quant.uniform`, as StableHLO uses it:

    !quant.uniform<i8:f32, 0.1:-3>                  per-tensor: scale 0.1, zero point -3
    !quant.uniform<i8:f32:1, {0.1:-3, 0.2:4}>       per-axis along dimension 1, one pair per slice
    !quant.uniform<i8<-127:127>:f32, 0.5>          storage values limited to [-127, 127]

A value `i` of the storage type stands for `(i - zero_point) * scale` of the expressed type.
The type prints as MLIR's quant dialect does: the storage type as written (`i8`, `ui8`, or the
dialect's own `u8` for unsigned), its bounds only when they are not the storage type's whole
range, scales in C's `%e` form (`1.000000e-01`), a zero point only when it is not 0, and per-axis
pairs joined by `,`. Parsing checks the spec's constraints (C1-C11 of its quantized element type);
`check_quantized_tensor` checks the two of a tensor type (C12, C13).
"""

from __future__ import annotations

import math
import re

from loom.ir.opdef import Dialect, register_dialect
from loom.ir.types import FLOAT_KINDS, DialectType, FloatType, IntegerType, RankedTensorType, Type


class QuantError(ValueError):
    """A malformed or invalid `!quant.uniform` type; `offset` is where in its text."""

    def __init__(self, message: str, offset: int | None = None) -> None:
        super().__init__(message)
        self.offset = offset


class UniformQuantizedType(DialectType):
    """`!quant.uniform<...>`: per-tensor when `quantized_dimension` is None (one scale and zero
    point), else per-axis (one pair per slice of that dimension)."""

    __slots__ = ("storage", "storage_min", "storage_max", "expressed_type", "quantized_dimension", "scales",
                 "zero_points")

    def __init__(self, storage: str, storage_min: int | None, storage_max: int | None, expressed_type: Type,
                 quantized_dimension: int | None, scales: tuple[float, ...], zero_points: tuple[int, ...]) -> None:
        m = _STORAGE.fullmatch(storage)
        if m is None:
            raise QuantError(f"illegal storage type: {storage!r} (expected iN, siN, uiN or uN)")
        self.storage = storage
        lo, hi = default_bounds(int(m.group(2)), not storage.startswith("u"))
        self.storage_min = lo if storage_min is None else storage_min
        self.storage_max = hi if storage_max is None else storage_max
        self.expressed_type = expressed_type
        self.quantized_dimension = quantized_dimension
        self.scales = tuple(float(s) for s in scales)
        self.zero_points = tuple(int(z) for z in zero_points)
        self.text = self._render()

    # The storage integers -----------------------------------------------------------------------
    @property
    def width(self) -> int:
        return int(_STORAGE.fullmatch(self.storage).group(2))

    @property
    def is_signed(self) -> bool:
        return not self.storage.startswith("u")

    @property
    def storage_type(self) -> IntegerType:
        """The integer type holding the values (`u8` is MLIR's spelling of an unsigned i8)."""
        return IntegerType(self.width, "s" if self.storage.startswith("si") else "" if self.is_signed else "u")

    @property
    def is_per_axis(self) -> bool:
        return self.quantized_dimension is not None

    @property
    def scale(self) -> float:
        return self.scales[0]

    @property
    def zero_point(self) -> int:
        return self.zero_points[0]

    def baseline(self) -> UniformQuantizedType:
        """The spec's `baseline_element_type`: scales 1 and zero points 0 (for comparing types
        whatever their quantization parameters)."""
        n = len(self.scales)
        return UniformQuantizedType(self.storage, self.storage_min, self.storage_max, self.expressed_type,
                                    self.quantized_dimension, (1.0,) * n, (0,) * n)

    # Text -------------------------------------------------------------------------------------
    def _render(self) -> str:
        storage = self.storage
        if (self.storage_min, self.storage_max) != default_bounds(self.width, self.is_signed):
            storage += f"<{self.storage_min}:{self.storage_max}>"
        pairs = [f"{s:e}" + (f":{z}" if z else "") for s, z in zip(self.scales, self.zero_points)]
        if self.quantized_dimension is None:
            return f"!quant.uniform<{storage}:{self.expressed_type}, {pairs[0]}>"
        return f"!quant.uniform<{storage}:{self.expressed_type}:{self.quantized_dimension}, {{{','.join(pairs)}}}>"

    def _params(self) -> tuple:
        return tuple(getattr(self, s) for s in UniformQuantizedType.__slots__)


def default_bounds(width: int, signed: bool) -> tuple[int, int]:
    return (-(1 << (width - 1)), (1 << (width - 1)) - 1) if signed else (0, (1 << width) - 1)


def is_quantized(t: Type) -> bool:
    """Whether `t` (an element type or a tensor type) has uniform quantized elements."""
    return isinstance(getattr(t, "element_type", t), UniformQuantizedType)


def check_quantized_tensor(t: Type) -> None:
    """The spec's constraints on a tensor of per-axis quantized elements: (C12) the quantized
    dimension is one of the tensor's, (C13) of as many slices as there are scales."""
    et = getattr(t, "element_type", None)
    if not isinstance(et, UniformQuantizedType) or not et.is_per_axis or not isinstance(t, RankedTensorType):
        return
    d = et.quantized_dimension
    if d >= t.rank:
        raise QuantError(f"quantization dimension {d} is out of range for {t} (rank {t.rank})")
    if t.shape[d] >= 0 and t.shape[d] != len(et.scales):
        raise QuantError(f"{t}: dimension {d} has size {t.shape[d]} but the type has {len(et.scales)} scales")


# Parsing ------------------------------------------------------------------------------------------

_STORAGE = re.compile(r"(si|ui|i|u)([1-9][0-9]*)")
_INT = re.compile(r"[-+]?[0-9]+")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?)")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SPACE = re.compile(r"\s*")


class _Reader:
    def __init__(self, text: str) -> None:
        self.text, self.pos = text, 0

    def skip(self) -> None:
        self.pos = _SPACE.match(self.text, self.pos).end()

    def accept(self, s: str) -> bool:
        self.skip()
        if self.text.startswith(s, self.pos):
            self.pos += len(s)
            return True
        return False

    def expect(self, s: str, what: str) -> None:
        if not self.accept(s):
            raise QuantError(f"expected '{s}' {what}", self.pos)

    def match(self, pattern: re.Pattern, what: str) -> str:
        self.skip()
        m = pattern.match(self.text, self.pos)
        if m is None:
            raise QuantError(f"expected {what}", self.pos)
        self.pos = m.end()
        return m.group()


def parse_type(text: str) -> Type | None:
    """The type of `!quant.<...>` text (the dialect's type parser), or None for kinds other than
    `uniform`, which stay opaque."""
    r = _Reader(text)
    r.expect("!quant.", "")
    start = r.pos
    if r.match(_NAME, "a quant type name") != "uniform":
        return None
    r.expect("<", "after 'uniform'")
    at = r.pos
    storage = r.match(_NAME, "a storage type")
    m = _STORAGE.fullmatch(storage)
    if m is None:
        raise QuantError(f"illegal storage type: '{storage}' (expected an integer type)", at)
    width, signed = int(m.group(2)), not storage.startswith("u")
    lo, hi = default_bounds(width, signed)
    storage_min = storage_max = None
    if r.accept("<"):
        at = r.pos
        storage_min = int(r.match(_INT, "the storage minimum"))
        r.expect(":", "between the storage bounds")
        storage_max = int(r.match(_INT, "the storage maximum"))
        r.expect(">", "after the storage bounds")
        if not lo <= storage_min < storage_max <= hi:
            raise QuantError(f"illegal storage bounds <{storage_min}:{storage_max}> for {storage}: need "
                             f"{lo} <= min < max <= {hi}", at)
    r.expect(":", "after the storage type")
    at = r.pos
    expressed = r.match(_NAME, "an expressed type")
    if expressed not in FLOAT_KINDS:
        raise QuantError(f"illegal expressed type: '{expressed}' (expected a float type)", at)
    dimension = None
    if r.accept(":"):
        at = r.pos
        dimension = int(r.match(_INT, "a quantization dimension"))
        if dimension < 0:
            raise QuantError(f"illegal quantization dimension: {dimension}", at)
    r.expect(",", "before the quantization parameters")
    scales, zero_points = [], []
    braced = r.accept("{")
    if dimension is not None and not braced:
        raise QuantError("expected '{' before the per-axis quantization parameters", r.pos)
    while True:
        at = r.pos
        r.skip()
        scale_at = r.pos
        scale = float(r.match(_FLOAT, "a scale"))
        if not (math.isfinite(scale) and scale > 0):
            raise QuantError(f"illegal scale: {scale} (scales are positive and finite)", scale_at)
        zero_point = 0
        if r.accept(":"):
            r.skip()
            zp_at = r.pos
            zero_point = int(r.match(_INT, "a zero point"))
            if not (storage_min if storage_min is not None else lo) <= zero_point <= \
                    (storage_max if storage_max is not None else hi):
                raise QuantError(f"illegal zero point: {zero_point} is outside the storage range", zp_at)
        scales.append(scale)
        zero_points.append(zero_point)
        if not braced or not r.accept(","):
            break
    if braced:
        r.expect("}", "after the quantization parameters")
    if dimension is None and len(scales) != 1:
        raise QuantError("a per-tensor type has one scale (give a quantization dimension for several)", start)
    r.expect(">", "at the end of the type")
    r.skip()
    if r.pos != len(r.text):
        raise QuantError("unexpected text after the type", r.pos)
    return UniformQuantizedType(storage, storage_min, storage_max, FloatType(expressed), dimension,
                                tuple(scales), tuple(zero_points))


DIALECT = register_dialect(Dialect("quant", type_parser=parse_type))

__all__ = ["DIALECT", "QuantError", "UniformQuantizedType", "check_quantized_tensor", "default_bounds",
           "is_quantized", "parse_type"]
