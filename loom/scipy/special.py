"""`loom.scipy.special`: JAX's `jax.scipy.special` functions of everyday ML, composed from
`loom.numpy` and `loom.lax` (derivatives as JAX's: `gammaln`'s is digamma; `xlogy(0, y)` is 0
and so is its derivative in x there)."""

from __future__ import annotations

from typing import Any

import numpy as np

import loom.numpy as lnp
from loom import lax
from loom.frontend.custom_derivatives import custom_jvp
from loom.nn import logsumexp as _logsumexp
from loom.nn import sigmoid
from loom.numpy import _util


def logsumexp(a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False) -> Any:
    """`log(sum(b * exp(a), axis))`, stably; with `return_sign`, (log |sum|, sign of the sum)."""
    a = _util.as_floating(a)
    if b is None and not return_sign:
        return _logsumexp(a, axis=axis, keepdims=keepdims)
    m = lnp.max(a, axis=axis, keepdims=True)
    m = lax.stop_gradient(lnp.where(lnp.isfinite(m), m, lnp.zeros_like(m)))
    e = lnp.exp(a - m)
    if b is not None:
        e = e * b
    s = lnp.sum(e, axis=axis, keepdims=keepdims)
    m = m if keepdims else lnp.squeeze(m, tuple(range(lnp.ndim(a))) if axis is None else axis)
    out = lnp.log(lnp.abs(s)) + m
    if return_sign:
        return out, lnp.sign(s)
    return lnp.where(s < 0, np.float32(np.nan), out)  # the log of a negative sum (JAX's NaN, no derivative)


def expit(x: Any) -> Any:
    """The logistic sigmoid 1 / (1 + exp(-x))."""
    return sigmoid(_util.as_floating(x))


def logit(p: Any) -> Any:
    """log(p / (1 - p)), the inverse of `expit`."""
    p = _util.as_floating(p)
    return lnp.log(p) - lnp.log1p(-p)


def erf(x: Any) -> Any:
    """The error function."""
    return lax.erf(_util.as_floating(x))


def erfc(x: Any) -> Any:
    """1 - erf(x), accurate for large x."""
    return lax.erfc(_util.as_floating(x))


def erfinv(x: Any) -> Any:
    """The inverse of `erf` on (-1, 1)."""
    return lax.erf_inv(_util.as_floating(x))


def gammaln(x: Any) -> Any:
    """log |Gamma(x)|."""
    return lax.lgamma(_util.as_floating(x))


def digamma(x: Any) -> Any:
    """The logarithmic derivative of Gamma."""
    return lax.digamma(_util.as_floating(x))


@custom_jvp
def xlogy(x: Any, y: Any) -> Any:
    """x * log(y), 0 where x is 0 (whatever y); derivatives log(y) in x and x / y in y, as JAX's."""
    x, y = _util.as_floating(x), _util.as_floating(y)
    zero = lnp.equal(x, 0)
    return lnp.where(zero, 0.0, x * lnp.log(lnp.where(zero, 1.0, y)))


@xlogy.defjvp
def _xlogy_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (dx, dy) = primals, tangents
    return xlogy(x, y), dx * lnp.log(y) + dy * x / y


@custom_jvp
def xlog1py(x: Any, y: Any) -> Any:
    """x * log1p(y), 0 where x is 0 (whatever y); derivatives log1p(y) in x and x / (1 + y) in y."""
    x, y = _util.as_floating(x), _util.as_floating(y)
    zero = lnp.equal(x, 0)
    return lnp.where(zero, 0.0, x * lnp.log1p(lnp.where(zero, 0.0, y)))


@xlog1py.defjvp
def _xlog1py_jvp(primals: Any, tangents: Any) -> Any:
    (x, y), (dx, dy) = primals, tangents
    return xlog1py(x, y), dx * lnp.log1p(y) + dy * x / (1 + y)


def entr(x: Any) -> Any:
    """-x log x for x > 0, 0 at 0, -inf below."""
    x = _util.as_floating(x)
    return lnp.where(x > 0, -xlogy(x, x), lnp.where(x == 0, 0.0, -np.inf))


def ndtr(x: Any) -> Any:
    """The standard normal CDF."""
    x = _util.as_floating(x)
    return 0.5 * lax.erfc(-x / np.sqrt(2.0).astype(np.float32))


def ndtri(p: Any) -> Any:
    """The inverse of `ndtr`."""
    p = _util.as_floating(p)
    return np.sqrt(2.0).astype(np.float32) * lax.erf_inv(2 * p - 1)


def log_ndtr(x: Any) -> Any:
    """log of the standard normal CDF; for x < -5 its asymptotic series (log(ndtr) underflows
    there in float32)."""
    x = _util.as_floating(x)
    safe = lnp.where(x < -5, 0.0, x)
    tail = lnp.where(x < -5, x, -6.0)
    z = 1.0 / (tail * tail)
    series = 1 - z + 3 * z * z - 15 * z * z * z + 105 * z * z * z * z
    asymptotic = -0.5 * tail * tail - lnp.log(-tail) - 0.5 * np.log(2 * np.pi).astype(np.float32) + lnp.log(series)
    return lnp.where(x < -5, asymptotic, lnp.log(ndtr(safe)))


__all__ = ["digamma", "entr", "erf", "erfc", "erfinv", "expit", "gammaln", "log_ndtr", "logit", "logsumexp", "ndtr",
           "ndtri", "xlog1py", "xlogy"]
