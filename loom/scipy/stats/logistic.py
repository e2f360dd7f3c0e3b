"""`loom.scipy.stats.logistic`: the logistic distribution."""

from __future__ import annotations

from typing import Any

import loom.numpy as lnp
from loom.nn import softplus
from loom.scipy.special import expit
from loom.scipy.stats._support import standard


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-z - 2 log(1 + exp(-z)) - log(scale), z = (x - loc) / scale (stable for large |z|)."""
    z, log_scale = standard(x, loc, scale)
    return -z - 2 * softplus(-z) - log_scale


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function (the logistic sigmoid of z)."""
    z, _ = standard(x, loc, scale)
    return expit(z)


__all__ = ["cdf", "logpdf", "pdf"]
