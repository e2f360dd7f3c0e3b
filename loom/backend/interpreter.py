"""The reference interpreter: runs a function op by op over numpy arrays, regions included.

It defines what a program means; the compiled executor is checked against it. The core is an
environment loop (as in jax's `eval_jaxpr`): each op's operands are looked up, its rule from
`INTERPRETER_RULES` (keyed by op name) computes the results, and they are bound. Ops without
regions use the numpy kernel table; ops with regions have their own rules, in their op families
(loom.ops.control_flow, reductions, indexing), written as the StableHLO spec defines them: reduce
bodies applied element by element, sort comparators called per comparison, scatter updates one
at a time.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.backend import common
from loom.backend.common import ExecutionError, MissingRuleError
from loom.backend.kernels import KERNELS, Kernel
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


def scalar(x: Any) -> Any:
    """An array's one element, as a numpy scalar."""
    return np.asarray(x)[()]


def interpret(module: Operation, args: Sequence[Any], entry: str = "main") -> list:
    """Run `entry` of `module` on numpy arrays with the reference interpreter."""
    return Interpreter(module).call(entry, list(args))


__all__ = ["INTERPRETER_RULES", "Interpreter", "interpret", "rule", "run_kernel", "scalar"]
