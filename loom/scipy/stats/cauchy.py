"""`loom.scipy.stats.cauchy`: the Cauchy distribution."""

from __future__ import annotations

from typing import Any

import numpy as np

import loom.numpy as lnp
from loom.scipy.stats._support import standard


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-log(pi scale (1 + z^2))."""
    z, log_scale = standard(x, loc, scale)
    return -np.float32(np.log(np.pi)) - log_scale - lnp.log1p(z * z)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function."""
    z, _ = standard(x, loc, scale)
    return 0.5 + lnp.arctan(z) / np.float32(np.pi)


__all__ = ["cdf", "logpdf", "pdf"]
