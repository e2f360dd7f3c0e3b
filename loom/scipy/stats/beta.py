"""`loom.scipy.stats.beta`: the beta distribution with shapes `a`, `b`."""

from __future__ import annotations

from typing import Any

import loom.numpy as lnp
from loom.numpy import _util
from loom.scipy.special import gammaln, xlog1py, xlogy
from loom.scipy.stats._support import NEG_INF, standard


def logpdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """(a - 1) log z + (b - 1) log(1 - z) - log B(a, b) - log(scale) on [0, 1], -inf outside."""
    z, log_scale = standard(x, loc, scale)
    a, b = _util.as_floating(a), _util.as_floating(b)
    log_beta = gammaln(a) + gammaln(b) - gammaln(a + b)
    inside = xlogy(a - 1, z) + xlog1py(b - 1, -z) - log_beta - log_scale
    return lnp.where((z < 0) | (z > 1), NEG_INF, inside)


def pdf(x: Any, a: Any, b: Any, loc: Any = 0, scale: Any = 1) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, a, b, loc, scale))


__all__ = ["logpdf", "pdf"]
