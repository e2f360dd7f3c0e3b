"""`loom.scipy.stats.gamma`: the gamma distribution with shape `a`."""

from __future__ import annotations

from typing import Any

import loom.numpy as lnp
from loom.numpy import _util
from loom.scipy.special import gammaln, xlogy
from loom.scipy.stats._support import NEG_INF, standard


def logpdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """(a - 1) log z - z - gammaln(a) - log(scale) for z >= 0, -inf below."""
    z, log_scale = standard(x, loc, scale)
    a = _util.as_floating(a)
    return lnp.where(z < 0, NEG_INF, xlogy(a - 1, z) - z - gammaln(a) - log_scale)


def pdf(x: Any, a: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, a, loc, scale))


__all__ = ["logpdf", "pdf"]
