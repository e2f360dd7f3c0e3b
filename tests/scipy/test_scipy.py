"""loom.scipy against jax.scipy: special functions, the normal distribution and the triangular
and Cholesky solvers, values and dtypes under loom.jit (and eagerly), derivatives against jax.grad."""

import jax
import jax.numpy as jnp
import jax.scipy as jsp
import numpy as np
import pytest
from support.jax_parity import check_call

import loom
import loom.numpy as lnp
import loom.scipy as lsp

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(3)
X = RNG.normal(size=(3, 4)).astype(np.float32) * 2
P = RNG.uniform(0.01, 0.99, size=(3, 4)).astype(np.float32)
POS = RNG.uniform(0.1, 5.0, size=(3, 4)).astype(np.float32)
ZEROS = np.array([0.0, 0.0, 1.5, 2.0], np.float32)
YS = np.array([0.0, 3.0, 0.0, -0.5], np.float32)
TAIL = np.array([-40.0, -12.0, -6.0, -4.0, 0.0, 3.0], np.float32)
B = RNG.normal(size=(3, 4)).astype(np.float32)
LOW = np.tril(RNG.normal(size=(4, 4))).astype(np.float32) + 3 * np.eye(4, dtype=np.float32)
UP = LOW.T.copy()
S = RNG.normal(size=(2, 4, 4)).astype(np.float32)
SPD = (S @ np.swapaxes(S, -1, -2) + 4 * np.eye(4)).astype(np.float32)
B4 = RNG.normal(size=(4,)).astype(np.float32)
B42 = RNG.normal(size=(4, 2)).astype(np.float32)

CASES = [  # module, name, args, kwargs, tolerance
    ("special", "logsumexp", (X,), {"axis": 1}, 1e-5), ("special", "logsumexp", (X,), {"b": B, "axis": 0}, 1e-5),
    ("special", "logsumexp", (X,), {"b": B, "return_sign": True}, 1e-5),
    ("special", "logsumexp", (X,), {"axis": 1, "keepdims": True}, 1e-5),
    ("special", "expit", (X,), {}, 1e-6), ("special", "logit", (P,), {}, 1e-5), ("special", "erf", (X,), {}, 1e-6),
    ("special", "erfc", (X,), {}, 1e-5), ("special", "erfinv", (P * 2 - 1,), {}, 1e-4),
    ("special", "gammaln", (POS,), {}, 1e-5), ("special", "digamma", (POS,), {}, 1e-4),
    ("special", "xlogy", (ZEROS, YS), {}, 1e-6), ("special", "xlog1py", (ZEROS, YS), {}, 1e-6),
    ("special", "entr", (np.array([0.0, 0.5, 2.0, -1.0], np.float32),), {}, 1e-6),
    ("special", "ndtr", (X,), {}, 1e-6), ("special", "ndtri", (P,), {}, 1e-4),
    ("special", "log_ndtr", (TAIL,), {}, 1e-4),
    ("stats.norm", "logpdf", (X, 0.5, POS), {}, 1e-5), ("stats.norm", "pdf", (X,), {}, 1e-6),
    ("stats.norm", "cdf", (X, 1.0, 2.0), {}, 1e-6), ("stats.norm", "logcdf", (TAIL,), {}, 1e-4),
    ("stats.norm", "sf", (X,), {}, 1e-6), ("stats.norm", "ppf", (P, 1.0, 3.0), {}, 1e-4),
    ("linalg", "solve_triangular", (LOW, B4), {"lower": True}, 1e-5),
    ("linalg", "solve_triangular", (UP, B42), {}, 1e-5),
    ("linalg", "solve_triangular", (LOW, B42), {"lower": True, "trans": "T"}, 1e-5),
    ("linalg", "solve_triangular", (UP + np.tril(np.outer(B4, B4), -1), B4), {"trans": 1}, 1e-5),
    ("linalg", "solve_triangular", (LOW, B4), {"lower": True, "unit_diagonal": True}, 1e-5),
    ("linalg", "cholesky", (SPD,), {}, 1e-4), ("linalg", "cholesky", (SPD[0],), {"lower": True}, 1e-4),
    ("linalg", "solve", (SPD[0], B42), {"assume_a": "pos"}, 1e-4), ("linalg", "solve", (SPD[1], B4), {}, 1e-4),
    ("linalg", "qr", (B,), {}, 1e-5), ("linalg", "qr", (B,), {"mode": "economic"}, 1e-5),
    ("linalg", "det", (SPD,), {}, 1e-3), ("linalg", "inv", (SPD[0],), {}, 1e-4),
]


def _get(root, module, name):
    for part in module.split("."):
        root = getattr(root, part)
    return getattr(root, name)


@pytest.mark.parametrize("module,name,args,kwargs,tol", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax_scipy(module, name, args, kwargs, tol):
    check_call(name, _get(lsp, module, name), _get(jsp, module, name), args, kwargs, tol)


def test_cho_factor_and_solve():
    c = lsp.linalg.cho_factor(SPD[0], lower=True)
    got = loom.jit(lambda a, b: lsp.linalg.cho_solve(lsp.linalg.cho_factor(a, lower=True), b))(SPD[0], B42)
    want = jsp.linalg.cho_solve(jsp.linalg.cho_factor(SPD[0], lower=True), B42)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.asarray(lsp.linalg.cho_solve(c, B42)), np.asarray(want), rtol=1e-4, atol=1e-4)


GRADS = [  # module, name, function of the differentiated array, the array
    ("logsumexp", lambda m, x: m.special.logsumexp(x, axis=1, b=B), X), ("logit", lambda m, x: m.special.logit(x), P),
    ("gammaln", lambda m, x: m.special.gammaln(x), POS), ("xlogy", lambda m, x: m.special.xlogy(x, POS), ZEROS[None]),
    ("log_ndtr", lambda m, x: m.special.log_ndtr(x), TAIL),
    ("norm.logpdf", lambda m, x: m.stats.norm.logpdf(x, 0.5, 2.0), X),
    ("norm.ppf", lambda m, x: m.stats.norm.ppf(x), P),
    ("solve_triangular", lambda m, a: m.linalg.solve_triangular(a, B42, lower=True), LOW),
    ("cho_solve", lambda m, a: m.linalg.solve(a, B42, assume_a="pos"), SPD[0]),
]


@pytest.mark.parametrize("name,fn,x", GRADS, ids=[g[0] for g in GRADS])
def test_gradients_against_jax(name, fn, x):
    w = RNG.normal(size=np.shape(fn(jsp, x))).astype(np.float32)
    got = loom.jit(loom.grad(lambda x: lnp.sum(fn(lsp, x) * w)))(x)
    want = jax.jit(jax.grad(lambda x: jnp.sum(fn(jsp, x) * w)))(x)  # one program, not one per op
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-3, atol=2e-4)


def test_bad_input_errors():
    with pytest.raises(ValueError, match="solve_triangular: trans must be"):
        lsp.linalg.solve_triangular(LOW, B4, trans=3)
    with pytest.raises(ValueError, match="solve_triangular: b has 3 rows for a 4 x 4 matrix"):
        lsp.linalg.solve_triangular(LOW, B[:, :2])
    with pytest.raises(ValueError, match="qr: mode must be 'full', 'economic' or 'r'"):
        lsp.linalg.qr(B, mode="reduced")


XS2 = np.array([-1.0, 0.0, 0.3, 0.9, 1.0, 2.5, 7.0], np.float32)
KS = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 5.0, 12.0], np.float32)
MEAN = RNG.normal(size=(4,)).astype(np.float32)
POINTS = RNG.normal(size=(5, 4)).astype(np.float32)

DISTRIBUTIONS = [  # distribution, function, args, tolerance
    ("expon", "logpdf", (XS2, 0.5, 2.0), 1e-5), ("expon", "pdf", (XS2,), 1e-6), ("expon", "cdf", (XS2, 0.2), 1e-6),
    ("uniform", "logpdf", (XS2, -0.5, 2.0), 1e-6), ("uniform", "pdf", (XS2,), 1e-6),
    ("uniform", "cdf", (XS2, 0.0, 3.0), 1e-6),
    ("laplace", "logpdf", (XS2, 1.0, 0.5), 1e-5), ("laplace", "cdf", (XS2, 0.5), 1e-6),
    ("logistic", "logpdf", (X, 0.3, 2.0), 1e-5), ("logistic", "pdf", (XS2,), 1e-6), ("logistic", "cdf", (X,), 1e-6),
    ("cauchy", "logpdf", (X, 0.5, 1.5), 1e-5), ("cauchy", "cdf", (X,), 1e-6),
    ("gamma", "logpdf", (XS2, 2.5), 1e-5), ("gamma", "logpdf", (XS2, 1.0, 0.0, 2.0), 1e-5),
    ("gamma", "pdf", (XS2, 3.0), 1e-6), ("beta", "logpdf", (XS2, 2.0, 3.0), 1e-5),
    ("beta", "logpdf", (XS2, 1.0, 1.0), 1e-5), ("beta", "pdf", (XS2, 0.5, 2.0), 1e-5),
    ("poisson", "logpmf", (KS, 3.0), 1e-5), ("poisson", "pmf", (KS, 0.5), 1e-6),
    ("poisson", "logpmf", (KS, 2.0, 1), 1e-5),
    ("bernoulli", "logpmf", (KS, 0.3), 1e-6), ("bernoulli", "pmf", (KS, 0.8), 1e-6),
    ("multivariate_normal", "logpdf", (POINTS, MEAN, SPD[0]), 1e-4),
    ("multivariate_normal", "logpdf", (MEAN, MEAN * 0, SPD[1]), 1e-4),
    ("multivariate_normal", "pdf", (POINTS[:2], MEAN, SPD[0] / 4), 1e-4),
]


@pytest.mark.parametrize("dist,fn,args,tol", DISTRIBUTIONS,
                         ids=[f"{d[0]}.{d[1]}-{i}" for i, d in enumerate(DISTRIBUTIONS)])
def test_distributions_against_jax(dist, fn, args, tol):
    check_call(f"{dist}.{fn}", getattr(getattr(lsp.stats, dist), fn), getattr(getattr(jsp.stats, dist), fn), args, {},
               tol)


def test_distribution_gradients_against_jax():
    for fn_l, fn_j, x in [(lambda m: lsp.stats.multivariate_normal.logpdf(POINTS, m, SPD[0]),
                           lambda m: jsp.stats.multivariate_normal.logpdf(POINTS, m, SPD[0]), MEAN),
                          (lambda c: lsp.stats.multivariate_normal.logpdf(POINTS, MEAN, c),
                           lambda c: jsp.stats.multivariate_normal.logpdf(POINTS, MEAN, c), SPD[0]),
                          (lambda a: lsp.stats.gamma.logpdf(XS2[2:], a), lambda a: jsp.stats.gamma.logpdf(XS2[2:], a),
                           np.float32(2.5)),
                          (lambda mu: lsp.stats.poisson.logpmf(KS[1:], mu),
                           lambda mu: jsp.stats.poisson.logpmf(KS[1:], mu), np.float32(3.0)),
                          (lambda x: loom.nn.softplus(x) + loom.nn.log_sigmoid(x),
                           lambda x: jax.nn.softplus(x) + jax.nn.log_sigmoid(x), X)]:
        got = loom.jit(loom.grad(lambda v, f=fn_l: lnp.sum(lnp.where(lnp.isfinite(f(v)), f(v), 0.0))))(x)
        want = jax.jit(jax.grad(lambda v, f=fn_j: jnp.sum(jnp.where(jnp.isfinite(f(v)), f(v), 0.0))))(x)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-3, atol=2e-4)
