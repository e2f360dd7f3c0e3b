"""`loom.lax.linalg`: the linear-algebra primitives StableHLO has ops for, with the signatures of
`jax.lax.linalg`: `triangular_solve` (`stablehlo.triangular_solve`) and `cholesky`
(`stablehlo.cholesky`). Their derivatives and batching rules are the ops' own (loom.ops.linalg),
so `grad`, `jvp` and `vmap` go through them."""

from __future__ import annotations

from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.dialects.stablehlo import TransposeAttr
from loom.frontend.tracing import Tracer, dtype_kind, user_line
from loom.ir.attributes import BoolAttr
from loom.ir.types import RankedTensorType
from loom.lax.ops import same_dtype, traced_op

Array = Any


def _check_matrices(name: str, x: Tracer) -> int:
    if x.ndim < 2 or x.shape[-1] != x.shape[-2]:
        raise TypeError(f"lax.linalg.{name}: expected a batch of square matrices, got shape {x.shape} "
                        f"(at {user_line()})")
    if dtype_kind(x.dtype) not in "fc":
        raise TypeError(f"lax.linalg.{name} does not accept dtype {x.dtype} (at {user_line()})")
    return x.shape[-1]


def _conj(x: Tracer) -> Tracer:
    if dtype_kind(x.dtype) != "c":
        return x
    b = x.trace.emit()
    return Tracer(stablehlo.complex_(b, stablehlo.real(b, x.value), stablehlo.negate(b, stablehlo.imag(b, x.value))),
                  x.trace, x.weak)


def _matrix_transpose(x: Tracer) -> Tracer:
    r = x.ndim
    return Tracer(stablehlo.transpose(x.trace.emit(), x.value, [*range(r - 2), r - 1, r - 2]), x.trace, x.weak)


@traced_op("a", "b")
def triangular_solve(a: Array, b: Array, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False) -> Array:
    """Solve `op(a) x = b` (`left_side`) or `x op(a) = b` for `x`, reading only the lower (or upper)
    triangle of `a` (its diagonal taken as ones with `unit_diagonal`); `op` transposes with
    `transpose_a` and conjugates with `conjugate_a`. As `jax.lax.linalg.triangular_solve`."""
    a_t, b_t = same_dtype(a, b)
    m = _check_matrices("triangular_solve", a_t)
    if b_t.ndim != a_t.ndim or b_t.shape[:-2] != a_t.shape[:-2] or b_t.shape[-2 if left_side else -1] != m:
        raise TypeError(f"lax.linalg.triangular_solve: b of shape {b_t.shape} does not fit a of shape {a_t.shape} "
                        f"with left_side={left_side} (at {user_line()})")
    if conjugate_a and not transpose_a:
        a_t = _conj(a_t)
    transpose = "NO_TRANSPOSE" if not transpose_a else "ADJOINT" if conjugate_a else "TRANSPOSE"
    props = {"left_side": BoolAttr(left_side), "lower": BoolAttr(lower), "unit_diagonal": BoolAttr(unit_diagonal),
             "transpose_a": TransposeAttr(transpose)}
    op = a_t.trace.emit().create("stablehlo.triangular_solve", [a_t.value, b_t.value], [b_t.value.type], props)
    return Tracer(op.results[0], a_t.trace, a_t.weak and b_t.weak)


@traced_op("x")
def cholesky(x: Array, symmetrize_input: bool = True) -> Array:
    """The lower Cholesky factor `L` of Hermitian positive definite matrices (`x = L L^H`), NaNs
    where a matrix is not positive definite. With `symmetrize_input`, of `(x + x^H) / 2`; else of
    the matrix the lower triangle of `x` stands for. As `jax.lax.linalg.cholesky`."""
    t = same_dtype(x)[0]
    _check_matrices("cholesky", t)
    if symmetrize_input:
        b = t.trace.emit()
        total = stablehlo.add(b, t.value, _conj(_matrix_transpose(t)).value)
        half_type = RankedTensorType((), t.value.type.element_type)
        half = stablehlo.constant(b, np.asarray(0.5, t.dtype), half_type)
        half = stablehlo.broadcast_in_dim(b, half, t.shape, [])
        t = Tracer(stablehlo.multiply(b, total, half), t.trace, t.weak)
    op = t.trace.emit().create("stablehlo.cholesky", [t.value], [t.value.type], {"lower": BoolAttr(True)})
    return Tracer(op.results[0], t.trace, t.weak)


__all__ = ["cholesky", "triangular_solve"]
