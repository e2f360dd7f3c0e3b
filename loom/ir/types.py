"""Builtin types: immutable, interned, each printing itself exactly as MLIR does."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import ml_dtypes
import numpy as np

from loom.ir.interning import Interned

if TYPE_CHECKING:
    from loom.ir.attributes import Attribute

DYNAMIC = -1  # a `?` dimension


class Type(metaclass=Interned):
    """Base of all types. Subclasses set `__slots__` and implement `_render`."""

    __slots__ = ("_text", "__weakref__")
    _text: str
    _canonical_args = False  # True where constructor arguments have no defaults or normalisation

    def __str__(self) -> str:
        try:
            return self._text
        except AttributeError:
            self._text = text = self._render()
            return text

    def __repr__(self) -> str:
        return f"Type({self})"

    def _render(self) -> str:
        raise NotImplementedError

    def __reduce__(self):  # interned objects pickle by value
        return (type(self), self._params())

    def _params(self) -> tuple:
        return tuple(getattr(self, s) for s in type(self).__slots__)


class IntegerType(Type):
    """`iN` (signless), `siN` (signed) or `uiN` (unsigned), any width."""

    __slots__ = ("width", "signedness")
    SIGNLESS, SIGNED, UNSIGNED = "", "s", "u"

    def __init__(self, width: int, signedness: str = "") -> None:
        self.width = width
        self.signedness = signedness

    def _render(self) -> str:
        return f"{self.signedness}i{self.width}"

    @property
    def is_signless(self) -> bool:
        return self.signedness == ""

    @property
    def is_unsigned(self) -> bool:
        return self.signedness == "u"

    def normalize(self, value: int) -> int:
        """Wrap `value` into this type's range (signless and signed wrap as two's complement)."""
        w = self.width
        if w == 0:
            return 0
        value &= (1 << w) - 1
        if self.signedness != "u" and value >> (w - 1):
            value -= 1 << w
        return value


class IndexType(Type):
    """`index`: a target-sized signed integer (64 bits here)."""

    __slots__ = ()
    width = 64

    def _render(self) -> str:
        return "index"

    def normalize(self, value: int) -> int:
        value &= (1 << 64) - 1
        return value - (1 << 64) if value >> 63 else value


class NoneType(Type):
    __slots__ = ()

    def _render(self) -> str:
        return "none"


# name -> (storage bits, precision in bits incl. the implicit one, numpy dtype or None)
FLOAT_KINDS: dict[str, tuple[int, int, Any]] = {
    "f16": (16, 11, np.float16),
    "bf16": (16, 8, ml_dtypes.bfloat16),
    "f32": (32, 24, np.float32),
    "f64": (64, 53, np.float64),
    "f80": (80, 64, None),
    "f128": (128, 113, None),
    "tf32": (19, 11, None),
    "f8E5M2": (8, 3, ml_dtypes.float8_e5m2),
    "f8E4M3": (8, 4, ml_dtypes.float8_e4m3),
    "f8E4M3FN": (8, 4, ml_dtypes.float8_e4m3fn),
    "f8E5M2FNUZ": (8, 3, ml_dtypes.float8_e5m2fnuz),
    "f8E4M3FNUZ": (8, 4, ml_dtypes.float8_e4m3fnuz),
    "f8E4M3B11FNUZ": (8, 4, ml_dtypes.float8_e4m3b11fnuz),
    "f8E3M4": (8, 5, ml_dtypes.float8_e3m4),
    "f8E8M0FNU": (8, 1, ml_dtypes.float8_e8m0fnu),
    "f6E2M3FN": (6, 4, ml_dtypes.float6_e2m3fn),
    "f6E3M2FN": (6, 3, ml_dtypes.float6_e3m2fn),
    "f4E2M1FN": (4, 2, ml_dtypes.float4_e2m1fn),
}


class FloatType(Type):
    """A floating-point type named as in MLIR (`f32`, `bf16`, `f8E4M3FN`, ...)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        if name not in FLOAT_KINDS:
            raise ValueError(f"unknown float type {name!r}")
        self.name = name

    def _render(self) -> str:
        return self.name

    @property
    def width(self) -> int:
        return FLOAT_KINDS[self.name][0]

    @property
    def precision(self) -> int:
        return FLOAT_KINDS[self.name][1]

    @property
    def dtype(self) -> Any:
        return FLOAT_KINDS[self.name][2]


class ComplexType(Type):
    __slots__ = ("element_type",)

    def __init__(self, element_type: Type) -> None:
        self.element_type = element_type

    def _render(self) -> str:
        return f"complex<{self.element_type}>"


class TupleType(Type):
    __slots__ = ("types",)

    def __init__(self, types: tuple[Type, ...]) -> None:
        self.types = types

    def _render(self) -> str:
        return f"tuple<{', '.join(map(str, self.types))}>"


class FunctionType(Type):
    __slots__ = ("inputs", "results")

    def __init__(self, inputs: tuple[Type, ...], results: tuple[Type, ...]) -> None:
        self.inputs = inputs
        self.results = results

    def _render(self) -> str:
        return function_type_text(self.inputs, self.results)


def function_type_text(inputs: tuple[Type, ...], results: tuple[Type, ...]) -> str:
    ins = ", ".join(map(str, inputs))
    if len(results) == 1 and not isinstance(results[0], FunctionType):
        return f"({ins}) -> {results[0]}"
    return f"({ins}) -> ({', '.join(map(str, results))})"


def _dims_text(shape: tuple[int, ...], scalable: tuple[bool, ...] = ()) -> str:
    parts = []
    for i, d in enumerate(shape):
        s = "?" if d == DYNAMIC else str(d)
        if scalable and scalable[i]:
            s = f"[{s}]"
        parts.append(s + "x")
    return "".join(parts)


class ShapedType(Type):
    """Common accessors of tensor, memref and vector types."""

    __slots__ = ()
    shape: tuple[int, ...]
    element_type: Type

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def has_static_shape(self) -> bool:
        return DYNAMIC not in self.shape

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n


class RankedTensorType(ShapedType):
    __slots__ = ("shape", "element_type", "encoding")

    def __init__(self, shape: tuple[int, ...], element_type: Type, encoding: Attribute | None = None) -> None:
        self.shape = shape
        self.element_type = element_type
        self.encoding = encoding

    def _render(self) -> str:
        enc = "" if self.encoding is None else f", {self.encoding}"
        return f"tensor<{_dims_text(self.shape)}{self.element_type}{enc}>"


class UnrankedTensorType(Type):
    __slots__ = ("element_type",)

    def __init__(self, element_type: Type) -> None:
        self.element_type = element_type

    def _render(self) -> str:
        return f"tensor<*x{self.element_type}>"


class MemRefType(ShapedType):
    __slots__ = ("shape", "element_type", "layout", "memory_space")

    def __init__(self, shape: tuple[int, ...], element_type: Type, layout: Attribute | None = None,
                 memory_space: Attribute | None = None) -> None:
        self.shape = shape
        self.element_type = element_type
        self.layout = layout
        self.memory_space = memory_space

    def _render(self) -> str:
        from loom.ir.attributes import attribute_text
        s = f"memref<{_dims_text(self.shape)}{self.element_type}"
        if self.layout is not None:
            s += ", " + attribute_text(self.layout, elide_type=True)
        if self.memory_space is not None:
            s += ", " + attribute_text(self.memory_space, elide_type=True)
        return s + ">"


class UnrankedMemRefType(Type):
    __slots__ = ("element_type", "memory_space")

    def __init__(self, element_type: Type, memory_space: Attribute | None = None) -> None:
        self.element_type = element_type
        self.memory_space = memory_space

    def _render(self) -> str:
        from loom.ir.attributes import attribute_text
        ms = "" if self.memory_space is None else ", " + attribute_text(self.memory_space, elide_type=True)
        return f"memref<*x{self.element_type}{ms}>"


class VectorType(ShapedType):
    __slots__ = ("shape", "element_type", "scalable")

    def __init__(self, shape: tuple[int, ...], element_type: Type, scalable: tuple[bool, ...] = ()) -> None:
        self.shape = shape
        self.element_type = element_type
        self.scalable = scalable if any(scalable) else ()

    def _render(self) -> str:
        return f"vector<{_dims_text(self.shape, self.scalable)}{self.element_type}>"


class OpaqueType(Type):
    """Builtin `opaque<"dialect", "data">`."""

    __slots__ = ("dialect", "data")

    def __init__(self, dialect: str, data: str) -> None:
        self.dialect = dialect
        self.data = data

    def _render(self) -> str:
        from loom.ir.attributes import escape_string
        return f'opaque<"{escape_string(self.dialect)}", "{escape_string(self.data)}">'


class DialectType(Type):
    """A type of a dialect loom does not model, kept as its exact text (`!foo.bar<1, [2]>`)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def _render(self) -> str:
        return self.text

    @property
    def dialect(self) -> str:
        body = self.text[1:]
        for i, c in enumerate(body):
            if c in ".<":
                return body[:i]
        return body


# Shorthands used all over loom.
i1 = IntegerType(1)
i8 = IntegerType(8)
i16 = IntegerType(16)
i32 = IntegerType(32)
i64 = IntegerType(64)
index = IndexType()
none = NoneType()
f16 = FloatType("f16")
bf16 = FloatType("bf16")
f32 = FloatType("f32")
f64 = FloatType("f64")


def tensor(shape, element_type: Type) -> RankedTensorType:
    return RankedTensorType(tuple(shape), element_type, None)
