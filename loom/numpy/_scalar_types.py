"""loom.numpy's dtype names (NumPy's scalar types, ml_dtypes' bfloat16, the abstract scalar
classes), `finfo` / `iinfo`, and the dtype predicates `can_cast`, `isdtype`, `issubdtype`.
"""

from __future__ import annotations

import builtins
from typing import Any

import ml_dtypes
import numpy as np

from loom.frontend.tracing import (
    Tracer,
    result_type,
    user_line,
)
from loom.numpy._util import dtype_of

ndarray = np.ndarray


# ml_dtypes' bfloat16, the same type as jax.numpy.bfloat16 (importing ml_dtypes also makes
# np.dtype("bfloat16") work, so dtype="bfloat16" is accepted wherever a dtype is)
bfloat16 = ml_dtypes.bfloat16


float16, float32, float64 = np.float16, np.float32, np.float64


int8, int16, int32, int64 = np.int8, np.int16, np.int32, np.int64


uint8, uint32 = np.uint8, np.uint32


bool_ = np.bool_


def finfo(dtype: Any) -> Any:
    """Machine limits of a floating-point dtype (`eps`, `max`, `tiny`, ...), bfloat16 included
    (numpy's own `finfo` rejects it), as `jax.numpy.finfo`."""
    if isinstance(dtype, Tracer):
        dtype = dtype.dtype
    return ml_dtypes.finfo(dtype)


def iinfo(dtype: Any) -> np.iinfo:
    """Machine limits of an integer dtype, as `numpy.iinfo`."""
    if isinstance(dtype, Tracer):
        dtype = dtype.dtype
    return np.iinfo(dtype)


def issubdtype(arg1: Any, arg2: Any) -> bool:
    """NumPy's `issubdtype`, with ml_dtypes' bfloat16 and float8 types counted as floating (as
    JAX does)."""
    abstract = isinstance(arg1, type) and issubclass(arg1, np.generic) and arg1.__module__ == "numpy" \
        and arg1 in (np.generic, np.number, np.inexact, np.floating, np.integer, np.signedinteger,
                     np.unsignedinteger, np.complexfloating, np.bool_)
    if not abstract and np.dtype(arg1) in {np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                                                   ml_dtypes.float8_e5m2)}:
        if arg2 in (np.floating, np.inexact, np.number, np.generic):
            return True
        try:
            return np.dtype(arg1) == np.dtype(arg2)
        except TypeError:  # another abstract type: not a supertype of a float
            return False
    return builtins.bool(np.issubdtype(arg1, arg2))


bool = np.bool_  # noqa: A001 - JAX's name


int_ = np.int64


uint = np.uint64


uint16, uint64 = np.uint16, np.uint64


float_ = double = np.float64


single = np.float32


dtype = np.dtype


generic, number, integer, signedinteger, unsignedinteger = (np.generic, np.number, np.integer, np.signedinteger,
                                                            np.unsignedinteger)


inexact, floating, complexfloating = np.inexact, np.floating, np.complexfloating


_ML_FLOATS = {np.dtype(t) for t in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)}


def can_cast(from_: Any, to: Any, casting: str = "safe") -> builtins.bool:
    """Whether `from_` (a dtype or an array) converts to the dtype `to` under the `casting` rule:
    NumPy's `can_cast`, as `jax.numpy.can_cast` is (ml_dtypes registers bfloat16's casts with it)."""
    return builtins.bool(np.can_cast(dtype_of(from_), np.dtype(to), casting))


_KINDS = {
    "bool": lambda d: d.kind == "b",
    "signed integer": lambda d: d.kind == "i",
    "unsigned integer": lambda d: d.kind == "u",
    "integral": lambda d: d.kind in "iu",
    "real floating": lambda d: d.kind == "f" or d in _ML_FLOATS,
    "complex floating": lambda d: d.kind == "c",
    "numeric": lambda d: d.kind in "iufc" or d in _ML_FLOATS,
}


def isdtype(dtype: Any, kind: Any) -> builtins.bool:
    """The array API's `isdtype`: whether `dtype` is of `kind` (a dtype, one of the names 'bool',
    'signed integer', 'unsigned integer', 'integral', 'real floating', 'complex floating',
    'numeric', or a tuple of these); bfloat16 and float8 are real floating, as in JAX."""
    d = np.dtype(dtype)
    for k in kind if isinstance(kind, tuple) else (kind,):
        if isinstance(k, str):
            if k not in _KINDS:
                raise ValueError(f"isdtype: unknown kind {k!r} (at {user_line()}); expected one of {sorted(_KINDS)}")
            if _KINDS[k](d):
                return True
        elif d == np.dtype(k):
            return True
    return False


__all__ = ["bfloat16", "bool", "bool_", "can_cast", "complexfloating", "double", "dtype", "finfo", "float16",
    "float32", "float64", "float_", "floating", "generic", "iinfo", "inexact", "int16", "int32", "int64", "int8",
    "int_", "integer", "isdtype", "issubdtype", "number", "result_type", "signedinteger", "single", "uint",
    "uint16", "uint32", "uint64", "uint8", "unsignedinteger"]
