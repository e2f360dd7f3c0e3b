"""`loom.shard_map` and `with_sharding_constraint`: the sharded front end, with JAX's names and
behaviour.

`shard_map(f, mesh=..., in_specs=..., out_specs=...)` maps `f` over the shards of its arguments:
each argument is split over the mesh as its `PartitionSpec` says, `f` runs once per device on the
local shards (it may use the collectives of `loom.lax` over the mesh's axes), and its results,
local values, are assembled into global ones as `out_specs` say. It lowers to
`sdy.manual_computation` (every mesh axis manual), whose body is `f` traced on the local shapes
(global shape / product of the axes splitting each dimension), as JAX lowers it. Values `f`
closes over enter the body as extra operands, replicated. Called outside tracing, it runs as a
jitted function.

`with_sharding_constraint(x, sharding)` lowers to `sdy.sharding_constraint` (an identity on values).

While a trace uses a mesh (a shard_map, a constraint, a sharded jit), every active trace records
it (`TraceContext.mesh`, one mesh per program), so the jitted module gets its `sdy.mesh`.
"""

from __future__ import annotations

import functools
import inspect
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
            raise ValueError(f"{where} uses the mesh {mesh!r}, but the function already uses the mesh {have!r}; "
                             "a program runs on one mesh")
        trace.mesh = mesh


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
              check_rep: bool | None = None) -> Callable[..., Any]:
    """`f` mapped over the shards of its arguments (see the module docstring), as `jax.shard_map`."""
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map requires a loom.sharding.Mesh as mesh, got {type(mesh).__name__}")
    name = getattr(f, "__name__", "f")

    @functools.wraps(f)
    def wrapped(*args: Any) -> Any:
        trace = current_trace()
        if trace is None:
            return jitted(*args)
        specs = broadcast_prefix(in_specs if isinstance(in_specs, tuple) and not isinstance(in_specs, PartitionSpec)
                                 else (in_specs,) * len(args) if is_spec_leaf(in_specs) else in_specs,
                                 args, "shard_map in_specs")
        leaves, in_tree = tree_flatten(args)
        tracers = [lift(trace, x) for x in leaves]
        in_shardings, local_types = [], []
        for t, spec, where in zip(tracers, specs, argument_paths(f, args)):
            s = named_sharding(mesh, spec if spec is not None else PartitionSpec(), t.shape,
                               f"shard_map applied to the function '{name}': in_specs for {where}", divisible=True)
            counts = s.shard_counts(t.ndim)
            in_shardings.append(s)
            local_types.append(tensor_type(tuple(n // c for n, c in zip(t.shape, counts)), t.dtype))
        use_mesh(mesh, f"shard_map {name}")
        inner = TraceContext(local_types, name="shmap_body")
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
            counts = s.shard_counts(t.ndim)
            out_shardings.append(s)
            global_types.append(tensor_type(tuple(n * c for n, c in zip(t.shape, counts)), t.dtype))
        # values f closed over: extra operands, replicated
        captured = [lift(trace, c) for c in inner.captures]
        operand_shardings = [s.to_sdy(t.ndim) for s, t in zip(in_shardings, tracers)]
        operand_shardings += [NamedSharding(mesh, PartitionSpec()).to_sdy(c.ndim) for c in captured]
        props = {"in_shardings": TensorShardingPerValueAttr(tuple(operand_shardings)),
                 "manual_axes": ManualAxesAttr(tuple(mesh.axis_names)),
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
    `x` of them): `sdy.sharding_constraint` while tracing; outside tracing, `x` unchanged."""
    trace = current_trace()
    if trace is None:
        return x
    from loom.dialects.sdy import ShardingConstraintOp  # noqa: F401 - the op is registered there
    specs = broadcast_prefix(shardings, x, "with_sharding_constraint shardings")
    leaves, tree = tree_flatten(x)
    out = []
    for leaf, s, where in zip(leaves, specs, leaf_paths(x, "x")):
        t = lift(trace, leaf)
        if not isinstance(s, NamedSharding):
            raise TypeError(f"with_sharding_constraint: the sharding for {where} is {s!r}; expected a NamedSharding")
        named_sharding(s.mesh, s, t.shape, f"with_sharding_constraint: sharding for {where}")
        use_mesh(s.mesh, "with_sharding_constraint")
        b = trace.emit()
        op = b.create("sdy.sharding_constraint", [t.value], [t.value.type], {"sharding": s.to_sdy(t.ndim)})
        out.append(Tracer(op.results[0], trace, t.weak))
    return tree_unflatten(tree, out)


__all__ = ["current_mesh", "shard_map", "use_mesh", "with_sharding_constraint"]
