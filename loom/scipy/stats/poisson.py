"""`loom.scipy.stats.poisson`: the Poisson distribution with mean `mu`."""

from __future__ import annotations

from typing import Any

import loom.numpy as lnp
from loom.numpy import _util
from loom.scipy.special import gammaln, xlogy
from loom.scipy.stats._support import NEG_INF


def logpmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """k log mu - mu - log k! for whole k >= 0 (k counted from `loc`), -inf elsewhere."""
    k, mu = _util.as_floating(k) - loc, _util.as_floating(mu)
    whole = (k >= 0) & (lnp.floor(k) == k)
    return lnp.where(whole, xlogy(k, mu) - mu - gammaln(k + 1), NEG_INF)


def pmf(k: Any, mu: Any, loc: Any = 0) -> Any:
    """The probability mass."""
    return lnp.exp(logpmf(k, mu, loc))


__all__ = ["logpmf", "pmf"]
