"""`loom.scipy`: the parts of `jax.scipy` ML programs use most, built from `loom.numpy` and
`loom.lax` (so they trace, differentiate and batch like everything else): `special` (logsumexp,
expit, logit, erf, gammaln, xlogy, ...), `stats` (norm, multivariate_normal, gamma, beta,
poisson, bernoulli, expon, uniform, laplace, logistic, cauchy), and `linalg` (triangular and
Cholesky solves)."""

from loom.scipy import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
