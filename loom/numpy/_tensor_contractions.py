"""Products of arrays: matmul, dot, einsum, tensordot, outer, inner, vdot, kron, cross and the
array-API vecdot / matvec / vecmat, lowered to `stablehlo.dot_general`.

Inside `loom.jit` the functions take tracers and insert StableHLO ops (with JAX's dtype
promotion); on plain arrays they run NumPy directly.
"""

from __future__ import annotations

import builtins
from collections.abc import Sequence
from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.dialects.stablehlo import DotDimensionNumbers
from loom.frontend.tracing import (
    ConcretizationError,
    IncompatibleShapesError,
    Tracer,
    promote_types,
    scalar_dtype,
    user_line,
)
from loom.frontend.tracing import broadcast_shapes as _broadcast_shapes
from loom.frontend.tracing import broadcast_to_shape as _broadcast
from loom.frontend.tracing import lift as _lift
from loom.frontend.tracing import trace_of as _trace_of
from loom.numpy import _lax_numpy as lax_numpy
from loom.numpy import _reductions as reductions
from loom.numpy import _ufuncs as ufuncs
from loom.numpy._util import ArrayLike, is_traced, lift_all


def matmul(x: ArrayLike, y: ArrayLike) -> Any:
    """Matrix product with numpy's rules (1-D operands, broadcast batch dimensions), lowered to
    `stablehlo.dot_general`."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.matmul(x, y)
    d, weak = promote_types(scalar_dtype(x), scalar_dtype(y))
    a, b = _lift(trace, x, d, weak), _lift(trace, y, d, weak)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: operands must not be scalars, got shapes {a.shape} and {b.shape} "
                         f"(at {user_line()})")
    ka = a.shape[-1]
    kb_dim = 0 if b.ndim == 1 else b.ndim - 2
    if ka != b.shape[kb_dim]:
        raise IncompatibleShapesError(f"matmul: contracting dimensions differ: shapes {a.shape} and {b.shape} "
                         f"({ka} != {b.shape[kb_dim]}) at {user_line()}")
    if (a.ndim >= 3 or b.ndim >= 3) and a.ndim >= 2 and b.ndim >= 2:
        bshape = _broadcast_shapes(a.shape[:-2], b.shape[:-2])
        a = _broadcast(a, (*bshape, *a.shape[-2:]))
        b = _broadcast(b, (*bshape, *b.shape[-2:]))
        batch = len(bshape)
    else:
        batch = 0
    dims = tuple(range(batch))
    dn = DotDimensionNumbers.get(lhs_batching_dimensions=dims, rhs_batching_dimensions=dims,
                             lhs_contracting_dimensions=(a.ndim - 1,),
                             rhs_contracting_dimensions=(0 if b.ndim == 1 else b.ndim - 2,))
    return Tracer(stablehlo.dot_general(trace.emit(), a.value, b.value, dn), trace, weak)


def dot(x: ArrayLike, y: ArrayLike) -> Any:
    """`numpy.dot` for operands of rank at most 2 (scalars multiply)."""
    trace = _trace_of(x, y)
    if trace is None:
        return np.dot(x, y)
    if np.ndim(x) == 0 or np.ndim(y) == 0:
        return ufuncs.multiply(x, y)
    if np.ndim(x) > 2 or np.ndim(y) > 2:
        raise NotImplementedError(f"dot of operands of rank > 2 is not supported yet (at {user_line()})")
    return matmul(x, y)


def _dot_general(a: Tracer, b: Tracer, contract: tuple[Sequence[int], Sequence[int]],
                 batch: tuple[Sequence[int], Sequence[int]] = ((), ())) -> Tracer:
    """`stablehlo.dot_general`: result axes are batch, free axes of `a`, free axes of `b`."""
    trace = a.trace
    dn = DotDimensionNumbers.get(lhs_batching_dimensions=tuple(batch[0]), rhs_batching_dimensions=tuple(batch[1]),
                                 lhs_contracting_dimensions=tuple(contract[0]),
                                 rhs_contracting_dimensions=tuple(contract[1]))
    return Tracer(stablehlo.dot_general(trace.emit(), a.value, b.value, dn), trace, a.weak and b.weak)


def _promote_pair(x: ArrayLike, y: ArrayLike) -> tuple[Tracer, Tracer]:
    trace = _trace_of(x, y)
    d, weak = promote_types(scalar_dtype(x), scalar_dtype(y))
    return _lift(trace, x, d, weak), _lift(trace, y, d, weak)


def tensordot(a: ArrayLike, b: ArrayLike, axes: int | Sequence[Any] = 2) -> Any:
    """`numpy.tensordot`: contract the last `axes` axes of `a` with the first of `b`, or the
    axes listed in the pair `axes`."""
    if _trace_of(a, b) is None:
        return np.tensordot(a, b, axes)
    x, y = _promote_pair(a, b)
    if isinstance(axes, (int, np.integer)):
        n = int(axes)
        ax_a, ax_b = list(range(x.ndim - n, x.ndim)), list(range(n))
    else:
        ax_a, ax_b = axes
        ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
        ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
    ax_a = [int(i) % x.ndim for i in ax_a]
    ax_b = [int(i) % y.ndim for i in ax_b]
    if len(ax_a) != len(ax_b) or [x.shape[i] for i in ax_a] != [y.shape[i] for i in ax_b]:
        raise ValueError(f"tensordot: shape mismatch between {x.shape} (axes {ax_a}) and {y.shape} (axes {ax_b}) "
                         f"(at {user_line()})")
    return _dot_general(x, y, (ax_a, ax_b))


def outer(a: ArrayLike, b: ArrayLike) -> Any:
    """The outer product of the flattened `a` and `b`."""
    if _trace_of(a, b) is None:
        return np.outer(a, b)
    x, y = _promote_pair(a, b)
    return ufuncs.multiply(lax_numpy.reshape(x, (-1, 1)), lax_numpy.reshape(y, (1, -1)))


def _expand_ellipses(inputs: list[str], out: str | None, ranks: list[int],
                     spec: str) -> tuple[list[str], str | None, str]:
    """Replace each `...` by labels not used in `spec`, aligned on the right across operands;
    also returns the labels of the widest ellipsis."""
    unused = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in spec]
    counts = [rank - (len(term) - 3) if "..." in term else 0 for term, rank in zip(inputs, ranks)]
    for term, rank, n in zip(inputs, ranks, counts):
        if n < 0:
            raise ValueError(f"einsum: term {term!r} has too many labels for rank {rank} (at {user_line()})")
    widest = builtins.max(counts, default=0)
    expanded = [term.replace("...", "".join(unused[widest - n:widest])) for term, n in zip(inputs, counts)]
    ell = "".join(unused[:widest])
    return expanded, None if out is None else out.replace("...", ell), ell


def einsum(spec: str, *operands: ArrayLike) -> Any:
    """`numpy.einsum` in explicit (`->`) or implicit form, with ellipses, lowered to reductions,
    `stablehlo.dot_general` (operands contracted pairwise, left to right) and
    `stablehlo.transpose`. Inside `loom.jit`, a label repeated within one operand (a diagonal)
    and ellipsis dimensions that would broadcast (sizes differ) are not supported."""
    if _trace_of(*operands) is None:
        return np.einsum(spec, *operands)
    trace = _trace_of(*operands)
    spec = spec.replace(" ", "")
    lhs, out = spec.split("->") if "->" in spec else (spec, None)
    inputs = lhs.split(",")
    if len(inputs) != len(operands):
        raise ValueError(f"einsum: {spec!r} names {len(inputs)} operands but {len(operands)} were given "
                         f"(at {user_line()})")
    d, weak = promote_types(*(scalar_dtype(o) for o in operands))
    ts = [_lift(trace, o, d, weak) for o in operands]
    if "." in spec:
        if builtins.any(t.replace("...", "").count(".") for t in (*inputs, out or "")):
            raise ValueError(f"einsum: a '.' outside an ellipsis in {spec!r} (at {user_line()})")
        inputs, out, ell = _expand_ellipses(inputs, out, [t.ndim for t in ts], spec)
        if out is None:  # implicit form: the ellipsis labels first, then the others sorted
            labels = "".join(inputs)
            out = ell + "".join(sorted(c for c in set(labels) if labels.count(c) == 1 and c not in ell))
    if out is None:
        labels = "".join(inputs)
        out = "".join(sorted(c for c in set(labels) if labels.count(c) == 1))
    for term in (*inputs, out):
        if not builtins.all(c.isalpha() for c in term) or len(set(term)) != len(term):
            raise NotImplementedError(f"einsum: term {term!r} of {spec!r} repeats a label or has a character that "
                                      f"is not a letter; diagonals are not supported (at {user_line()})")
    for term, t in zip(inputs, ts):
        if len(term) != t.ndim:
            raise ValueError(f"einsum: term {term!r} has {len(term)} labels for an operand of shape {t.shape} "
                             f"(at {user_line()})")
    if set(out) - set("".join(inputs)):
        raise ValueError(f"einsum: output labels of {spec!r} do not appear in the inputs (at {user_line()})")
    sizes: dict[str, int] = {}
    for term, t in zip(inputs, ts):
        for c, n in zip(term, t.shape):
            if sizes.setdefault(c, n) != n:
                raise ValueError(f"einsum: label {c!r} of {spec!r} has sizes {sizes[c]} and {n}; broadcasting is "
                                 f"not supported (at {user_line()})")
    # Sum out the labels only one operand has and the output lacks.
    terms = list(inputs)
    for k, (term, t) in enumerate(zip(terms, ts)):
        others = "".join(terms[:k] + terms[k + 1:]) + out
        drop = [i for i, c in enumerate(term) if c not in others]
        if drop:
            ts[k] = reductions.sum(t, axis=tuple(drop), dtype=_same_dtype(t))
            terms[k] = "".join(c for i, c in enumerate(term) if i not in drop)
    # Contract pairwise, left to right, keeping the labels later operands or the output need.
    while len(ts) > 1:
        ta, tb = terms[0], terms[1]
        keep = "".join(terms[2:]) + out
        batch = [c for c in ta if c in tb and c in keep]
        contract = [c for c in ta if c in tb and c not in keep]
        t = _dot_general(ts[0], ts[1], ([ta.index(c) for c in contract], [tb.index(c) for c in contract]),
                         ([ta.index(c) for c in batch], [tb.index(c) for c in batch]))
        term = "".join(batch) + "".join(c for c in ta if c not in tb) + "".join(c for c in tb if c not in ta)
        terms, ts = [term, *terms[2:]], [t, *ts[2:]]
    return lax_numpy.transpose(ts[0], [terms[0].index(c) for c in out])


def vecdot(a: ArrayLike, b: ArrayLike, axis: int = -1) -> Any:
    """The dot products of the vectors along `axis` (broadcasting the other axes)."""
    if lax_numpy.shape(a)[axis] != lax_numpy.shape(b)[axis]:
        raise ValueError(
            f"vecdot: axis {axis} has size {lax_numpy.shape(a)[axis]} in a and {lax_numpy.shape(b)[axis]} in b"
        )
    product = ufuncs.multiply(a, b)
    return reductions.sum(product, axis=axis, dtype=_same_dtype(product))


def _same_dtype(x: ArrayLike) -> Any:
    """The dtype a contraction's sum keeps (JAX's contractions sum in their operands' dtype; a
    plain `sum` widens narrow integers); None for bools, which sum as integers."""
    dtype = np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype
    return None if dtype.kind == "b" else dtype


def matvec(a: ArrayLike, v: ArrayLike) -> Any:
    """Matrix-vector products over stacks: `a[..., m, n] @ v[..., n]`."""
    return matmul(a, lax_numpy.expand_dims(v, -1))[..., 0]


def vecmat(v: ArrayLike, a: ArrayLike) -> Any:
    """Vector-matrix products over stacks: `v[..., m] @ a[..., m, n]`."""
    return matmul(lax_numpy.expand_dims(v, -2), a)[..., 0, :]


def cross(a: ArrayLike, b: ArrayLike, axis: int = -1) -> Any:
    """The cross product of 3-vectors along `axis` (broadcast)."""
    if not is_traced(a, b):
        return np.cross(a, b, axis=axis)
    a, b = lift_all([a, b])
    a, b = lax_numpy.moveaxis(a, axis, -1), lax_numpy.moveaxis(b, axis, -1)
    if a.shape[-1] != 3 or b.shape[-1] != 3:
        raise ConcretizationError(f"cross: only 3-vectors are supported inside loom.jit, got shapes {a.shape} and "
                                  f"{b.shape} (at {user_line()})")
    a0, a1, a2 = (a[..., i] for i in range(3))
    b0, b1, b2 = (b[..., i] for i in range(3))
    return lax_numpy.stack(
        [
            ufuncs.subtract(ufuncs.multiply(a1, b2), ufuncs.multiply(a2, b1)),
            ufuncs.subtract(ufuncs.multiply(a2, b0), ufuncs.multiply(a0, b2)),
            ufuncs.subtract(ufuncs.multiply(a0, b1), ufuncs.multiply(a1, b0)),
        ],
        axis=-1,
    )


def kron(a: ArrayLike, b: ArrayLike) -> Any:
    """The Kronecker product."""
    if not is_traced(a, b):
        return np.kron(a, b)
    a, b = lift_all([a, b])
    n = builtins.max(a.ndim, b.ndim)
    a, b = lax_numpy.reshape(a, (1,) * (n - a.ndim) + a.shape), lax_numpy.reshape(b, (1,) * (n - b.ndim) + b.shape)
    prod = ufuncs.multiply(lax_numpy.reshape(a, [d for s in a.shape for d in (s, 1)]),
                           lax_numpy.reshape(b, [d for s in b.shape for d in (1, s)]))
    return lax_numpy.reshape(prod, [x * y for x, y in zip(a.shape, b.shape)])


def inner(a: ArrayLike, b: ArrayLike) -> Any:
    """The sum of products over the last axes."""
    if not is_traced(a, b):
        return np.inner(a, b)
    if len(lax_numpy.shape(a)) == 0 or len(lax_numpy.shape(b)) == 0:
        return ufuncs.multiply(a, b)
    return tensordot(a, b, axes=([-1 % len(lax_numpy.shape(a))], [-1 % len(lax_numpy.shape(b))]))


def vdot(a: ArrayLike, b: ArrayLike) -> Any:
    """The dot product of the flattened inputs (the first conjugated)."""
    if not is_traced(a, b):
        return np.vdot(a, b)
    a, b = lift_all([a, b])
    return matmul(lax_numpy.ravel(ufuncs.conjugate(a)), lax_numpy.ravel(b))


__all__ = ["cross", "dot", "einsum", "inner", "kron", "matmul", "matvec", "outer", "tensordot", "vdot", "vecdot",
    "vecmat"]
