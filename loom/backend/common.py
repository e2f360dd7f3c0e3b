"""What both executors share: errors, element types as numpy dtypes, argument checking, and a few
readers of static attributes.

Static attributes are read from their MLIR text (`#stablehlo.dot<...>`, `#stablehlo<comparison_direction LT>`),
which is exactly what both an opaque dialect attribute and a structured one print, so the backend
works whether or not the stablehlo dialect is registered.
"""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Sequence
from typing import Any

import ml_dtypes
import numpy as np

from loom.dialects.stablehlo.types import is_token
from loom.ir.attributes import (
    ArrayAttr,
    Attribute,
    DenseArrayAttr,
    DenseElementsAttr,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    numpy_dtype,
)
from loom.ir.core import Operation
from loom.ir.diagnostics import LoomError
from loom.ir.types import ComplexType, FloatType, IndexType, IntegerType, RankedTensorType, TupleType, Type


class ExecutionError(LoomError):
    """A program that cannot run: a missing rule or kernel, an unsupported op form, a bad argument."""


class MissingRuleError(ExecutionError):
    """No rule for an op in an executor's table; names the op and the executor."""

    def __init__(self, op_name: str, executor: str, detail: str = "") -> None:
        self.op_name = op_name
        self.executor = executor
        extra = f" ({detail})" if detail else ""
        super().__init__(f"the {executor} has no rule for op '{op_name}'{extra}")


# The torch backend's kernel table, `op name -> maker(op) -> Kernel | None` (see torch_kernels). It
# lives here, in a module that does not import torch, so that op families register torch kernels
# without importing torch (their makers import it when first called).
TORCH_KERNELS: dict[str, Any] = {}
# The modules holding op families' torch kernels (`loom.ops.<family>_torch`, which import torch):
# `loom.backend.torch_kernels` imports each when it loads, so `import loom` never imports torch.
TORCH_KERNEL_MODULES: list[str] = []


def torch_kernels_in(module: str) -> None:
    """Name a module whose import registers torch kernels (imported with torch, not before)."""
    TORCH_KERNEL_MODULES.append(module)
    if "loom.backend.torch_kernels" in sys.modules:  # torch already loaded: register now
        importlib.import_module(module)


class ArgumentError(ExecutionError, TypeError):
    """Arguments that do not match the function's signature (count, shape or dtype)."""


# Element types -----------------------------------------------------------------------------------

def dtype_of(t: Type) -> np.dtype:
    """The numpy dtype of a tensor type's elements (or of a scalar element type)."""
    if isinstance(t, RankedTensorType):
        t = t.element_type
    elif hasattr(t, "element_type") and not isinstance(t, TupleType):
        t = t.element_type
    return numpy_dtype(t)


def subbyte_integer(t: Type) -> IntegerType | None:
    """The element type of `t` when it is an integer narrower than a byte (i2, i4, ui2, ui4):
    arrays hold it in int8 / uint8, and every op's result is wrapped back to its own width."""
    et = getattr(t, "element_type", t)
    if isinstance(et, IntegerType) and 1 < et.width < 8:
        return et
    return None


def wrap_integers(x: Any, width: int, signed: bool) -> Any:
    """Values held in int8 / uint8 (numpy or torch) wrapped to `width` bits, two's complement
    for signed types: what an op on i4 gives (7 + 1 is -8)."""
    if signed:
        shift = 8 - width
        return (x << shift) >> shift  # the arithmetic shift extends the sign bit
    return x & ((1 << width) - 1)


def integer_wrap(t: Type) -> tuple[Any, tuple] | None:
    """`(wrap_integers, (width, signed))` for a value of sub-byte integer type, else None."""
    et = subbyte_integer(t)
    return None if et is None else (wrap_integers, (et.width, not et.is_unsigned))


def has_quantized_values(op: Operation) -> bool:
    """Whether an operand or result of `op` is a tensor of quantized elements (a quant dialect
    type, held as its storage integers)."""
    return any(hasattr(getattr(v.type, "element_type", None), "storage_type") for v in (*op.operands, *op.results))


def element_bits(t: Type) -> int:
    """The bits of one element of `t` as StableHLO counts them (`num_bits`: i1 is 1, i4 is 4,
    complex<f32> is 64), whatever the bytes that hold it."""
    et = getattr(t, "element_type", t)
    et = getattr(et, "storage_type", et)  # a quantized type: its storage integers
    if isinstance(et, (IntegerType, FloatType)):
        return et.width
    if isinstance(et, IndexType):
        return 64
    if isinstance(et, ComplexType):
        return 2 * element_bits(et.element_type)
    raise ExecutionError(f"no bit width for element type {et}")


def shape_of(t: Type) -> tuple[int, ...]:
    return tuple(getattr(t, "shape", ()))


def static_operands(op: Any) -> bool:
    """Whether every operand of `op` is a tensor of static shape."""
    return all(getattr(v.type, "has_static_shape", False) for v in op.operands)


def array_text(x: Any) -> str:
    """`float64[3]`, `int32[]`, the way jax names an array's type in error messages."""
    if isinstance(x, (np.ndarray, np.generic)):
        return f"{x.dtype.name}[{','.join(map(str, x.shape))}]"
    return f"{type(x).__name__} {x!r}"[:80]


def _dims_match(expected: tuple[int, ...], got: tuple[int, ...]) -> bool:
    return len(expected) == len(got) and all(e < 0 or e == g for e, g in zip(expected, got))


def check_arguments(args: Sequence[Any], types: Sequence[Type], names: Sequence[str | None],
                    function: str) -> list[np.ndarray]:
    """Arguments as numpy arrays, checked against the function's input types.

    numpy arrays and scalars must match exactly, except for byte order (a big-endian array is
    converted to the machine's order); Python scalars and lists are converted to the expected
    dtype when that loses nothing of their kind (bool -> int -> float -> complex)."""
    if len(args) != len(types):
        raise ArgumentError(f"@{function} takes {len(types)} argument{'s' if len(types) != 1 else ''}, "
                            f"got {len(args)}")
    out = []
    for i, (a, t, name) in enumerate(zip(args, types, names)):
        out.append(check_argument(i, a, t, name, function))
    return out


_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "V": 2, "c": 3}


class Token:
    """The run-time value of `!stablehlo.token`: no data, only an order."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "TOKEN"


TOKEN = Token()


def check_argument(i: int, a: Any, t: Type, name: str | None, function: str) -> np.ndarray:
    if is_token(t):
        if not isinstance(a, Token):
            raise ArgumentError(f"@{function}: {_who(i, name)} expected {t} (loom.host.TOKEN), got {array_text(a)}")
        return a
    if isinstance(t, TupleType):
        if not isinstance(a, (tuple, list)) or len(a) != len(t.types):
            raise _arg_error(i, name, function, t, a)
        return tuple(check_argument(i, x, sub, name, function) for x, sub in zip(a, t.types))
    expected_dtype = dtype_of(t)
    expected_shape = shape_of(t)
    if not isinstance(a, (np.ndarray, np.generic)):
        try:
            natural = np.asarray(a)
        except Exception:
            raise _arg_error(i, name, function, t, a) from None
        if natural.dtype.kind not in _KIND_ORDER or \
                _KIND_ORDER[natural.dtype.kind] > _KIND_ORDER.get(expected_dtype.kind, 2):
            raise _arg_error(i, name, function, t, natural)
        with np.errstate(over="ignore", invalid="ignore"):
            a = natural.astype(expected_dtype)
        if expected_dtype.kind in "biu" and not np.array_equal(a, natural):  # wrapped: 300 as ui8 is 44
            raise ArgumentError(f"@{function}: {_who(i, name)} expected {t}, got values out of its range "
                                f"({array_text(natural)})")
    elif not a.dtype.isnative:  # the same values in the machine's byte order, which kernels assume
        a = a.astype(a.dtype.newbyteorder("="))
    narrow = subbyte_integer(t)
    if narrow is not None and a.dtype in _SUBBYTE_DTYPES and \
            _SUBBYTE_DTYPES[a.dtype] == (narrow.width, not narrow.is_unsigned):
        a = a.astype(expected_dtype)  # ml_dtypes' int4 (what jax gives) into its int8 storage
    if a.dtype != expected_dtype or not _dims_match(expected_shape, a.shape):
        raise _arg_error(i, name, function, t, a)
    if narrow is not None and not np.array_equal(wrap_integers(a, narrow.width, not narrow.is_unsigned), a):
        raise ArgumentError(f"@{function}: {_who(i, name)} expected {t}, got values out of its range "
                            f"({array_text(a)})")
    return np.asarray(a)


# ml_dtypes' sub-byte integer dtypes: (width, signed)
_SUBBYTE_DTYPES = {np.dtype(ml_dtypes.int2): (2, True), np.dtype(ml_dtypes.int4): (4, True),
                   np.dtype(ml_dtypes.uint2): (2, False), np.dtype(ml_dtypes.uint4): (4, False)}


def _arg_error(i: int, name: str | None, function: str, t: Type, got: Any) -> ArgumentError:
    return ArgumentError(f"@{function}: {_who(i, name)} expected {t}, got {array_text(got)}")


def _who(i: int, name: str | None) -> str:
    return f"argument {i}" + (f" ('{name}')" if name else "")


def argument_names(func: Operation) -> list[str | None]:
    """Names of a function's arguments where the program records them (`jax.arg_info`, or a
    name location on the block argument)."""
    from loom.ir.attributes import NameLoc
    n = len(func.properties["function_type"].value.inputs)
    names: list[str | None] = [None] * n
    arg_attrs = func.get_attr("arg_attrs")
    if isinstance(arg_attrs, ArrayAttr):
        for i, d in enumerate(arg_attrs):
            if i < n and isinstance(d, DictionaryAttr):
                info = d.get_value("jax.arg_info")
                if isinstance(info, StringAttr):
                    names[i] = info.value
    if func.regions and func.regions[0].blocks:
        for i, arg in enumerate(func.regions[0].blocks[0].args[:n]):
            if names[i] is None and isinstance(arg.location, NameLoc):
                names[i] = arg.location.name
    return names


# Static attributes ----------------------------------------------------------------------------

def ints(attr: Attribute | None, default: Sequence[int] | None = None) -> tuple[int, ...]:
    """A list of integers from `array<i64: ...>`, a dense elements attribute, an array of
    integers, or the text `[1, 2]`."""
    if attr is None:
        if default is None:
            raise ExecutionError("missing integer-list attribute")
        return tuple(default)
    if isinstance(attr, DenseArrayAttr):
        return tuple(int(v) for v in attr.to_list())
    if isinstance(attr, DenseElementsAttr):
        return tuple(int(v) for v in attr.to_numpy().reshape(-1).tolist())
    if isinstance(attr, ArrayAttr):
        return tuple(int(e.value) for e in attr)
    if isinstance(attr, IntegerAttr):
        return (int(attr.value),)
    values = getattr(attr, "values", None)  # structured attribute classes of other dialects
    if values is not None:
        return tuple(int(v) for v in values)
    return tuple(int(v) for v in re.findall(r"-?\d+", str(attr)))


def bools(attr: Attribute | None, n: int) -> tuple[bool, ...]:
    if attr is None:
        return (False,) * n
    if isinstance(attr, DenseArrayAttr):
        return tuple(bool(v) for v in attr.to_list())
    if isinstance(attr, DenseElementsAttr):
        return tuple(bool(v) for v in attr.to_numpy().reshape(-1).tolist())
    return tuple(t == "true" for t in re.findall(r"true|false", str(attr)))


def integer(attr: Attribute | None, default: int | None = None) -> int:
    if attr is None:
        if default is None:
            raise ExecutionError("missing integer attribute")
        return default
    if isinstance(attr, IntegerAttr):
        return int(attr.value)
    value = getattr(attr, "value", None)
    if isinstance(value, int):
        return value
    return int(re.search(r"-?\d+", str(attr)).group(0))


def boolean(attr: Attribute | None, default: bool = False) -> bool:
    if attr is None:
        return default
    if isinstance(attr, IntegerAttr):
        return bool(attr.value)
    return str(attr).startswith("true")


def floating(attr: Attribute | None) -> float:
    if isinstance(attr, FloatAttr):
        return attr.value
    return float(str(attr).split(":")[0])


def string(attr: Attribute | None, default: str = "") -> str:
    if attr is None:
        return default
    if isinstance(attr, StringAttr):
        return attr.value
    return str(attr).strip('"')


_ENUM = re.compile(r"#\w+(?:\.\w+)?<\s*(?:\w+\s+)?([A-Za-z_0-9]+)\s*>")


def enum(attr: Attribute | None, default: str = "") -> str:
    """The case of an enum attribute: `#stablehlo<comparison_direction LT>` -> `LT`."""
    if attr is None:
        return default
    text = str(attr)
    m = _ENUM.fullmatch(text.strip())
    if m:
        return m.group(1)
    if isinstance(attr, StringAttr):
        return attr.value
    return text.strip().split()[-1].rstrip(">")


_FIELD = re.compile(r"(\w+)\s*=\s*(\[[^\]]*\]|-?\d+)")


def struct_fields(attr: Attribute | None) -> dict[str, Any]:
    """Fields of `#stablehlo.dot<a = [1], b = 2>`-style attributes: lists of ints or ints."""
    if attr is None:
        return {}
    fields: dict[str, Any] = {}
    for key, value in _FIELD.findall(str(attr)):
        if value.startswith("["):
            fields[key] = tuple(int(v) for v in re.findall(r"-?\d+", value))
        else:
            fields[key] = int(value)
    return fields


class ConvDims:
    """Dimension numbers of a convolution, as in `#stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>`."""

    def __init__(self, attr: Attribute) -> None:
        text = str(attr)
        m = re.search(r"\[([^\]]*)\]x\[([^\]]*)\]->\[([^\]]*)\]", text)
        if m:
            lhs, rhs, out = ([s.strip() for s in g.split(",")] for g in m.groups())
            self.input_batch = lhs.index("b")
            self.input_feature = lhs.index("f")
            self.input_spatial = _spatial(lhs)
            self.kernel_input_feature = rhs.index("i")
            self.kernel_output_feature = rhs.index("o")
            self.kernel_spatial = _spatial(rhs)
            self.output_batch = out.index("b")
            self.output_feature = out.index("f")
            self.output_spatial = _spatial(out)
            return
        f = struct_fields(attr)  # the long form: `input_batch_dimension = 0, ...`
        self.input_batch = f["input_batch_dimension"]
        self.input_feature = f["input_feature_dimension"]
        self.input_spatial = f.get("input_spatial_dimensions", ())
        self.kernel_input_feature = f["kernel_input_feature_dimension"]
        self.kernel_output_feature = f["kernel_output_feature_dimension"]
        self.kernel_spatial = f.get("kernel_spatial_dimensions", ())
        self.output_batch = f["output_batch_dimension"]
        self.output_feature = f["output_feature_dimension"]
        self.output_spatial = f.get("output_spatial_dimensions", ())


def _spatial(layout: list[str]) -> tuple[int, ...]:
    pos = {}
    for i, s in enumerate(layout):
        if s.isdigit():
            pos[int(s)] = i
    return tuple(pos[k] for k in sorted(pos))


def padding_pairs(attr: Attribute | None, rank: int) -> list[tuple[int, int]]:
    if attr is None:
        return [(0, 0)] * rank
    flat = ints(attr)
    return [(flat[2 * i], flat[2 * i + 1]) for i in range(len(flat) // 2)]


def dense_value(attr: Attribute) -> np.ndarray:
    """The value of a constant's `value` attribute as a numpy array."""
    if isinstance(attr, DenseElementsAttr):
        return attr.to_numpy()
    to_numpy = getattr(attr, "to_numpy", None)
    if to_numpy is not None:
        return to_numpy()
    raise ExecutionError(f"cannot read constant value {str(attr)[:80]}")


def result_types(op: Operation) -> list[Type]:
    return [r.type for r in op.results]
