"""`loom.shard_map` and `with_sharding_constraint`: the sharded front end, with JAX's names and
behaviour.

`shard_map(f, mesh=..., in_specs=..., out_specs=...)` maps `f` over the shards of its arguments:
each argument is split over the mesh as its `PartitionSpec` says, `f` runs once per device on the
local shards (it may use the collectives of `loom.lax` over the mesh's axes), and its results,
local values, are assembled into global ones as `out_specs` say. It lowers to
`sdy.manual_computation` (manual over the mesh axes `axis_names` names, all by default), whose
body is `f` traced on the local shapes (global shape / product of the axes splitting each
dimension), as JAX lowers it. Values `f` closes over enter the body as extra operands,
replicated. Called outside tracing, it runs as a jitted function.

`with_sharding_constraint(x, sharding)` lowers to `sdy.sharding_constraint` (an identity on values).

While a trace uses a mesh (a shard_map, a constraint, a sharded jit), every active trace records
it (`TraceContext.mesh`, one mesh per program), so the jitted module gets its `sdy.mesh`.
"""

from __future__ import annotations

import functools
import inspect
import math
import threading
from collections.abc import Callable
from typing import Any

from loom.dialects.sdy import ManualAxesAttr, TensorShardingPerValueAttr
from loom.frontend.pytree import keystr, node_children, tree_flatten, tree_flatten_with_path, tree_unflatten
from loom.frontend.tracing import TraceContext, Tracer, current_trace, lift, tensor_type
from loom.ir.core import Operation, Region
from loom.sharding import Mesh, NamedSharding, PartitionSpec


class _PerThread(threading.local):
    def __init__(self) -> None:
        self.meshes: list[Mesh] = []  # the meshes of the shard_map bodies being traced, innermost last
        self.traces: list[Any] = []
        # value -> (mesh axes, values): the value varies over those axes and over what those
        # values vary over, besides what its op makes it vary over (`pvary`, `zeros_like`)
        self.marks: dict[Any, tuple[frozenset[str], tuple[Any, ...]]] = {}


_LOCAL = _PerThread()


def current_mesh() -> Mesh | None:
    """The mesh of the innermost shard_map whose body is being traced (its axes are bound)."""
    return _LOCAL.meshes[-1] if _LOCAL.meshes else None


def use_mesh(mesh: Mesh, where: str) -> None:
    """Record that the active traces use `mesh` (a program has one mesh: another is an error)."""
    from loom.frontend.tracing import _LOCAL as TRACES  # the active traces, all of which hold the op
    for trace in TRACES.traces:
        have = getattr(trace, "mesh", None)
        if have is not None and have != mesh:
            raise ValueError(f"{where} uses the mesh {mesh!r}, but {trace.mesh_user} uses the mesh {have!r}; a "
                             "program runs on one mesh")
        if have is None:
            trace.mesh, trace.mesh_user = mesh, where


def mark_varying(x: Any, axes: Any = (), like: Any = ()) -> None:
    """Record that `x` (a tracer in a shard_map body) varies over the mesh axes `axes` and over
    what the tracers `like` vary over, whatever its op says (a no-op outside a body)."""
    if _LOCAL.meshes and isinstance(x, Tracer):
        have = _LOCAL.marks.get(x.value, (frozenset(), ()))
        values = tuple(t.value for t in like if isinstance(t, Tracer))
        _LOCAL.marks[x.value] = (have[0] | frozenset(axes), have[1] + values)


def is_spec_leaf(x: Any) -> bool:
    """PartitionSpecs, shardings and None are leaves of a spec tree (a PartitionSpec is a tuple)."""
    return x is None or isinstance(x, (PartitionSpec, NamedSharding))


def broadcast_prefix(spec: Any, tree: Any, what: str, path: str = "") -> list[Any]:
    """One entry of `spec` (a pytree prefix of `tree` whose leaves are specs) per leaf of `tree`."""
    if is_spec_leaf(spec):
        return [spec] * len(tree_flatten(tree)[0])
    s_node, t_node = node_children(spec), node_children(tree)
    if s_node is None or t_node is None or s_node[0] is not t_node[0] or s_node[1] != t_node[1] \
            or len(s_node[2]) != len(t_node[2]):
        raise ValueError(f"{what}{path} is {spec!r}, which is not a tree prefix of the value {tree_flatten(tree)[1]}")
    out: list[Any] = []
    for i, (s, t) in enumerate(zip(s_node[2], t_node[2])):
        out.extend(broadcast_prefix(s, t, what, f"{path}[{i}]"))
    return out


def leaf_paths(tree: Any, root: str) -> list[str]:
    """`root` followed by each leaf's key path (`args[0]['w']`), in flattening order."""
    return [root + keystr(p) for p, _ in tree_flatten_with_path(tree)[0]]


def named_sharding(mesh: Mesh, spec: Any, shape: tuple[int, ...], where: str, divisible: bool = False
                   ) -> NamedSharding:
    """The NamedSharding of `spec` over `mesh` for a value of `shape` at `where` (the errors name
    it): its axes known and used once, its rank at most the value's, and with `divisible`, each
    dimension divisible by the product of the axes splitting it."""
    try:
        sharding = spec if isinstance(spec, NamedSharding) else NamedSharding(mesh, spec)
    except ValueError as e:
        raise ValueError(f"{where}: {e}") from None
    if len(sharding.spec) > len(shape):
        raise ValueError(f"{where}: {sharding.spec!r} has length {len(sharding.spec)}, but the value has shape "
                         f"{tuple(shape)}, which has rank {len(shape)} (and {len(shape)} < {len(sharding.spec)})")
    if divisible:
        for d, (size, count) in enumerate(zip(shape, sharding.shard_counts(len(shape)))):
            if size % count:
                axes = " x ".join(f"{a!r} (of size {mesh.shape[a]})" for a in sharding.spec.axes_of(d))
                raise ValueError(f"{where}: {sharding.spec!r} maps array axis {d} (of size {size}) of the value of "
                                 f"shape {tuple(shape)} to mesh axes {axes}, but {count} does not evenly divide {size}")
    return sharding


def argument_paths(f: Callable[..., Any], args: tuple) -> list[str]:
    """Each leaf of `args` as `args[0]['w']`, with the parameter of `f` it is bound to."""
    try:
        params = list(inspect.signature(f).parameters)
    except (TypeError, ValueError):
        params = []
    out = []
    for i, a in enumerate(args):
        bound = f" (bound to parameter {params[i]!r})" if i < len(params) else ""
        out += [f"args[{i}]{keystr(p)}{bound}" for p, _ in tree_flatten_with_path(a)[0]]
    return out


def _manual_region(inner: TraceContext, outs: list[Tracer]) -> Region:
    """The body of the manual computation: the inner trace's function body, ending in sdy.return."""
    block = inner.func.entry_block
    region = Region()
    from loom.ir.core import Block
    new_block = region.add_block(Block([a.type for a in block.args]))
    mapping = dict(zip(block.args, new_block.args))
    for op in block.ops:
        new_block.append(op.clone(mapping))
    new_block.append(Operation.create("sdy.return", [mapping.get(t.value, t.value) for t in outs],
                                      location=inner.builder.location))
    return region


def shard_map(f: Callable[..., Any], *, mesh: Mesh, in_specs: Any, out_specs: Any, check_vma: bool = True,
              axis_names: Any = None) -> Callable[..., Any]:
    """`f` mapped over the shards of its arguments (see the module docstring), as `jax.shard_map`.
    `in_specs` is a PartitionSpec for every argument or a tuple with a pytree prefix per positional
    argument; `out_specs` a pytree prefix of the output. The mesh axes in `axis_names` (all when
    empty or None) are manual, and only they may appear in the specs; over the others `f` is a
    global program (its values split as propagation or `with_sharding_constraint` says). With
    `check_vma` (the default, as JAX), the body's values are typed by the mesh axes they vary over
    (`varying_axes`), and an output whose spec leaves out an axis it varies over, conditional
    branches that vary differently and loop carries whose axes change are errors at trace time;
    without it, a result whose spec omits an axis is the first device's along it."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map requires a loom.sharding.Mesh as mesh, got {type(mesh).__name__}")
    name = getattr(f, "__name__", "f")
    unknown = sorted(set(axis_names or ()) - set(mesh.axis_names))
    if unknown:
        raise ValueError(f"shard_map applied to the function '{name}': axis_names names {unknown}, which are not "
                         f"axes of {mesh!r}")
    manual = tuple(a for a in mesh.axis_names if not axis_names or a in axis_names)

    def check_manual(s: NamedSharding, what: str) -> None:
        free = [a for d in range(len(s.spec)) for a in s.spec.axes_of(d) if a not in manual]
        if free:
            raise ValueError(f"shard_map applied to the function '{name}': {what} names the axes {free}, which are "
                             f"not manual (axis_names={set(manual)})")

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        trace = current_trace()
        if trace is None:
            return jitted(*args)
        spec_tree = (in_specs,) * len(args) if is_spec_leaf(in_specs) else in_specs
        specs = broadcast_prefix(tuple(spec_tree) if isinstance(spec_tree, list) else spec_tree, args,
                                 "shard_map in_specs")
        leaves, in_tree = tree_flatten(args)
        tracers = [lift(trace, x) for x in leaves]
        in_shardings, local_types = [], []
        for t, spec, where in zip(tracers, specs, argument_paths(f, args)):
            s = named_sharding(mesh, spec if spec is not None else PartitionSpec(), t.shape,
                               f"shard_map applied to the function '{name}': in_specs for {where}", divisible=True)
            check_manual(s, f"in_specs for {where}")
            counts = s.shard_counts(t.ndim)
            in_shardings.append(s)
            local_types.append(tensor_type(tuple(n // c for n, c in zip(t.shape, counts)), t.dtype))
        use_mesh(mesh, f"shard_map {name}")  # the enclosing traces' program holds the manual computation
        inner = TraceContext(local_types, name="shmap_body")
        # what the body's values vary over (for gradients taken in it)
        inner.body_mesh = mesh
        inner.body_manual = manual
        inner.body_args = [frozenset(a for d in range(t.ndim) for a in s.spec.axes_of(d))
                           for s, t in zip(in_shardings, tracers)]
        if not _LOCAL.meshes:  # the outermost body: the marks of earlier programs are dropped
            _LOCAL.marks = {}
        _LOCAL.meshes.append(mesh)
        try:
            with inner:
                use_mesh(mesh, f"shard_map {name}")
                out = f(*tree_unflatten(in_tree, inner.arguments([t.weak for t in tracers])))
                out_leaves, out_tree = tree_flatten(out)
                outs = [lift(inner, x) for x in out_leaves]
        finally:
            _LOCAL.meshes.pop()
        out_spec_leaves = broadcast_prefix(out_specs, out, "shard_map out_specs")
        out_paths = leaf_paths(out, f"{name}(*args)")
        out_shardings, global_types = [], []
        for t, spec, where in zip(outs, out_spec_leaves, out_paths):
            s = named_sharding(mesh, spec if spec is not None else PartitionSpec(), t.shape,
                               f"shard_map applied to the function '{name}': out_specs for {where}")
            check_manual(s, f"out_specs for {where}")
            counts = s.shard_counts(t.ndim)
            out_shardings.append(s)
            global_types.append(tensor_type(tuple(n * c for n, c in zip(t.shape, counts)), t.dtype))
        if check_vma:
            check_outputs_replicated(inner, outs, out_shardings, out_paths, manual, name)
        # values f closed over: extra operands, replicated
        captured = [lift(trace, c) for c in inner.captures]
        operand_shardings = [s.to_sdy(t.ndim) for s, t in zip(in_shardings, tracers)]
        operand_shardings += [NamedSharding(mesh, PartitionSpec()).to_sdy(c.ndim) for c in captured]
        props = {"in_shardings": TensorShardingPerValueAttr(tuple(operand_shardings)),
                 "manual_axes": ManualAxesAttr(manual),
                 "out_shardings": TensorShardingPerValueAttr(tuple(s.to_sdy(t.ndim)
                                                                   for s, t in zip(out_shardings, outs)))}
        b = trace.emit()
        op = b.create("sdy.manual_computation", [t.value for t in [*tracers, *captured]], global_types, props,
                      regions=[_manual_region(inner, outs)])
        results = [Tracer(r, trace, t.weak) for r, t in zip(op.results, outs)]
        return tree_unflatten(out_tree, results)

    from loom.frontend.jit import Jitted
    jitted = Jitted(wrapped)
    return wrapped


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """`x` (a pytree of arrays) constrained to `shardings` (a NamedSharding, or a pytree prefix of
    `x` of them; None leaves unconstrained): `sdy.sharding_constraint` while tracing; outside
    tracing, `x` placed with them (`loom.device_put`), as JAX does."""
    specs = broadcast_prefix(shardings, x, "with_sharding_constraint shardings")
    trace = current_trace()
    if trace is None:
        from loom.runtime.devices import device_put
        leaves, tree = tree_flatten(x)
        return tree_unflatten(tree, [v if s is None else device_put(v, s) for v, s in zip(leaves, specs)])
    leaves, tree = tree_flatten(x)
    out = []
    for leaf, s, where in zip(leaves, specs, leaf_paths(x, "x")):
        t = lift(trace, leaf)
        if s is None:  # unconstrained
            out.append(t)
            continue
        if not isinstance(s, NamedSharding):
            raise TypeError(f"with_sharding_constraint: the sharding for {where} is {s!r}; expected a NamedSharding")
        named_sharding(s.mesh, s, t.shape, f"with_sharding_constraint: sharding for {where}")
        use_mesh(s.mesh, "with_sharding_constraint")
        b = trace.emit()
        op = b.create("sdy.sharding_constraint", [t.value], [t.value.type], {"sharding": s.to_sdy(t.ndim)})
        out.append(Tracer(op.results[0], trace, t.weak))
    return tree_unflatten(tree, out)


__all__ = ["current_mesh", "shard_map", "use_mesh", "with_sharding_constraint"]


# --- gradients taken inside a shard_map body ---------------------------------------------------
#
# Inside a body, JAX types every value by the mesh axes it varies over: an argument varies over
# the axes its in_spec names, psum / pmean / pmax / pmin make their result invariant over theirs,
# axis_index varies over its axis, and any other op varies over what its operands vary over. A
# gradient counts an invariant value once: the cotangent of an invariant output is not summed
# over the devices holding copies of it, and the cotangent of an invariant input sums the
# devices' contributions. loom transposes every collective per device (psum <-> psum, ...), so
# `grad` called in a body hands the cotangent of an output invariant over some axes to the first
# device along them only, and sums the gradient of an input invariant over some axes over them:
# the same values as JAX's typed transposes (psum's transpose a broadcast of the cotangent, the
# implicit broadcast of an invariant value transposed by a psum).


def _constant_int(v: Any) -> int | None:
    op = v.owner_op
    if op is None or op.name != "stablehlo.constant":
        return None
    arr = op.properties["value"].to_numpy()
    return int(arr.reshape(-1)[0]) if arr.size >= 1 and (arr == arr.reshape(-1)[0]).all() else None


def _spanned_axes(pairs: Any, mesh: Mesh) -> frozenset[str]:
    """The mesh axes along which the partition ids in each row of `pairs` differ."""
    import numpy as np
    rows = np.asarray(pairs).reshape(len(pairs), -1)
    coords = np.array(np.unravel_index(rows, mesh.axis_sizes))  # (axis, row, member)
    return frozenset(a for a, c in zip(mesh.axis_names, coords) if (c != c[:, :1]).any())


# collectives whose result varies over the axes they communicate along (every device gets its own
# part), as JAX types all_gather, psum_scatter, all_to_all and ppermute
_VARYING_COLLECTIVES = {"stablehlo.all_gather": "replica_groups", "stablehlo.reduce_scatter": "replica_groups",
                        "stablehlo.all_to_all": "replica_groups",
                        "stablehlo.collective_permute": "source_target_pairs"}


class VaryingAxesError(TypeError):
    """Values that control flow requires to vary over the same mesh axes vary over different ones."""


def _names(axes: frozenset[str], mesh: Mesh) -> str:
    return "{" + ", ".join(repr(a) for a in mesh.axis_names if a in axes) + "}"


def varying_axes(block: Any, arg_axes: list[frozenset[str]], mesh: Mesh, strict: bool = False
                 ) -> dict[Any, frozenset[str]]:
    """For each value of `block` (a function body being traced) and of the regions in it, the mesh
    axes it varies over, its arguments varying over `arg_axes` (the others, captured values, over
    none), as JAX types the values of a shard_map body: psum / pmax / pmin make their result
    invariant over their axes, all_gather / psum_scatter / all_to_all / ppermute make it vary over
    theirs, axis_index varies over its axis, `pvary` adds axes, the branches of a conditional give
    their results' axes (the predicate's do not count), and any other op varies over what its
    operands and the values its regions use vary over. With `strict`, branches of a conditional
    whose results vary differently, or a loop whose body changes what a carry varies over, are
    errors (as JAX's check_vma)."""
    out: dict[Any, frozenset[str]] = {a: arg_axes[i] if i < len(arg_axes) else frozenset()
                                      for i, a in enumerate(block.args)}
    _block_axes(block, out, mesh, strict, {})
    return out


def _block_axes(block: Any, out: dict[Any, frozenset[str]], mesh: Mesh, strict: bool, stride: dict[Any, int]
                ) -> list[frozenset[str]]:
    """Fill `out` for the ops of `block` (its arguments already there); the axes of the values its
    terminator returns."""
    from loom.transforms.autodiff import region_free_values
    every = frozenset(mesh.axis_names)
    marks = _LOCAL.marks
    for op in block.ops:
        operand_axes = [out.get(v, frozenset()) for v in op.operands]
        if op.name in ("stablehlo.while", "stablehlo.if", "stablehlo.case"):
            result_axes = _control_flow_axes(op, operand_axes, out, mesh, strict, stride)
        else:
            used = operand_axes + ([out.get(v, frozenset()) for v in region_free_values(op)] if op.regions else [])
            axes = frozenset().union(*used)
            x = op.operands[0] if op.operands else None
            if op.name == "stablehlo.partition_id":
                stride[op.results[0]] = 1
                axes = every
            elif op.name == "stablehlo.divide" and x in stride and _constant_int(op.operands[1]):
                stride[op.results[0]] = stride[x] * _constant_int(op.operands[1])
            elif op.name == "stablehlo.remainder" and x in stride and _constant_int(op.operands[1]):
                size = _constant_int(op.operands[1])
                for i, a in enumerate(mesh.axis_names):
                    if math.prod(mesh.axis_sizes[i + 1:]) == stride[x] and mesh.axis_sizes[i] == size:
                        axes = frozenset({a})
            elif op.name == "stablehlo.all_reduce":
                axes = axes - _spanned_axes(op.properties["replica_groups"].to_numpy(), mesh)
            elif op.name in _VARYING_COLLECTIVES:
                axes = axes | _spanned_axes(op.properties[_VARYING_COLLECTIVES[op.name]].to_numpy(), mesh)
            result_axes = [axes] * len(op.results)
        for r, axes in zip(op.results, result_axes):
            mark = marks.get(r)
            if mark is not None:
                axes = axes | mark[0] | frozenset().union(*(out.get(v, frozenset()) for v in mark[1]))
            out[r] = axes
    last = block.last_op
    return [out.get(v, frozenset()) for v in last.operands] if last is not None and not last.results else []


def _writes_into(v: Any, buffer: Any) -> bool:
    """Whether `v` is `buffer` with slices written into it (dynamic_update_slice, any times)."""
    while v.owner_op is not None and v.owner_op.name == "stablehlo.dynamic_update_slice":
        v = v.owner_op.operands[0]
    return v is buffer


def _control_flow_axes(op: Operation, operand_axes: list[frozenset[str]], out: dict[Any, frozenset[str]],
                       mesh: Mesh, strict: bool, stride: dict[Any, int]) -> list[frozenset[str]]:
    """The axes of the results of a while (the carries, to a fixed point), an if or a case (the
    union over the branches); with `strict`, JAX's errors for carries and branches that differ."""
    where = f"{op.name} at {op.location}"
    if op.name == "stablehlo.while":
        carries = list(operand_axes)
        for _ in range(len(mesh.axis_names) * len(carries) + 1):  # each round adds an axis, or ends
            cond, body = op.regions[0].blocks[0], op.regions[1].blocks[0]
            for block in (cond, body):
                out.update(zip(block.args, carries))
            _block_axes(cond, out, mesh, strict, stride)
            returned = _block_axes(body, out, mesh, strict, stride)
            if returned == carries:
                return carries
            # a scan's output buffer (written row by row with dynamic_update_slice) is no carry of
            # the user's: it varies as what is written into it, as JAX's scan outputs do
            wrong = [i for i, (c, r) in enumerate(zip(carries, returned))
                     if c != r and not (c <= r and _writes_into(body.last_op.operands[i], body.args[i]))]
            if strict and wrong:
                diffs = "; ".join(f"carry {i} varies over {_names(carries[i], mesh)} on entry but over "
                                  f"{_names(returned[i], mesh)} after the body" for i in wrong)
                raise VaryingAxesError(
                    f"the loop ({where}) changes the mesh axes its carries vary over: {diffs}. A carry must "
                    "vary over the same axes on entry and after the body: apply `lax.pvary(x, axes)` to the "
                    "initial value, or pass check_vma=False to shard_map")
            carries = [c | r for c, r in zip(carries, returned)]
        return carries
    branches = [_block_axes(region.blocks[0], out, mesh, strict, stride) for region in op.regions]
    if strict:
        for i, b in enumerate(branches[1:], 1):
            if b != branches[0]:
                diffs = "; ".join(f"result {k} varies over {_names(x, mesh)} in branch 0 but over "
                                  f"{_names(y, mesh)} in branch {i}" for k, (x, y) in enumerate(zip(branches[0], b))
                                  if x != y)
                raise VaryingAxesError(
                    f"the branches of the conditional ({where}) give results that vary over different mesh axes: "
                    f"{diffs}. Apply `lax.pvary(x, axes)` to the less varying result, or pass check_vma=False "
                    "to shard_map")
    return [frozenset().union(*col) for col in zip(*branches)]


def check_outputs_replicated(inner: TraceContext, outs: list[Tracer], shardings: list[NamedSharding],
                             paths: list[str], manual: tuple[str, ...], name: str) -> None:
    """JAX's check_vma at the end of a shard_map body: every output varies only over the manual
    axes its out_spec names (and loops and conditionals in the body are consistent)."""
    try:
        axes = varying_axes(inner.func.entry_block, inner.body_args, inner.body_mesh, strict=True)
    except VaryingAxesError as e:
        raise VaryingAxesError(f"shard_map applied to the function '{name}': {e}") from None
    mesh = inner.body_mesh
    errors = []
    for t, s, where in zip(outs, shardings, paths):
        named = {a for d in range(len(s.spec)) for a in s.spec.axes_of(d)}
        extra = (axes.get(t.value, frozenset()) & set(manual)) - named
        if extra:
            errors.append(f"out_specs for {where} is {s.spec!r}, which says the value is replicated over mesh axes "
                          f"{_names(extra, mesh)}, but it varies over {_names(axes[t.value], mesh)}")
    if errors:
        raise ValueError(f"shard_map applied to the function '{name}' was given out_specs which require replication "
                         f"which can't be statically inferred given the mesh {mesh!r}:\n  " + "\n  ".join(errors)
                         + "\nIf these values are meant to be replicated over those axes, reduce them (lax.psum, "
                         "lax.pmax, ...) or pass check_vma=False to shard_map; otherwise name the axes in out_specs.")


def body_axes(trace: Any, values: list[Any]) -> list[frozenset[str]]:
    """The mesh axes each of `values` (tracers or constants, in or around the shard_map body being
    traced) varies over."""
    if getattr(trace, "body_args", None) is None:
        raise NotImplementedError("grad / vjp inside a shard_map body runs in the body itself (or a jit in it); "
                                  "inside another transformation there it is not supported")
    axes = varying_axes(trace.func.entry_block, trace.body_args, trace.body_mesh)
    return [axes.get(v._value, frozenset()) if isinstance(v, Tracer) and v._trace is trace else frozenset()
            for v in values]


def count_invariants_once(module: Operation, lowered: Operation, trace: Any, inputs: list[Any], n_out: int,
                          wrt: list[int]) -> None:
    """Adjust the VJP `module` of `lowered` (see the section comment): mask the cotangents of
    outputs invariant over some axes to the first device along them, and sum the gradients of
    inputs invariant over some axes over them."""
    from loom.dialects import func
    from loom.frontend.jit import main_function
    from loom.ir.builder import Builder, InsertionPoint
    from loom.ops.collectives import _first_along, _psum_over
    mesh = trace.body_mesh
    every = frozenset(trace.body_manual)
    in_axes = body_axes(trace, inputs)
    source = main_function(lowered).regions[0].entry
    value_axes = varying_axes(source, in_axes, mesh)
    out_axes = [value_axes.get(v, frozenset()) for v in source.last_op.operands[:n_out]]
    fn = main_function(module)
    block = fn.regions[0].entry
    attr = mesh.to_sdy()
    n_in = len(source.args)
    b = Builder(InsertionPoint.at_start(block))
    for k in range(n_out):
        ct = block.args[n_in + k]
        if every - out_axes[k]:
            uses = list(ct.uses)
            masked = _first_along(b, attr, sorted(every - out_axes[k], key=mesh.axis_names.index), ct)
            for use in uses:
                use.owner.set_operand(use.index, masked)
    ret = block.last_op
    b = Builder(InsertionPoint.before(ret))
    results = list(ret.operands)
    first_grad = len(results) - len(wrt)
    for j, i in enumerate(wrt):
        missing = sorted(every - in_axes[i], key=mesh.axis_names.index)
        results[first_grad + j] = _psum_over(b, attr, missing, results[first_grad + j])
    b.insert(func.ReturnOp.build(results, ret.location))
    ret.erase()
