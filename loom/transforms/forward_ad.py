"""Forward-mode automatic differentiation as an IR-to-IR transformation.

`jvp_function(fn)` takes a `func.func` of StableHLO and builds a new `func.func` that takes the
original arguments followed by one tangent per argument (of the same type), and returns the
original results followed by one tangent per result (the Jacobian-vector product). The ops are
copied in order; after each copied op its tangent rule, looked up by op name in this
transformation's own table `JVP_RULES` (as JAX's `ad.primitive_jvps`), emits the ops computing the
tangents of its results from the primal values and the tangents of its operands. Values of integer
or boolean type carry no tangent (their tangent arguments are ignored and their tangent results
are zeros). An op with a nonzero input tangent and no rule raises `MissingRuleError`, naming the
op, the transformation and the op's location.

A rule is `rule(builder, op, primals_in, tangents_in) -> list[Value | None]`: `op` is the copied
op (its operands and results are values of the new function), `primals_in` its operands,
`tangents_in` one entry per operand (None for a zero tangent), and the rule returns one entry per
result (None for zero).

The rules live with their ops in `loom.ops`. Those of ops with regions (`stablehlo.while`, `if`,
`case`, in `loom.ops.control_flow`) rebuild the op to carry tangents next to primals, with
`region_jvp` (a region's JVP function), `tangent_of` (the tangents of captured values) and
`replace_op`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

from loom.dialects import builtin, func
from loom.ir.attributes import TypeAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Operation, Value
from loom.ir.types import FunctionType
from loom.transforms import autodiff
from loom.transforms.autodiff import full, is_float

TRANSFORMATION = "jvp"

JvpRule = Callable[[Builder, Operation, list[Value], list["Value | None"]], list["Value | None"]]
JVP_RULES: dict[str, JvpRule] = {}


class MissingRuleError(autodiff.MissingRuleError):
    """An op with a nonzero input tangent has no rule in `JVP_RULES`."""


# --- rules -------------------------------------------------------------------------------------


def zero_tangent(b: Builder, op: Operation, xs: list[Value], ts: list[Value | None]) -> list[Value | None]:
    """The rule of an op whose results get no tangent."""
    return [None] * len(op.results)


# --- what the rules of ops with regions read ----------------------------------------------------


class _State:
    """The tangents known while one `jvp_function` is built (rules of region ops look up the
    tangents of captured values here) and the ops those rules replaced."""

    def __init__(self) -> None:
        self.tangents: dict[Value, Value] = {}
        self.replaced: dict[Value, Value] = {}


class _PerThread(threading.local):
    """Each thread differentiates on its own: the JVPs under way, innermost last."""

    def __init__(self) -> None:
        self.states: list[_State] = []


_LOCAL = _PerThread()


def tangent_of(value: Value) -> Value | None:
    """The tangent of `value` in the innermost `jvp_function` being built (None for zero)."""
    return _LOCAL.states[-1].tangents.get(value)


def replace_op(old: Operation, new_values: Sequence[Value]) -> None:
    """Replace `old` by `new_values` (a control-flow op rebuilt to carry tangents) and erase it."""
    state = _LOCAL.states[-1]
    for r, v in zip(old.results, new_values):
        r.replace_all_uses_with(v)
        state.replaced[r] = v
    old.erase()


def region_jvp(b: Builder, region: Any, free: list[Value], n_args: int) -> tuple[Operation, list[Value]]:
    """The JVP function of a region (args: block args, captured values, their tangents) and the
    outer tangents of the captured values (zeros where none)."""
    fn = autodiff.region_function(region, free)
    tfree = [tangent_of(v) if tangent_of(v) is not None else full(b, 0, v.type) for v in free]
    # a captured value without a tangent stays without one inside the region: a materialised zero
    # would meet rules like power's `t_y * z * log(x)`, where 0 * nan (x < 0) is nan
    inactive = [n_args + i for i, v in enumerate(free) if tangent_of(v) is None]
    return jvp_function(fn, inactive=inactive), tfree


# --- the transformation ------------------------------------------------------------------------


def jvp_function(fn: Operation, name: str = "main", inactive: Sequence[int] = ()) -> Operation:
    """A new `func.func @name` computing `fn`'s results and their tangents.

    Its arguments are `fn`'s arguments followed by one tangent per argument (same types; those of
    integer or boolean arguments are ignored); its results are `fn`'s results followed by one
    tangent per result (zeros for integer or boolean results and for results that do not depend
    on the arguments). The tangent arguments at the positions `inactive` are ignored (treated as
    zero without being read): the rules of control-flow ops pass those of captured constants."""
    ftype: FunctionType = fn.properties["function_type"].value
    n_in = len(ftype.inputs)
    new_type = FunctionType((*ftype.inputs, *ftype.inputs), (*ftype.results, *ftype.results))
    new = func.FuncOp.build(name, new_type, location=fn.location)
    block = new.regions[0].entry
    old_block = fn.regions[0].entry
    mapping: dict = dict(zip(old_block.args, block.args[:n_in]))
    state = _State()
    tangents = state.tangents
    skip = set(inactive)
    for k, (arg, t) in enumerate(zip(block.args[:n_in], block.args[n_in:])):
        if is_float(arg.type) and k not in skip:
            tangents[arg] = t
    b = Builder(InsertionPoint.at_end(block))
    ret = None
    _LOCAL.states.append(state)
    try:
        for old in old_block.ops:
            if old.name == "func.return":
                ret = old
                break
            op = b.insert(old.clone(mapping))
            ts = [tangents.get(v) for v in op.operands]
            if op.regions:  # captured values with tangents count as inputs too
                ts_free = [tangents.get(v) for v in autodiff.region_free_values(op)]
            else:
                ts_free = []
            if all(t is None for t in ts) and all(t is None for t in ts_free):
                continue
            if not any(is_float(r.type) and r.has_uses for r in old.results):
                continue  # no result that carries a tangent is used (argmax's variadic reduce)
            rule = autodiff.lookup_rule(JVP_RULES, op, TRANSFORMATION, MissingRuleError)
            b.location = op.location
            results = list(op.results)
            outs = rule(b, op, list(op.operands), ts)
            for old_r, r in zip(old.results, results):  # a rule may replace the op (control flow)
                if r in state.replaced:
                    mapping[old_r] = state.replaced[r]
            for r, t in zip(old.results, outs):
                r = mapping[r]
                if t is not None and is_float(r.type):
                    tangents[r] = t
    finally:
        _LOCAL.states.pop()
    if ret is None:
        raise ValueError("the function has no func.return")
    outputs = [mapping.get(v, v) for v in ret.operands]
    results = list(outputs)
    for v in outputs:
        t = tangents.get(v)
        results.append(t if t is not None else full(b, 0, v.type))
    b.insert(func.ReturnOp.build(results, fn.location))
    new.properties["function_type"] = TypeAttr(new_type)
    return new


def jvp_module(module: Operation, entry: str = "main") -> Operation:
    """A new `builtin.module` holding `jvp_function` of the module's function `entry` as `@main`."""
    fn = next((op for op in module.regions[0].entry.ops
               if op.name == "func.func" and op.properties["sym_name"].value == entry), None)
    if fn is None:
        raise ValueError(f"the module has no function @{entry}")
    out = builtin.ModuleOp.build()
    out.body.append(jvp_function(fn, "main"))
    return out


__all__ = ["JVP_RULES", "TRANSFORMATION", "JvpRule", "MissingRuleError", "jvp_function", "jvp_module", "region_jvp",
           "replace_op", "tangent_of", "zero_tangent"]
