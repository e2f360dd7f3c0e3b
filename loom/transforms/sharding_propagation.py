"""sharding-propagation: give every value of a global program a sharding, from the annotated ones.

An op's sharding rule (`ShardingRule`, as Shardy's OpShardingRule) names the factors of its
iteration space and maps every dimension of every operand and result to factors, einsum-like:
dot_general is `([i, k], [k, j]) -> ([i, j])` with `k` a reduction factor; a factor the op must
see whole (the sorted dimension of sort, a sliced dimension) needs replication; a reshape maps a
dimension to several factors when the sizes split cleanly (`[8, 6] -> [(8, 6)]`). The op families
of `loom.ops` register rules in `SHARDING_RULES` (name -> function of the op giving a rule, or
None for an instance the rule does not handle); every op with the `Elementwise` trait gets
`identity_rule`.

Propagation starts from the annotated values: `sdy.sharding` in the function's arg_attrs and
res_attrs, `sdy.sharding_constraint`, the boundaries of `sdy.manual_computation`, and ops already
carrying `sdy.sharding`. It moves shardings forward and backward through the rules until nothing
changes: each factor takes the sharding proposed by the tensors that hold it (highest priority
first, then the larger product of axis sizes, then the first tensor), and every open dimension
whose axes are a prefix of its factors' sharding is extended; closed dimensions are kept. The
order is fixed, so the result is deterministic. Afterwards every op result carries
`sdy.sharding = #sdy.sharding_per_value<[...]>` (fully closed) and the function's arguments and
results carry their final `sdy.sharding`; `spmd-partition` reads these.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from loom.dialects.sdy import AxisRef, DimSharding, TensorShardingAttr, TensorShardingPerValueAttr
from loom.dialects.stablehlo.base import Elementwise
from loom.ir.attributes import ArrayAttr, DictionaryAttr
from loom.ir.core import Operation, Value
from loom.ir.types import RankedTensorType
from loom.rewrite.passes import Pass, register_pass

# --- rules ---------------------------------------------------------------------------------------

Dims = list[list[int]]  # per tensor dimension, its factors (major to minor)


@dataclass
class ShardingRule:
    """The factors of an op and how each operand and result dimension maps to them.

    `operands[i][d]` / `results[j][d]`: the factors of dimension d (major to minor; empty for a
    dimension of size 1 that no factor covers). `reduction`: factors in operands but not in
    results; sharding one makes each device hold a partial result, combined with `reducer`
    ("add", "max", "min", "mul", "and", "or"); with no reducer they need replication.
    `need_replication`: factors never sharded. `pad_value(builder, op, local_operands, i)` gives
    the scalar that masks operand i's padding along an uneven reduction factor (the reduction's
    identity). `localize(builder, new_op, ctx)` fixes what the local op carries of the global
    shape (ctx: `offset(d)`, `local_shape()`); it may return values replacing the op's results.
    `windowed`: factors the partitioner splits although the op reads a window of neighbouring
    elements along them (a sliced, padded, reversed or convolved dimension): each device first
    fetches the halo of its piece from the devices next to it (propagation never sees these: it
    works on the op's own rule, where such factors need replication)."""

    operands: list[Dims]
    results: list[Dims]
    sizes: list[int]
    reduction: frozenset[int] = frozenset()
    need_replication: frozenset[int] = frozenset()
    reducer: str | None = None
    pad_value: Callable[..., Value] | None = None
    localize: Callable[..., list[Value] | None] | None = None
    windowed: frozenset[int] = frozenset()

    def blocked(self) -> frozenset[int]:
        """Factors that may not be sharded."""
        return self.need_replication | (self.reduction if self.reducer is None else frozenset())


RuleFn = Callable[[Operation], "ShardingRule | None"]
SHARDING_RULES: dict[str, RuleFn] = {}


class Factors:
    """Builds a rule: `f = Factors(); i = f.new(8); ...; f.rule([[i, k], [k, j]], [[i, j]], reduction={k})`.
    A dimension is a factor, a tuple of factors (compound, major first) or None (no factor)."""

    def __init__(self) -> None:
        self.sizes: list[int] = []

    def new(self, size: int) -> int:
        self.sizes.append(int(size))
        return len(self.sizes) - 1

    def rule(self, operands: Sequence[Sequence[Any]], results: Sequence[Sequence[Any]], **kw: Any) -> ShardingRule:
        def dims(ds: Sequence[Any]) -> Dims:
            return [[] if d is None else list(d) if isinstance(d, (tuple, list)) else [d] for d in ds]
        return ShardingRule([dims(o) for o in operands], [dims(r) for r in results], list(self.sizes),
                            frozenset(kw.pop("reduction", ())), frozenset(kw.pop("need_replication", ())), **kw)


def shape_of(v: Value) -> tuple[int, ...]:
    t = v.type
    return tuple(t.shape) if isinstance(t, RankedTensorType) else ()


def identity_rule(op: Operation) -> ShardingRule:
    """Every operand and result of the result's rank shares the result's dimensions' factors
    (elementwise ops; rank-0 operands such as select's scalar predicate have none)."""
    shape = shape_of(op.results[0])
    f = Factors()
    fs = [f.new(n) for n in shape]
    def dims(v: Value) -> list[Any]:
        return list(fs) if len(shape_of(v)) == len(shape) else [None] * len(shape_of(v))
    return f.rule([dims(v) for v in op.operands], [dims(v) for v in op.results])


def rule_of(op: Operation) -> ShardingRule | None:
    """The op's sharding rule, or None when it has none (it then runs replicated); the
    dimensions a concatenate, pad, reverse, reduce_window or convolution reads through windows
    share a factor (see `windowed_rule`), so splits propagate through them. A slice's sliced
    dimensions stay apart: its result is often a piece within one shard, better whole (the
    partitioner still splits them where that moves less)."""
    fn = SHARDING_RULES.get(op.name)
    if fn is None:
        definition = type(op).definition
        if definition is not None and Elementwise in definition.trait_set and op.results:
            return identity_rule(op)
        return None
    rule = fn(op)
    if rule is None or op.name not in _WINDOWED or op.name == "stablehlo.slice":
        return rule
    return windowed_rule(rule, op_windows(op, lambda e: 1))


# --- windows: ops reading neighbouring elements along a dimension --------------------------------

@dataclass
class Window:
    """How a windowed op reads operand dimension `dim` of `operands` for result dimension
    `result_dim`, split in k = len(starts) pieces: piece p reads the operand's elements
    [starts[p], starts[p] + size), those outside the operand reading as the op's operand
    fills[i] (a scalar: pad's value, reduce_window's init; -1 zero; None: never read).
    `mirror` (reverse): the operand is read reversed, padding first. The local op's result is
    `local_size` long; with `crops`, piece p is cut from it at crops[p]. `padding_row`: the
    row of the op's `padding` the window replaces."""

    operands: list[int]
    dim: int
    result_dim: int
    starts: list[int]
    size: int
    fills: list[int | None]
    local_size: int
    mirror: bool = False
    crops: list[int] | None = None
    padding_row: int = -1


def op_windows(op: Operation, pieces: Any) -> list[Window]:
    """The windows of a slice, concatenate, pad, reverse, reduce_window or convolution along the
    dimensions it does not map one to one (`pieces(e)`: how many pieces result dimension e is split in)."""
    if op.name not in _WINDOWED or not all(isinstance(v.type, RankedTensorType) for v in (*op.operands, *op.results)):
        return []
    src, out = shape_of(op.operands[0]), shape_of(op.results[0])
    props = op.properties
    def ints(name: str, default: int) -> list[int]:
        return list(props[name].values) if name in props else [default] * len(src)
    def affine(d: int, e: int, stride: int, offset: int, extent: int, operands: list[int],
               fills: list[int | None], row: int = -1) -> Window:
        k = pieces(e)
        piece = -(-out[e] // k)
        return Window(operands, d, e, [p * piece * stride + offset for p in range(k)], (piece - 1) * stride + extent,
                      fills, piece, padding_row=row)
    windows = []
    if op.name == "stablehlo.slice":
        for d, (start, limit, stride) in enumerate(zip(ints("start_indices", 0), ints("limit_indices", 0),
                                                        ints("strides", 1))):
            if (start, limit, stride) != (0, src[d], 1):
                windows.append(affine(d, d, stride, start, 1, [0], [None]))
    elif op.name == "stablehlo.pad":
        for d, (low, high, interior) in enumerate(zip(ints("edge_padding_low", 0), ints("edge_padding_high", 0),
                                                       ints("interior_padding", 0))):
            if (low, high, interior) == (0, 0, 0):
                continue
            k, step = pieces(d), interior + 1
            piece = -(-out[d] // k)
            firsts = [(p * piece - low) // step for p in range(k)]
            size = -(-(piece + step - 2) // step) + 1
            windows.append(Window([0], d, d, firsts, size, [1], size * step,
                                  crops=[p * piece - low - f * step for p, f in enumerate(firsts)]))
    elif op.name == "stablehlo.concatenate":  # each operand, where it lies in the result
        d = int(props["dimension"].value)
        k = pieces(d)
        piece, offset = -(-out[d] // k), 0
        for i, v in enumerate(op.operands):
            windows.append(Window([i], d, d, [p * piece - offset for p in range(k)], piece, [None], piece))
            offset += shape_of(v)[d]
    elif op.name == "stablehlo.reverse":
        for d in ints("dimensions", 0):
            k = pieces(d)
            piece = -(-src[d] // k)
            windows.append(Window([0], d, d, [p * piece + k * piece - src[d] for p in range(k)], piece, [None], piece,
                                  mirror=True))
    elif op.name == "stablehlo.reduce_window":
        n = len(op.results)
        pads = props["padding"].to_numpy().reshape(-1, 2).tolist() if "padding" in props else [[0, 0]] * len(src)
        for d, (w, stride, base, dilation) in enumerate(zip(ints("window_dimensions", 1), ints("window_strides", 1),
                                                            ints("base_dilations", 1), ints("window_dilations", 1))):
            if (w, stride, base, dilation, pads[d]) != (1, 1, 1, 1, [0, 0]) and base == 1:
                windows.append(affine(d, d, stride, -pads[d][0], (w - 1) * dilation + 1, list(range(n)),
                                      [n + i for i in range(n)], d))
    else:  # convolution
        dn = props["dimension_numbers"]
        kernel = shape_of(op.operands[1])
        spatial = len(dn.input_spatial_dimensions)
        def conv_ints(name: str, default: int) -> list[int]:
            return list(props[name].values) if name in props else [default] * spatial
        pads = props["padding"].to_numpy().reshape(-1, 2).tolist() if "padding" in props else [[0, 0]] * spatial
        for i, (d, e, kd) in enumerate(zip(dn.input_spatial_dimensions, dn.output_spatial_dimensions,
                                           dn.kernel_spatial_dimensions)):
            stride, base, dilation = (conv_ints(n, 1)[i] for n in ("window_strides", "lhs_dilation", "rhs_dilation"))
            if base == 1:
                windows.append(affine(d, e, stride, -pads[i][0], (kernel[kd] - 1) * dilation + 1, [0], [-1], i))
    return windows


_WINDOWED = ("stablehlo.slice", "stablehlo.concatenate", "stablehlo.pad", "stablehlo.reverse",
             "stablehlo.reduce_window", "stablehlo.convolution")


def windowed_rule(rule: ShardingRule, windows: list[Window]) -> ShardingRule:
    """`rule` with each window's operand and result dimensions on one factor that may be split
    (see `ShardingRule.windowed`)."""
    rename: dict[int, int] = {}
    for w in windows:
        result = rule.results[0][w.result_dim]
        if len(result) != 1 or any(len(rule.operands[i][w.dim]) != 1 for i in w.operands):
            return rule
        rename.update({rule.operands[i][w.dim][0]: result[0] for i in w.operands})
    if not rename:
        return rule
    operands = [[[rename.get(f, f) for f in fs] for fs in dims] for dims in rule.operands]
    windowed = frozenset(rename.values())
    return replace(rule, operands=operands, need_replication=rule.need_replication - windowed - set(rename),
                   windowed=windowed)




def has_sharding_rule(name: str) -> bool:
    """Whether op `name` has a sharding rule (registered, or from the Elementwise trait)."""
    if name in SHARDING_RULES:
        return True
    from loom.ir.opdef import DIALECTS
    dialect = DIALECTS.get(name.split(".")[0])
    cls = dialect.ops.get(name) if dialect is not None else None
    return cls is not None and cls.definition is not None and Elementwise in cls.definition.trait_set


# --- shardings as the passes hold them -----------------------------------------------------------

@dataclass
class Dim:
    """One dimension's sharding while propagating: axis names (major to minor), open or closed,
    priority (smaller is stronger; None weakest)."""

    axes: tuple[str, ...] = ()
    closed: bool = False
    priority: int | None = None


def dims_from_attr(attr: TensorShardingAttr, where: Any, mesh_name: str | None = None,
                   mesh: dict[str, int] | None = None) -> list[Dim]:
    """The dimensions of `attr`; with `mesh_name` / `mesh`, an error unless it names that mesh and
    its axes."""
    if attr.unreduced:
        raise ShardingError(f"{where}: {attr} holds partial sums (unreduced axes), which the partitioner does not "
                            "take as input")
    if mesh_name is not None and attr.mesh != mesh_name:
        raise ShardingError(f"{where}: {attr} is not over @{mesh_name}, the module's mesh (the partitioner handles "
                            "one mesh, named)")
    for d in attr.dims:
        for a in d.axes:
            if mesh is not None and a.name not in mesh:
                raise ShardingError(f"{where}: {attr} names axis '{a.name}', which @{mesh_name} lacks")
            if a.size is not None:
                raise ShardingError(f"{where}: sub-axis {a} in {attr}: the partitioner splits dimensions over whole "
                                    "mesh axes only")
    return [Dim(tuple(a.name for a in d.axes), d.closed, d.priority) for d in attr.dims]


def closed_attr(mesh: str, axes: Sequence[Sequence[str]]) -> TensorShardingAttr:
    return TensorShardingAttr(mesh, tuple(DimSharding(tuple(AxisRef(a) for a in d)) for d in axes))


class ShardingError(Exception):
    """A program the sharding passes cannot handle; the message says where."""


def find_mesh(module: Operation) -> tuple[str, dict[str, int]]:
    """The module's `sdy.mesh` (name, axis sizes); the first one when several."""
    for op in module.regions[0].entry.ops if module.regions else ():
        if op.name == "sdy.mesh":
            return op.properties["sym_name"].value, dict(op.properties["mesh"].axes)
    raise ShardingError("the module has no sdy.mesh")


def arg_attr_dicts(fn: Operation, key: str, count: int) -> list[dict[str, Any]]:
    arr = fn.properties.get(key)
    return [dict(a.items) for a in arr] if arr is not None else [{} for _ in range(count)]


def set_attr_dicts(fn: Operation, key: str, dicts: list[dict[str, Any]]) -> None:
    fn.properties[key] = ArrayAttr(tuple(DictionaryAttr.get(d) for d in dicts))


# --- propagation ---------------------------------------------------------------------------------

class Slot:
    """A tensor propagation updates that is not an SSA value: a function result, or the boundary
    sharding of a manual computation's operand."""

    def __init__(self, shape: tuple[int, ...], what: str) -> None:
        self.shape = shape
        self.what = what


@dataclass
class Edge:
    """A rule applied to tensors: `(key, dims)` per tensor."""

    rule: ShardingRule
    tensors: list[tuple[Any, Dims]]


@dataclass
class Propagation:
    mesh: dict[str, int]
    mesh_name: str | None = None
    state: dict[Any, list[Dim]] = field(default_factory=dict)
    alias: dict[Any, Any] = field(default_factory=dict)
    edges: list[Edge] = field(default_factory=list)

    def read(self, attr: TensorShardingAttr, where: Any) -> list[Dim]:
        return dims_from_attr(attr, where, self.mesh_name, self.mesh)

    def key(self, v: Any) -> Any:
        while v in self.alias:
            v = self.alias[v]
        return v

    def dims(self, v: Any) -> list[Dim]:
        k = self.key(v)
        if k not in self.state:
            rank = len(k.shape) if isinstance(k, Slot) else len(shape_of(k))
            self.state[k] = [Dim() for _ in range(rank)]
        return self.state[k]

    def set_initial(self, v: Any, dims: list[Dim], where: Any = None) -> None:
        rank = len(v.shape) if isinstance(v, Slot) else len(shape_of(v))
        if len(dims) != rank:
            raise ShardingError(f"{where or v}: a sharding of {len(dims)} dimensions for a tensor of rank {rank}")
        self.state[self.key(v)] = dims

    def axes_size(self, axes: Sequence[str]) -> int:
        return math.prod(self.mesh[a] for a in axes)

    # projection of a tensor's dimension onto its factors
    def project(self, rule: ShardingRule, dims: Dims, shard: list[Dim]) -> dict[int, tuple[tuple[str, ...], Dim]]:
        """Per factor of the tensor, the axes its dimensions' shardings give it (a minor factor of
        a compound dimension only once the major ones are fully split; compound factors evenly)."""
        out: dict[int, tuple[tuple[str, ...], Dim]] = {}
        for factors, dim in zip(dims, shard):
            rest = list(dim.axes)
            for f in factors:
                size, taken = rule.sizes[f], []
                while rest:
                    n = self.axes_size([*taken, rest[0]])
                    if n > size or (len(factors) > 1 and size % n):
                        break
                    taken.append(rest.pop(0))
                    if n == size:
                        break
                out[f] = (tuple(taken), dim)
                if self.axes_size(taken) != size:
                    break
        return out

    def step(self, edge: Edge) -> list[Any]:
        """Apply one edge: every open dimension of its tensors extended to what its factors'
        best proposals give; returns the tensors changed."""
        rule = edge.rule
        blocked = rule.blocked()
        proposals: dict[int, tuple[tuple[str, ...], tuple]] = {}
        for order, (key, dims) in enumerate(edge.tensors):
            for f, (axes, dim) in self.project(rule, dims, self.dims(key)).items():
                if f in blocked or not axes:
                    continue
                rank = (dim.priority if dim.priority is not None else 1 << 30, 0 if dim.closed else 1,
                        -self.axes_size(axes), order)
                if f not in proposals or rank < proposals[f][1]:
                    proposals[f] = (axes, rank)
        changed = []
        for key, dims in edge.tensors:
            shard = self.dims(key)
            used = {a for d in shard for a in d.axes}
            for d, factors in enumerate(dims):
                dim = shard[d]
                if dim.closed or not factors:
                    continue
                want: list[str] = []
                for f in factors:
                    axes = proposals.get(f, ((), ()))[0]
                    if len(factors) > 1 and rule.sizes[f] % self.axes_size(axes):
                        break
                    want.extend(axes)
                    if self.axes_size(axes) != rule.sizes[f]:
                        break
                extra = want[len(dim.axes):]
                if extra and tuple(want[:len(dim.axes)]) == dim.axes and not set(extra) & used:
                    used |= set(extra)
                    shard[d] = Dim(tuple(want), False, dim.priority)
                    changed.append(self.key(key))
        return changed

    def run(self) -> None:
        """Apply the edges until nothing changes: all of them in program order first, then
        those touching a tensor that changed, first in first out (deterministic). Dimensions only
        grow, so this ends; the bound is a safety net."""
        by_tensor: dict[Any, list[int]] = {}
        for i, edge in enumerate(self.edges):
            for key, _ in edge.tensors:
                by_tensor.setdefault(self.key(key), []).append(i)
        queue = deque(range(len(self.edges)))
        queued = set(queue)
        budget = 64 * (len(self.edges) + 1)
        while queue:
            budget -= 1
            if budget < 0:
                raise ShardingError("sharding propagation did not settle")
            i = queue.popleft()
            queued.discard(i)
            for key in self.step(self.edges[i]):
                for j in by_tensor.get(key, ()):
                    if j != i and j not in queued:
                        queue.append(j)
                        queued.add(j)


def _identity_edge(a: Any, b: Any, shape: tuple[int, ...]) -> Edge:
    f = Factors()
    fs = [[f.new(n)] for n in shape]
    return Edge(f.rule([], []), [(a, fs), (b, fs)])


def _collect(prop: Propagation, block_ops: Sequence[Operation], mesh_name: str) -> None:
    """The edges of the ops of a block (recursively) and their initial shardings."""
    for op in block_ops:
        existing = op.attributes.get("sdy.sharding")
        if isinstance(existing, TensorShardingPerValueAttr):
            for r, s in zip(op.results, existing.shardings):
                prop.set_initial(r, prop.read(s, op.location), f"{op.name} at {op.location}")
        if op.name in ("sdy.sharding_constraint", "sdy.reshard"):
            prop.set_initial(op.results[0], prop.read(op.properties["sharding"], op.location),
                             f"{op.name} at {op.location}")
            if op.name == "sdy.sharding_constraint":
                prop.edges.append(_identity_edge(op.operands[0], op.results[0], shape_of(op.results[0])))
            continue
        if op.name == "sdy.manual_computation":
            for i, (v, s) in enumerate(zip(op.operands, op.properties["in_shardings"].shardings)):
                slot = Slot(shape_of(v), f"operand {i} of {op.name}")
                prop.set_initial(slot, [Dim(d.axes, True, d.priority) for d in prop.read(s, op.location)])
                prop.edges.append(_identity_edge(v, slot, shape_of(v)))
            for r, s in zip(op.results, op.properties["out_shardings"].shardings):
                prop.set_initial(r, [Dim(d.axes, True, d.priority) for d in prop.read(s, op.location)])
            manual = manual_axes_of(op)
            if not free_axes(prop.mesh, manual):
                continue  # the body is per device over every axis: nothing to propagate inside
            # manual over some axes only: the body is global over the others, split as its
            # arguments' shardings without the manual axes say
            body = op.regions[0].entry
            for a, s in zip(body.args, op.properties["in_shardings"].shardings):  # open: a starting point
                prop.set_initial(a, [Dim(tuple(x for x in d.axes if x not in manual), False, d.priority)
                                     for d in prop.read(s, op.location)])
            ops = list(body.ops)
            _collect(prop, ops[:-1], mesh_name)
            for i, (v, s) in enumerate(zip(ops[-1].operands, op.properties["out_shardings"].shardings)):
                slot = Slot(shape_of(v), f"result {i} of the body of {op.name}")
                prop.set_initial(slot, [Dim(tuple(x for x in d.axes if x not in manual), True, d.priority)
                                        for d in prop.read(s, op.location)])
                prop.edges.append(_identity_edge(v, slot, shape_of(v)))
            continue
        if op.name in ("stablehlo.while", "stablehlo.if", "stablehlo.case", "stablehlo.optimization_barrier"):
            # carries and branch results: one sharding per position, shared by the operand, the
            # block arguments, the values returned and the result
            if op.name in ("stablehlo.while", "stablehlo.optimization_barrier"):
                for v, r in zip(op.operands, op.results):
                    prop.edges.append(_identity_edge(v, r, shape_of(r)))
            for i, region in enumerate(op.regions):
                if op.name == "stablehlo.while":
                    for a, r in zip(region.entry.args, op.results):
                        prop.alias[a] = r
                for block in region.blocks:
                    _collect(prop, list(block.ops), mesh_name)
                    term = block.terminator
                    if term is not None and not (op.name == "stablehlo.while" and i == 0):
                        for v, r in zip(term.operands, op.results):
                            prop.edges.append(_identity_edge(v, r, shape_of(r)))
            continue
        rule = rule_of(op)
        if rule is not None:
            tensors = [(v, d) for v, d in zip(op.operands, rule.operands)] + \
                      [(v, d) for v, d in zip(op.results, rule.results)]
            prop.edges.append(Edge(rule, tensors))


def propagate_function(fn: Operation, mesh_name: str, mesh: dict[str, int]) -> None:
    """Propagate over `fn` and write the shardings into it (see the module's doc)."""
    prop = Propagation(mesh, mesh_name)
    block = fn.regions[0].entry
    n_results = len(fn.properties["function_type"].value.results)
    arg_dicts = arg_attr_dicts(fn, "arg_attrs", len(block.args))
    res_dicts = arg_attr_dicts(fn, "res_attrs", n_results)
    for a, d in zip(block.args, arg_dicts):
        if isinstance(d.get("sdy.sharding"), TensorShardingAttr):
            where = f"argument {a.index} of @{_sym(fn)}"
            prop.set_initial(a, prop.read(d["sdy.sharding"], where), where)
    ops = list(block.ops)
    _collect(prop, ops[:-1], mesh_name)
    ret = ops[-1]
    slots = []
    for i, (v, d) in enumerate(zip(ret.operands, res_dicts)):
        slot = Slot(shape_of(v), f"result {i}")
        slots.append(slot)
        if isinstance(d.get("sdy.sharding"), TensorShardingAttr):
            where = f"result {i} of @{_sym(fn)}"
            prop.set_initial(slot, prop.read(d["sdy.sharding"], where), where)
        prop.edges.append(_identity_edge(v, slot, shape_of(v)))
    prop.run()

    def attr(v: Any) -> TensorShardingAttr:
        return closed_attr(mesh_name, [d.axes for d in prop.dims(v)])
    for a, d in zip(block.args, arg_dicts):
        d["sdy.sharding"] = attr(a)
    for s, d in zip(slots, res_dicts):
        d["sdy.sharding"] = attr(s)
    set_attr_dicts(fn, "arg_attrs", arg_dicts)
    set_attr_dicts(fn, "res_attrs", res_dicts)
    for op in fn.walk():
        if op is fn or not op.results or (op.parent_op is not None and _inside_manual(op, mesh)):
            continue
        if op.name == "sdy.sharding_constraint":  # its open dimensions as propagation extended them
            op.properties["sharding"] = attr(op.results[0])
            continue
        if op.name == "sdy.reshard":
            continue
        if all(isinstance(r.type, RankedTensorType) for r in op.results):
            op.attributes["sdy.sharding"] = TensorShardingPerValueAttr(tuple(attr(r) for r in op.results))


def manual_axes_of(op: Operation) -> set[str]:
    return set(op.properties["manual_axes"].axes)


def free_axes(mesh: dict[str, int], manual: set[str]) -> list[str]:
    """The mesh axes (of size > 1) a manual computation over `manual` leaves to the partitioner."""
    return [a for a, n in mesh.items() if n > 1 and a not in manual]


def _inside_manual(op: Operation, mesh: dict[str, int]) -> bool:
    """Whether `op` is in the body of a manual computation over every axis (per device as written)."""
    p = op.parent_op
    while p is not None:
        if p.name == "sdy.manual_computation" and not free_axes(mesh, manual_axes_of(p)):
            return True
        p = p.parent_op
    return False


def _sym(fn: Operation) -> str:
    return fn.properties["sym_name"].value


def propagate_module(module: Operation) -> None:
    mesh_name, mesh = find_mesh(module)
    for op in module.regions[0].entry.ops:
        if op.name == "func.func" and op.regions and op.regions[0].blocks:
            propagate_function(op, mesh_name, mesh)


@register_pass
class ShardingPropagationPass(Pass):
    """Give every value a sharding from the annotated ones (Shardy's propagation): results of
    every op get `sdy.sharding = #sdy.sharding_per_value<[...]>`, the function's arguments and
    results their final `sdy.sharding`."""

    name = "sharding-propagation"
    summary = "Propagate sdy shardings through the program by the ops' sharding rules"

    def run(self, op: Operation) -> None:
        try:
            propagate_module(op)
        except ShardingError as e:
            raise self.fail(op, str(e)) from None


__all__ = ["SHARDING_RULES", "Factors", "ShardingError", "ShardingPropagationPass", "ShardingRule",
           "Window", "has_sharding_rule", "identity_rule", "op_windows", "propagate_module", "rule_of", "windowed_rule"]
