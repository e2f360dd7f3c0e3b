"""`loom.scipy.stats.norm`: the normal distribution with mean `loc` and standard deviation
`scale`, as `jax.scipy.stats.norm`."""

from __future__ import annotations

from typing import Any

import numpy as np

import loom.numpy as lnp
from loom.scipy import special
from loom.scipy.stats._support import standard

_LOG_SQRT_2PI = np.float32(0.5 * np.log(2 * np.pi))


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The log density."""
    z, log_scale = standard(x, loc, scale)
    return -0.5 * z * z - _LOG_SQRT_2PI - log_scale


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function."""
    return special.ndtr(standard(x, loc, scale)[0])


def logcdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """log of the CDF (accurate far in the left tail)."""
    return special.log_ndtr(standard(x, loc, scale)[0])


def sf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The survival function 1 - cdf."""
    return special.ndtr(-standard(x, loc, scale)[0])


def ppf(q: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The quantile function (inverse CDF)."""
    return special.ndtri(q) * scale + loc


__all__ = ["cdf", "logcdf", "logpdf", "pdf", "ppf", "sf"]
