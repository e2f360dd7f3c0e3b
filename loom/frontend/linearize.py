"""`loom.linearize`: the value of a function and its linearization at a point, as `jax.linearize`.

`fun` is traced and transformed into its JVP function (`loom.transforms.forward_ad`); that
function is then split by partial evaluation: ops that depend only on the primal arguments form
the primal function, which runs once and returns the outputs and the residuals (the primal values
the tangent computation reads); ops that depend on a tangent form the linear function of the
residuals and the tangents, which `f_jvp` runs for each new tangent without recomputing the
primal values. Called while tracing, both parts are inlined into the enclosing trace instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loom.dialects import builtin, func
from loom.frontend.grad import ModuleRunner
from loom.frontend.jit import pass_manager
from loom.frontend.jvp import tangent_leaves, transformed
from loom.frontend.pytree import tree_flatten, tree_unflatten
from loom.ir.attributes import TypeAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Operation, Value
from loom.ir.types import FunctionType
from loom.transforms.remat_rules import used_values

_FREE_OPS = ("stablehlo.constant", "stablehlo.iota")  # cloned where needed rather than passed


def _module(name: str, inputs: list, body: Callable[[Builder, list[Value]], list[Value]]) -> Operation:
    fn = func.FuncOp.build(name, FunctionType(tuple(inputs), ()))
    block = fn.regions[0].entry
    b = Builder(InsertionPoint.at_end(block))
    outs = body(b, list(block.args))
    b.insert(func.ReturnOp.build(outs))
    fn.properties["function_type"] = TypeAttr(FunctionType(tuple(inputs), tuple(v.type for v in outs)))
    module = builtin.ModuleOp.build()
    module.body.append(fn)
    pass_manager().run(module)
    module.verify()
    return module


def _split(jvp_module: Operation, n_in: int, n_res: int, n_out: int) -> tuple[Operation, Operation, int]:
    """(primal module: primals -> results + residuals, tangent module: residuals + tangents ->
    output tangents, the number of residuals)."""
    fn = jvp_module.regions[0].entry.first_op
    block = fn.regions[0].entry
    ops = [op for op in block.ops if op.name != "func.return"]
    ret = next(op for op in block.ops if op.name == "func.return")
    primal_args, tangent_args = list(block.args[:n_in]), list(block.args[n_in:])
    dependent: set[int] = {id(a) for a in tangent_args}
    tangent_ops, primal_ops = [], []
    for op in ops:
        if any(id(v) in dependent for v in used_values(op)):
            tangent_ops.append(op)
            dependent.update(id(r) for r in op.results)
        else:
            primal_ops.append(op)
    outputs = list(ret.operands[:n_res])
    tangent_outputs = list(ret.operands[n_res:n_res + n_out])
    residuals: dict[int, Value] = {}
    free: dict[int, Operation] = {}
    tangent_set = {id(op) for op in tangent_ops}
    needed = [v for op in tangent_ops for v in used_values(op)] + tangent_outputs
    for v in needed:
        if id(v) in dependent or id(v) in (id(a) for a in tangent_args):
            continue
        owner = v.owner_op
        if owner is not None and owner.name in _FREE_OPS and id(owner) not in tangent_set:
            free[id(owner)] = owner
            continue
        residuals.setdefault(id(v), v)
    residual_values = list(residuals.values())

    def primal_body(b: Builder, args: list[Value]) -> list[Value]:
        mapping: dict = dict(zip(primal_args, args))
        for op in primal_ops:
            b.insert(op.clone(mapping))
        return [mapping.get(v, v) for v in (*outputs, *residual_values)]

    def tangent_body(b: Builder, args: list[Value]) -> list[Value]:
        mapping: dict = dict(zip(residual_values, args[:len(residual_values)]))
        mapping.update(zip(tangent_args, args[len(residual_values):]))
        for op in ops:
            if id(op) in free:
                b.insert(op.clone(mapping))
        for op in tangent_ops:
            b.insert(op.clone(mapping))
        return [mapping.get(v, v) for v in tangent_outputs]

    primal = _module("main", [a.type for a in primal_args], primal_body)
    tangent = _module("main", [v.type for v in residual_values] + [a.type for a in tangent_args], tangent_body)
    return primal, tangent, len(residual_values)


def linearize(fun: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple[Any, ...]:
    """`(fun(*primals), f_jvp)` where `f_jvp(*tangents)` is the Jacobian of `fun` at `primals`
    applied to `tangents` (pytrees of the primals' structure), computed without re-running the
    primal computation, as `jax.linearize`. With `has_aux`, `fun` returns `(output, aux)` and the
    result is `(output, f_jvp, aux)`."""
    traced, leaves = transformed(fun, primals, has_aux)
    _, p_tree = tree_flatten(primals)
    n_res = len(traced.out_avals)
    n_out = traced.n_out
    primal, tangent, n_residuals = _split(traced.module, len(leaves), n_res, n_out)
    # the residuals stay where the primal computation ran (on the arguments' device)
    results = ModuleRunner(primal)(list(leaves))
    outs, residuals = results[:n_res], results[n_res:]
    run_tangent = ModuleRunner(tangent)
    out = tree_unflatten(traced.out_tree, outs[:n_out])

    def f_jvp(*tangents: Any) -> Any:
        t_leaves, t_tree = tree_flatten(tangents)
        if t_tree != p_tree:
            raise TypeError(f"f_jvp takes tangents with the structure of the primals {p_tree}, got {t_tree}")
        ts = tangent_leaves(leaves, t_leaves)
        return tree_unflatten(traced.out_tree, run_tangent([*residuals, *ts]))

    f_jvp.n_residuals = n_residuals  # type: ignore[attr-defined]
    f_jvp.module = tangent  # type: ignore[attr-defined]
    if has_aux:
        return out, f_jvp, tree_unflatten(traced.aux_tree, outs[n_out:])
    return out, f_jvp


__all__ = ["linearize"]
