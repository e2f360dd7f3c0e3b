"""Control flow and structure: while, if, case, map, return, tuples, optimization_barrier,
custom_call, composite, scan, random bits.

Kernels, code generation (regions inlined in the generated Python) and the interpreter's rules
here; derivatives in `loom.transforms.autodiff` /
`forward_ad` (explicit: reverse mode through a while loop stores its carries on a stack) and
`remat_rules` (optimization_barrier), batching in `loom.transforms.batching`. What they lack is
declared here.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any

from loom.backend import common
from loom.backend.common import TORCH_KERNELS, MissingRuleError
from loom.backend.compiled.codegen import EXECUTOR, FunctionCodegen, codegen_rule, torch_codegen_rule
from loom.backend.custom_calls import custom_call_kernel
from loom.backend.interpreter import Interpreter
from loom.backend.interpreter import rule as interpreter_rule
from loom.backend.kernels import KERNELS, Kernel, Operand, identity, kernel, values_tuple
from loom.ir.core import Operation, Region
from loom.ops.registry import declare, register, unsupported
from loom.transforms.sharding_propagation import SHARDING_RULES, Factors, identity_rule, shape_of

# Kernels -----------------------------------------------------------------------------------------

# numpy kernels; they move Python objects only, so the torch library takes them as they are

KERNELS["stablehlo.optimization_barrier"] = lambda op: Kernel(values_tuple) if len(op.results) != 1 \
    else Kernel(identity)
KERNELS["stablehlo.tuple"] = lambda op: Kernel(values_tuple)
KERNELS["sdy.sharding_constraint"] = lambda op: Kernel(identity)  # one device: sharding is a no-op


@kernel("stablehlo.get_tuple_element")
def _get_tuple_element(op: Operation) -> Kernel:
    return Kernel(operator.getitem, Operand(0), common.integer(op.get_attr("index")))


for _name in ("stablehlo.optimization_barrier", "stablehlo.tuple", "stablehlo.get_tuple_element",
              "sdy.sharding_constraint"):
    TORCH_KERNELS[_name] = KERNELS[_name]


# The reference interpreter's rules (the spec's definitions, element by element) ---------------

@interpreter_rule("func.call")
def _call_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    return interp.call(op.get_attr("callee").root, args)


@interpreter_rule("stablehlo.while")
def _while_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    cond, body = op.regions
    values = list(args)
    while bool(interp.run_block(cond.blocks[0], values)[0]):
        values = interp.run_block(body.blocks[0], values)
    return values


@interpreter_rule("stablehlo.if")
def _if_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    branch = op.regions[0] if bool(args[0]) else op.regions[1]
    return interp.run_block(branch.blocks[0], [])


@interpreter_rule("stablehlo.case")
def _case_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    index = int(args[0])
    n = len(op.regions)
    if index < 0 or index >= n:
        index = n - 1
    return interp.run_block(op.regions[index].blocks[0], [])


@interpreter_rule("stablehlo.custom_call")
def _custom_call_interpreted(interp: Interpreter, op: Operation, args: list) -> Sequence[Any]:
    k = interp._kernels.get(op)
    if k is None:
        k = interp._kernels[op] = custom_call_kernel(op, "interpreter")
    out = k(args)
    n = len(op.results)
    return (out,) if n == 1 else (tuple(out) if n else ())


@interpreter_rule("stablehlo.composite")
def _composite_interpreted(interp: Interpreter, op: Operation, args: list) -> list:
    """A composite runs its decomposition function."""
    target = op.get_attr("decomposition")
    name = target.root if hasattr(target, "root") else common.string(target).lstrip("@")
    return interp.call(name, args)


# Code generation: control flow becomes Python control flow, inline

@codegen_rule("func.call")
def _call(gen: FunctionCodegen, op: Operation) -> None:
    name = gen.mod.function_name(op.get_attr("callee").root)
    gen.bind(op, f"{name}({gen.args(op.operands)})", returns_tuple=len(op.results) > 1)


@codegen_rule("stablehlo.while")
def _while(gen: FunctionCodegen, op: Operation) -> None:
    cond, body = op.regions
    loop = gen.new_names(op.results, "w")
    if loop:
        gen.emit(f"{', '.join(loop)} = {gen.args(op.operands)}  # stablehlo.while")
    gen.emit("while True:")
    gen.indent += 1

    def leave(results: list[str]) -> None:
        gen.emit(f"if not {results[0]}:")
        gen.emit("    break")

    def carry(results: list[str]) -> None:
        if loop:
            gen.emit(f"{', '.join(loop)} = {', '.join(results)}")
    gen.block(cond.blocks[0], loop, finish=leave)
    gen.block(body.blocks[0], loop, finish=carry)
    gen.indent -= 1


def _branch(gen: FunctionCodegen, region: Region, outs: list[str]) -> None:
    gen.indent += 1
    start = len(gen.lines)

    def assign(results: list[str]) -> None:
        if outs:
            gen.emit(f"{', '.join(outs)} = {', '.join(results)}")
    gen.block(region.blocks[0], finish=assign)
    if len(gen.lines) == start:
        gen.emit("pass")
    gen.indent -= 1


@codegen_rule("stablehlo.if")
def _if(gen: FunctionCodegen, op: Operation) -> None:
    outs = gen.new_names(op.results)
    gen.emit(f"if {gen.name(op.operands[0])}:  # stablehlo.if")
    _branch(gen, op.regions[0], outs)
    gen.emit("else:")
    _branch(gen, op.regions[1], outs)


@codegen_rule("stablehlo.case")
def _case(gen: FunctionCodegen, op: Operation) -> None:
    outs = gen.new_names(op.results)
    index = gen.mod.fresh("i")
    gen.emit(f"{index} = int({gen.name(op.operands[0])})  # stablehlo.case")
    n = len(op.regions)
    for k, region in enumerate(op.regions):
        if k == n - 1:
            gen.emit("else:" if n > 1 else "if True:")
        else:
            gen.emit(f"{'if' if k == 0 else 'elif'} {index} == {k}:")
        _branch(gen, region, outs)


@codegen_rule("stablehlo.custom_call")
def _custom_call(gen: FunctionCodegen, op: Operation) -> None:
    try:
        k = custom_call_kernel(op, EXECUTOR)
    except MissingRuleError as e:  # raise when run, not when compiled (the call may be unreachable)
        def missing(*args, error=e):
            raise error
        k = Kernel(missing)
    gen.kernel(op, k)


@torch_codegen_rule("stablehlo.custom_call")
def _custom_call_torch(gen: FunctionCodegen, op: Operation) -> None:
    """Custom-call kernels are numpy functions: they run on the tensors' values."""
    try:
        from loom.backend.torch_kernels import fallback  # imports torch: only torch code asks
        k = fallback(custom_call_kernel(op, EXECUTOR), gen.mod.device)
    except MissingRuleError as e:
        def missing(*args, error=e):
            raise error
        k = Kernel(missing)
    gen.kernel(op, k)

declare("stablehlo.return", unsupported("a region terminator: the rule of the op holding the region handles it"))
declare(["stablehlo.tuple", "stablehlo.get_tuple_element"],
        unsupported("tuples appear only in programs exported by JAX, which loom runs but does not transform"),
        tables=("jvp", "vjp", "batching"))
declare(["stablehlo.custom_call", "stablehlo.map"],
        unsupported("an opaque target or a region applied per element: not transformed yet"),
        tables=("jvp", "vjp", "batching"))
declare("stablehlo.composite", unsupported("runs its decomposition in the interpreter only"),
        tables=("numpy", "torch", "jvp", "vjp", "batching"))
declare("stablehlo.rng_bit_generator", unsupported("random bits: no derivative; loom.random batches keys itself"),
        tables=("jvp", "vjp", "batching"))
declare("chlo.scan", unsupported("parsed and printed only: loom.lax.scan lowers to stablehlo.while"))


def _region_carries(op):
    """while / if / case: both sharding passes handle them structurally (a carry, the block
    arguments and the values the regions return share one sharding; predicates stay whole), so
    the rule table only records that they are handled."""
    return None


def _barrier_sharding(op):
    """optimization_barrier: each result is its operand."""
    f = Factors()
    dims = [[f.new(n) for n in shape_of(v)] for v in op.operands]
    return f.rule(dims, dims)


for _name in ("stablehlo.while", "stablehlo.if", "stablehlo.case"):
    register(SHARDING_RULES, _name, _region_carries)
register(SHARDING_RULES, "stablehlo.optimization_barrier", _barrier_sharding)
register(SHARDING_RULES, "stablehlo.map", identity_rule)
declare(["stablehlo.tuple", "stablehlo.get_tuple_element", "stablehlo.custom_call", "stablehlo.composite",
         "stablehlo.rng_bit_generator", "stablehlo.rng"],
        unsupported("tuples, opaque targets and random bits: run replicated"), tables=("sharding",))
