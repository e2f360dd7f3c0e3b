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

from loom.backend.compiled import Executable
from loom.frontend.grad import _inline, _np_dtype
from loom.frontend.jit import Jitted, _as_array, _pass_manager
from loom.frontend.pytree import PyTreeDef, tree_flatten, tree_unflatten
from loom.frontend.tracing import Tracer, current_trace
from loom.ir.core import Operation
from loom.transforms.forward_ad import jvp_module


class _Transformed:
    """The JVP module of one function for one input signature, and its executable."""

    def __init__(self, module: Operation, out_tree: PyTreeDef, out_avals: list[tuple[tuple[int, ...], np.dtype]]):
        self.module = module
        self.out_tree = out_tree
        self.out_avals = out_avals
        self._executable: Executable | None = None

    def run(self, leaves: list[Any], tangents: list[Any]) -> list[Any]:
        if current_trace() is not None:
            return _inline(self.module, [*leaves, *tangents])
        if self._executable is None:
            self._executable = Executable(self.module, "main")
        out = self._executable(*leaves, *tangents)
        if not isinstance(out, (tuple, list)):
            out = (out,)
        return [np.asarray(o) for o in out]


def _transform(fun: Callable[..., Any], primals: tuple) -> tuple[_Transformed, list[Any]]:
    trees: dict[str, Any] = {}

    def flat(*args: Any) -> list[Any]:
        out_leaves, trees["out"] = tree_flatten(fun(*args))
        return out_leaves

    jitted = Jitted(flat)
    if current_trace() is not None:  # tracers of the enclosing trace stand for arrays of their shape and dtype
        key, _, weak = jitted._signature(primals, {}, abstract=True)
        leaves = [x if isinstance(x, Tracer) else _as_array(x, "primal")[0] for x in tree_flatten(list(primals))[0]]
    else:
        key, leaves, weak = jitted._signature(primals, {})
    abstract = [np.broadcast_to(np.zeros((), np.dtype(x.dtype)), tuple(x.shape)) for x in leaves]
    lowered = jitted._lower(key, primals, {}, abstract, weak)
    ftype = lowered.module.regions[0].entry.first_op.properties["function_type"].value
    module = jvp_module(lowered.module)
    _pass_manager().run(module)
    module.verify()
    out_avals = [(tuple(t.shape), _np_dtype(t)) for t in ftype.results]
    return _Transformed(module, trees["out"], out_avals), leaves


def jvp(fun: Callable[..., Any], primals: Any, tangents: Any) -> tuple[Any, Any]:
    """`(fun(*primals), tangent_out)`: the value of `fun` and its Jacobian at `primals` applied to
    `tangents` (forward mode). `primals` and `tangents` are tuples (or lists) of pytrees of the same
    structure, shapes and dtypes; the output tangent has the structure of the output. Tangents of
    integer or boolean primals are ignored; integer or boolean outputs get zero tangents."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError(f"primal and tangent arguments to jvp must be tuples or lists; found "
                        f"{type(primals).__name__} and {type(tangents).__name__}.")
    primals, tangents = tuple(primals), tuple(tangents)
    p_leaves, p_tree = tree_flatten(primals)
    t_leaves, t_tree = tree_flatten(tangents)
    if p_tree != t_tree:
        raise TypeError(f"primal and tangent arguments to jvp must have the same tree structure; primals have "
                        f"tree structure {p_tree} whereas tangents have tree structure {t_tree}.")
    transformed, leaves = _transform(fun, primals)
    ts: list[Any] = []
    for p, t in zip(leaves, t_leaves):
        dtype, shape = np.dtype(p.dtype), tuple(p.shape)
        if isinstance(t, Tracer):
            ts.append(t)
            continue
        arr = np.asarray(t)
        if dtype.kind == "f" and arr.shape != shape:
            raise ValueError(f"jvp called with different primal and tangent shapes; got primal shape {shape} "
                             f"and tangent shape {arr.shape}")
        if dtype.kind != "f" or arr.shape != shape:
            arr = np.zeros(shape, dtype)  # integer / boolean primals carry no tangent
        ts.append(arr.astype(dtype, copy=False))
    results = transformed.run(leaves, ts)
    n = len(transformed.out_avals)
    out = tree_unflatten(transformed.out_tree, results[:n])
    tangent_out = tree_unflatten(transformed.out_tree, results[n:])
    return out, tangent_out


__all__ = ["jvp"]
