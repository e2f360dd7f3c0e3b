"""`loom.jacfwd`, `loom.jacrev` and `loom.hessian`, as JAX builds them: `vmap` of `jvp` over the
standard basis of the inputs (forward mode, one column per input element), `vmap` of `vjp` over
the standard basis of the outputs (reverse mode, one row per output element), and
`jacfwd(jacrev(f))`. Work anywhere `vmap`, `jvp` and `vjp` do: eagerly and inside `jit`.

The Jacobian has the structure of the output, each leaf replaced by the structure of the
differentiated argument (a tuple of them when `argnums` is a tuple), its leaves of shape
`output_leaf.shape + input_leaf.shape`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.frontend.grad import vjp
from loom.frontend.jit import abstract_value
from loom.frontend.jvp import jvp
from loom.frontend.pytree import tree_flatten, tree_unflatten
from loom.frontend.tracing import is_floating, user_line
from loom.frontend.vmap import vmap


def _argnums(argnums: int | Sequence[int], n: int, name: str) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for i in nums:
        if not -n <= i < n:
            raise ValueError(f"{name}: argnums {i} is out of range for a function called with {n} positional "
                             "arguments")
    return tuple(i % n for i in nums)


def _aval(x: Any) -> tuple[tuple[int, ...], np.dtype]:
    return abstract_value(x if hasattr(x, "shape") and hasattr(x, "dtype") else np.asarray(x))


def _basis(avals: list[tuple[tuple[int, ...], np.dtype]]) -> list[np.ndarray]:
    """The standard basis of the flattened leaves: leaf j as an (n, *shape_j) array, n the total
    number of elements, row i the i-th unit vector's part in leaf j."""
    sizes = [int(np.prod(s)) for s, _ in avals]
    eye = np.eye(sum(sizes))
    out, offset = [], 0
    for (shape, dtype), size in zip(avals, sizes):
        out.append(eye[:, offset:offset + size].reshape((sum(sizes), *shape)).astype(dtype))
        offset += size
    return out


def _check_float(avals: list, what: str, name: str) -> None:
    for shape, dtype in avals:
        if not is_floating(dtype):
            raise TypeError(f"{name} requires real-valued {what} (a floating dtype), but got {dtype.name}"
                            f"{list(shape)} (at {user_line()})")


def _partial(fun: Callable[..., Any], args: tuple, nums: tuple[int, ...]) -> Callable[..., Any]:
    def f(*dyn: Any) -> Any:
        full = list(args)
        for i, v in zip(nums, dyn):
            full[i] = v
        return fun(*full)
    return f


def _prepare(fun: Callable[..., Any], args: tuple, argnums: int | Sequence[int], name: str) -> tuple:
    """(`fun` of the differentiated arguments only, those arguments, their tree, their leaves'
    (shape, dtype)), checked to be floating."""
    nums = _argnums(argnums, len(args), name)
    dyn = tuple(args[i] for i in nums)
    leaves, tree = tree_flatten(dyn)
    avals = [_aval(x) for x in leaves]
    _check_float(avals, "inputs", name)
    return _partial(fun, args, nums), dyn, tree, avals


def _per_output(out_tree: Any, in_trees: list[Any], single: bool, blocks: list[list[Any]]) -> Any:
    """blocks[i][j]: the (output leaf i, input leaf j) block, input leaves of all arguments in
    order; assembled as the output's structure of (tuples of) the arguments' structures."""
    rows = []
    for row in blocks:
        it = iter(row)
        per_arg = [tree_unflatten(t, [next(it) for _ in range(t.num_leaves)]) for t in in_trees]
        rows.append(per_arg[0] if single else tuple(per_arg))
    return tree_unflatten(out_tree, rows)


def jacrev(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of `fun` with respect to the arguments `argnums`, in reverse mode (one VJP per
    output element, batched by `vmap`); with `has_aux`, `fun` returns `(output, aux)` and the
    result is `(jacobian, aux)`."""

    def jacfun(*args: Any) -> Any:
        f, dyn, _, in_avals = _prepare(fun, args, argnums, "jacrev")
        got = vjp(f, *dyn, has_aux=has_aux)
        y = got[0]
        y_leaves, y_tree = tree_flatten(y)
        y_avals = [_aval(v) for v in y_leaves]
        _check_float(y_avals, "outputs", "jacrev")
        rows = vmap(lambda *ct: vjp(f, *dyn, has_aux=has_aux)[1](tree_unflatten(y_tree, list(ct))))(*_basis(y_avals))
        cols, _ = tree_flatten(rows)  # one per input leaf, each (m, *in_shape)
        blocks, offset = [], 0
        for shape, _ in y_avals:
            size = int(np.prod(shape))
            blocks.append([c[offset:offset + size].reshape((*shape, *s)) for c, (s, _) in zip(cols, in_avals)])
            offset += size
        jac = _per_output(y_tree, [tree_flatten(a)[1] for a in dyn], isinstance(argnums, int), blocks)
        return (jac, got[2]) if has_aux else jac
    return jacfun


def jacfwd(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The Jacobian of `fun` with respect to the arguments `argnums`, in forward mode (one JVP per
    input element, batched by `vmap`); with `has_aux`, `fun` returns `(output, aux)` and the
    result is `(jacobian, aux)`."""

    def jacfun(*args: Any) -> Any:
        f, dyn, in_tree, in_avals = _prepare(fun, args, argnums, "jacfwd")

        def column(*t: Any) -> Any:
            return jvp(f, dyn, tree_unflatten(in_tree, list(t)), has_aux=has_aux)[1]
        out = f(*dyn)
        y, aux = out if has_aux else (out, None)
        y_leaves, y_tree = tree_flatten(y)
        y_avals = [_aval(v) for v in y_leaves]
        _check_float(y_avals, "outputs", "jacfwd")
        cols, _ = tree_flatten(vmap(column)(*_basis(in_avals)))  # one per output leaf, each (n, *out_shape)
        blocks = []
        for c, (shape, _) in zip(cols, y_avals):
            row, offset = [], 0
            for s, _ in in_avals:
                size = int(np.prod(s))
                part = c[offset:offset + size]
                part = part.transpose((*range(1, part.ndim), 0))  # the basis axis last
                row.append(part.reshape((*shape, *s)))
                offset += size
            blocks.append(row)
        jac = _per_output(y_tree, [tree_flatten(a)[1] for a in dyn], isinstance(argnums, int), blocks)
        return (jac, aux) if has_aux else jac
    return jacfun


def hessian(fun: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False) -> Callable[..., Any]:
    """The Hessian of a scalar `fun`: `jacfwd(jacrev(fun))`, as JAX computes it."""
    return jacfwd(jacrev(fun, argnums, has_aux=has_aux), argnums, has_aux=has_aux)


__all__ = ["hessian", "jacfwd", "jacrev"]
