"""loom's own dialects: `ad` (stop_gradient, custom_jvp, custom_vjp), `stack` (the loop stacks of
reverse-mode while loops) and `knn` (approximate and fused top-k), and `chlo.top_k`, which shares
`knn.approx_top_k`'s rules.

Kernels in `loom.ops.ad` / `loom.ops.stack` / `loom.backend.knn_kernels`; the derivatives and
batching of `ad` and `stack` at the end of this module.

The rules of `knn.approx_top_k` and `chlo.top_k`:

- VJP: the values' cotangent is scattered (added) back to the selected positions of the operand;
  padding entries (index -1, only without `aggregate_to_topk`) receive nothing. The indices carry
  no cotangent.
- JVP: the values' tangent is the operand's tangent gathered at the selected positions (JAX's rule).
- vmap: the op applied to the batched operand with the reduction dimension renumbered (for
  `chlo.top_k`, whose dimension is the last, the batch dimension moves to the front). For a rank-1
  operand without `aggregate_to_topk` the batched op is rank 2, whose bin count XLA computes
  with the 128-lane tiling instead of the 1024-element chunk: as `jax.vmap` does.

Both gradients work on the reduction dimension moved last and the other dimensions flattened, so
one 1-D scatter or gather (with flat indices `row * N + index`) serves every rank.
"""

from __future__ import annotations

import numpy as np

from loom.dialects import chlo, knn, stablehlo, stack
from loom.dialects.stablehlo import GatherDimensionNumbers, ScatterDimensionNumbers
from loom.ir.builder import Builder
from loom.ir.core import Operation, Value
from loom.ir.types import IntegerType, RankedTensorType
from loom.ops.registry import declare, register, unsupported
from loom.transforms import autodiff, batching, forward_ad
from loom.transforms.autodiff import VJP_RULES, full, full_like, is_float
from loom.transforms.batching import BATCH_RULES, moveaxis
from loom.transforms.forward_ad import JVP_RULES
from loom.transforms.sharding_propagation import SHARDING_RULES, Factors, identity_rule, shape_of

_I32 = IntegerType(32)


def _dimension(op: Operation) -> int:
    rank = len(op.operands[0].type.shape)
    if op.name == "chlo.top_k":
        return rank - 1
    return int(op.properties["reduction_dimension"].value) % rank


def _to_rows(b: Builder, v: Value, dim: int) -> tuple[Value, list[int]]:
    """`v` with `dim` moved last and the other dimensions flattened: (rows, width), plus the
    permutation used."""
    shape = list(v.type.shape)
    perm = [i for i in range(len(shape)) if i != dim] + [dim]
    if perm != list(range(len(shape))):
        v = stablehlo.transpose(b, v, perm)
    rows = int(np.prod([shape[i] for i in perm[:-1]], dtype=np.int64))
    return stablehlo.reshape(b, v, (rows, shape[dim])), perm


def _from_rows(b: Builder, v: Value, shape: tuple[int, ...], perm: list[int]) -> Value:
    """The inverse of `_to_rows` for a (rows, width) value, to a result of `shape` (in the
    original dimension order)."""
    permuted = tuple(shape[i] for i in perm)
    v = stablehlo.reshape(b, v, permuted)
    if perm != list(range(len(shape))):
        inverse = [perm.index(i) for i in range(len(shape))]
        v = stablehlo.transpose(b, v, inverse)
    return v


def _flat_indices(b: Builder, indices: Value, n: int) -> tuple[Value, Value]:
    """(flat indices `row * n + max(index, 0)` as a (rows * width, 1) i32 tensor, the (rows, width)
    mask of valid entries)."""
    rows, width = indices.type.shape
    t = RankedTensorType((rows, width), _I32, None)
    zero = full(b, 0, t)
    valid = stablehlo.compare(b, indices, zero, "GE")
    clamped = stablehlo.select(b, valid, indices, zero)
    row = stablehlo.iota(b, t, 0)
    flat = stablehlo.add(b, clamped, stablehlo.multiply(b, row, full(b, n, t)))
    return stablehlo.reshape(b, flat, (rows * width, 1)), valid


def scatter_to_positions(b: Builder, values: Value, indices: Value, operand_type: RankedTensorType,
                         dim: int) -> Value:
    """A tensor of `operand_type`, zero except `values` added at `indices` along `dim` (the
    transpose of taking those positions)."""
    shape = tuple(operand_type.shape)
    n = shape[dim]
    v2, perm = _to_rows(b, values, dim)
    i2, _ = _to_rows(b, indices, dim)
    if i2.type.element_type != _I32:
        i2 = stablehlo.convert(b, i2, _I32)
    rows, width = v2.type.shape
    flat, valid = _flat_indices(b, i2, n)
    v2 = stablehlo.select(b, valid, v2, full(b, 0, v2.type))
    updates = stablehlo.reshape(b, v2, (rows * width,))
    et = operand_type.element_type
    zeros = full(b, 0, RankedTensorType((rows * n,), et, None))
    dn = ScatterDimensionNumbers.get(update_window_dims=(), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,), index_vector_dim=1)
    out = stablehlo.scatter(b, [zeros], flat, [updates], dn, lambda bb, args: [stablehlo.add(bb, args[0], args[1])])
    return _from_rows(b, stablehlo.reshape(b, out, (rows, n)), shape, perm)


def take_positions(b: Builder, x: Value, indices: Value, dim: int) -> Value:
    """`x` taken at `indices` along `dim` (`take_along_axis`; index -1 gives 0)."""
    n = x.type.shape[dim]
    x2, perm = _to_rows(b, x, dim)
    i2, _ = _to_rows(b, indices, dim)
    if i2.type.element_type != _I32:
        i2 = stablehlo.convert(b, i2, _I32)
    rows, width = i2.type.shape
    flat, valid = _flat_indices(b, i2, n)
    x1 = stablehlo.reshape(b, x2, (rows * n,))
    dn = GatherDimensionNumbers.get(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,), index_vector_dim=1)
    got = stablehlo.reshape(b, stablehlo.gather(b, x1, flat, dn, [1]), (rows, width))
    got = stablehlo.select(b, valid, got, full(b, 0, got.type))
    return _from_rows(b, got, tuple(indices.type.shape), perm)


def _vjp(b: Builder, op: Operation, cts: list[Value | None]) -> list[Value | None]:
    x = op.operands[0]
    if cts[0] is None or not is_float(x.type):
        return [None]
    return [scatter_to_positions(b, cts[0], op.results[1], x.type, _dimension(op))]


def _jvp(b: Builder, op: Operation, primals: list[Value], tangents: list[Value | None]) -> list[Value | None]:
    if tangents[0] is None:
        return [None, None]
    return [take_positions(b, tangents[0], op.results[1], _dimension(op)), None]


def _batch_approx_top_k(b: Builder, op: Operation, args: list[Value], dims: list[int | None]):
    (x,), (d,) = args, dims
    dim = _dimension(op)
    new_dim = dim + 1 if d <= dim else dim
    props = dict(op.properties)
    props["reduction_dimension"] = stablehlo.i64_attr(new_dim)
    new = knn.ApproxTopKOp.insert(b, [x], props)
    return list(new.results), [d, d]


def _batch_top_k(b: Builder, op: Operation, args: list[Value], dims: list[int | None]):
    (x,), (d,) = args, dims
    x = moveaxis(b, x, d, 0)
    values, indices = chlo.top_k(b, x, int(op.properties["k"].value))
    return [values, indices], [0, 0]


VJP_RULES["knn.approx_top_k"] = _vjp
JVP_RULES["knn.approx_top_k"] = _jvp
BATCH_RULES["knn.approx_top_k"] = _batch_approx_top_k
# chlo.top_k's rules are approx_top_k's (the same scatter / gather)
VJP_RULES["chlo.top_k"] = _vjp
JVP_RULES["chlo.top_k"] = _jvp
BATCH_RULES["chlo.top_k"] = _batch_top_k


declare(["ad.stop_gradient", "ad.custom_jvp", "ad.custom_vjp"],
        unsupported("identities at run time: the numpy kernel runs on tensors as is"), tables=("torch",))
declare("knn.approx_top_k", unsupported("runs its numpy kernel on the tensors' values"), tables=("torch",))
declare("knn.fused_score_top_k", unsupported("made by the knn fusion pass after differentiation and batching"),
        tables=("jvp", "vjp", "batching"))
declare("knn.fused_score_top_k", unsupported("its numpy kernel runs on the tensors' values, until the Triton kernel "
                                             "loads (on CUDA devices)", until_loaded="loom.backend.triton_knn"),
        tables=("torch",))
declare(["stack.new", "stack.companion", "stack.push", "stack.pop"],
        unsupported("made by reverse mode for while loops: forward mode never sees them"), tables=("jvp",))
declare(["stack.new", "stack.companion"],
        unsupported("made by reverse mode inside a loop's body; vmap batches the pushed values"), tables=("batching",))


def _top_k_sharding(op):
    """Leading dimensions kept; the last (the one searched) needs replication."""
    f = Factors()
    shape = shape_of(op.operands[0])
    lead = [f.new(n) for n in shape[:-1]]
    last_in, last_out = f.new(shape[-1]), f.new(shape_of(op.results[0])[-1])
    return f.rule([lead + [last_in]], [lead + [last_out]] * len(op.results), need_replication={last_in, last_out})


register(SHARDING_RULES, "chlo.top_k", _top_k_sharding)
register(SHARDING_RULES, "ad.stop_gradient", identity_rule)


def _stack_layout(op):
    """stack ops: spmd-partition handles them structurally (a stack holds each device's shards,
    split as the values pushed on it), so the rule table only records that they are handled."""
    return None


for _name in ("stack.new", "stack.companion", "stack.push", "stack.pop"):
    register(SHARDING_RULES, _name, _stack_layout)
declare(["knn.approx_top_k", "knn.fused_score_top_k", "ad.custom_jvp", "ad.custom_vjp"],
        unsupported("search kernels and the transformations' own ops: run replicated"), tables=("sharding",))


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


# --- the `stack` dialect: derivatives and batching ---------------------------------------------------
#
# Stacks of saved values are differentiable, so gradients of gradients work through loops: a pop's
# cotangent is pushed on the stack's companion (`stack.companion`), and popped back by the rule of
# the push that saved the value. The companion belongs to the run-time stack rather than to one IR
# value, so the pops' and the pushes' rules reach the same one even when the stack's handle was
# itself saved on an outer loop's stack and popped back (loops nested in loops). Batched, a stack
# keeps its element type: a batched value is pushed as its lanes, one by one, and every pop of that
# stack pops the lanes back and stacks them (so a batched while loop's forward and backward
# passes, which run the same number of iterations for every lane, stay in step).


def _push_vjp(b, op, cts):
    v = op.operands[1]
    if not is_float(v.type):
        return [None, None]
    return [None, stack.pop(b, stack.companion(b, op.operands[0]))]


def _push_batch(b, op, args, dims):
    s, v = args
    if dims[1] is None:
        stack.push(b, s, v)
        return [], []
    batching.split_stack(s)
    v = moveaxis(b, v, dims[1], 0)
    shape = tuple(v.type.shape)
    for lane in range(shape[0]):
        part = stablehlo.slice_(b, v, [lane] + [0] * (len(shape) - 1), [lane + 1, *shape[1:]])
        stack.push(b, s, stablehlo.reshape(b, part, shape[1:]))
    return [], []


def _pop_vjp(b, op, cts):
    r = op.results[0]
    if is_float(r.type):
        stack.push(b, stack.companion(b, op.operands[0]), cts[0] if cts[0] is not None else full(b, 0, r.type))
    return [None]


def _pop_batch(b, op, args, dims):
    s = args[0]
    if not batching.is_split_stack(s):
        return [stack.pop(b, s)], [None]
    size = batching.axis_size()
    lanes = [stack.pop(b, s) for _ in range(size)][::-1]
    t = s.type.element_type
    parts = [stablehlo.reshape(b, x, (1, *t.shape)) for x in lanes]
    return [stablehlo.concatenate(b, parts, 0) if size > 1 else parts[0]], [0]


register(VJP_RULES, "stack.push", _push_vjp)
register(BATCH_RULES, "stack.push", _push_batch)
register(VJP_RULES, "stack.pop", _pop_vjp)
register(BATCH_RULES, "stack.pop", _pop_batch)
for _name in ("stack.new", "stack.companion"):
    register(VJP_RULES, _name, autodiff.no_gradient)
