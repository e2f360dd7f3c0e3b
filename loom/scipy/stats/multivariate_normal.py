"""`loom.scipy.stats.multivariate_normal`: the normal distribution in d dimensions, by the
Cholesky factor of the covariance (loom.numpy.linalg.cholesky, a triangular solve)."""

from __future__ import annotations

from typing import Any

import numpy as np

import loom.numpy as lnp
from loom.numpy import _util
from loom.scipy.linalg import solve_triangular


def logpdf(x: Any, mean: Any, cov: Any) -> Any:
    """The log density at the points `x` (..., d) for a mean (..., d) and a covariance (d, d) (or
    a stack); -0.5 (d log 2pi + log det cov + |L^-1 (x - mean)|^2) with cov = L L^T."""
    x, mean, cov = _util.as_floating(x), _util.as_floating(mean), _util.as_floating(cov)
    d = lnp.shape(cov)[-1]
    factor = lnp.linalg.cholesky(cov)
    diff = lnp.broadcast_to(x - mean, np.broadcast_shapes(tuple(lnp.shape(x)), tuple(lnp.shape(mean))))
    # solve for every point at once: the points as the columns of one right-hand side
    flat = lnp.reshape(diff, (-1, d))
    z = solve_triangular(factor, lnp.matrix_transpose(flat), lower=True)
    squared = lnp.reshape(lnp.sum(z * z, axis=0), lnp.shape(diff)[:-1])
    log_det = 2 * lnp.sum(lnp.log(lnp.diagonal(factor, 0, -2, -1)), axis=-1)
    return -0.5 * (squared + log_det + d * np.float32(np.log(2 * np.pi)))


def pdf(x: Any, mean: Any, cov: Any) -> Any:
    """The density."""
    return lnp.exp(logpdf(x, mean, cov))


__all__ = ["logpdf", "pdf"]
