"""stablehlo.triangular_solve and stablehlo.cholesky in every executor (the spec's examples,
XLA's values, the spec's corner cases) and loom.lax.linalg's bindings with their derivatives and
batching (against JAX's transformations and float64 finite differences)."""

from __future__ import annotations

import itertools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from support.executors import assert_all_close, module
from support.oracles import finite_differences, run_xla

import loom
import loom.numpy as lnp
from loom import lax
from loom.frontend.tracing import Tracer
from loom.ir.attributes import BoolAttr
from loom.lax.ops import same_dtype

pytestmark = pytest.mark.usefixtures("jax_x64", "loom_x64")


def _solve_text(a_shape, b_shape, dtype, left_side, lower, unit, transpose):
    ta = f"tensor<{'x'.join(map(str, a_shape))}x{dtype}>"
    tb = f"tensor<{'x'.join(map(str, b_shape))}x{dtype}>"
    return module(f"""func.func @main(%a: {ta}, %b: {tb}) -> {tb} {{
  %0 = "stablehlo.triangular_solve"(%a, %b) {{left_side = {str(left_side).lower()}, lower = {str(lower).lower()},
    unit_diagonal = {str(unit).lower()}, transpose_a = #stablehlo<transpose {transpose}>}} : ({ta}, {tb}) -> {tb}
  return %0 : {tb}
}}""")


def _cholesky_text(shape, dtype, lower):
    t = f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
    return module(f"""func.func @main(%a: {t}) -> {t} {{
  %0 = stablehlo.cholesky %a, lower = {str(lower).lower()} : {t}
  return %0 : {t}
}}""")


def test_triangular_solve_spec_example():
    a = np.array([[1.0, 0.0, 0.0], [2.0, 4.0, 0.0], [3.0, 5.0, 6.0]], np.float32)
    b = np.array([[2.0, 0.0, 0.0], [4.0, 8.0, 0.0], [6.0, 10.0, 12.0]], np.float32)
    assert_all_close(_solve_text((3, 3), (3, 3), "f32", True, True, False, "NO_TRANSPOSE"), [a, b],
                     np.array([[2.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 2.0]], np.float32), atol=1e-6)


@pytest.mark.parametrize("left_side,lower,unit,transpose",
                         list(itertools.product([True, False], [True, False], [True, False],
                                                ["NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"])))
def test_triangular_solve_against_xla(left_side, lower, unit, transpose):
    """Every option, batched, with garbage in the triangle the op must not read."""
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 4, 4)) + 3 * np.eye(4)
    b = rng.normal(size=(2, 4, 3) if left_side else (2, 3, 4))
    text = _solve_text(a.shape, b.shape, "f64", left_side, lower, unit, transpose)
    (want,) = run_xla(text, [a, b])
    assert_all_close(text, [a, b], want, rtol=1e-10, atol=1e-12)


def test_triangular_solve_complex_adjoint_against_xla():
    rng = np.random.default_rng(1)
    a = (rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)) + 3 * np.eye(3)).astype(np.complex64)
    b = (rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))).astype(np.complex64)
    text = _solve_text(a.shape, b.shape, "complex<f32>", True, False, False, "ADJOINT")
    (want,) = run_xla(text, [a, b])
    assert_all_close(text, [a, b], want, rtol=1e-5, atol=1e-5)


def test_triangular_solve_singular_and_empty():
    """A zero on the diagonal gives non-finite values, no error (XLA's are NaN, the spec leaves
    them open; loom's are substitution's IEEE quotients 1/0 = inf, then 1 - inf = -inf); empty
    batches and right-hand sides give empty results."""
    a = np.array([[0.0, 0.0], [1.0, 1.0]], np.float32)
    b = np.array([[1.0], [1.0]], np.float32)
    text = _solve_text((2, 2), (2, 1), "f32", True, True, False, "NO_TRANSPOSE")
    (want,) = run_xla(text, [a, b])
    assert not np.isfinite(want).any()
    assert_all_close(text, [a, b], np.array([[np.inf], [-np.inf]], np.float32))
    empty = _solve_text((0, 3, 3), (0, 3, 2), "f32", True, True, False, "NO_TRANSPOSE")
    assert_all_close(empty, [np.zeros((0, 3, 3), np.float32), np.zeros((0, 3, 2), np.float32)],
                     np.zeros((0, 3, 2), np.float32))
    no_columns = _solve_text((3, 3), (3, 0), "f32", True, True, False, "NO_TRANSPOSE")
    assert_all_close(no_columns, [np.eye(3, dtype=np.float32), np.zeros((3, 0), np.float32)],
                     np.zeros((3, 0), np.float32))


def test_cholesky_spec_example():
    a = np.array([[1.0, 2.0, 3.0], [2.0, 20.0, 26.0], [3.0, 26.0, 70.0]], np.float32)
    assert_all_close(_cholesky_text((3, 3), "f32", True), [a],
                     np.array([[1.0, 0.0, 0.0], [2.0, 4.0, 0.0], [3.0, 5.0, 6.0]], np.float32), rtol=1e-6)


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("dtype,np_dtype,tol", [("f64", np.float64, 1e-12), ("f32", np.float32, 1e-5),
                                                ("complex<f64>", np.complex128, 1e-12)])
def test_cholesky_against_xla(lower, dtype, np_dtype, tol):
    """A batch with one matrix that is not positive definite (NaNs, as XLA) and garbage in the
    triangle the op must not read; loom puts zeros in it, XLA leaves it unspecified."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 4, 4)) + (1j * rng.normal(size=(3, 4, 4)) if np_dtype == np.complex128 else 0)
    a = x @ np.conj(np.swapaxes(x, -1, -2)) + np.eye(4)
    a[1] = -a[1]
    garbage = np.triu(np.full((4, 4), 7.0), 1)
    a = (a + (garbage if lower else garbage.T)).astype(np_dtype)
    text = _cholesky_text(a.shape, dtype, lower)
    (want,) = run_xla(text, [a])
    keep = np.tril(np.ones((4, 4), bool)) if lower else np.triu(np.ones((4, 4), bool))
    want = np.where(keep, want, 0)
    assert np.isnan(want[1][keep]).all() and not np.isnan(want[0]).any()
    assert_all_close(text, [a], want.astype(np_dtype), rtol=tol, atol=tol)


# --- loom.lax.linalg: values, derivatives, batching ----------------------------------------------

SOLVE_OPTIONS = [dict(left_side=True, lower=True), dict(left_side=False, lower=False, transpose_a=True),
                 dict(left_side=True, lower=False, transpose_a=True, unit_diagonal=True),
                 dict(left_side=False, lower=True, unit_diagonal=True)]


def _operands(kw, batch=()):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(*batch, 3, 3)) + 3 * np.eye(3)
    b = rng.normal(size=(*batch, 3, 2) if kw["left_side"] else (*batch, 2, 3))
    return a, b


@pytest.mark.parametrize("kw", SOLVE_OPTIONS)
def test_lax_triangular_solve_values_grad_jvp(kw):
    a, b = _operands(kw)
    np.testing.assert_allclose(lax.linalg.triangular_solve(a, b, **kw), jax.lax.linalg.triangular_solve(a, b, **kw),
                               rtol=1e-12)

    def jf(a, b):
        return jnp.sum(jnp.sin(jax.lax.linalg.triangular_solve(a, b, **kw)))

    def lf(a, b):
        return lnp.sum(lnp.sin(lax.linalg.triangular_solve(a, b, **kw)))
    for got, want in zip(loom.grad(lf, (0, 1))(a, b), jax.grad(jf, (0, 1))(a, b)):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    ta, tb = np.cos(a), np.sin(b)
    np.testing.assert_allclose(loom.jvp(lf, (a, b), (ta, tb))[1], jax.jvp(jf, (a, b), (ta, tb))[1], rtol=1e-10)
    np.testing.assert_allclose(loom.grad(lf)(a, b), finite_differences(lf, [a, b], 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kw", SOLVE_OPTIONS[:2])
def test_lax_triangular_solve_vmap(kw):
    a, b = _operands(kw, batch=(2,))
    for in_axes in [(0, 0), (0, None), (None, 0)]:
        aa = a if in_axes[0] == 0 else a[0]
        bb = b if in_axes[1] == 0 else b[0]

        def solve(module):
            return lambda x, y: module.linalg.triangular_solve(x, y, **kw)
        np.testing.assert_allclose(loom.vmap(solve(lax), in_axes)(aa, bb), jax.vmap(solve(jax.lax), in_axes)(aa, bb),
                                   rtol=1e-12)


@pytest.mark.parametrize("symmetrize", [True, False])
def test_lax_cholesky_values_grad_jvp(symmetrize):
    rng = np.random.default_rng(4)
    x = rng.normal(size=(4, 4))
    s = x @ x.T + np.eye(4)
    np.testing.assert_allclose(lax.linalg.cholesky(s, symmetrize), np.linalg.cholesky(s), rtol=1e-12)

    def jf(s):
        return jnp.sum(jnp.sin(jax.lax.linalg.cholesky(s, symmetrize_input=symmetrize)))

    def lf(s):
        return lnp.sum(lnp.sin(lax.linalg.cholesky(s, symmetrize)))
    t = rng.normal(size=(4, 4))
    t = t + t.T  # JAX's rule assumes a symmetric tangent; loom's reads the lower triangle, as the op
    np.testing.assert_allclose(loom.jvp(lf, (s,), (t,))[1], jax.jvp(jf, (s,), (t,))[1], rtol=1e-10)
    if symmetrize:
        np.testing.assert_allclose(loom.grad(lf)(s), jax.grad(jf)(s), rtol=1e-10, atol=1e-12)
    # the op reads the lower triangle only: differences of the function as the op computes it
    np.testing.assert_allclose(loom.grad(lf)(s), finite_differences(lf, [s], 0), rtol=1e-6, atol=1e-8)


def _upper_cholesky(x):
    """`stablehlo.cholesky` with `lower = false` in a trace (jax.lax has no binding for it)."""
    t = same_dtype(x)[0]
    op = t.trace.emit().create("stablehlo.cholesky", [t.value], [t.value.type], {"lower": BoolAttr(False)})
    return Tracer(op.results[0], t.trace, t.weak)


def test_cholesky_upper_derivatives_by_differences():
    """The upper factor reads the upper triangle: its derivatives against differences of the
    function as the op computes it, its value the transpose of the lower factor."""
    rng = np.random.default_rng(5)
    x = rng.normal(size=(3, 3))
    s = x @ x.T + np.eye(3)

    def f(a):
        return lnp.sum(lnp.sin(_upper_cholesky(a)))
    np.testing.assert_allclose(loom.jit(_upper_cholesky)(s), np.linalg.cholesky(s).T, rtol=1e-12)
    np.testing.assert_allclose(loom.grad(f)(s), finite_differences(f, [s], 0), rtol=1e-6, atol=1e-8)
    t = rng.normal(size=(3, 3))
    eps = 1e-6
    differences = (loom.jit(f)(s + eps * t) - loom.jit(f)(s - eps * t)) / (2 * eps)
    np.testing.assert_allclose(loom.jvp(f, (s,), (t,))[1], differences, rtol=1e-6)


def test_lax_cholesky_vmap():
    rng = np.random.default_rng(6)
    x = rng.normal(size=(3, 4, 4))
    s = x @ np.swapaxes(x, -1, -2) + np.eye(4)
    np.testing.assert_allclose(loom.vmap(lax.linalg.cholesky)(s), jax.vmap(jax.lax.linalg.cholesky)(s), rtol=1e-12)
