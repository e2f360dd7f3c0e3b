"""Eager calls of loom.numpy's functions (on plain arrays, outside any trace) run as under
`loom.jit`, as JAX's eager calls run the same code as its jitted ones: the function is traced
with its numpy array arguments as inputs (everything else, Python scalars included, is part of
the program, as a closure's values are), compiled once per signature and run. Dtypes, promotion,
values and errors are therefore those of a jitted call (loom.frontend.config's dtype policy:
64-bit values are 32-bit unless enable_x64).

A call whose other array arguments must be concrete (the `q` of `quantile`, a `repeats` array)
is traced with its first array as the only input, the others part of the program. Calls that
tracing cannot serve run NumPy instead, under the same dtype policy: calls with no
array argument (creation functions: `zeros`, `arange`; their dtypes are JAX's defaults), with an
array loom does not trace (complex numbers, strings, device arrays), calls that need concrete
values (`nonzero`, `unique` without `size=`: they raise `TracerError` when traced, as JAX's
need concrete arrays), and functions whose result is not an array (`shape`, `result_type`)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np

from loom.frontend.config import config
from loom.frontend.jit import Jitted
from loom.frontend.tracing import Tracer, TracerError, canonical_dtype, current_trace, ir_element_type


class _NotAnArrayFunction(Exception):
    """The traced function returned something that is not an array (a shape, a dtype)."""


_NUMPY = object()  # the cache's mark for calls that run NumPy
_FIRST_TRACED = object()  # ... and for calls traced with their first array only as an input
_CACHE: dict[Hashable, Any] = {}  # (function, static arguments, x64) -> Jitted, _FIRST_TRACED or _NUMPY
_CACHE_SIZE = 4096


def _split(x: Any, arrays: list[np.ndarray]) -> Any:
    """`x` (nested tuples, lists and dicts) with its numpy values appended to `arrays` and
    replaced by their index there; raises `_NotTraceable` for an array loom cannot trace."""
    if isinstance(x, (np.ndarray, np.generic)):
        if not _traceable(x.dtype):
            raise _NotTraceable
        arrays.append(np.asarray(x))
        return _Slot(len(arrays) - 1)
    if type(x) in (tuple, list):
        return type(x)(_split(v, arrays) for v in x)
    if type(x) is dict:
        return {k: _split(v, arrays) for k, v in x.items()}
    if not isinstance(x, type) and (hasattr(x, "__array__") or hasattr(x, "__array_namespace__")):
        # a device array, a tracer (numpy's scalar types, static dtypes, have `__array__` too)
        raise _NotTraceable
    return x


class _NotTraceable(Exception):
    """An argument is an array loom does not trace (or a device array): the call runs NumPy."""


class _Slot(int):
    """The index of an array argument in the traced function's inputs."""


def _fill(x: Any, values: list[Any]) -> Any:
    if isinstance(x, _Slot):
        return values[x]
    if type(x) in (tuple, list):
        return type(x)(_fill(v, values) for v in x)
    if type(x) is dict:
        return {k: _fill(v, values) for k, v in x.items()}
    return x


def _key(x: Any) -> Hashable:
    """A hashable key of a static structure; Python scalars keyed with their type (1, 1.0 and True
    are equal in Python, not in JAX's promotion)."""
    if type(x) in (tuple, list):
        return (type(x), tuple(_key(v) for v in x))
    if type(x) is dict:
        return (dict, tuple((k, _key(v)) for k, v in x.items()))
    if isinstance(x, np.ndarray):
        raise TypeError("an array is not a static key")
    hash(x)
    return (type(x), x)


def _traceable(dtype: np.dtype) -> bool:
    try:
        ir_element_type(dtype)
    except TypeError:
        return False
    return True


def _traced(fn: Callable[..., Any], static: tuple) -> Jitted:
    def call(*arrays: Any) -> Any:
        args, kwargs = _fill(static, list(arrays))
        out = fn(*args, **kwargs)
        leaves = out if type(out) in (tuple, list) else [out]
        if not leaves or not all(isinstance(v, Tracer) for v in leaves):
            raise _NotAnArrayFunction
        return out
    return Jitted(functools.wraps(fn)(call))


def run_eager_as_jitted(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` whose eager calls run as jitted ones (see above); traced calls are passed through."""
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_trace() is not None:
            return fn(*args, **kwargs)
        arrays: list[np.ndarray] = []
        try:
            static = _split((args, kwargs), arrays)
        except _NotTraceable:
            return _numpy_call(fn, args, kwargs)
        if not arrays:
            return _numpy_call(fn, args, kwargs)
        try:
            key: Hashable = (fn, _key(static), config.enable_x64)
        except TypeError:  # an unhashable static argument: traced, not cached
            key = None
        jitted = _CACHE.get(key) if key is not None else None
        if jitted is None:
            jitted = _traced(fn, static)
        if isinstance(jitted, Jitted):
            try:
                out = jitted(*arrays)
            except (TracerError, _NotAnArrayFunction):
                jitted = _FIRST_TRACED if len(arrays) > 1 else _NUMPY
            else:
                if key is not None:
                    _remember(key, jitted)
                return out
        if jitted is _FIRST_TRACED:
            # the other arrays as concrete values (the `q` of a quantile, a `repeats` array): only
            # the first is an input, the others are part of the program (not cached: they are values)
            try:
                out = _traced(fn, _fill(static, [_Slot(0), *arrays[1:]]))(arrays[0])
            except (TracerError, _NotAnArrayFunction):
                jitted = _NUMPY
            else:
                if key is not None:
                    _remember(key, _FIRST_TRACED)
                return out
        if key is not None:
            _remember(key, _NUMPY)
        return _numpy_call(fn, args, kwargs)
    return wrapped


def _remember(key: Hashable, value: Any) -> None:
    if len(_CACHE) >= _CACHE_SIZE:
        _CACHE.clear()
    _CACHE[key] = value


def _numpy_call(fn: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
    """`fn` run on NumPy, its 64-bit arguments and results made 32-bit unless enable_x64."""
    if config.enable_x64:
        return fn(*args, **kwargs)
    args = tuple(_canonical(a) for a in args)
    kwargs = {k: _canonical(v) for k, v in kwargs.items()}
    return _canonical(fn(*args, **kwargs))


def _canonical(x: Any) -> Any:
    """`x` with its numpy arrays (in tuples and lists too) of 64-bit dtypes made 32-bit."""
    if isinstance(x, (np.ndarray, np.generic)):
        d = canonical_dtype(x.dtype)
        return x if d == x.dtype else x.astype(d)
    if type(x) in (tuple, list):
        return type(x)(_canonical(v) for v in x)
    if isinstance(x, tuple) and hasattr(x, "_fields"):  # a NamedTuple (unique_all, ...)
        return type(x)(*(_canonical(v) for v in x))
    return x
