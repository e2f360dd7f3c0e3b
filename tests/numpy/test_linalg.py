"""loom.numpy.linalg's products and LU-based solvers against jax.numpy.linalg: values and dtypes
(under loom.jit, and eagerly on numpy arrays), reverse- and forward-mode derivatives against
jax.grad / jax.jvp, vmap against jax.vmap, and the errors for bad shapes."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from support.jax_parity import check_call

import loom
import loom.numpy as lnp

jax.config.update("jax_platforms", "cpu")

RNG = np.random.default_rng(5)
A4 = RNG.normal(size=(4, 4)).astype(np.float32)
A4S = RNG.normal(size=(3, 4, 4)).astype(np.float32)
A1 = RNG.normal(size=(1, 1)).astype(np.float32)
PIVOT = np.array([[0.0, 2.0, 1.0], [1.0, 0.0, 3.0], [4.0, 1.0, 0.0]], np.float32)  # needs row swaps
B4 = RNG.normal(size=(4,)).astype(np.float32)
B43 = RNG.normal(size=(4, 3)).astype(np.float32)
B3 = np.array([1.0, -2.0, 0.5], np.float32)
I3 = np.array([[2, 1, 0], [1, 3, 1], [0, 1, 4]], np.int32)
V3 = RNG.normal(size=(3,)).astype(np.float32)
W3 = RNG.normal(size=(2, 3)).astype(np.float32)
M23 = RNG.normal(size=(2, 3)).astype(np.float32)
M35 = RNG.normal(size=(3, 5)).astype(np.float32)
M54 = RNG.normal(size=(5, 4)).astype(np.float32)
SPD = (A4S @ np.swapaxes(A4S, -1, -2) + 4 * np.eye(4)).astype(np.float32)
NOT_SPD = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
M43S = RNG.normal(size=(2, 4, 3)).astype(np.float32)
B52 = RNG.normal(size=(5, 2)).astype(np.float32)
RANK2 = (M54[:, :2] @ M23[:, :2].T @ M35[:2, :4]).astype(np.float32)  # 5 x 4 of rank 2
SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)

CASES = [  # name, args, kwargs, tolerance
    ("solve", (A4, B4), {}, 1e-4), ("solve", (A4, B43), {}, 1e-4), ("solve", (A4S, B43), {}, 1e-4),
    ("solve", (PIVOT, B3), {}, 1e-5), ("solve", (I3, np.array([1, 2, 3], np.int32)), {}, 1e-5),
    ("solve", (A1, np.ones((1, 2), np.float32)), {}, 1e-5),
    ("inv", (A4,), {}, 1e-4), ("inv", (A4S,), {}, 1e-4), ("inv", (PIVOT,), {}, 1e-5), ("inv", (I3,), {}, 1e-5),
    ("det", (A4,), {}, 1e-4), ("det", (A4S,), {}, 1e-4), ("det", (PIVOT,), {}, 1e-5), ("det", (I3,), {}, 1e-4),
    ("slogdet", (A4S,), {}, 1e-4), ("slogdet", (PIVOT,), {}, 1e-5),
    ("matrix_power", (A4, 3), {}, 1e-4), ("matrix_power", (A4S, 0), {}, 0), ("matrix_power", (A4, 1), {}, 0),
    ("matrix_power", (PIVOT, -2), {}, 1e-5), ("trace", (A4S,), {}, 1e-5), ("trace", (A4,), {"offset": 1}, 1e-5),
    ("diagonal", (A4S,), {"offset": -1}, 0), ("outer", (V3, B4), {}, 1e-6), ("cross", (V3, W3), {}, 1e-6),
    ("multi_dot", ([M23, M35, M54],), {}, 1e-5), ("multi_dot", ([V3, M35, M54],), {}, 1e-5),
    ("multi_dot", ([M23, M35, M54, B4],), {}, 1e-5), ("vecdot", (A4S, A4), {}, 1e-5),
    ("tensordot", (A4S, A4), {"axes": 2}, 1e-5), ("matmul", (A4S, B43), {}, 1e-5),
    ("matrix_transpose", (A4S,), {}, 0), ("cholesky", (SPD,), {}, 1e-4), ("cholesky", (SPD[0],), {"upper": True}, 1e-4),
    ("cholesky", (NOT_SPD,), {}, 0), ("cholesky", (SPD + np.triu(A4, 1),), {}, 1e-4),
    ("qr", (M54,), {}, 1e-5), ("qr", (M35,), {}, 1e-5), ("qr", (A4S,), {"mode": "complete"}, 1e-5),
    ("qr", (M54,), {"mode": "complete"}, 1e-5), ("qr", (M35,), {"mode": "r"}, 1e-5), ("qr", (I3,), {}, 1e-5),
    ("svdvals", (M43S,), {}, 1e-5), ("svdvals", (I3,), {}, 1e-5), ("svd", (M35,), {"compute_uv": False}, 1e-5),
    ("lstsq", (M54, B52[:, 0]), {"rcond": 0.5}, 1e-4), ("lstsq", (M35, B3), {}, 1e-4),
    ("lstsq", (RANK2, B52), {}, 1e-4),
    ("pinv", (M43S,), {}, 1e-4), ("pinv", (RANK2,), {}, 1e-4), ("pinv", (SPD,), {"hermitian": True}, 1e-4),
    ("pinv", (M35,), {"rtol": 0.5}, 1e-4), ("matrix_rank", (np.stack([RANK2, M54]),), {}, 0),
    ("matrix_rank", (M54,), {"rtol": 1.0}, 0), ("matrix_rank", (V3,), {}, 0), ("matrix_rank", (SINGULAR,), {}, 0),
    ("cond", (A4,), {}, 1e-4), ("cond", (M43S,), {"p": -2}, 1e-4), ("cond", (A4S,), {"p": "fro"}, 1e-4),
    ("cond", (SINGULAR,), {"p": np.inf}, 0), ("norm", (M54,), {"ord": 2}, 1e-5),
    ("norm", (M43S,), {"ord": -2, "axis": (1, 2)}, 1e-5),
    ("norm", (M43S,), {"ord": "nuc", "axis": (2, 0), "keepdims": True}, 1e-5),
]


@pytest.mark.parametrize("name,args,kwargs,tol", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_against_jax(name, args, kwargs, tol):
    check_call(name, getattr(lnp.linalg, name), getattr(jnp.linalg, name), args, kwargs, tol)


def test_solve_recovers_b():
    x = loom.jit(lnp.linalg.solve)(A4S, B43)
    np.testing.assert_allclose(np.einsum("bij,bjk->bik", A4S.astype(np.float64), np.asarray(x)),
                               np.broadcast_to(B43, (3, 4, 3)), atol=1e-4)


GRADS = [  # name, function of the differentiated matrix
    ("solve a", lambda la, a: la.solve(a, B43)), ("solve b", lambda la, b: la.solve(A4, b)),
    ("solve pivoted", lambda la, a: la.solve(a, B3)), ("inv", lambda la, a: la.inv(a)),
    ("det", lambda la, a: la.det(a)), ("slogdet", lambda la, a: la.slogdet(a)[1]),
    ("matrix_power", lambda la, a: la.matrix_power(a, 3)), ("matrix_power -1", lambda la, a: la.matrix_power(a, -1)),
    ("cholesky", lambda la, a: la.cholesky(a)), ("qr", lambda la, a: la.qr(a)[0] + la.qr(a)[1][0]),
]
GRAD_ARGS = {"solve a": A4, "solve b": B43, "solve pivoted": PIVOT, "inv": A4S, "det": A4S, "slogdet": A4,
             "matrix_power": A4, "matrix_power -1": PIVOT, "cholesky": SPD, "qr": M54}


@pytest.mark.parametrize("name,fn", GRADS, ids=[g[0] for g in GRADS])
def test_derivatives_against_jax(name, fn):
    x = GRAD_ARGS[name]
    weights = RNG.normal(size=np.shape(fn(jnp.linalg, x))).astype(np.float32)
    got = loom.jit(loom.grad(lambda x: lnp.sum(fn(lnp.linalg, x) * weights)))(x)
    want = jax.jit(jax.grad(lambda x: jnp.sum(fn(jnp.linalg, x) * weights)))(x)  # one program, not one per op
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-3, atol=2e-4)
    tangent = RNG.normal(size=x.shape).astype(np.float32)
    _, got_t = loom.jvp(lambda x: fn(lnp.linalg, x), (x,), (tangent,))
    _, want_t = jax.jit(lambda x, t: jax.jvp(lambda x: fn(jnp.linalg, x), (x,), (t,)))(x, tangent)
    np.testing.assert_allclose(np.asarray(got_t), np.asarray(want_t), rtol=2e-3, atol=2e-4)


def test_vmap_of_solve_against_jax():
    got = loom.vmap(lnp.linalg.solve, in_axes=(0, None))(A4S, B4)
    want = jax.vmap(jnp.linalg.solve, in_axes=(0, None))(A4S, B4)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4)


def test_bad_shapes_are_clear_errors():
    with pytest.raises(ValueError, match=r"solve: a must be a square matrix or a stack of them, but got shape \(2, 3"):
        lnp.linalg.solve(M23, V3)
    with pytest.raises(ValueError, match="solve: b has 3 rows for a 4 x 4 matrix"):
        loom.jit(lnp.linalg.solve)(A4, V3)
    with pytest.raises(ValueError, match="inv: a must be a square matrix"):
        loom.jit(lnp.linalg.inv)(V3)
    with pytest.raises(ValueError, match="cross: vectors must have 3 components"):
        lnp.linalg.cross(B4, B4)
    with pytest.raises(ValueError, match="outer: a and b must be 1-D"):
        lnp.linalg.outer(M23, V3)
    with pytest.raises(ValueError, match="qr: mode must be 'reduced', 'complete' or 'r'"):
        lnp.linalg.qr(A4, mode="full")
    with pytest.raises(ValueError, match="multi_dot needs at least two arrays"):
        lnp.linalg.multi_dot([A4])


SYM = (A4S + np.swapaxes(A4S, -1, -2)).astype(np.float32)


def _aligned(v, reference):
    """Eigenvectors flipped to the reference's signs (each is defined up to its sign)."""
    return v * np.sign(np.sum(v * reference, axis=-2, keepdims=True))


@pytest.mark.parametrize("kwargs", [{}, {"symmetrize_input": False}, {"symmetrize_input": False, "UPLO": "U"}])
def test_eigh_against_jax(kwargs):
    a = A4S + 0.1 * np.triu(A4S, 1) if kwargs else SYM  # one triangle differs where it is not read
    w, v = jnp.linalg.eigh(a if kwargs else SYM, **kwargs)
    for got in (loom.jit(lambda x: lnp.linalg.eigh(x, **kwargs))(a), lnp.linalg.eigh(a, **kwargs)):
        np.testing.assert_allclose(np.asarray(got.eigenvalues), np.asarray(w), rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(_aligned(np.asarray(got.eigenvectors), np.asarray(v)), np.asarray(v), atol=1e-4)
        assert np.asarray(got.eigenvalues).dtype == np.float32
    np.testing.assert_allclose(np.asarray(loom.jit(lnp.linalg.eigvalsh)(SYM)), np.asarray(jnp.linalg.eigvalsh(SYM)),
                               rtol=1e-4, atol=1e-4)


def test_eigh_derivatives_and_vmap_against_jax():
    weights = RNG.normal(size=(3, 4)).astype(np.float32)
    vweights = RNG.normal(size=(3, 4, 4)).astype(np.float32)
    for loss_l, loss_j in [(lambda a: lnp.sum(lnp.linalg.eigh(a)[0] * weights),
                            lambda a: jnp.sum(jnp.linalg.eigh(a)[0] * weights)),
                           (lambda a: lnp.sum(lnp.linalg.eigh(a)[1] ** 2 * vweights),  # invariant to signs
                            lambda a: jnp.sum(jnp.linalg.eigh(a)[1] ** 2 * vweights))]:
        np.testing.assert_allclose(np.asarray(loom.jit(loom.grad(loss_l))(SYM)), np.asarray(jax.grad(loss_j)(SYM)),
                                   rtol=1e-3, atol=1e-4)
    tangent = RNG.normal(size=SYM.shape).astype(np.float32)
    _, got = loom.jvp(lambda a: lnp.linalg.eigh(a)[0], (SYM,), (tangent,))
    _, want = jax.jvp(lambda a: jnp.linalg.eigh(a)[0], (SYM,), (tangent,))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-3, atol=1e-4)
    np.testing.assert_allclose(np.asarray(loom.vmap(lnp.linalg.eigvalsh)(SYM)),
                               np.asarray(jax.vmap(jnp.linalg.eigvalsh)(SYM)), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match="eigh: UPLO must be 'L' or 'U'"):
        lnp.linalg.eigh(SYM, UPLO="X")


def _matched_factors(u, vh, ju, jvh, k):
    """loom's singular vectors against JAX's (each pair defined up to one sign, which is flipped
    to JAX's): the first k columns of U and rows of Vh, and where a factor is complete, the
    subspace its other columns span (any orthonormal basis of it is right)."""
    sign = np.sign(np.sum(u[..., :, :k] * ju[..., :, :k], axis=-2, keepdims=True))
    np.testing.assert_allclose(u[..., :, :k] * sign, ju[..., :, :k], atol=1e-4)
    np.testing.assert_allclose(vh[..., :k, :] * np.swapaxes(sign, -1, -2), jvh[..., :k, :], atol=1e-4)
    for got, want in [(u, ju), (np.swapaxes(vh, -1, -2), np.swapaxes(jvh, -1, -2))]:
        rest, jrest = got[..., :, k:], want[..., :, k:]
        np.testing.assert_allclose(rest @ np.swapaxes(rest, -1, -2), jrest @ np.swapaxes(jrest, -1, -2), atol=1e-4)


@pytest.mark.parametrize("a", [M54, M35, M43S], ids=["5x4", "3x5", "2x4x3"])
def test_svd_against_jax(a):
    k = min(a.shape[-2:])
    for full in (True, False):
        ju, js, jvh = (np.asarray(x) for x in jnp.linalg.svd(a, full_matrices=full))
        for got in (loom.jit(lambda x, full=full: lnp.linalg.svd(x, full_matrices=full))(a),
                    lnp.linalg.svd(a, full_matrices=full)):
            u, s, vh = (np.asarray(x) for x in got)
            assert (u.shape, s.shape, vh.shape) == (ju.shape, js.shape, jvh.shape)
            assert u.dtype == s.dtype == vh.dtype == np.float32
            np.testing.assert_allclose(s, js, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], a, atol=1e-5)
            _matched_factors(u, vh, ju, jvh, k)


def test_hermitian_svd_against_jax():
    sym = SPD - 5 * np.eye(4, dtype=np.float32)  # eigenvalues of both signs
    ju, js, jvh = (np.asarray(x) for x in jnp.linalg.svd(sym, hermitian=True))
    u, s, vh = (np.asarray(x) for x in loom.jit(lambda x: lnp.linalg.svd(x, hermitian=True))(sym))
    np.testing.assert_allclose(s, js, rtol=1e-4, atol=1e-5)
    _matched_factors(u, vh, ju, jvh, 4)


def _pairs(la, a):
    """Each left singular vector times the first entry of its right one, and each right one
    times the first entry of its left one, multiplied: the signs cancel."""
    u, _, vh = la.svd(a, full_matrices=False)
    return (u * vh[..., :, :1].swapaxes(-1, -2)) @ (vh * u[..., :1, :].swapaxes(-1, -2))


SVD_GRADS = [  # name, function of the differentiated matrix, the matrix (lstsq, norm and cond are svd's)
    ("svdvals", lambda la, a: la.svdvals(a), M43S), ("svd uv 5x4", _pairs, M54), ("svd uv 3x5", _pairs, M35),
    ("pinv 3x5", lambda la, a: la.pinv(a), M35), ("pinv 4x4", lambda la, a: la.pinv(a), A4),
]


@pytest.mark.parametrize("name,fn,x", SVD_GRADS, ids=[g[0] for g in SVD_GRADS])
def test_svd_derivatives_against_jax(name, fn, x):
    """As test_derivatives_against_jax, JAX's side under jax.jit (op by op, its SVD derivative
    takes seconds)."""
    weights = RNG.normal(size=np.shape(fn(jnp.linalg, x))).astype(np.float32)
    got = loom.jit(loom.grad(lambda x: lnp.sum(fn(lnp.linalg, x) * weights)))(x)
    want = jax.jit(jax.grad(lambda x: jnp.sum(fn(jnp.linalg, x) * weights)))(x)
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-3, atol=2e-4)
    tangent = RNG.normal(size=x.shape).astype(np.float32)
    _, got_t = loom.jvp(lambda x: fn(lnp.linalg, x), (x,), (tangent,))
    _, want_t = jax.jit(lambda x, t: jax.jvp(lambda x: fn(jnp.linalg, x), (x,), (t,)))(x, tangent)
    np.testing.assert_allclose(np.asarray(got_t), np.asarray(want_t), rtol=2e-3, atol=2e-4)


def test_full_matrices_derivative():
    """JAX has no derivative for the complete factors of a non-square matrix: loom's thin part
    is JAX's thin derivative, the rest keeps the factor orthogonal (u^T du antisymmetric)."""
    tangent = RNG.normal(size=M54.shape).astype(np.float32)
    (u, _, _), (du, ds, _) = loom.jvp(lambda a: lnp.linalg.svd(a), (M54,), (tangent,))
    (ju, _, _), (jdu, jds, _) = jax.jvp(lambda a: jnp.linalg.svd(a, full_matrices=False), (M54,), (tangent,))
    u, du, ju, jdu = (np.asarray(x) for x in (u, du, ju, jdu))
    sign = np.sign(np.sum(u[:, :4] * ju, axis=0))
    np.testing.assert_allclose(du[:, :4] * sign, jdu, rtol=2e-3, atol=2e-4)
    np.testing.assert_allclose(np.asarray(ds), np.asarray(jds), rtol=2e-3, atol=2e-4)
    omega = u.T @ du
    np.testing.assert_allclose(omega, -omega.T, atol=1e-4)


def test_vmap_of_svd_against_jax():
    np.testing.assert_allclose(np.asarray(loom.vmap(lnp.linalg.svdvals)(M43S)),
                               np.asarray(jax.vmap(jnp.linalg.svdvals)(M43S)), rtol=1e-5, atol=1e-6)
    u, s, vh = (np.asarray(x) for x in loom.vmap(lnp.linalg.svd)(M43S))
    _matched_factors(u, vh, *(np.asarray(x) for x in jax.vmap(jnp.linalg.svd)(M43S)[::2]), 3)


def test_svd_errors():
    with pytest.raises(ValueError, match=r"svd: a must be a matrix or a stack of them, but got shape \(3,\)"):
        loom.jit(lnp.linalg.svd)(V3)
    with pytest.raises(ValueError, match="svdvals: a must be a matrix"):
        lnp.linalg.svdvals(V3)
    with pytest.raises(ValueError, match="pinv: a must be a matrix"):
        lnp.linalg.pinv(V3)
    with pytest.raises(ValueError, match="cond: a must be a matrix"):
        lnp.linalg.cond(V3)
    with pytest.raises(ValueError, match="cond: for p=1 x must be square"):
        lnp.linalg.cond(M54, p=1)
    with pytest.raises(TypeError, match=r"lstsq: a must be a matrix \(2-D\), but got shape \(2, 4, 3\)"):
        lnp.linalg.lstsq(M43S, B4)
    with pytest.raises(ValueError, match="lstsq: b has 4 rows for a 5 x 4 matrix"):
        loom.jit(lnp.linalg.lstsq)(M54, B4)
    with pytest.raises(ValueError, match="svd: a hermitian matrix must be square"):
        lnp.linalg.svd(M54, hermitian=True)
    with pytest.raises(ValueError, match="pinv: only one of rtol and rcond"):
        lnp.linalg.pinv(A4, rtol=0.1, rcond=0.1)
    with pytest.raises(NotImplementedError, match="svd: subset_by_index is not implemented"):
        lnp.linalg.svd(A4, subset_by_index=(0, 2))


@pytest.mark.parametrize("n", [50, 100])
def test_jacobi_factorizations_converge_at_larger_sizes(n):
    """The Jacobi loops of `eigh` and `svd` under jit iterate to convergence (not a fixed number
    of sweeps): eigenvalues and singular values of n x n matrices agree with numpy's LAPACK to
    float32 rounding, and the factors reconstruct the matrix."""
    rng = np.random.default_rng(n)
    a = rng.normal(size=(n, n)).astype(np.float32)
    sym = (a + a.T) / 2
    w, v = (np.asarray(x) for x in loom.jit(lnp.linalg.eigh)(sym))
    scale = np.abs(np.linalg.eigvalsh(sym.astype(np.float64))).max()
    np.testing.assert_allclose(w, np.linalg.eigvalsh(sym.astype(np.float64)), atol=1e-5 * n * scale)
    np.testing.assert_allclose((v * w) @ v.T, sym, atol=1e-5 * n * scale)
    np.testing.assert_allclose(v.T @ v, np.eye(n), atol=1e-5 * n)
    u, s, vh = (np.asarray(x) for x in loom.jit(lnp.linalg.svd)(a))
    want = np.linalg.svd(a.astype(np.float64), compute_uv=False)
    np.testing.assert_allclose(s, want, atol=1e-5 * n * want[0])
    np.testing.assert_allclose((u * s) @ vh, a, atol=1e-5 * n * want[0])
