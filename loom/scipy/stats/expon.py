"""`loom.scipy.stats.expon`: the exponential distribution, as `jax.scipy.stats.expon`."""

from __future__ import annotations

from typing import Any

import loom.numpy as lnp
from loom.scipy.stats._support import NEG_INF, standard


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density: -(x - loc) / scale - log(scale) for x >= loc, -inf below."""
    z, log_scale = standard(x, loc, scale)
    return lnp.where(z < 0, NEG_INF, -z - log_scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function."""
    z, _ = standard(x, loc, scale)
    return lnp.where(z < 0, 0.0, -lnp.expm1(-lnp.maximum(z, 0.0)))


__all__ = ["cdf", "logpdf", "pdf"]
