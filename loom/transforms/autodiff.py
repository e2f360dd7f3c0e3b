"""Reverse-mode automatic differentiation as an IR-to-IR transformation.

`vjp_function(fn, wrt, cotangent_outputs)` takes a `func.func` of StableHLO and builds a new
`func.func` that takes the original arguments followed by one cotangent per chosen output, and
returns the original outputs followed by the cotangent (vector-Jacobian product) of each chosen
argument. The forward ops are copied, then walked in reverse; each op's cotangent rule, looked up
by op name in this transformation's own table `VJP_RULES` (as JAX's `ad.primitive_transposes`),
emits the ops computing the cotangents of its operands. Cotangents reaching one value from
several uses are summed with `stablehlo.add`. Values of integer or boolean type carry no
cotangent; an argument that receives none gets zeros. An op on the differentiated path without a
rule raises `MissingRuleError`, naming the op and the transformation.

A rule is `rule(builder, op, cotangents) -> list[Value | None]`: `op` is the copied forward op
(its operands and results are values of the new function), `cotangents` holds one entry per
result (None for a zero cotangent) and the rule returns one entry per operand (None for zero).
Only values that depend on the differentiated arguments (an activity analysis) get cotangents.

Ops with regions capture values of enclosing scopes; their rules add those values' cotangents
with `accumulate_captured`. `stablehlo.if` / `case` get the same op on the same selector whose
branches are the VJPs of the forward branches. `stablehlo.while` follows Yu et al. (EuroSys 2018):
the body's VJP is split into a forward part and a backward part; the forward loop is rebuilt with
an iteration counter and pushes the values the backward part needs (the residuals) on stacks of
the `stack` dialect created before it; a backward loop runs as many iterations, popping them, and
sums the cotangents of captured values. Loop-invariant values are computed once, before the
backward loop. The `loom.memory_policy` attribute of the loop chooses what is saved (`save_all`,
`offload`: save-all on stacks marked `offload`, whose values the torch executor keeps in host
memory; `checkpoint`, `checkpoint:K`: the carries of every K-th iteration, each segment
recomputed in the backward pass). Stacks of saved values are themselves differentiable (a pop's
cotangent is pushed on a paired stack, popped by the push's rule), so gradients of gradients work.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from loom.dialects import builtin, func, stablehlo
from loom.ir.attributes import TypeAttr, numpy_dtype
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Operation, Value
from loom.ir.types import FloatType, FunctionType, IntegerType, RankedTensorType, Type

TRANSFORMATION = "vjp"

VjpRule = Callable[[Builder, Operation, list["Value | None"]], list["Value | None"]]
VJP_RULES: dict[str, VjpRule] = {}


class MissingRuleError(NotImplementedError):
    """An op on the differentiated path has no rule in `VJP_RULES`."""


def is_float(t: Type) -> bool:
    """Whether `t` is a tensor (or scalar) of a floating-point element type."""
    et = t.element_type if isinstance(t, RankedTensorType) else t
    return isinstance(et, FloatType)


# --- helpers emitting ops -----------------------------------------------------------------------


def _shape(v: Value) -> tuple[int, ...]:
    return tuple(v.type.shape)


def _element(v: Value) -> Type:
    return v.type.element_type


def full(b: Builder, value: float, type: RankedTensorType) -> Value:
    """A splat constant `value` of tensor type `type`."""
    return stablehlo.constant(b, np.asarray(value, dtype=numpy_dtype(type.element_type)), type)


def full_like(b: Builder, value: float, v: Value) -> Value:
    """A splat constant `value` of the type of `v`."""
    return full(b, value, v.type)


def reduce_sum(b: Builder, v: Value, axes: Sequence[int]) -> Value:
    """`v` summed over `axes` (a `stablehlo.reduce` with an add body)."""
    if not axes:
        return v
    zero = full(b, 0, RankedTensorType((), _element(v), None))
    return stablehlo.reduce(b, [v], [zero], sorted(axes), lambda bb, args: [stablehlo.add(bb, args[0], args[1])])


def unbroadcast(b: Builder, g: Value, operand: Value, dims: Sequence[int]) -> Value:
    """The transpose of `broadcast_in_dim(operand, shape(g), dims)`: sum `g` over the broadcast
    dimensions and back to the operand's shape and dimension order."""
    in_shape, out_shape = _shape(operand), _shape(g)
    collapsed = [j for j, d in enumerate(dims) if in_shape[j] == 1 and out_shape[d] != 1]
    kept = [j for j in range(len(dims)) if j not in collapsed]
    axes = [i for i in range(len(out_shape)) if i not in dims] + [dims[j] for j in collapsed]
    v = reduce_sum(b, g, axes)
    sorted_kept = sorted(dims[j] for j in kept)
    perm = [sorted_kept.index(dims[j]) for j in kept]
    if perm != list(range(len(perm))):
        v = stablehlo.transpose(b, v, perm)
    if _shape(v) != in_shape:
        v = stablehlo.reshape(b, v, in_shape)
    return v


def props_ints(op: Operation, name: str) -> list[int]:
    """The integers of an array/dense property of `op` (empty when it is absent)."""
    attr = op.properties.get(name)
    if attr is None:
        return []
    values = getattr(attr, "values", None)
    if values is None:
        values = attr.to_numpy().tolist() if hasattr(attr, "to_numpy") else list(attr)
    return [int(x) for x in values]


# --- rules -------------------------------------------------------------------------------------


def _rule(*names: str) -> Callable[[VjpRule], VjpRule]:
    def register(fn: VjpRule) -> VjpRule:
        for n in names:
            VJP_RULES[n] = fn
        return fn
    return register


def _no_gradient(b: Builder, op: Operation, cts: list[Value | None]) -> list[Value | None]:
    return [None] * len(op.operands)


# Elementwise ops' rules come from loom.ops.elementwise (one derivative per op, both modes).
for _name in ("stablehlo.constant", "stablehlo.iota"):
    VJP_RULES[_name] = _no_gradient
# a bit-exact reinterpretation carries no cotangent (vmap of cond uses it as a stop-gradient)
VJP_RULES["stablehlo.bitcast_convert"] = _no_gradient
# `lax.stop_gradient`: the identity whose result passes no cotangent back to its operand
VJP_RULES["ad.stop_gradient"] = _no_gradient


def _check_no_differentiated_closure(op: Operation) -> None:
    """Raise if the forward function read a differentiated value other than through the op's
    inputs (a closure): its derivative would be lost, since only the inputs get cotangents."""
    inputs = set(op.operands_of("inputs"))
    stack, seen = [v for g in op.GROUPS[1:] for v in op.operands_of(g)], set()
    while stack:
        v = stack.pop()
        if v in inputs or v in seen:
            continue
        seen.add(v)
        owner = v.owner_op
        if owner is None:
            if is_active(v):
                raise TypeError(f"the {op.name[3:]} function at {op.location} closes over a value being differentiated "
                                "(not one of its arguments), whose derivative its rule cannot give; pass that value "
                                "as an argument instead (loom.closure_convert makes closed-over values arguments)")
            continue
        stack.extend(owner.operands)
        if owner.regions:
            stack.extend(region_free_values(owner))


@_rule("ad.custom_vjp")
def _custom_vjp(b, op, cts):
    """The user's backward function, inlined: residuals and result cotangents in, input cotangents
    out. The forward function's outputs and residuals get none (its ops are not differentiated)."""
    _check_no_differentiated_closure(op)
    block = op.regions[0].entry
    seeds = [ct if ct is not None else full_like(b, 0, r) for ct, r in zip(cts, op.results)]
    got = _inline_body(b, block, dict(zip(block.args, [*op.operands_of("residuals"), *seeds])))
    inputs = op.operands_of("inputs")
    in_cts = [ct if is_float(x.type) else None for ct, x in zip(got, inputs)]
    return [*in_cts, *[None] * (len(op.operands) - len(inputs))]


# --- the transformation ------------------------------------------------------------------------


class _State:
    """The cotangents being accumulated by one `vjp_function` call, visible to the rules of region
    ops (whose captured values are not operands) through `accumulate_captured`."""

    def __init__(self, builder: Builder, active: set[Value]) -> None:
        self.builder = builder
        self.active = active
        self.cotangents: dict[Value, Value] = {}
        self.replaced: dict[Value, Value] = {}

    def accumulate(self, v: Value, ct: Value | None) -> None:
        if ct is None or not is_float(v.type) or v not in self.active:
            return
        prev = self.cotangents.get(v)
        self.cotangents[v] = ct if prev is None else stablehlo.add(self.builder, prev, ct)

    def resolve(self, v: Value) -> Value:
        while v in self.replaced:
            v = self.replaced[v]
        return v


class _PerThread(threading.local):
    """Each thread differentiates on its own: the VJPs under way (innermost last) and, for the
    region functions they build, each argument standing for a captured value -> that value."""

    def __init__(self) -> None:
        self.states: list[_State] = []
        self.origins: dict[Value, Value] = {}


_LOCAL = _PerThread()


def current_state() -> _State:
    """The innermost `vjp_function` being built (for rules of ops with regions)."""
    return _LOCAL.states[-1]


def accumulate_captured(value: Value, ct: Value | None) -> None:
    """Add `ct` to the cotangent of `value`, a value captured by a region op (not its operand)."""
    _LOCAL.states[-1].accumulate(value, ct)


def is_active(value: Value) -> bool:
    """Whether `value` depends on a differentiated argument (only active values get cotangents)."""
    return value in _LOCAL.states[-1].active


def replace_op(old: Operation, new_values: Sequence[Value]) -> None:
    """Replace a forward op by the values of a rewritten one (a while that now counts its
    iterations and saves values) and erase it; the function's outputs follow the replacement."""
    state = _LOCAL.states[-1]
    for r, v in zip(old.results, new_values):
        r.replace_all_uses_with(v)
        state.replaced[r] = v
    old.erase()


def region_free_values(op: Operation, regions: Sequence[Any] | None = None) -> list[Value]:
    """Values used inside `regions` of `op` (all by default) but defined outside `op`, in order of
    first use."""
    seen: dict[Value, None] = {}
    for region in (op.regions if regions is None else regions):
        for block in region.blocks:
            for inner in block.ops:
                for nested in inner.walk():
                    for v in nested.operands:
                        owner = v.owner_op if v.owner_op is not None else v.parent_block.parent_op
                        if (owner is None or not op.is_ancestor(owner)) and v not in seen:
                            seen[v] = None
    return list(seen)


def _activity(ops: Sequence[Operation], seeds: Sequence[Value]) -> set[Value]:
    """The values that depend on `seeds`. A stack on which an active value is pushed is active
    (its pops give active values): that is what carries second-order gradients through loops."""
    active = set(seeds)
    for op in ops:
        inputs = list(op.operands)
        if op.regions:
            inputs += region_free_values(op)
        if op.name == "stack.push":
            if op.operands[1] in active:
                active.add(op.operands[0])
        elif any(v in active for v in inputs):
            active.update(op.results)
            for nested in op.walk():
                if nested.name == "stack.push" and not op.is_ancestor(_definer(nested.operands[0])):
                    active.add(nested.operands[0])
    return active


def _definer(v: Value) -> Operation | None:
    return v.owner_op if v.owner_op is not None else v.parent_block.parent_op


BOUNDARY = "loom.vjp_boundary"


def vjp_function(fn: Operation, wrt: Sequence[int], cotangent_outputs: Sequence[int] | None = None,
                 name: str = "main", split: bool = False, active_args: Sequence[int] = ()) -> Operation:
    """A new `func.func @name` computing `fn`'s outputs and the VJP w.r.t. its arguments `wrt`.

    Its arguments are `fn`'s arguments followed by one cotangent per output in
    `cotangent_outputs` (all outputs by default; the others count as zero); its results are
    `fn`'s results followed by the cotangent of each argument in `wrt` (zeros for arguments of
    integer or boolean type or that the outputs do not depend on). With `split`, an unregistered
    `loom.vjp_boundary` op separates the forward ops from the backward ones (for the rules of loop
    ops, which move each part into its own loop). `active_args` are arguments that are active
    without being differentiated (stacks of saved values captured by a loop body)."""
    ftype: FunctionType = fn.properties["function_type"].value
    cotangent_outputs = list(range(len(ftype.results))) if cotangent_outputs is None else list(cotangent_outputs)
    new_type = FunctionType((*ftype.inputs, *(ftype.results[i] for i in cotangent_outputs)),
                            (*ftype.results, *(ftype.inputs[i] for i in wrt)))
    new = func.FuncOp.build(name, new_type, location=fn.location)
    block = new.regions[0].entry
    old_block = fn.regions[0].entry
    mapping: dict = dict(zip(old_block.args, block.args))
    if _LOCAL.states:  # a region's VJP: its arguments stand for the region function's (for _cotangent_stack)
        _LOCAL.origins.update((n, o) for o, n in zip(old_block.args, block.args) if o in _LOCAL.origins)
    b = Builder(InsertionPoint.at_end(block))
    forward: list[Operation] = []
    ret = None
    for op in old_block.ops:
        if op.name == "func.return":
            ret = op
            break
        forward.append(b.insert(op.clone(mapping)))
    if ret is None:
        raise ValueError("the function has no func.return")
    outputs = [mapping.get(v, v) for v in ret.operands]
    if split:
        b.insert(Operation.create(BOUNDARY))

    state = _State(b, _activity(forward, [block.args[i] for i in (*wrt, *active_args)]))
    _LOCAL.states.append(state)
    try:
        for k, i in enumerate(cotangent_outputs):
            state.accumulate(outputs[i], block.args[len(ftype.inputs) + k])
        for op in reversed(forward):
            cts = [state.cotangents.pop(r, None) for r in op.results]
            # a push or pop on an active stack always has its rule run, so that the stack of
            # cotangents it feeds stays in step with the stack of values
            forced = (op.name in STACK_OPS and op.operands[0] in state.active) or (
                bool(op.regions) and any(n.name == "stack.push" and n.operands[0] in state.active
                                         for n in op.walk() if n is not op))
            if all(c is None for c in cts) and not forced:
                continue
            rule = VJP_RULES.get(op.name)
            if rule is None:
                raise MissingRuleError(f"the {TRANSFORMATION} transformation has no rule for op '{op.name}' "
                                       f"(at {op.location}); add one to its op family in loom.ops")
            b.location = op.location
            operands = list(op.operands)  # the rule of a loop may replace (and erase) the op
            operand_cts = rule(b, op, cts)
            for v, ct in zip(operands, operand_cts):
                state.accumulate(v, ct)
    finally:
        _LOCAL.states.pop()
        if not _LOCAL.states:
            _LOCAL.origins.clear()
    results = [state.resolve(v) for v in outputs]
    for i in wrt:
        arg = block.args[i]
        ct = state.cotangents.get(arg)
        results.append(ct if ct is not None else full(b, 0, arg.type))
    b.insert(func.ReturnOp.build(results, fn.location))
    new.properties["function_type"] = TypeAttr(new_type)
    return new


def vjp_module(module: Operation, wrt: Sequence[int], cotangent_outputs: Sequence[int] | None = None,
               entry: str = "main") -> Operation:
    """A new `builtin.module` holding `vjp_function` of the module's function `entry` as `@main`."""
    fn = next((op for op in module.regions[0].entry.ops
               if op.name == "func.func" and op.properties["sym_name"].value == entry), None)
    if fn is None:
        raise ValueError(f"the module has no function @{entry}")
    out = builtin.ModuleOp.build()
    out.body.append(vjp_function(fn, wrt, cotangent_outputs, "main"))
    return out


# --- the stack dialect (second order through loops) ----------------------------------------------

STACK_OPS = frozenset({"stack.push", "stack.pop"})


def _cotangent_stack(b: Builder, s: Value) -> Value:
    """The stack of cotangents paired with the stack `s`: its companion (`stack.companion`), which
    belongs to the run-time stack rather than to one IR value, so the pops' and the pushes' rules
    reach the same one even when the stack's handle was itself saved on an outer loop's stack and
    popped back (second order through loops nested in loops). The cotangents of values popped from
    `s` are pushed on it, and popped back by the rule of the push that saved each value."""
    from loom.dialects import stack
    return stack.companion(b, s)


@_rule("stack.pop")
def _stack_pop(b, op, cts):
    from loom.dialects import stack
    r = op.results[0]
    if is_float(r.type):
        stack.push(b, _cotangent_stack(b, op.operands[0]), cts[0] if cts[0] is not None else full(b, 0, r.type))
    return [None]


@_rule("stack.push")
def _stack_push(b, op, cts):
    from loom.dialects import stack
    v = op.operands[1]
    if not is_float(v.type):
        return [None, None]
    return [None, stack.pop(b, _cotangent_stack(b, op.operands[0]))]


_no_gradient_new = _rule("stack.new", "stack.companion")(_no_gradient)


# --- control flow: stablehlo.if, stablehlo.case, stablehlo.while ---------------------------------


def region_function(region: Any, free: Sequence[Value], name: str = "region") -> Operation:
    """A detached `func.func` computing a one-block region: its arguments are the block's
    arguments followed by the values in `free` (those the region captures), its results the
    operands of the region's terminator."""
    block = region.entry
    ret = block.last_op
    types_in = (*(a.type for a in block.args), *(v.type for v in free))
    fn = func.FuncOp.build(name, FunctionType(types_in, tuple(v.type for v in ret.operands)))
    fb = fn.regions[0].entry
    mapping: dict = dict(zip(block.args, fb.args))
    mapping.update(zip(free, fb.args[len(block.args):]))
    _LOCAL.origins.update(zip(fb.args[len(block.args):], free))
    for o in block.ops:
        if o is ret:
            fb.append(func.ReturnOp.build([mapping.get(v, v) for v in o.operands]))
            break
        fb.append(o.clone(mapping))
    return fn


def _inline_body(bb: Builder, fb: Any, mapping: dict, skip: int = 0) -> list[Value]:
    """Clone the ops of a block `fb` (a function's or a region's body) into `bb`, all but its
    terminator; return the terminator's mapped operands after the first `skip`."""
    last = fb.last_op
    for o in fb.ops:
        if o is last:
            return [mapping.get(v, v) for v in o.operands[skip:]]
        bb.insert(o.clone(mapping))
    raise ValueError("the block has no terminator")


@_rule("ad.custom_jvp")
def _custom_jvp(b, op, cts):
    """The transpose of the user's JVP, linear in the tangents: the VJP of the jvp region with
    respect to its tangent arguments, taken at zero tangents (JAX transposes the linearized rule
    the same way)."""
    _check_no_differentiated_closure(op)
    inputs = op.operands_of("inputs")
    n = len(inputs)
    free = region_free_values(op)
    fn = region_function(op.regions[0], free, name="jvp")
    wrt = [n + i for i, x in enumerate(inputs) if is_float(x.type)]
    transposed = vjp_function(fn, wrt)
    seeds = [ct if ct is not None else full_like(b, 0, r) for ct, r in zip(cts, op.results)]
    zeros = [full_like(b, 0, x) for x in inputs]
    block = transposed.regions[0].entry
    got = iter(_inline_body(b, block, dict(zip(block.args, [*inputs, *zeros, *free, *seeds])), skip=len(op.results)))
    in_cts = [next(got) if is_float(x.type) else None for x in inputs]
    return [*in_cts, *[None] * len(op.results)]


@_rule("stablehlo.if", "stablehlo.case")
def _branch_op(b, op, cts):
    # The cotangent of a branch op is the same kind of op on the same selector whose branches
    # are the VJPs of the forward branches (each recomputes its forward part: branches keep no
    # residuals, so the backward op is self-contained and differentiable again).
    free = region_free_values(op)
    active = [v for v in free if is_float(v.type) and is_active(v)]
    if not active:
        return [None] * len(op.operands)
    wrt = [free.index(v) for v in active]
    seeds = [c if c is not None else full(b, 0, r.type) for c, r in zip(cts, op.results)]
    regions = []
    for region in op.regions:
        vjp = vjp_function(region_function(region, free), wrt,
                           active_args=[k for k, v in enumerate(free) if is_active(v) and not is_float(v.type)])
        fb = vjp.regions[0].entry
        mapping: dict = dict(zip(fb.args[:len(free)], free))
        mapping.update(zip(fb.args[len(free):], seeds))

        def body(bb: Builder, _args: list, fb=fb, mapping=mapping) -> list[Value]:
            return _inline_body(bb, fb, dict(mapping), skip=len(op.results))
        regions.append(stablehlo._build_region([], body, b.location))
    new = b.insert(type(op).create([op.operands[0]], result_types=[v.type for v in active], regions=regions,
                                   location=b.location))
    for v, g in zip(active, new.results):
        accumulate_captured(v, g)
    return [None] * len(op.operands)


_I32 = RankedTensorType((), IntegerType(32), None)


class _LoopVjp:
    """The pieces of the VJP of one `stablehlo.while`: the body's VJP split into its forward part
    (run in the forward loop, pushing the residuals it computes) and its backward part (run in the
    backward loop, popping them), and the loop-invariant values the backward part needs."""

    def __init__(self, op: Operation) -> None:
        from loom.rewrite.effects import is_pure
        self.op = op
        self.n = n = len(op.operands)
        self.carry_types = [v.type for v in op.operands]  # the op is erased once replaced
        self.free = free = region_free_values(op, [op.regions[1]])
        self.float_carries = [i for i in range(n) if is_float(op.operands[i].type)]
        self.active_free = [j for j, v in enumerate(free) if is_float(v.type) and is_active(v)]
        fn = region_function(op.regions[1], free, "body")
        active_stacks = [n + j for j, v in enumerate(free) if is_active(v) and not is_float(v.type)]
        vjp = vjp_function(fn, self.float_carries + [n + j for j in self.active_free], split=True,
                           active_args=active_stacks)
        block = vjp.regions[0].entry
        ops = list(block.ops)
        k = next(i for i, o in enumerate(ops) if o.name == BOUNDARY)
        self.forward, self.backward, self.ret = ops[:k], ops[k + 1:-1], ops[-1]
        self.carry_args = list(block.args[:n])
        self.free_args = list(block.args[n:n + len(free)])
        self.ct_args = list(block.args[n + len(free):])
        varying: set[Value] = set(self.carry_args)
        for o in self.forward:
            ins = list(o.operands) + (region_free_values(o) if o.regions else [])
            if not is_pure(o) or any(v in varying for v in ins):
                varying.update(o.results)
        self.varying = varying
        primal = set(self.carry_args) | set(self.free_args)
        for o in self.forward:
            primal.update(o.results)
        needed: dict[Value, None] = {}
        for o in self.backward:
            for v in list(o.operands) + (region_free_values(o) if o.regions else []):
                needed[v] = None
        for v in self.ret.operands[n:]:
            needed[v] = None
        self.residuals = [v for v in needed if v in primal and v in varying]

    def forward_body(self, bb: Builder, carries: Sequence[Value], stacks: Sequence[Value] | None) -> list[Value]:
        """The body's forward part on `carries`, pushing the residuals on `stacks` (if given);
        returns the new carries."""
        from loom.dialects import stack
        mapping: dict = dict(zip(self.carry_args, carries))
        mapping.update(zip(self.free_args, self.free))
        for o in self.forward:
            bb.insert(o.clone(mapping))
        if stacks is not None:
            for s, v in zip(stacks, self.residuals):
                stack.push(bb, s, mapping.get(v, v))
        return [mapping.get(v, v) for v in self.ret.operands[:self.n]]

    def hoist_invariants(self, b: Builder) -> dict:
        """Clone the forward part's loop-invariant ops before the backward loop; the mapping of
        the body's values to the outer ones."""
        from loom.rewrite.effects import is_pure
        mapping: dict = dict(zip(self.free_args, self.free))
        for o in self.forward:
            if o.results and is_pure(o) and not any(r in self.varying for r in o.results):
                b.insert(o.clone(mapping))
        for i in range(self.n):
            if i not in self.float_carries:
                mapping[self.ct_args[i]] = full(b, 0, self.carry_types[i])
        return mapping

    def backward_body(self, bb: Builder, hoisted: dict, stacks: Sequence[Value], cts: Sequence[Value],
                      acc: Sequence[Value]) -> tuple[list[Value], list[Value]]:
        """One backward iteration: pop the residuals, run the backward part; returns the carries'
        cotangents and the updated sums of the captured values' cotangents."""
        from loom.dialects import stack
        mapping = dict(hoisted)
        mapping.update(zip([self.ct_args[i] for i in self.float_carries], cts))
        for s, v in zip(stacks, self.residuals):
            mapping[v] = stack.pop(bb, s)
        for o in self.backward:
            bb.insert(o.clone(mapping))
        grads = [mapping.get(v, v) for v in self.ret.operands[self.n:]]
        nf = len(self.float_carries)
        return grads[:nf], [stablehlo.add(bb, a, g) for a, g in zip(acc, grads[nf:])]

    def cond(self, bb: Builder, carries: Sequence[Value]) -> Value:
        block = self.op.regions[0].entry
        mapping: dict = dict(zip(block.args, carries))
        for o in block.ops:
            if o is block.last_op:
                return mapping.get(o.operands[0], o.operands[0])
            bb.insert(o.clone(mapping))
        raise ValueError("the cond region of stablehlo.while has no terminator")


def _results(op: Operation) -> list[Value]:
    return list(op.results)


def _while_op(b: Builder, init: Sequence[Value], cond: Callable, body: Callable,
              attributes: dict | None = None) -> list[Value]:
    types = [v.type for v in init]
    regions = [stablehlo._build_region(types, cond, b.location), stablehlo._build_region(types, body, b.location)]
    return _results(b.insert(stablehlo.WhileOp.create(list(init), regions=regions, location=b.location,
                                                      attributes=dict(attributes) if attributes else None)))


POLICY = "loom.memory_policy"


def _policy(op: Operation) -> tuple[str, int | None]:
    attr = op.attributes.get(POLICY)
    text = getattr(attr, "value", None) or "save_all"
    if text.startswith("checkpoint"):
        return "checkpoint", (int(text.split(":", 1)[1]) if ":" in text else None)
    return text, None


@_rule("stablehlo.while")
def _while(b, op, cts):
    # Reverse mode through a while loop with a data-dependent trip count (Yu et al. 2018): the
    # forward loop gets an iteration counter and pushes the residuals its body's VJP needs on
    # stacks created outside both loops; a backward loop runs the same number of iterations,
    # popping them in reverse; cotangents of captured (loop-invariant) values are summed.
    from loom.dialects import stack
    loop = _LoopVjp(op)
    kind, every = _policy(op)
    policy_attrs = {POLICY: op.attributes[POLICY]} if kind == "offload" else None
    n = loop.n
    fb = Builder(InsertionPoint.before(op), op.location)
    zero, one = full(fb, 0, _I32), full(fb, 1, _I32)
    if kind == "checkpoint":
        new, count, ckpt_stacks, every_v = _checkpointed_forward(fb, loop, every, zero, one)
    else:
        # Under `offload` the stacks are marked (the torch executor keeps their values in host
        # memory) and the loops made here keep the policy, so that differentiating them again
        # (second order) offloads the stacks of that differentiation too.
        offload = kind == "offload"
        stacks = [stack.new(fb, v.type, offload=offload) for v in loop.residuals]

        def fwd_body(bb: Builder, args: list) -> list:
            return [*loop.forward_body(bb, args[:n], stacks), stablehlo.add(bb, args[n], one)]
        out = _while_op(fb, [*op.operands, zero], lambda bb, args: [loop.cond(bb, args[:n])], fwd_body,
                        policy_attrs)
        new, count = out[:n], out[n]
    replace_op(op, new)

    hoisted = loop.hoist_invariants(b)
    nf = len(loop.float_carries)
    ct0 = [cts[i] if cts[i] is not None else full(b, 0, new[i].type) for i in loop.float_carries]
    acc0 = [full(b, 0, loop.free[j].type) for j in loop.active_free]
    one_b, zero_b = full(b, 1, _I32), full(b, 0, _I32)

    def positive(bb: Builder, args: list) -> list:
        return [stablehlo.compare(bb, args[0], zero_b, "GT")]

    if kind == "checkpoint":
        res_stacks = [stack.new(b, v.type) for v in loop.residuals]

        def segment(bb: Builder, args: list) -> list:
            remaining, cts_in, acc = args[0], args[1:1 + nf], args[1 + nf:]
            start = stablehlo.multiply(bb, stablehlo.divide(bb, stablehlo.subtract(bb, remaining, one_b), every_v),
                                       every_v)
            length = stablehlo.subtract(bb, remaining, start)
            carries = [stack.pop(bb, s) for s in reversed(ckpt_stacks)][::-1]

            def recompute(b2: Builder, a2: list) -> list:
                return [stablehlo.add(b2, a2[0], one_b), *loop.forward_body(b2, a2[1:], res_stacks)]
            _while_op(bb, [zero_b, *carries], lambda b2, a2: [stablehlo.compare(b2, a2[0], length, "LT")], recompute)

            def back(b2: Builder, a2: list) -> list:
                g, s = loop.backward_body(b2, hoisted, res_stacks, a2[1:1 + nf], a2[1 + nf:])
                return [stablehlo.subtract(b2, a2[0], one_b), *g, *s]
            out = _while_op(bb, [length, *cts_in, *acc], positive, back)
            return [start, *out[1:]]
        back_out = _while_op(b, [count, *ct0, *acc0], positive, segment)
    else:
        def backward(bb: Builder, args: list) -> list:
            g, s = loop.backward_body(bb, hoisted, stacks, args[1:1 + nf], args[1 + nf:])
            return [stablehlo.subtract(bb, args[0], one_b), *g, *s]
        back_out = _while_op(b, [count, *ct0, *acc0], positive, backward, policy_attrs)
    for j, g in zip(loop.active_free, back_out[1 + nf:]):
        accumulate_captured(loop.free[j], g)
    result: list[Value | None] = [None] * n
    for i, g in zip(loop.float_carries, back_out[1:1 + nf]):
        result[i] = g
    return result


def _checkpointed_forward(fb: Builder, loop: _LoopVjp, every: int | None, zero: Value, one: Value
                          ) -> tuple[list[Value], Value, list[Value], Value]:
    """The forward loop of the checkpointing policy: it saves only the carries of every k-th
    iteration. With k unset, a first loop counts the iterations n and k = ceil(sqrt(n))."""
    from loom.dialects import stack
    n = loop.n
    op = loop.op
    if every is None:
        def count_body(bb: Builder, args: list) -> list:
            return [*loop.forward_body(bb, args[:n], None), stablehlo.add(bb, args[n], one)]
        trips = _while_op(fb, [*op.operands, zero], lambda bb, args: [loop.cond(bb, args[:n])], count_body)[n]
        f32 = RankedTensorType((), FloatType("f32"), None)
        root = stablehlo.ceil(fb, stablehlo.sqrt(fb, stablehlo.convert(fb, trips, f32.element_type)))
        every_v = stablehlo.maximum(fb, stablehlo.convert(fb, root, IntegerType(32)), one)
    else:
        every_v = full(fb, every, _I32)
    stacks = [stack.new(fb, v.type) for v in op.operands]

    def body(bb: Builder, args: list) -> list:
        counter = args[n]
        due = stablehlo.compare(bb, stablehlo.remainder(bb, counter, every_v), zero, "EQ")

        def save(b2: Builder, _a: list) -> list:
            for s, v in zip(stacks, args[:n]):
                stack.push(b2, s, v)
            return []
        bb.insert(stablehlo.IfOp.create([due], result_types=[], regions=[
            stablehlo._build_region([], save, bb.location), stablehlo._build_region([], lambda b2, a: [], bb.location)],
            location=bb.location))
        return [*loop.forward_body(bb, args[:n], None), stablehlo.add(bb, counter, one)]
    out = _while_op(fb, [*op.operands, zero], lambda bb, args: [loop.cond(bb, args[:n])], body)
    return out[:n], out[n], stacks, every_v


# --- ad.stop_gradient after differentiation ------------------------------------------------------


def lower_stop_gradients(root: Operation) -> int:
    """Replace every `ad.stop_gradient` nested in `root` by its operand, and every `ad.custom_vjp`
    and `ad.custom_jvp` by its outputs; return how many there were.

    Only for a module whose differentiation is done: StableHLO has no stop-gradient op (XLA sees
    the identity, as for JAX's), so a module printed for XLA goes through this first. loom's own
    pipelines keep the op, since `loom.grad` may differentiate an already optimised function."""
    ops = [op for op in root.walk() if op.name in ("ad.stop_gradient", "ad.custom_vjp", "ad.custom_jvp")]
    for op in ops:
        values = op.operands if op.name == "ad.stop_gradient" else op.operands_of("outputs")
        for r, v in zip(op.results, values):
            r.replace_all_uses_with(v)
        op.erase()
    return len(ops)


def _register_lowering_pass() -> type:
    from loom.rewrite.passes import Pass, register_pass

    @register_pass
    class LowerStopGradientPass(Pass):
        """`lower-stop-gradient`: `ad.stop_gradient` replaced by its operand (for XLA export, after
        every differentiation)."""

        name = "lower-stop-gradient"
        summary = "Replace ad.stop_gradient by its operand (run after differentiation, before XLA export)"

        def run(self, op: Operation) -> None:
            lower_stop_gradients(op)

    return LowerStopGradientPass


LowerStopGradientPass = _register_lowering_pass()


__all__ = ["BOUNDARY", "LowerStopGradientPass", "TRANSFORMATION", "VJP_RULES", "MissingRuleError", "VjpRule",
           "accumulate_captured",
           "current_state", "full", "is_active", "is_float", "reduce_sum", "region_free_values", "region_function",
           "replace_op",
           "unbroadcast", "lower_stop_gradients", "vjp_function", "vjp_module"]
