"""Checks shared by the tests that hold loom's functions against JAX's: the same call eagerly on
numpy arrays (where loom.numpy runs NumPy, whose dtypes may be wider) and under loom.jit (JAX's
dtypes exactly), values to a tolerance (integers and booleans exactly)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

import loom


def leaves(x: Any) -> list:
    return list(x) if isinstance(x, (tuple, list)) else [x]


def check(name: str, got: Any, want: Any, tol: float = 2e-5, same_dtype: bool = True) -> None:
    """`got` as `want`: as many results, the same shapes, dtypes (their kinds only unless
    `same_dtype`), values within `tol` (NaN where NaN)."""
    got, want = leaves(got), leaves(want)
    assert len(got) == len(want), name
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert g.shape == w.shape, (name, g.shape, w.shape)
        assert g.dtype == w.dtype if same_dtype else g.dtype.kind == w.dtype.kind, (name, g.dtype, w.dtype)
        if g.dtype.kind in "biu":
            np.testing.assert_array_equal(g, w, err_msg=name)
        else:
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol, equal_nan=True, err_msg=name)


def check_call(name: str, fn: Callable, jax_fn: Callable, args: tuple, kwargs: dict, tol: float = 2e-5) -> None:
    """`fn(*args, **kwargs)` against `jax_fn(...)`, eagerly and under loom.jit (the numpy arrays
    among `args` traced, everything else static)."""
    want = jax_fn(*args, **kwargs)
    check(name, fn(*args, **kwargs), want, tol, same_dtype=False)
    arrays = [i for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    if not arrays:
        return

    def traced(*xs: Any) -> Any:
        full = list(args)
        for i, x in zip(arrays, xs):
            full[i] = x
        return fn(*full, **kwargs)

    check(name, loom.jit(traced)(*[args[i] for i in arrays]), want, tol)


def check_gradient(name: str, args: tuple, kwargs: dict) -> None:
    """loom.grad of a NaN-masked sum of squares of `loom.numpy.<name>(*args, **kwargs)` (with
    respect to the first argument) against jax.grad of the same through jax.numpy."""
    import jax
    import jax.numpy as jnp

    import loom.numpy as lnp

    def loss(np_: Any, x: Any) -> Any:
        out = getattr(np_, name)(x, *args[1:], **kwargs)
        return np_.sum(np_.where(np_.isnan(out), 0.0, out) ** 2)

    got = loom.jit(loom.grad(lambda x: loss(lnp, x)))(args[0])
    want = jax.jit(jax.grad(lambda x: loss(jnp, x)))(args[0])
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-4, atol=1e-5, equal_nan=True)
