"""The ad dialect (stop_gradient, custom_jvp, custom_vjp): kernels for both executors, derivatives
and batching.

`ad.stop_gradient` is the identity at run time. Its kernel is numpy's `identity` kernel, which the
compiled executor recognises and turns into an alias (no statement in the generated code), and
which the reference interpreter calls like any other kernel. `ad.custom_vjp` is the identity on
its `outputs` operands, as is `ad.custom_jvp` (their regions run only once differentiation has
inlined them).
"""

from __future__ import annotations

from loom.backend.kernels import KERNELS, Kernel, Operand, identity, values_tuple
from loom.dialects import stablehlo
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ops.registry import declare, register, unsupported
from loom.transforms import autodiff, batching, forward_ad
from loom.transforms.autodiff import VJP_RULES, full_like, is_float
from loom.transforms.batching import BATCH_RULES
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.sharding_propagation import SHARDING_RULES, identity_rule


def _stop_gradient(op: Operation) -> Kernel:
    return Kernel(identity)


def _outputs(op: Operation) -> Kernel:
    first = op.properties["operandSegmentSizes"].values[0]
    outputs = [Operand(first + i) for i in range(len(op.results))]
    return Kernel(identity, *outputs) if len(outputs) == 1 else Kernel(values_tuple, *outputs)


KERNELS["ad.stop_gradient"] = _stop_gradient
KERNELS["ad.custom_vjp"] = KERNELS["ad.custom_jvp"] = _outputs


# Declarations ------------------------------------------------------------------------------------

declare(["ad.stop_gradient", "ad.custom_jvp", "ad.custom_vjp"],
        unsupported("identities at run time: the numpy kernel runs on tensors as is"), tables=("torch",))
declare(["ad.custom_jvp", "ad.custom_vjp"], unsupported("the transformations' own ops: run replicated"),
        tables=("sharding",))
register(SHARDING_RULES, "ad.stop_gradient", identity_rule)


# --- the `ad` dialect: derivatives and batching ------------------------------------------------------


# ad.stop_gradient (`lax.stop_gradient`): the identity whose result has a zero tangent and passes
# no cotangent back; batched, the same op on the batched operand.


def _stop_gradient_batch(b: Builder, op: Operation, args: list[Value], dims: list[int | None]):
    return [b.create(op.name, [args[0]], [args[0].type], {}, dict(op.attributes)).results[0]], [dims[0]]


register(JVP_RULES, "ad.stop_gradient", forward_ad.zero_tangent)
register(VJP_RULES, "ad.stop_gradient", autodiff.no_gradient)
register(BATCH_RULES, "ad.stop_gradient", _stop_gradient_batch)


# ad.custom_jvp and ad.custom_vjp: the user's derivative, inlined. The rules refuse a derivative
# function that closes over a value being differentiated (its derivative would be lost).


def _check_no_differentiated_closure(op: Operation) -> None:
    """Raise if the forward function read a differentiated value other than through the op's
    inputs (a closure): its derivative would be lost, since only the inputs get cotangents."""
    inputs = set(op.operands_of("inputs"))
    pending, seen = [v for g in op.GROUPS[1:] for v in op.operands_of(g)], set()
    while pending:
        v = pending.pop()
        if v in inputs or v in seen:
            continue
        seen.add(v)
        owner = v.owner_op
        if owner is None:
            if autodiff.is_active(v):
                raise TypeError(f"the {op.name[3:]} function at {op.location} closes over a value being differentiated "
                                "(not one of its arguments), whose derivative its rule cannot give; pass that value "
                                "as an argument instead (loom.closure_convert makes closed-over values arguments)")
            continue
        pending.extend(owner.operands)
        if owner.regions:
            pending.extend(autodiff.region_free_values(owner))


def _custom_jvp_jvp(b, op, xs, ts):
    """The user's JVP, inlined on the inputs and their tangents (zeros where there are none)."""
    inputs = op.operands_of("inputs")
    block = op.regions[0].entry
    tangents = [t if t is not None else full_like(b, 0, x) for x, t in zip(inputs, ts)]
    got = autodiff.inline_body(b, block, dict(zip(block.args, [*inputs, *tangents])))
    return [t if is_float(r.type) else None for t, r in zip(got, op.results)]


def _custom_jvp_vjp(b, op, cts):
    """The transpose of the user's JVP, linear in the tangents: the VJP of the jvp region with
    respect to its tangent arguments, taken at zero tangents (JAX transposes the linearized rule
    the same way)."""
    _check_no_differentiated_closure(op)
    inputs = op.operands_of("inputs")
    n = len(inputs)
    free = autodiff.region_free_values(op)
    fn = autodiff.region_function(op.regions[0], free, name="jvp")
    wrt = [n + i for i, x in enumerate(inputs) if is_float(x.type)]
    transposed = autodiff.vjp_function(fn, wrt)
    seeds = [ct if ct is not None else full_like(b, 0, r) for ct, r in zip(cts, op.results)]
    zeros = [full_like(b, 0, x) for x in inputs]
    block = transposed.regions[0].entry
    got = iter(autodiff.inline_body(b, block, dict(zip(block.args, [*inputs, *zeros, *free, *seeds])),
                                    skip=len(op.results)))
    in_cts = [next(got) if is_float(x.type) else None for x in inputs]
    return [*in_cts, *[None] * len(op.results)]


def _custom_vjp_jvp(b, op, xs, ts):
    raise TypeError(f"can't apply forward-mode autodiff (jvp) to a custom_vjp function (at {op.location}); "
                    "its derivative is given only in reverse mode")


def _custom_vjp_vjp(b, op, cts):
    """The user's backward function, inlined: residuals and result cotangents in, input cotangents
    out. The forward function's outputs and residuals get none (its ops are not differentiated)."""
    _check_no_differentiated_closure(op)
    block = op.regions[0].entry
    seeds = [ct if ct is not None else full_like(b, 0, r) for ct, r in zip(cts, op.results)]
    got = autodiff.inline_body(b, block, dict(zip(block.args, [*op.operands_of("residuals"), *seeds])))
    inputs = op.operands_of("inputs")
    in_cts = [ct if is_float(x.type) else None for ct, x in zip(got, inputs)]
    return [*in_cts, *[None] * (len(op.operands) - len(inputs))]


def _custom_derivative_batch(b, op, args, dims):
    """Every operand batched at axis 0 (unbatched ones broadcast), the region batched over the
    same axis; the values the region captures keep their own batching (an unbatched constant
    stays one: a reduce's initial value, say, must not become batched). The op keeps its
    derivative under vmap."""
    size = batching.axis_size()
    operands = [batching.bdim_to_front(b, v, d, size) for v, d in zip(args, dims)]
    free, fvals, fdims = batching.captured(b, op)
    block = op.regions[0].entry
    fn, _ = batching.vmap_region(op.regions[0], free, [0] * len(block.args), fdims, size, 0)
    region = stablehlo._build_region([batching.batched_type(a.type, size) for a in block.args],
                                     lambda bb, a: batching.inline_function(bb, fn, [*a, *fvals]), b.location)
    sizes = op.properties["operandSegmentSizes"].values
    groups, start = [], 0
    for k in sizes:
        groups.append(operands[start:start + k])
        start += k
    new = type(op)._build(b, groups, region, None)
    return list(new.results), [0] * len(new.results)


register(JVP_RULES, "ad.custom_jvp", _custom_jvp_jvp)
register(VJP_RULES, "ad.custom_jvp", _custom_jvp_vjp)
register(BATCH_RULES, "ad.custom_jvp", _custom_derivative_batch)
register(JVP_RULES, "ad.custom_vjp", _custom_vjp_jvp)
register(VJP_RULES, "ad.custom_vjp", _custom_vjp_vjp)
register(BATCH_RULES, "ad.custom_vjp", _custom_derivative_batch)
