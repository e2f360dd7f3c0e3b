"""Structured control flow: `cond`, `switch`, `while_loop`, `fori_loop`, `scan` and `map`, traced
into `stablehlo.if`, `stablehlo.case` and `stablehlo.while` with regions.

Branches and loop bodies are traced into the regions of the op, in the same trace as the code
around them: a value of an enclosing scope used inside a branch or a body is captured implicitly
(StableHLO regions may use values defined above them), so closures work to any depth of nesting.
Loop carries keep their pytree structure, shapes and dtypes; a body that changes one gets a
`TypeError` naming the carry element (its key path) and both types, and the user's source line.

Everything here is differentiable in both modes, including reverse mode through a `while_loop`
whose trip count depends on data (see `loom.transforms.autodiff`): the forward loop counts its
iterations and saves what the backward loop needs on stacks of the `stack` dialect. How much is
saved is the loop's memory policy, chosen per loop with `policy=` or for a region of code with
the `checkpoint_policy(...)` context manager:

- `"save_all"` (the default): every value the backward pass needs is saved, every iteration;
- `"checkpoint"` or `Checkpoint(every=k)`: only the loop carries of every k-th iteration are saved,
  and the backward pass recomputes each segment of k iterations from its checkpoint before going
  back through it; with `k` unset the forward loop first counts its iterations n and takes
  k = ceil(sqrt(n)), so the saved bytes grow as O(sqrt(n));
- `"offload"`: save-all with the saved values kept in host memory instead of device memory, for
  loops whose saved values do not fit on the accelerator. Differentiation marks the loop's stacks
  (`"stack.new"() <{offload}>`, see `loom.dialects.stack`) and keeps the policy on the loops it
  makes, so gradients of gradients offload too. The torch executor then copies each CUDA tensor
  pushed on a marked stack to pinned host memory (`loom.runtime.devices.offload`), asynchronously on a
  side stream, so the forward loop goes on computing while the copy runs; the next push on the
  same stack makes the compute stream wait for that copy, so at most one value per stack is in
  flight (its device memory is held until its copy ends). The backward loop waits for a value's
  copy to host only when it pops it, and each pop starts copying the next value back to the
  device on another side stream, so it is there when the next iteration pops it. What a value
  costs is one transfer each way over the host link: the policy pays off when device memory, not
  that bandwidth, is what limits the loop. Values already in host memory stay where they are:
  with CPU tensors and in the numpy executor and the interpreter, `"offload"` saves exactly what
  `"save_all"` saves, in the same place. How values move is `loom.ops.stack.OFFLOAD`
  (a `HostOffload`; replace it to change the policy).

All policies give the same gradients, bit for bit. `saved_bytes()` / `peak_saved_bytes()` /
`reset_saved_bytes()` count the bytes held on stacks at run time; `saved_bytes("device")` and
`saved_bytes("host")` (and the same for the peak) split them by where they are held (offloaded
values, numpy arrays and CPU tensors count as host bytes).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from loom.dialects import stablehlo
from loom.frontend.jit import Jitted
from loom.frontend.placement import loop_settings
from loom.frontend.pytree import keystr, tree_flatten, tree_flatten_with_path, tree_unflatten
from loom.frontend.tracing import Tracer, current_trace, ir_element_type, lift, np_dtype, user_line, user_location
from loom.ir.attributes import StringAttr
from loom.ir.builder import Builder, InsertionPoint
from loom.ir.core import Block, Region, Value
from loom.ir.types import IntegerType, RankedTensorType
from loom.lax.ops import convert_element_type
from loom.ops.stack import peak_saved_bytes, reset_saved_bytes, saved_bytes

POLICY_ATTRIBUTE = "loom.memory_policy"


# --- memory policies ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Checkpoint:
    """The checkpointing memory policy: save the loop carries every `every` iterations (ceil of
    sqrt of the trip count when None) and recompute the rest in the backward pass."""

    every: int | None = None

    def __post_init__(self) -> None:
        if self.every is not None and (not isinstance(self.every, int) or self.every < 1):
            raise ValueError(f"Checkpoint(every=...) must be a positive int or None, not {self.every!r}")

    def __str__(self) -> str:
        return "checkpoint" if self.every is None else f"checkpoint:{self.every}"


Policy = "str | Checkpoint | None"
_POLICY: contextvars.ContextVar[str] = contextvars.ContextVar("loom_memory_policy", default="save_all")


def policy_text(policy: Any) -> str:
    """The canonical text of a memory policy: `save_all`, `offload`, `checkpoint` or `checkpoint:K`."""
    if policy is None:
        return _POLICY.get()
    if isinstance(policy, Checkpoint):
        return str(policy)
    if isinstance(policy, str):
        if policy in ("save_all", "offload", "checkpoint"):
            return policy
        if policy.startswith("checkpoint:"):
            return str(Checkpoint(int(policy.split(":", 1)[1])))
    raise ValueError(f"unknown memory policy {policy!r}: use 'save_all', 'offload', 'checkpoint' or "
                     "lax.Checkpoint(every=k)")


def parse_policy(text: str) -> tuple[str, int | None]:
    """(kind, every) of a policy text: kind is `save_all`, `offload` or `checkpoint`."""
    if text.startswith("checkpoint"):
        return "checkpoint", (int(text.split(":", 1)[1]) if ":" in text else None)
    return text, None


@contextlib.contextmanager
def checkpoint_policy(policy: str | Checkpoint = "checkpoint") -> Iterator[None]:
    """Within the block, `while_loop`, `fori_loop` and `scan` without an explicit `policy=` use
    `policy` for the values their reverse-mode gradient saves."""
    token = _POLICY.set(policy_text(policy))
    try:
        yield
    finally:
        _POLICY.reset(token)


# --- tracing into regions ----------------------------------------------------------------------


def _describe(t: Any) -> str:
    shape = ",".join(str(d) for d in t.shape)
    return f"{np.dtype(t.dtype).name}[{shape}]"


@contextlib.contextmanager
def _inside(block: Block) -> Iterator[Any]:
    """Route the current trace's ops into `block` while tracing a branch or body."""
    trace = current_trace()
    saved = trace.builder
    trace.builder = Builder(InsertionPoint.at_end(block), saved.location)
    try:
        yield trace
    finally:
        trace.builder = saved


def _flat_outputs(trace: Any, out: Any) -> tuple[list[Tracer], Any, list[str]]:
    pairs, tree = tree_flatten_with_path(out)
    leaves = []
    for _, leaf in pairs:
        if isinstance(leaf, Tracer) and leaf.trace is not trace:
            raise TypeError(f"a traced value of another trace was returned from a branch or body (at {user_line()})")
        leaves.append(lift(trace, leaf))
    return leaves, tree, [keystr(p) for p, _ in pairs]


def _discard(block: Block) -> None:
    """Drop a block traced only to learn types: its ops must not keep uses of outer values."""
    for op in list(block.ops):
        for nested in op.walk():
            nested.drop_all_references()


def _finish(block: Block, values: Sequence[Value]) -> None:
    b = Builder(InsertionPoint.at_end(block), user_location())
    stablehlo.return_(b, list(values))


def _convert_in(block: Block, t: Tracer, dtype: np.dtype) -> Value:
    """`t` converted to `dtype` by an op at the end of `block` (before its return)."""
    b = Builder(InsertionPoint.at_end(block), user_location())
    return stablehlo.convert(b, t.value, ir_element_type(dtype))


def _eager(fn: Callable[..., Any], *args: Any) -> Any:
    """Run a control-flow call made outside any trace by tracing it with `loom.jit`."""
    return Jitted(fn)(*args)


def _scalar_predicate(trace: Any, pred: Any, what: str) -> Value:
    p = lift(trace, pred)
    if p.shape != ():
        raise TypeError(f"{what} must be a scalar, but it has shape {p.shape} (at {user_line()}); "
                        "use lnp.where to select elementwise")
    if p.dtype == np.bool_:
        return p.value
    b = trace.emit()
    zero = trace.constant(np.zeros((), p.dtype))
    return stablehlo.compare(b, p.value, zero, "NE")


# --- cond and switch ---------------------------------------------------------------------------


def _trace_branches(branches: Sequence[Callable[..., Any]], operands: tuple) -> tuple[list[Region], list[Any], Any]:
    """Trace each branch into a region without arguments; check that all return the same pytree
    structure, shapes and dtypes (weakly typed outputs are converted to the others' dtype)."""
    trace = current_trace()
    regions, outs, trees, names = [], [], [], []
    for fn in branches:
        region = Region()
        block = region.add_block(Block([]))
        with _inside(block):
            leaves, tree, paths = _flat_outputs(trace, fn(*operands))
        regions.append(region)
        outs.append(leaves)
        trees.append(tree)
        names.append(paths)
    for k in range(1, len(branches)):
        if trees[k] != trees[0]:
            raise TypeError(f"branch 0 and branch {k} must return the same pytree structure, but got {trees[0]} and "
                            f"{trees[k]} (at {user_line()})")
    values: list[list[Value]] = [[t.value for t in leaves] for leaves in outs]
    result: list[Any] = []
    for j in range(len(outs[0])):
        ts = [o[j] for o in outs]
        strong = [t for t in ts if not t.weak] or ts
        shape, dtype = strong[0].shape, strong[0].dtype
        for k, t in enumerate(ts):
            if t.shape != shape or (t.dtype != dtype and not t.weak):
                raise TypeError(f"the branches must return the same types, but output{names[0][j]} is "
                                f"{_describe(ts[0])} in branch 0 and {_describe(t)} in branch {k} (at {user_line()})")
            if t.dtype != dtype:
                values[k][j] = _convert_in(regions[k].entry, t, dtype)
        result.append((shape, dtype, all(t.weak for t in ts)))
    for region, vals in zip(regions, values):
        _finish(region.entry, vals)
    return regions, result, trees[0]


def _emit_branch_op(kind: str, selector: Value, regions: list[Region], result: list[Any], tree: Any) -> Any:
    trace = current_trace()
    b = trace.emit()
    types = [RankedTensorType(tuple(s), ir_element_type(d), None) for s, d, _ in result]
    cls = stablehlo.IfOp if kind == "if" else stablehlo.CaseOp
    op = b.insert(cls.create([selector], result_types=types, regions=regions, location=b.location))
    return tree_unflatten(tree, [Tracer(v, trace, w) for v, (_, _, w) in zip(op.results, result)])


def cond(pred: Any, true_fun: Callable[..., Any], false_fun: Callable[..., Any], *operands: Any) -> Any:
    """`true_fun(*operands)` if the scalar `pred` is true (nonzero), else `false_fun(*operands)`;
    traced into one `stablehlo.if`. Both branches must return the same pytree of types."""
    if current_trace() is None:
        return _eager(lambda p, ops: cond(p, true_fun, false_fun, *ops), pred, operands)
    trace = current_trace()
    p = _scalar_predicate(trace, pred, "the predicate of cond")
    regions, result, tree = _trace_branches([true_fun, false_fun], operands)
    return _emit_branch_op("if", p, regions, result, tree)


def switch(index: Any, branches: Sequence[Callable[..., Any]], *operands: Any) -> Any:
    """`branches[index](*operands)`, the index clamped to `[0, len(branches) - 1]` (as JAX);
    traced into one `stablehlo.case`."""
    branches = list(branches)
    if not branches:
        raise ValueError("switch needs at least one branch")
    if current_trace() is None:
        return _eager(lambda i, ops: switch(i, branches, *ops), index, operands)
    trace = current_trace()
    i = lift(trace, index)
    if i.shape != () or i.dtype.kind not in "iub":
        raise TypeError(f"the index of switch must be a scalar integer, but got {_describe(i)} (at {user_line()})")
    b = trace.emit()
    v = i.value
    if i.dtype != np.int32:
        v = stablehlo.convert(b, v, IntegerType(32))
    lo = trace.constant(np.int32(0))
    hi = trace.constant(np.int32(len(branches) - 1))
    v = stablehlo.clamp(b, lo, v, hi)
    if len(branches) == 1:
        return branches[0](*operands)
    regions, result, tree = _trace_branches(branches, operands)
    return _emit_branch_op("case", v, regions, result, tree)


# --- while_loop --------------------------------------------------------------------------------


def _carry_check(expected: list[Tracer], got: list[Tracer], paths: list[str], what: str) -> None:
    for e, g, p in zip(expected, got, paths):
        if e.shape != g.shape or e.dtype != g.dtype:
            raise TypeError(f"{what} must keep the type of each loop carry, but carry{p} is {_describe(e)} on input "
                            f"and {_describe(g)} on output (at {user_line()})")


def _trace_body(fn: Callable[[Any], Any], leaves: list[Tracer], tree: Any, paths: list[str], what: str
                ) -> tuple[Block, list[Tracer]]:
    """Trace `fn(carry)` into a new block with one argument per carry leaf; check the output has
    the carry's structure and types. Returns the block (not yet terminated) and the outputs."""
    trace = current_trace()
    block = Block([t.value.type for t in leaves])
    args = [Tracer(a, trace, t.weak) for a, t in zip(block.args, leaves)]
    with _inside(block):
        out = fn(tree_unflatten(tree, args))
        out_leaves, out_tree, _ = _flat_outputs(trace, out)
    if out_tree != tree:
        raise TypeError(f"{what} must return the structure of the loop carry, {tree}, but returned {out_tree} "
                        f"(at {user_line()})")
    return block, out_leaves


def _promote_weak_carries(leaves: list[Tracer], outs: list[Tracer]) -> tuple[list[Tracer], bool]:
    """JAX's second pass: a weakly typed initial carry takes the dtype the body gives it."""
    trace = current_trace()
    changed = False
    new = list(leaves)
    for k, (e, g) in enumerate(zip(leaves, outs)):
        if e.weak and e.shape == g.shape and e.dtype != g.dtype:
            new[k] = Tracer(stablehlo.convert(trace.emit(), e.value, ir_element_type(g.dtype)), trace, g.weak)
            changed = True
    return new, changed


def _while(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], leaves: list[Tracer], tree: Any,
           policy: str, user_carry: int | None = None, attributes: dict | None = None) -> list[Tracer]:
    """The while loop over `leaves`; `user_carry`, when the state is `(counter, carry, ...)`,
    makes error messages name paths inside the user's carry (element `user_carry` of the state)."""
    trace = current_trace()
    pairs = tree_flatten_with_path(tree_unflatten(tree, leaves))[0]
    if user_carry is None:
        paths = [keystr(p) for p, _ in pairs]
    else:
        paths = [keystr(p[1:]) if p and getattr(p[0], "index", None) == user_carry else "(loop counter)"
                 for p, _ in pairs]
    body_block, outs = _trace_body(body_fun, leaves, tree, paths, "body_fun")
    leaves, changed = _promote_weak_carries(leaves, outs)
    if changed:  # trace again with the promoted carry types
        _discard(body_block)
        body_block, outs = _trace_body(body_fun, leaves, tree, paths, "body_fun")
    _carry_check(leaves, outs, paths, "body_fun")
    _finish(body_block, [o.value for o in outs])
    cond_block = Block([t.value.type for t in leaves])
    args = [Tracer(a, trace, t.weak) for a, t in zip(cond_block.args, leaves)]
    with _inside(cond_block):
        c = cond_fun(tree_unflatten(tree, args))
        if isinstance(c, (bool, np.bool_)):
            c = lift(trace, bool(c))
        if not isinstance(c, Tracer) or c.shape != () or c.dtype != np.bool_:
            raise TypeError(f"cond_fun must return a boolean scalar, but returned "
                            f"{_describe(c) if isinstance(c, Tracer) else type(c).__name__} (at {user_line()})")
    _finish(cond_block, [c.value])
    b = trace.emit()
    regions = [Region([cond_block]), Region([body_block])]
    op = b.insert(stablehlo.WhileOp.create([t.value for t in leaves], regions=regions, location=b.location))
    if policy != "save_all":
        op.attributes[POLICY_ATTRIBUTE] = StringAttr(policy)
    op.attributes.update(attributes or {})
    return [Tracer(v, trace, t.weak) for v, t in zip(op.results, leaves)]


def while_loop(cond_fun: Callable[[Any], Any], body_fun: Callable[[Any], Any], init_val: Any, *,
               policy: str | Checkpoint | None = None, parallel_iterations: int | None = None,
               devices: Sequence[Any] | None = None) -> Any:
    """Repeat `val = body_fun(val)` while `cond_fun(val)` holds, from `init_val`; traced into one
    `stablehlo.while`. The carry keeps its pytree structure, shapes and dtypes. Reverse-mode
    differentiable even when the trip count depends on data; `policy` chooses what its gradient
    saves (see the module docstring). For a program placed on devices (`loom.placement`):
    `parallel_iterations` bounds the iterations of this loop in flight at once once it is
    partitioned, and `devices` places its control and unplaced ops on `devices[0]` and lets its
    body be placed only on `devices` (see `loom.frontend.placement.loop_settings`)."""
    text = policy_text(policy)
    if current_trace() is None:
        return _eager(lambda v: while_loop(cond_fun, body_fun, v, policy=text, parallel_iterations=parallel_iterations,
                                           devices=devices), init_val)
    trace = current_trace()
    leaves, tree = tree_flatten(init_val)
    leaves = [lift(trace, x) for x in leaves]
    with loop_settings(parallel_iterations, devices) as attributes:
        return tree_unflatten(tree, _while(cond_fun, body_fun, leaves, tree, text, attributes=attributes))


def _index_dtype(*xs: Any) -> np.dtype:
    dtypes = [x.dtype if isinstance(x, Tracer) else np.asarray(x).dtype for x in xs
              if isinstance(x, Tracer) or not isinstance(x, int)]
    return np.dtype(np.int64) if any(d == np.int64 for d in dtypes) else np.dtype(np.int32)


def fori_loop(lower: Any, upper: Any, body_fun: Callable[[Any, Any], Any], init_val: Any, *,
              policy: str | Checkpoint | None = None) -> Any:
    """`val = body_fun(i, val)` for `i` in `range(lower, upper)`, from `init_val`; a
    `stablehlo.while` over `(i, val)`. Reverse-mode differentiable for any bounds."""
    text = policy_text(policy)
    if current_trace() is None:
        return _eager(lambda lo, hi, v: fori_loop(lo, hi, body_fun, v, policy=text), lower, upper, init_val)
    trace = current_trace()
    dtype = _index_dtype(lower, upper)
    lo, hi = (convert_element_type(x, dtype) if isinstance(x, Tracer) else np.asarray(x, dtype) for x in (lower, upper))

    def cond_fn(state: Any) -> Any:
        return state[0] < hi

    def body_fn(state: Any) -> Any:
        i, v = state
        return (i + np.asarray(1, dtype), body_fun(i, v))

    leaves, tree = tree_flatten((lo, init_val))
    leaves = [lift(trace, x) for x in leaves]
    out = tree_unflatten(tree, _while(cond_fn, body_fn, leaves, tree, text, user_carry=1))
    return out[1]


# --- scan and map ------------------------------------------------------------------------------


def _index_at(x: Tracer, i: Tracer) -> Tracer:
    """`x[i]` along the leading axis, for a traced int32 scalar `i`."""
    trace = current_trace()
    b = trace.emit()
    zero = trace.constant(np.int32(0))
    sl = stablehlo.dynamic_slice(b, x.value, [i.value] + [zero] * (x.ndim - 1), [1, *x.shape[1:]])
    return Tracer(stablehlo.reshape(b, sl, x.shape[1:]), trace, x.weak)


def _write_at(buffer: Tracer, y: Tracer, i: Tracer) -> Tracer:
    trace = current_trace()
    b = trace.emit()
    zero = trace.constant(np.int32(0))
    y1 = stablehlo.reshape(b, y.value, (1, *y.shape))
    return Tracer(stablehlo.dynamic_update_slice(b, buffer.value, y1, [i.value] + [zero] * y.ndim), trace,
                  buffer.weak)


def scan(f: Callable[[Any, Any], tuple[Any, Any]], init: Any, xs: Any = None, length: int | None = None,
         reverse: bool = False, unroll: int | bool = 1, *, policy: str | Checkpoint | None = None) -> tuple[Any, Any]:
    """`carry, y = f(carry, x)` over the leading axis of `xs` (or `length` times when `xs` is
    None), returning the final carry and the stacked `y`s, as `jax.lax.scan`; `reverse` scans from
    the end; `unroll` steps are traced per loop iteration (the largest divisor of the length not
    above it). One `stablehlo.while` over `(i, carry, ys)`."""
    text = policy_text(policy)
    if current_trace() is None:
        return _eager(lambda c, x: scan(f, c, x, length, reverse, unroll, policy=text), init, xs)
    trace = current_trace()
    x_leaves, x_tree = tree_flatten(xs)
    x_leaves = [lift(trace, x) for x in x_leaves]
    lengths = {x.shape[0] if x.ndim else None for x in x_leaves}
    if None in lengths:
        raise ValueError(f"scan got a 0-d leaf in xs; every leaf needs a leading axis to scan over (at {user_line()})")
    if length is not None:
        lengths.add(int(length))
    if len(lengths) != 1:
        raise ValueError(f"scan got inconsistent lengths for the leading axis of xs (and length): {sorted(lengths)} "
                         f"(at {user_line()})")
    n = lengths.pop()
    u = n if unroll is True else max(1, int(unroll))
    while u > 1 and n % u:
        u -= 1
    c_leaves, c_tree = tree_flatten(init)
    c_leaves = [lift(trace, c) for c in c_leaves]
    c_paths = [keystr(p) for p, _ in tree_flatten_with_path(init)[0]]

    # a first trace of f on placeholders gives the types of the ys (and checks the carry); a
    # second one follows when weakly typed initial carries were promoted
    nc = len(c_leaves)
    for _attempt in range(2):
        probe = Block([t.value.type for t in c_leaves] +
                      [RankedTensorType(x.shape[1:], x.value.type.element_type, None) for x in x_leaves])
        with _inside(probe):
            carry = tree_unflatten(c_tree, [Tracer(a, trace, t.weak) for a, t in zip(probe.args[:nc], c_leaves)])
            xs_t = tree_unflatten(x_tree, [Tracer(a, trace, t.weak) for a, t in zip(probe.args[nc:], x_leaves)])
            res = f(carry, xs_t)
            if not (isinstance(res, tuple) and len(res) == 2):
                raise TypeError(f"the function scanned must return a pair (carry, y) (at {user_line()})")
            y_flat, y_tree = tree_flatten(res[1])
            y_leaves = [lift(trace, y) for y in y_flat]
            new_c = [lift(trace, c) for c in tree_flatten(res[0])[0]]
        _discard(probe)
        if tree_flatten(res[0])[1] != c_tree:
            raise TypeError(f"the function scanned must return a carry with the structure of init, {c_tree}, but "
                            f"returned {tree_flatten(res[0])[1]} (at {user_line()})")
        c_leaves, changed = _promote_weak_carries(c_leaves, new_c)
        if not changed:
            break
    _carry_check(c_leaves, new_c, c_paths, "the function scanned")
    ys0 = [lift(trace, np.zeros((n, *y.shape), y.dtype)) for y in y_leaves]
    y_weak = [y.weak for y in y_leaves]

    def cond_fn(state: Any) -> Any:
        return state[0] < np.int32(n)

    def body_fn(state: Any) -> Any:
        i, carry, ys = state
        for _ in range(u):
            idx = (lift(trace, np.int32(n - 1)) - i) if reverse else i
            x = tree_unflatten(x_tree, [_index_at(x, idx) for x in x_leaves])
            carry, y = f(carry, x)
            y_flat = [lift(trace, v) for v in tree_flatten(y)[0]]
            ys = [_write_at(buf, v if v.dtype == buf.dtype else v.astype(buf.dtype), idx) for buf, v in zip(ys, y_flat)]
            i = i + np.int32(1)
        return (i, carry, ys)

    state = (lift(trace, np.int32(0)), tree_unflatten(c_tree, c_leaves), ys0)
    leaves, tree = tree_flatten(state)
    out = tree_unflatten(tree, _while(cond_fn, body_fn, leaves, tree, text))
    ys = [Tracer(v.value, trace, w) for v, w in zip(out[2], y_weak)]
    return out[1], tree_unflatten(y_tree, ys)


def map(f: Callable[[Any], Any], xs: Any) -> Any:  # noqa: A001 - jax.lax.map's name
    """`f` applied to each slice of `xs` along the leading axis, stacked (a scan without carry)."""
    _, ys = scan(lambda c, x: (c, f(x)), (), xs)
    return ys


def _trip_count_sqrt(n: int) -> int:
    return max(1, math.isqrt(max(n, 1) - 1) + 1)


__all__ = ["POLICY_ATTRIBUTE", "Checkpoint", "checkpoint_policy", "cond", "fori_loop", "map", "parse_policy",
           "peak_saved_bytes", "policy_text", "reset_saved_bytes", "saved_bytes", "scan", "switch", "while_loop"]

_ = (np_dtype,)
