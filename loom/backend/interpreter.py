"""The reference interpreter: runs a function op by op over numpy arrays, regions included.

It defines what a program means; the compiled executor is checked against it. The core is an
environment loop (as in jax's `eval_jaxpr`): each op's operands are looked up, its rule from
`INTERPRETER_RULES` (keyed by op name) computes the results, and they are bound. Ops without
regions use the numpy kernel table; ops with regions have their own rules here, written as the
StableHLO spec defines them: reduce bodies applied element by element, sort comparators called per
comparison, scatter updates one at a time.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.backend import common
from loom.backend.common import ExecutionError, MissingRuleError, shape_of
from loom.backend.custom_calls import custom_call_kernel
from loom.backend.kernels_numpy import KERNELS, GatherDims, Kernel, ScatterDims, pad
from loom.ir.core import Block, Operation, Region

Rule = Callable[["Interpreter", Operation, list], Sequence[Any]]

INTERPRETER_RULES: dict[str, Rule] = {}
RETURN_OPS = frozenset({"func.return", "stablehlo.return", "chlo.return"})


def rule(*names: str):
    def register(fn: Rule) -> Rule:
        for n in names:
            INTERPRETER_RULES[n] = fn
        return fn
    return register


def functions_of(module: Operation) -> dict[str, Operation]:
    """The `func.func` ops of a module (or the function itself), by name."""
    if module.name == "func.func":
        return {module.get_attr("sym_name").value: module}
    funcs = {}
    for region in module.regions:
        for block in region.blocks:
            for op in block.ops:
                if op.name == "func.func":
                    funcs[op.get_attr("sym_name").value] = op
    return funcs


class Interpreter:
    """Runs the functions of one module; `interpreter.call("main", [x, y])` returns the results."""

    def __init__(self, module: Operation) -> None:
        self.module = module
        self.functions = functions_of(module)
        self._kernels: dict[Operation, Kernel] = {}
        # The environment of the function being run. Regions (loop bodies, branches, reducers)
        # share it: values are SSA objects, so names never clash, and values defined outside a
        # region are visible inside it.
        self.env: dict = {}

    def call(self, name: str, args: Sequence[Any]) -> list:
        func = self.functions.get(name)
        if func is None:
            raise ExecutionError(f"no function @{name} in the module")
        if not func.regions or not func.regions[0].blocks:
            raise ExecutionError(f"@{name} is a declaration without a body")
        return self.run_block(func.regions[0].blocks[0], args, {})

    def run_block(self, block: Block, args: Sequence[Any], env: dict | None = None) -> list:
        """Bind `args` to the block's arguments, run its ops, return the terminator's operands.
        Without `env`, the block runs in the current function's environment."""
        saved = self.env
        if env is None:
            env = saved
        self.env = env
        try:
            for a, v in zip(block.args, args):
                env[a] = v
            for op in block.ops:
                operands = [env[v] for v in op.operands]
                if op.name in RETURN_OPS:
                    return operands
                fn = INTERPRETER_RULES.get(op.name)
                if fn is None:
                    if op.name not in KERNELS:
                        raise MissingRuleError(op.name, "interpreter")
                    fn = run_kernel
                results = fn(self, op, operands)
                for r, v in zip(op.results, results):
                    wrap = common.integer_wrap(r.type)  # i4 held in int8: back to its own width
                    env[r] = v if wrap is None else wrap[0](v, *wrap[1])
            return []
        finally:
            self.env = saved

    def region_function(self, region: Region) -> Callable[..., list]:
        """The region as a function of its block arguments, run in the current environment."""
        env = self.env
        block = region.blocks[0]
        return lambda *args: self.run_block(block, args, env)

    def kernel(self, op: Operation) -> Kernel:
        k = self._kernels.get(op)
        if k is None:
            k = self._kernels[op] = KERNELS[op.name](op)
        return k


def run_kernel(interp: Interpreter, op: Operation, args: list) -> Sequence[Any]:
    out = interp.kernel(op)(args)
    n = len(op.results)
    if n == 1:
        return (out,)
    return tuple(out) if n else ()


def _scalar(x: Any) -> Any:
    return np.asarray(x)[()]


# Calls and control flow ----------------------------------------------------------------------

@rule("func.call")
def _call(interp: Interpreter, op: Operation, args: list) -> list:
    return interp.call(op.get_attr("callee").root, args)


@rule("stablehlo.while")
def _while(interp: Interpreter, op: Operation, args: list) -> list:
    cond, body = op.regions
    values = list(args)
    while bool(interp.run_block(cond.blocks[0], values)[0]):
        values = interp.run_block(body.blocks[0], values)
    return values


@rule("stablehlo.if")
def _if(interp: Interpreter, op: Operation, args: list) -> list:
    branch = op.regions[0] if bool(args[0]) else op.regions[1]
    return interp.run_block(branch.blocks[0], [])


@rule("stablehlo.case")
def _case(interp: Interpreter, op: Operation, args: list) -> list:
    index = int(args[0])
    n = len(op.regions)
    if index < 0 or index >= n:
        index = n - 1
    return interp.run_block(op.regions[index].blocks[0], [])


# Reductions -----------------------------------------------------------------------------------

def _body(interp: Interpreter, region: Region) -> Callable[..., list]:
    return interp.region_function(region)


@rule("stablehlo.reduce")
def _reduce(interp: Interpreter, op: Operation, args: list) -> list:
    n = len(args) // 2
    inputs, inits = [np.asarray(a) for a in args[:n]], args[n:]
    dims = common.ints(op.get_attr("dimensions"))
    body = _body(interp, op.regions[0])
    kept = [d for d in range(inputs[0].ndim) if d not in dims]
    out_shape = [inputs[0].shape[d] for d in kept]
    results = [np.empty(out_shape, common.dtype_of(r.type)) for r in op.results]
    reduced_shape = [inputs[0].shape[d] for d in dims]
    for out_index in np.ndindex(*out_shape):
        acc = [_scalar(v) for v in inits]
        for red_index in np.ndindex(*reduced_shape):
            full = [0] * inputs[0].ndim
            for d, i in zip(kept, out_index):
                full[d] = i
            for d, i in zip(dims, red_index):
                full[d] = i
            acc = body(*acc, *(x[tuple(full)] for x in inputs))
        for r, v in zip(results, acc):
            r[out_index] = v
    return results


@rule("stablehlo.reduce_window")
def _reduce_window(interp: Interpreter, op: Operation, args: list) -> list:
    n = len(args) // 2
    inputs, inits = [np.asarray(a) for a in args[:n]], args[n:]
    rank = inputs[0].ndim
    window = common.ints(op.get_attr("window_dimensions"))
    strides = common.ints(op.get_attr("window_strides"), [1] * rank)
    base_dil = common.ints(op.get_attr("base_dilations"), [1] * rank)
    win_dil = common.ints(op.get_attr("window_dilations"), [1] * rank)
    padding = common.padding_pairs(op.get_attr("padding"), rank)
    padded = [pad(x, init, [p[0] for p in padding], [p[1] for p in padding], [d - 1 for d in base_dil])
              for x, init in zip(inputs, inits)]
    body = _body(interp, op.regions[0])
    out_shape = shape_of(op.results[0].type)
    results = [np.empty(out_shape, common.dtype_of(r.type)) for r in op.results]
    for out_index in np.ndindex(*out_shape):
        acc = [_scalar(v) for v in inits]
        for w_index in np.ndindex(*window):
            pos = tuple(o * s + w * d for o, s, w, d in zip(out_index, strides, w_index, win_dil))
            acc = body(*acc, *(x[pos] for x in padded))
        for r, v in zip(results, acc):
            r[out_index] = v
    return results


@rule("stablehlo.map")
def _map(interp: Interpreter, op: Operation, args: list) -> list:
    inputs = [np.asarray(a) for a in args]
    body = _body(interp, op.regions[0])
    out = np.empty(shape_of(op.results[0].type), common.dtype_of(op.results[0].type))
    for index in np.ndindex(*out.shape):
        out[index] = body(*(x[index] for x in inputs))[0]
    return [out]


# Sort -----------------------------------------------------------------------------------------

@rule("stablehlo.sort")
def _sort(interp: Interpreter, op: Operation, args: list) -> list:
    inputs = [np.asarray(a) for a in args]
    dim = common.integer(op.get_attr("dimension"), -1)
    if dim < 0:
        dim += inputs[0].ndim
    body = _body(interp, op.regions[0])
    outs = [np.array(x) for x in inputs]
    shape = inputs[0].shape
    others = [d for d in range(len(shape)) if d != dim]
    for rest in np.ndindex(*[shape[d] for d in others]):
        def at(i, rest=rest):
            full = [0] * len(shape)
            for d, r in zip(others, rest):
                full[d] = r
            full[dim] = i
            return tuple(full)

        def less(i, j, at=at) -> bool:
            pairs = []
            for x in inputs:
                pairs += [x[at(i)], x[at(j)]]
            return bool(body(*pairs)[0])

        def cmp(i, j, less=less) -> int:
            return -1 if less(i, j) else (1 if less(j, i) else 0)

        order = sorted(range(shape[dim]), key=functools.cmp_to_key(cmp))  # Python's sort is stable
        for x, out in zip(inputs, outs):
            for k, i in enumerate(order):
                out[at(k)] = x[at(i)]
    return outs


# Gather and scatter (reference forms, element by element as the spec states them) -----------

def _index_vector(indices: np.ndarray, batch_index: Sequence[int], ivd: int) -> list[int]:
    if ivd == indices.ndim:
        return [int(indices[tuple(batch_index)])]
    full = list(batch_index)
    full.insert(ivd, slice(None))
    return [int(v) for v in indices[tuple(full)]]


def gather_reference(operand: np.ndarray, indices: np.ndarray, dims: GatherDims, slice_sizes: Sequence[int],
                     out_shape: Sequence[int]) -> np.ndarray:
    out = np.empty(out_shape, operand.dtype)
    ivd = dims.index_vector_dim
    batch_dims_out = [d for d in range(len(out_shape)) if d not in dims.offset_dims]
    indices_batch_dims = [d for d in range(max(indices.ndim, ivd + 1)) if d != ivd]
    for result_index in np.ndindex(*out_shape):
        batch_index = [result_index[d] for d in batch_dims_out]
        vector = _index_vector(indices, batch_index, ivd)
        start = [0] * operand.ndim
        for k, d in enumerate(dims.start_index_map):
            start[d] = vector[k]
        for od, sd in zip(dims.operand_batching_dims, dims.start_indices_batching_dims):
            start[od] = batch_index[indices_batch_dims.index(sd)]
        start = [min(max(s, 0), operand.shape[d] - slice_sizes[d]) for d, s in enumerate(start)]
        offset = [result_index[d] for d in dims.offset_dims]
        full, k = [], 0
        for d in range(operand.ndim):
            if d in dims.collapsed_slice_dims or d in dims.operand_batching_dims:
                full.append(start[d])
            else:
                full.append(start[d] + offset[k])
                k += 1
        out[result_index] = operand[tuple(full)]
    return out


@rule("stablehlo.gather")
def _gather(interp: Interpreter, op: Operation, args: list) -> list:
    dims = GatherDims(op.get_attr("dimension_numbers"))
    sizes = common.ints(op.get_attr("slice_sizes"))
    return [gather_reference(np.asarray(args[0]), np.asarray(args[1]), dims, sizes, shape_of(op.results[0].type))]


def scatter_reference(inputs: list[np.ndarray], indices: np.ndarray, updates: list[np.ndarray], dims: ScatterDims,
                      body: Callable[..., list]) -> list[np.ndarray]:
    results = [np.array(x) for x in inputs]
    ivd = dims.index_vector_dim
    update_shape = updates[0].shape
    scatter_axes = [d for d in range(len(update_shape)) if d not in dims.update_window_dims]
    indices_batch_dims = [d for d in range(max(indices.ndim, ivd + 1)) if d != ivd]
    operand_shape = inputs[0].shape
    window_operand_dims = [d for d in range(len(operand_shape)) if d not in dims.inserted_window_dims and
                           d not in dims.input_batching_dims]
    window_size = {d: update_shape[u] for d, u in zip(window_operand_dims, dims.update_window_dims)}
    for update_index in np.ndindex(*update_shape):
        scatter_index = [update_index[d] for d in scatter_axes]
        vector = _index_vector(indices, scatter_index, ivd)
        start = [0] * len(operand_shape)
        for k, d in enumerate(dims.scatter_dims_to_operand_dims):
            start[d] = vector[k]
        for od, sd in zip(dims.input_batching_dims, dims.scatter_indices_batching_dims):
            start[od] = scatter_index[indices_batch_dims.index(sd)]
        # XLA skips a whole update window that does not fit in the operand.
        if any(s < 0 or s + window_size.get(d, 1) > operand_shape[d] for d, s in enumerate(start)):
            continue
        window_index = [update_index[d] for d in dims.update_window_dims]
        full = list(start)
        for d, w in zip(window_operand_dims, window_index):
            full[d] += w
        full = tuple(full)
        new = body(*(r[full] for r in results), *(u[update_index] for u in updates))
        for r, v in zip(results, new):
            r[full] = v
    return results


@rule("stablehlo.scatter")
def _scatter(interp: Interpreter, op: Operation, args: list) -> list:
    n = (len(args) - 1) // 2
    inputs = [np.asarray(a) for a in args[:n]]
    updates = [np.asarray(a) for a in args[n + 1:]]
    dims = ScatterDims(op.get_attr("scatter_dimension_numbers"))
    return scatter_reference(inputs, np.asarray(args[n]), updates, dims, _body(interp, op.regions[0]))


def select_and_scatter_reference(operand: np.ndarray, source: np.ndarray, init: Any, window: Sequence[int],
                                 strides: Sequence[int], padding: Sequence[tuple[int, int]],
                                 select: Callable[..., list], scatter: Callable[..., list]) -> np.ndarray:
    result = np.full(operand.shape, init, operand.dtype)
    for source_index in np.ndindex(*source.shape):
        selected = None
        for w in np.ndindex(*window):
            pos = tuple(s * st + wi - p[0] for s, st, wi, p in zip(source_index, strides, w, padding))
            if any(i < 0 or i >= n for i, n in zip(pos, operand.shape)):
                continue
            if selected is None or not bool(select(operand[selected], operand[pos])[0]):
                selected = pos
        if selected is not None:
            result[selected] = scatter(result[selected], source[source_index])[0]
    return result


@rule("stablehlo.select_and_scatter")
def _select_and_scatter(interp: Interpreter, op: Operation, args: list) -> list:
    operand, source, init = np.asarray(args[0]), np.asarray(args[1]), args[2]
    rank = operand.ndim
    window = common.ints(op.get_attr("window_dimensions"), [1] * rank)
    strides = common.ints(op.get_attr("window_strides"), [1] * rank)
    padding = common.padding_pairs(op.get_attr("padding"), rank)
    return [select_and_scatter_reference(operand, source, init, window, strides, padding,
                                         _body(interp, op.regions[0]), _body(interp, op.regions[1]))]


# Custom calls -----------------------------------------------------------------------------------

@rule("stablehlo.custom_call")
def _custom_call(interp: Interpreter, op: Operation, args: list) -> Sequence[Any]:
    k = interp._kernels.get(op)
    if k is None:
        k = interp._kernels[op] = custom_call_kernel(op, "interpreter")
    out = k(args)
    n = len(op.results)
    return (out,) if n == 1 else (tuple(out) if n else ())


@rule("stablehlo.composite")
def _composite(interp: Interpreter, op: Operation, args: list) -> list:
    """A composite runs its decomposition function."""
    target = op.get_attr("decomposition")
    name = target.root if hasattr(target, "root") else common.string(target).lstrip("@")
    return interp.call(name, args)


def interpret(module: Operation, args: Sequence[Any], entry: str = "main") -> list:
    """Run `entry` of `module` on numpy arrays with the reference interpreter."""
    return Interpreter(module).call(entry, list(args))


__all__ = ["INTERPRETER_RULES", "Interpreter", "gather_reference", "interpret", "rule", "scatter_reference",
           "select_and_scatter_reference"]
