"""`loom.scipy.stats`: probability distributions, as `jax.scipy.stats` (log densities and
masses, densities, CDFs where JAX has them)."""

from loom.scipy.stats import (
    bernoulli,
    beta,
    cauchy,
    expon,
    gamma,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    uniform,
)

__all__ = ["bernoulli", "beta", "cauchy", "expon", "gamma", "laplace", "logistic", "multivariate_normal", "norm",
           "poisson", "uniform"]
