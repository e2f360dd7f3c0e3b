"""Eager calls of loom.numpy's functions (on plain arrays, outside any trace) under the dtype
policy traced calls follow (loom.frontend.config), so that `lnp.mean(int32_array)` is float32
eagerly as under `loom.jit`:

- unless 64-bit values are enabled, 64-bit array arguments are canonicalized to 32 bits before
  NumPy runs, and 64-bit results (NumPy's integer means, bool sums, ...) to 32 bits after;
- with them enabled, a float64 / complex128 result of array arguments none of which is 64-bit
  or a Python float is made 32-bit: JAX's float results are 64-bit only from such arguments, while
  NumPy widens int32 means and int32 + float32 sums to float64."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from loom.frontend.config import config
from loom.frontend.tracing import canonical_dtype, current_trace


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


def eager_dtype_policy(fn: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` whose eager calls canonicalize arguments and results as described above (traced
    calls are passed through unchanged: the trace canonicalizes)."""
    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if current_trace() is not None:
            return fn(*args, **kwargs)
        if config.enable_x64:
            out = fn(*args, **kwargs)
            narrow = _has_arrays((args, kwargs)) and not _wide_inputs((args, kwargs))
            return _narrow_inexact(out) if narrow else out
        args = tuple(_canonical(a) for a in args)
        kwargs = {k: _canonical(v) for k, v in kwargs.items()}
        return _canonical(fn(*args, **kwargs))
    return wrapped


_WIDE_INEXACT = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.complex128): np.dtype(np.complex64)}


def _wide_inputs(x: Any) -> bool:
    """Whether arguments (nested in tuples, lists and dicts) hold a 64-bit numpy value or a Python
    float or complex number (weakly typed: 64-bit when 64-bit values are enabled)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return np.dtype(x.dtype).itemsize >= 8 and np.dtype(x.dtype).kind in "iufc"
    if isinstance(x, (float, complex)):
        return True
    if isinstance(x, (tuple, list)):
        return any(_wide_inputs(v) for v in x)
    if isinstance(x, dict):
        return any(_wide_inputs(v) for v in x.values())
    return False


def _has_arrays(x: Any) -> bool:
    """Whether arguments hold a numpy value (creation functions, which take none, keep NumPy's
    dtype, the default one)."""
    if isinstance(x, (np.ndarray, np.generic)):
        return True
    if isinstance(x, (tuple, list)):
        return any(_has_arrays(v) for v in x)
    if isinstance(x, dict):
        return any(_has_arrays(v) for v in x.values())
    return False


def _narrow_inexact(x: Any) -> Any:
    """`x` with its float64 / complex128 numpy values made 32-bit."""
    if isinstance(x, (np.ndarray, np.generic)):
        d = _WIDE_INEXACT.get(np.dtype(x.dtype))
        return x if d is None else x.astype(d)
    if type(x) in (tuple, list):
        return type(x)(_narrow_inexact(v) for v in x)
    return x
