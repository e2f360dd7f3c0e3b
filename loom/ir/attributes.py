"""Builtin attributes and locations: immutable, interned, printed exactly as MLIR prints them."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, cast

import numpy as np

from loom.ir.floats import bits_to_value, format_float, value_to_bits
from loom.ir.interning import Interned
from loom.ir.types import (
    ComplexType,
    FloatType,
    IndexType,
    IntegerType,
    NoneType,
    ShapedType,
    Type,
    UnrankedMemRefType,
    UnrankedTensorType,
    f64,
    i1,
    i64,
)


class Attribute(metaclass=Interned):
    """Base of all attributes. `type` is the attribute's type where it has one, else None."""

    __slots__ = ("_text", "_elided", "__weakref__")
    type: Type | None = None
    _text: str
    _elided: str
    _canonical_args = False  # True where constructor arguments have no defaults or normalisation

    def __str__(self) -> str:
        try:
            return self._text
        except AttributeError:
            self._text = text = self._render(False)
            return text

    def __repr__(self) -> str:
        return f"Attribute({self})"

    def _render(self, elide_type: bool) -> str:
        raise NotImplementedError

    def __reduce__(self):
        return (type(self), self._params())

    def _params(self) -> tuple:
        return tuple(getattr(self, s) for s in type(self).__slots__)


def attribute_text(attr: Attribute, elide_type: bool = False) -> str:
    """Text of `attr`; `elide_type` is MLIR's AttrTypeElision::May (inside arrays, shaped types)."""
    if not elide_type:
        return str(attr)
    try:
        return attr._elided
    except AttributeError:
        attr._elided = text = attr._render(True)
        return text


_BARE_ID = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*\Z")


def escape_string(s: str) -> str:
    """MLIR's printEscapedString over the UTF-8 bytes of `s`."""
    if s.isascii() and s.isprintable() and '"' not in s and "\\" not in s:
        return s
    out = []
    for b in s.encode("utf-8", "surrogateescape"):
        if b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F and b != 0x22:
            out.append(chr(b))
        else:
            out.append(f"\\{b:02X}")
    return "".join(out)


def keyword_or_string(name: str) -> str:
    return name if _BARE_ID.match(name) else f'"{escape_string(name)}"'


class IntegerAttr(Attribute):
    """An integer of an integer or index type; i1 values print as `true` / `false`."""

    __slots__ = ("type", "value")
    type: IntegerType | IndexType

    def __init__(self, type: Type, value: int) -> None:
        self.type = cast("IntegerType | IndexType", type)
        self.value = self.type.normalize(value)

    @staticmethod
    def get(value: int, type: Type = i64) -> IntegerAttr:
        return IntegerAttr(type, cast("IntegerType | IndexType", type).normalize(int(value)))

    def _render(self, elide_type: bool) -> str:
        t = self.type
        if t is i1:
            return "true" if self.value else "false"
        if elide_type and t is i64:
            return decimal_text(self.value)
        return f"{decimal_text(self.value)} : {t}"


def decimal_text(value: int) -> str:
    """str(value) without Python's limit on the digits of a decimal string (integer types are up
    to 16,777,215 bits wide): long values convert by halves."""
    if -10 ** 4000 < value < 10 ** 4000:
        return str(value)
    if value < 0:
        return "-" + decimal_text(-value)
    k = value.bit_length() * 30103 // 200000  # about half the decimal digits
    high, low = divmod(value, 10 ** k)
    return decimal_text(high) + decimal_text(low).rjust(k, "0")


def BoolAttr(value: bool) -> IntegerAttr:
    return IntegerAttr(i1, 1 if value else 0)


class FloatAttr(Attribute):
    """A float of a float type, held as its bit pattern so that -0.0 and NaN payloads survive."""

    __slots__ = ("type", "bits")
    type: FloatType

    def __init__(self, type: FloatType, bits: int) -> None:
        self.type = type
        self.bits = bits

    @staticmethod
    def get(value: float, type: FloatType = f64) -> FloatAttr:
        return FloatAttr(type, value_to_bits(type.name, value))

    @property
    def value(self) -> float:
        return bits_to_value(self.type.name, self.bits)

    def _render(self, elide_type: bool) -> str:
        text, hexed = format_float(self.type.name, self.bits)
        if elide_type and self.type is f64 and not hexed:
            return text
        return f"{text} : {self.type}"


class StringAttr(Attribute):
    """A string (arbitrary bytes, kept as `str` with surrogate escapes), optionally typed."""

    __slots__ = ("value", "type")

    def __init__(self, value: str, type: Type | None = None) -> None:
        self.value = value
        self.type = type

    def _render(self, elide_type: bool) -> str:
        s = f'"{escape_string(self.value)}"'
        if self.type is not None and not isinstance(self.type, NoneType):
            s += f" : {self.type}"
        return s


class ArrayAttr(Attribute):
    __slots__ = ("elements",)
    _canonical_args = True

    def __init__(self, elements: tuple[Attribute, ...]) -> None:
        self.elements = elements

    def __iter__(self):
        return iter(self.elements)

    def __len__(self) -> int:
        return len(self.elements)

    def __getitem__(self, i):
        return self.elements[i]

    def _render(self, elide_type: bool) -> str:
        return "[" + ", ".join(attribute_text(e, True) for e in self.elements) + "]"


class DictionaryAttr(Attribute):
    """Sorted (name, attribute) pairs, as MLIR keeps them."""

    __slots__ = ("items",)

    def __init__(self, items: tuple[tuple[str, Attribute], ...]) -> None:
        self.items = tuple(sorted(items, key=_utf8_key)) if len(items) > 1 else items

    @staticmethod
    def get(mapping: dict[str, Attribute] | Iterable[tuple[str, Attribute]]) -> DictionaryAttr:
        items = mapping.items() if isinstance(mapping, dict) else mapping
        return DictionaryAttr(tuple(sorted(items, key=_utf8_key)))

    def as_dict(self) -> dict[str, Attribute]:
        return dict(self.items)

    def __getitem__(self, key: str) -> Attribute:
        for k, v in self.items:
            if k == key:
                return v
        raise KeyError(key)

    def get_value(self, key: str, default: Any = None) -> Any:
        for k, v in self.items:
            if k == key:
                return v
        return default

    def _render(self, elide_type: bool) -> str:
        return "{" + dictionary_body(self.items) + "}"


def _utf8_key(item: tuple[str, Any]) -> bytes:
    return item[0].encode("utf-8", "surrogateescape")


def dictionary_body(items: Iterable[tuple[str, Attribute]]) -> str:
    parts = []
    for k, v in items:
        if v is UNIT:
            parts.append(keyword_or_string(k))
        else:
            parts.append(f"{keyword_or_string(k)} = {v}")
    return ", ".join(parts)


class TypeAttr(Attribute):
    __slots__ = ("value",)

    def __init__(self, value: Type) -> None:
        self.value = value

    def _render(self, elide_type: bool) -> str:
        return str(self.value)


class UnitAttr(Attribute):
    __slots__ = ()

    def _render(self, elide_type: bool) -> str:
        return "unit"


UNIT = UnitAttr()


class SymbolRefAttr(Attribute):
    """`@root` or `@root::@nested::@leaf`."""

    __slots__ = ("root", "nested")

    def __init__(self, root: str, nested: tuple[str, ...] = ()) -> None:
        self.root = root
        self.nested = nested

    def _render(self, elide_type: bool) -> str:
        return "::".join("@" + keyword_or_string(n) for n in (self.root, *self.nested))


def FlatSymbolRefAttr(name: str) -> SymbolRefAttr:
    return SymbolRefAttr(name, ())


# Dense elements -----------------------------------------------------------------------------

def numpy_dtype(t: Type) -> Any:
    """The numpy dtype storing elements of type `t` (raw bit patterns for float kinds numpy lacks)."""
    if isinstance(t, IntegerType):
        if t.width == 1:
            return np.dtype(np.bool_)
        w = 8 if t.width <= 8 else 16 if t.width <= 16 else 32 if t.width <= 32 else 64
        if t.width > 64:
            raise ValueError(f"no numpy dtype for {t}")
        return np.dtype(f"{'u' if t.is_unsigned else 'i'}{w // 8}")
    if isinstance(t, IndexType):
        return np.dtype(np.int64)
    if isinstance(t, FloatType):
        if t.dtype is None:
            raise ValueError(f"no numpy dtype for {t}")
        return np.dtype(t.dtype)
    if isinstance(t, ComplexType):
        et = t.element_type
        if et is f64:
            return np.dtype(np.complex128)
        if isinstance(et, FloatType) and et.name == "f32":
            return np.dtype(np.complex64)
        raise ValueError(f"no numpy dtype for {t}")
    storage = getattr(t, "storage_type", None)  # a quantized type (a dialect's): its storage integers
    if storage is not None:
        return numpy_dtype(storage)
    raise ValueError(f"no numpy dtype for {t}")


def _storage_bytes(t: Type) -> int:
    """Bytes per element in MLIR's raw dense storage (i1 takes one byte)."""
    if isinstance(t, IntegerType):
        return max(1, (t.width + 7) // 8) if t.width != 1 else 1
    if isinstance(t, IndexType):
        return 8
    if isinstance(t, FloatType):
        return (t.width + 7) // 8
    if isinstance(t, ComplexType):
        return 2 * _storage_bytes(t.element_type)
    raise ValueError(f"unsupported dense element type {t}")


class DenseElementsAttr(Attribute):
    """Dense integer, float or complex elements of a shaped type, stored as MLIR's raw bytes.

    `raw` holds one element for a splat, else all elements, little-endian, row-major.
    """

    __slots__ = ("type", "raw", "splat", "_array")
    type: ShapedType
    _array: np.ndarray

    def __init__(self, type: ShapedType, raw: bytes, splat: bool) -> None:
        self.type = type
        self.raw = raw
        self.splat = splat

    def _params(self) -> tuple:
        return (self.type, self.raw, self.splat)

    @staticmethod
    def from_raw(type: ShapedType, raw: bytes) -> DenseElementsAttr:
        size = _storage_bytes(type.element_type)
        n = type.num_elements
        if n > 1 and len(raw) == size * n and raw == raw[:size] * n:
            return DenseElementsAttr(type, raw[:size], True)
        if len(raw) == size and n != 1:
            return DenseElementsAttr(type, raw, True)
        return DenseElementsAttr(type, raw, n == 1)

    @staticmethod
    def get(value: Any, type: ShapedType) -> DenseElementsAttr:
        """From a numpy array (or scalar for a splat) of element type `type.element_type`."""
        et = type.element_type
        arr = np.asarray(value)
        if isinstance(et, IntegerType) and et.width not in (1, 8, 16, 32, 64):
            size = _storage_bytes(et)
            raw = b"".join((et.normalize(int(v)) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
                           for v in arr.reshape(-1))
        else:
            arr = arr.astype(numpy_dtype(et))
            raw = np.ascontiguousarray(arr).astype(arr.dtype.newbyteorder("<")).tobytes()
        if arr.size == 1 and type.num_elements != 1:
            return DenseElementsAttr(type, raw, True)
        return DenseElementsAttr.from_raw(type, raw)

    def to_numpy(self) -> np.ndarray:
        """The elements as a numpy array of the attribute's shape."""
        try:
            return self._array
        except AttributeError:
            pass
        et = self.type.element_type
        count = 1 if self.splat else self.type.num_elements
        arr = np.frombuffer(self.raw, dtype=numpy_dtype(et).newbyteorder("<"), count=count)
        arr = arr.astype(numpy_dtype(et))
        if self.splat:
            arr = np.broadcast_to(arr.reshape(()), self.type.shape)
        else:
            arr = arr.reshape(self.type.shape)
        arr.flags.writeable = False
        self._array = arr
        return arr

    def _element_texts(self) -> list[str]:
        et = self.type.element_type
        size = _storage_bytes(et)
        raw = self.raw
        count = len(raw) // size
        if isinstance(et, ComplexType):
            half = size // 2
            inner = et.element_type
            texts = []
            for i in range(count):
                re_ = _scalar_text(inner, raw[i * size:i * size + half])
                im = _scalar_text(inner, raw[i * size + half:(i + 1) * size])
                texts.append(f"({re_},{im})")
            return texts
        return [_scalar_text(et, raw[i * size:(i + 1) * size]) for i in range(count)]

    def _render(self, elide_type: bool) -> str:
        n = self.type.num_elements
        if not self.splat and n > 100:
            body = '"0x' + self.raw.hex().upper() + '"'
        elif self.splat:
            body = self._element_texts()[0]
        elif n == 0:
            body = ""
        else:
            body = _nest(self._element_texts(), self.type.shape)
        return f"dense<{body}> : {self.type}"


def _scalar_text(t: Type, raw: bytes) -> str:
    if isinstance(t, FloatType):
        return format_float(t.name, int.from_bytes(raw, "little"))[0]
    v = int.from_bytes(raw, "little")
    if isinstance(t, IntegerType) and t.width == 1:
        return "true" if v & 1 else "false"
    return decimal_text(cast("IntegerType | IndexType", t).normalize(v))


def _nest(texts: list[str], shape: tuple[int, ...]) -> str:
    if not shape:
        return texts[0]

    def rec(start: int, dim: int) -> tuple[str, int]:
        if dim == len(shape) - 1:
            return "[" + ", ".join(texts[start:start + shape[dim]]) + "]", start + shape[dim]
        parts = []
        for _ in range(shape[dim]):
            s, start = rec(start, dim + 1)
            parts.append(s)
        return "[" + ", ".join(parts) + "]", start

    return rec(0, 0)[0]


class DenseStringElementsAttr(Attribute):
    """Dense elements of strings (`dense<["a", "b"]> : tensor<2x!tf.string>`)."""

    __slots__ = ("type", "values")
    type: ShapedType

    def __init__(self, type: ShapedType, values: tuple[str, ...]) -> None:
        self.type = type
        n = type.num_elements
        if n > 1 and len(values) == n and all(v == values[0] for v in values):
            values = values[:1]
        self.values = values

    def _render(self, elide_type: bool) -> str:
        texts = [f'"{escape_string(v)}"' for v in self.values]
        n = self.type.num_elements
        if len(texts) == 1 and n != 0:
            body = texts[0]
        elif n == 0:
            body = ""
        else:
            body = _nest(texts, self.type.shape)
        return f"dense<{body}> : {self.type}"


class DenseArrayAttr(Attribute):
    """`array<i32: 1, 2>`: a 1-d array of integers or floats (floats held as bit patterns)."""

    __slots__ = ("element_type", "values")

    def __init__(self, element_type: Type, values: tuple[int, ...]) -> None:
        self.element_type = element_type
        self.values = values

    @staticmethod
    def get(element_type: Type, values: Iterable) -> DenseArrayAttr:
        if isinstance(element_type, FloatType):
            return DenseArrayAttr(element_type, tuple(value_to_bits(element_type.name, v) for v in values))
        integer_type = cast("IntegerType | IndexType", element_type)
        return DenseArrayAttr(element_type, tuple(integer_type.normalize(int(v)) for v in values))

    def to_list(self) -> list:
        if isinstance(self.element_type, FloatType):
            return [bits_to_value(self.element_type.name, b) for b in self.values]
        if self.element_type is i1:
            return [bool(v) for v in self.values]
        return list(self.values)

    def __len__(self) -> int:
        return len(self.values)

    def _render(self, elide_type: bool) -> str:
        et = self.element_type
        if not self.values:
            return f"array<{et}>"
        if isinstance(et, FloatType):
            body = ", ".join(format_float(et.name, b)[0] for b in self.values)
        elif et is i1:
            body = ", ".join("true" if v else "false" for v in self.values)
        else:
            body = ", ".join(map(decimal_text, self.values))
        return f"array<{et}: {body}>"


class DenseResourceAttr(Attribute):
    """`dense_resource<name> : type`; the bytes live in the module's resource section."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type: ShapedType | UnrankedTensorType | UnrankedMemRefType) -> None:
        self.name = name
        self.type = type

    def _render(self, elide_type: bool) -> str:
        return f"dense_resource<{self.name}> : {self.type}"


class OpaqueBuiltinAttr(Attribute):
    """A builtin attribute loom keeps as its canonical text (affine maps and sets, sparse
    elements, strided layouts, `opaque<...>`): printed back exactly as read."""

    __slots__ = ("text", "type")

    def __init__(self, text: str, type: Type | None = None) -> None:
        self.text = text
        self.type = type

    def _render(self, elide_type: bool) -> str:
        return self.text if self.type is None else f"{self.text} : {self.type}"


class DialectAttr(Attribute):
    """An attribute of a dialect loom does not model, kept as its exact text (`#foo.bar<...>`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def _render(self, elide_type: bool) -> str:
        return self.text

    @property
    def dialect(self) -> str:
        body = self.text[1:]
        for i, c in enumerate(body):
            if c in ".<":
                return body[:i]
        return body


# Locations ----------------------------------------------------------------------------------

class Location(Attribute):
    """Base of locations. `loc.body` is the text inside `loc(...)`; `str(loc)` is `loc(body)`,
    the form a location takes as an attribute value."""

    __slots__ = ("_body",)
    _body: str

    @property
    def body(self) -> str:
        try:
            return self._body
        except AttributeError:
            self._body = text = self._render_body()
            return text

    def _render(self, elide_type: bool) -> str:
        return f"loc({self.body})"

    def _render_body(self) -> str:
        raise NotImplementedError


class UnknownLoc(Location):
    __slots__ = ()

    def _render_body(self) -> str:
        return "unknown"


class FileLineColLoc(Location):
    """`"file":line:col`, or a range `"file":line:col to [end_line]:end_col` when `end_col` is set."""

    __slots__ = ("filename", "line", "column", "end_line", "end_column")

    def __init__(self, filename: str, line: int, column: int, end_line: int = -1, end_column: int = -1) -> None:
        self.filename = filename
        self.line = line
        self.column = column
        self.end_line = end_line
        self.end_column = end_column

    def _params(self) -> tuple:
        return (self.filename, self.line, self.column) if self.end_column < 0 else \
            (self.filename, self.line, self.column, self.end_line, self.end_column)

    def _render_body(self) -> str:
        s = f'"{escape_string(self.filename)}":{self.line}:{self.column}'
        if self.end_column >= 0:
            s += f" to :{self.end_column}" if self.end_line == self.line else f" to {self.end_line}:{self.end_column}"
        return s


class NameLoc(Location):
    __slots__ = ("name", "child")

    def __init__(self, name: str, child: Location) -> None:
        self.name = name
        self.child = child

    def _render_body(self) -> str:
        s = f'"{escape_string(self.name)}"'
        if not isinstance(self.child, UnknownLoc):
            s += f"({self.child.body})"
        return s


class CallSiteLoc(Location):
    __slots__ = ("callee", "caller")

    def __init__(self, callee: Location, caller: Location) -> None:
        self.callee = callee
        self.caller = caller

    def _render_body(self) -> str:
        return f"callsite({self.callee.body} at {self.caller.body})"


class FusedLoc(Location):
    __slots__ = ("locations", "metadata")

    def __init__(self, locations: tuple[Location, ...], metadata: Attribute | None = None) -> None:
        self.locations = locations
        self.metadata = metadata

    def _render_body(self) -> str:
        meta = "" if self.metadata is None else f"<{self.metadata}>"
        return f"fused{meta}[{', '.join(loc.body for loc in self.locations)}]"


UNKNOWN_LOC = UnknownLoc()


def location_line_col(loc: Location) -> tuple[str, int, int] | None:
    """The first file:line:col inside `loc`, for error messages."""
    if isinstance(loc, FileLineColLoc):
        return loc.filename, loc.line, loc.column
    if isinstance(loc, NameLoc):
        return location_line_col(loc.child)
    if isinstance(loc, CallSiteLoc):
        return location_line_col(loc.callee)
    if isinstance(loc, FusedLoc):
        for sub in loc.locations:
            found = location_line_col(sub)
            if found:
                return found
    return None
