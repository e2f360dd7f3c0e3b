"""`loom.nn`: the activation and normalization functions of `jax.nn`, built from `loom.numpy` so
they work on tracers inside `loom.jit` and on numpy arrays eagerly."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

import loom.numpy as lnp
from loom.dialects import stablehlo
from loom.frontend.custom_derivatives import custom_jvp
from loom.frontend.tracing import Tracer, is_floating, user_line
from loom.lax.ops import stop_gradient

ArrayLike = Any
Axis = int | tuple[int, ...] | None


def _float(x: ArrayLike) -> Any:
    """`x` as a floating array (float32 for ints, bools and Python scalars)."""
    if isinstance(x, Tracer):
        return x if is_floating(x.dtype) else lnp.astype(x, np.float32)
    arr = np.asarray(x)
    return arr if is_floating(arr.dtype) else arr.astype(np.float32)


@custom_jvp
def relu(x: ArrayLike) -> Any:
    """`max(x, 0)`, with JAX's derivative: 1 where x > 0, else 0 (at 0 too, where the derivative
    of `maximum` would split the tie in halves)."""
    return lnp.maximum(x, 0)


relu.defjvps(lambda g, ans, x: lnp.where(lnp.greater(x, 0), g, lnp.zeros_like(g)))


def sigmoid(x: ArrayLike) -> Any:
    """The logistic function `1 / (1 + exp(-x))`."""
    x = _float(x)
    if isinstance(x, Tracer):
        return Tracer(stablehlo.logistic(x.trace.emit(), x.value), x.trace, x.weak)
    with np.errstate(over="ignore"):
        return (1 / (1 + np.exp(-x))).astype(x.dtype)


def silu(x: ArrayLike) -> Any:
    """`x * sigmoid(x)` (swish)."""
    x = _float(x)
    return lnp.multiply(x, sigmoid(x))


swish = silu


def softplus(x: ArrayLike) -> Any:
    """`log(1 + exp(x))`, stably (as `logaddexp(x, 0)`)."""
    x = _float(x)
    return lnp.logaddexp(x, lnp.zeros_like(x))


def log_sigmoid(x: ArrayLike) -> Any:
    """`log(sigmoid(x)) = -softplus(-x)`."""
    return lnp.negative(softplus(lnp.negative(_float(x))))


def gelu(x: ArrayLike, approximate: bool = True) -> Any:
    """The Gaussian error linear unit; `approximate=True` (the default, as JAX) uses the tanh
    formula, `False` the exact one `x * (1 + erf(x / sqrt(2))) / 2`."""
    x = _float(x)
    if approximate:
        c = math.sqrt(2 / math.pi)
        inner = lnp.multiply(c, lnp.add(x, lnp.multiply(0.044715, lnp.multiply(x, lnp.multiply(x, x)))))
        return lnp.multiply(lnp.multiply(0.5, x), lnp.add(1.0, lnp.tanh(inner)))
    return lnp.multiply(lnp.multiply(0.5, x), lnp.add(1.0, _erf(lnp.multiply(x, 1 / math.sqrt(2)))))


def _erf(x: Any) -> Any:
    """erf from the Chebyshev fit of erfc in Numerical Recipes (fractional error < 1.2e-7)."""
    z = lnp.abs(x)
    t = lnp.divide(1.0, lnp.add(1.0, lnp.multiply(0.5, z)))
    coeffs = [-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806, 0.27886807, -1.13520398, 1.48851587,
              -0.82215223, 0.17087277]
    poly = coeffs[-1]
    for c in reversed(coeffs[:-1]):
        poly = lnp.add(c, lnp.multiply(t, poly))
    erfc = lnp.multiply(t, lnp.exp(lnp.add(lnp.negative(lnp.multiply(z, z)), poly)))
    pos = lnp.subtract(1.0, erfc)
    return lnp.where(lnp.less(x, 0), lnp.negative(pos), pos)


def logsumexp(x: ArrayLike, axis: Axis = None, keepdims: bool = False) -> Any:
    """`log(sum(exp(x), axis))`, computed stably (the maximum is subtracted first)."""
    x = _float(x)
    # The shift only steadies the exponentials; its derivative cancels, so none is taken (as JAX).
    m = lnp.max(x, axis=axis, keepdims=True)
    m = stop_gradient(lnp.where(lnp.isfinite(m), m, lnp.zeros_like(m)))
    s = lnp.sum(lnp.exp(lnp.subtract(x, m)), axis=axis, keepdims=True)
    out = lnp.add(lnp.log(s), m)
    if not keepdims:
        axes = tuple(range(lnp.ndim(x))) if axis is None else axis
        out = lnp.squeeze(out, axes)
    return out


def log_softmax(x: ArrayLike, axis: Axis = -1) -> Any:
    """`x - logsumexp(x, axis)`."""
    x = _float(x)
    shifted = lnp.subtract(x, stop_gradient(lnp.max(x, axis=axis, keepdims=True)))
    return lnp.subtract(shifted, lnp.log(lnp.sum(lnp.exp(shifted), axis=axis, keepdims=True)))


def softmax(x: ArrayLike, axis: Axis = -1) -> Any:
    """`exp(x) / sum(exp(x), axis)`, computed stably."""
    x = _float(x)
    e = lnp.exp(lnp.subtract(x, stop_gradient(lnp.max(x, axis=axis, keepdims=True))))
    return lnp.divide(e, lnp.sum(e, axis=axis, keepdims=True))


def one_hot(x: ArrayLike, num_classes: int, dtype: Any = np.float32, axis: int = -1) -> Any:
    """`x` (integers) as one-hot vectors of length `num_classes` along a new `axis`; out-of-range
    entries give all zeros, as JAX."""
    if not isinstance(num_classes, (int, np.integer)):
        raise TypeError(f"one_hot: num_classes must be a Python int, got {type(num_classes).__name__} "
                        f"(at {user_line()})")
    x_e = lnp.expand_dims(x, axis)
    nd = lnp.ndim(x_e)
    ax = axis % nd
    classes = np.arange(num_classes, dtype=np.int32).reshape([num_classes if i == ax else 1 for i in range(nd)])
    if not isinstance(x_e, Tracer):
        return (np.asarray(x_e) == classes).astype(dtype)
    return lnp.astype(lnp.equal(x_e, classes), dtype)


__all__ = ["gelu", "log_sigmoid", "log_softmax", "logsumexp", "one_hot", "relu", "sigmoid", "silu", "softmax",
           "softplus", "swish"]
