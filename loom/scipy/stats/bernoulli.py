"""`loom.scipy.stats.bernoulli`: the Bernoulli distribution with success probability `p`."""

from __future__ import annotations

from typing import Any

import loom.numpy as lnp
from loom.numpy import _util
from loom.scipy.special import xlog1py, xlogy
from loom.scipy.stats._support import NEG_INF


def logpmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """k log p + (1 - k) log(1 - p) for k in {0, 1} (counted from `loc`), -inf elsewhere."""
    k, p = _util.as_floating(k) - loc, _util.as_floating(p)
    return lnp.where((k == 0) | (k == 1), xlogy(k, p) + xlog1py(1 - k, -p), NEG_INF)


def pmf(k: Any, p: Any, loc: Any = 0) -> Any:
    """The probability mass."""
    return lnp.exp(logpmf(k, p, loc))


__all__ = ["logpmf", "pmf"]
