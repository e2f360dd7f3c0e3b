"""`loom.jvp`: forward-mode differentiation of Python functions written with `loom.numpy`.

`jvp(f, primals, tangents)` traces `f` into a `func.func` (as `loom.jit` does), transforms it with
`loom.transforms.forward_ad.jvp_module` into a function computing outputs and output tangents,
and runs it with the compiled executor. As with `jax.jvp`, every call traces `f` afresh (so a
change to the globals or closure `f` reads is seen). Called while another function is being
traced, the transformed function's ops are inlined into the enclosing trace instead, so
`jit(lambda x: jvp(f, (x,), (t,)))`, `jvp(grad(f), ...)` and `grad` of a jvp work.
Primals, tangents and outputs are pytrees, as with `jax.jvp`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from loom.frontend.grad import ModuleRunner
from loom.frontend.jit import (
    Jitted,
    abstract_value,
    as_array,
    device_leaf,
    host_value,
    main_function,
    pass_manager,
    transform_module,
)
from loom.frontend.pytree import PyTreeDef, tree_flatten, tree_unflatten
from loom.frontend.tracing import Tracer, current_trace, is_floating, np_dtype
from loom.ir.core import Operation
from loom.transforms.forward_ad import jvp_module


class _Transformed:
    """The JVP module of one function for one input signature, and its runner. `out_avals`
    covers the outputs followed by the aux outputs (`n_out` of them are outputs)."""

    def __init__(self, module: Operation, out_tree: PyTreeDef, out_avals: list[tuple[tuple[int, ...], np.dtype]],
                 n_out: int | None = None, aux_tree: PyTreeDef | None = None):
        self.module = module
        self.out_tree = out_tree
        self.out_avals = out_avals
        self.n_out = len(out_avals) if n_out is None else n_out
        self.aux_tree = aux_tree
        self._runner = ModuleRunner(module)

    def run(self, leaves: list[Any], tangents: list[Any]) -> list[Any]:
        """Outputs followed by output tangents: tracers while tracing, else arrays where the
        arguments live (see `ModuleRunner`)."""
        return self._runner([*leaves, *tangents])


def transformed(fun: Callable[..., Any], primals: tuple, has_aux: bool = False,
               transform: Callable[[Operation], Operation] = jvp_module) -> tuple[_Transformed, list[Any]]:
    trees: dict[str, Any] = {}

    def flat(*args: Any) -> list[Any]:
        res = fun(*args)
        aux = None
        if has_aux:
            if not (isinstance(res, (tuple, list)) and len(res) == 2):
                raise TypeError("a function transformed with has_aux=True must return a pair (output, aux)")
            res, aux = res
        out_leaves, trees["out"] = tree_flatten(res)
        aux_leaves, trees["aux"] = tree_flatten(aux)
        trees["n_out"] = len(out_leaves)
        return [*out_leaves, *aux_leaves]

    jitted = Jitted(flat)
    if current_trace() is not None:  # tracers of the enclosing trace stand for arrays of their shape and dtype
        key, _, weak = jitted._signature(primals, {}, abstract=True)
        leaves = [x if isinstance(x, Tracer) else as_array(x, "primal")[0] for x in tree_flatten(list(primals))[0]]
    else:
        key, leaves, weak = jitted._signature(primals, {}, keep_device=True)
    abstract = [np.broadcast_to(np.zeros((), dtype), shape) for shape, dtype in map(abstract_value, leaves)]
    lowered = jitted._lower(key, primals, {}, abstract, weak)
    ftype = main_function(lowered.module).properties["function_type"].value
    module = transform_module(lowered.module, transform)
    pass_manager().run(module)
    module.verify()
    out_avals = [(tuple(t.shape), np_dtype(t.element_type)) for t in ftype.results]
    # closed-over tracers of enclosing traces are extra trailing primals (their tangents are zeros)
    return (_Transformed(module, trees["out"], out_avals, trees["n_out"], trees["aux"] if has_aux else None),
            [*leaves, *lowered.captures])


def jvp(fun: Callable[..., Any], primals: Any, tangents: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(fun(*primals), tangent_out)`: the value of `fun` and its Jacobian at `primals` applied to
    `tangents` (forward mode). `primals` and `tangents` are tuples (or lists) of pytrees of the same
    structure, shapes and dtypes; the output tangent has the structure of the output. Tangents of
    integer or boolean primals are ignored; integer or boolean outputs get zero tangents. With
    `has_aux`, `fun` returns `(output, aux)` and the result is `(output, tangent_out, aux)`."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"primal and tangent arguments to jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    primals, tangents = tuple(primals), tuple(tangents)
    p_leaves, p_tree = tree_flatten(primals)
    t_leaves, t_tree = tree_flatten(tangents)
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jvp must have the same tree structure; primals have "
                        f"tree structure {p_tree} whereas tangents have tree structure {t_tree}.")
    traced, leaves = transformed(fun, primals, has_aux)
    ts = tangent_leaves(leaves, t_leaves)
    results = traced.run(leaves, ts)
    n = len(traced.out_avals)
    k = traced.n_out
    out = tree_unflatten(traced.out_tree, results[:k])
    tangent_out = tree_unflatten(traced.out_tree, results[n:n + k])
    if has_aux:
        return out, tangent_out, tree_unflatten(traced.aux_tree, results[k:n])
    return out, tangent_out


def tangent_leaves(leaves: list[Any], t_leaves: list[Any]) -> list[Any]:
    """The tangents checked against the primals' shapes and dtypes (zeros for integer primals)."""
    ts: list[Any] = []
    for i, p in enumerate(leaves):
        shape, dtype = abstract_value(p)
        if i >= len(t_leaves):  # a captured closure value: no tangent
            ts.append(np.zeros(shape, dtype))
            continue
        t = t_leaves[i]
        if isinstance(t, Tracer):
            ts.append(t)
            continue
        if device_leaf(t) is not None and is_floating(dtype) and abstract_value(t) == (shape, dtype):
            ts.append(t)  # stays on its device
            continue
        arr = np.asarray(host_value(t))
        if is_floating(dtype) and arr.shape != shape:
            raise ValueError(f"jvp called with different primal and tangent shapes; got primal shape {shape} "
                             f"and tangent shape {arr.shape}")
        if not is_floating(dtype) or arr.shape != shape:
            arr = np.zeros(shape, dtype)  # integer / boolean primals carry no tangent
        ts.append(arr.astype(dtype, copy=False))
    return ts


__all__ = ["jvp"]
