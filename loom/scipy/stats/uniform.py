"""`loom.scipy.stats.uniform`: the uniform distribution on [loc, loc + scale]."""

from __future__ import annotations

from typing import Any

import loom.numpy as lnp
from loom.scipy.stats._support import NEG_INF, standard


def logpdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """-log(scale) inside [loc, loc + scale], -inf outside."""
    z, log_scale = standard(x, loc, scale)
    return lnp.where((z < 0) | (z > 1), NEG_INF, -log_scale)


def pdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, loc, scale))


def cdf(x: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The cumulative distribution function."""
    z, _ = standard(x, loc, scale)
    return lnp.clip(z, 0.0, 1.0)


__all__ = ["cdf", "logpdf", "pdf"]
