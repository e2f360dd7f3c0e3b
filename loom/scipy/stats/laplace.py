"""`loom.scipy.stats.laplace`: the Laplace (double exponential) distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

import loom.numpy as lnp
from loom.scipy.stats._support import standard


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-|x - loc| / scale - log(2 scale)."""
    z, log_scale = standard(x, loc, scale)
    return -lnp.abs(z) - np.float32(np.log(2.0)) - log_scale


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function."""
    z, _ = standard(x, loc, scale)
    return lnp.where(z < 0, 0.5 * lnp.exp(lnp.minimum(z, 0.0)), 1 - 0.5 * lnp.exp(-lnp.maximum(z, 0.0)))


__all__ = ["cdf", "logpdf", "pdf"]
